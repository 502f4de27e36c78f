"""Deprecated alias: securedp.accounting.schema moved to :mod:`securedp.ledger.audit_record` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.ledger import audit_record as _moved

__getattr__ = moved_module("securedp.accounting.schema", _moved)
