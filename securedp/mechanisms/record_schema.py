"""Deprecated alias: securedp.mechanisms.record_schema moved to :mod:`securedp.ledger.release_record` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.ledger import release_record as _moved

__getattr__ = moved_module("securedp.mechanisms.record_schema", _moved)
