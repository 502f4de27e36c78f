"""Deprecated alias: securedp.accounting.errors moved to :mod:`securedp.ledger.errors` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.ledger import errors as _moved

__getattr__ = moved_module("securedp.accounting.errors", _moved)
