"""Deprecated alias: securedp.accounting.budget moved to :mod:`securedp.ledger.budget` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.ledger import budget as _moved

__getattr__ = moved_module("securedp.accounting.budget", _moved)
