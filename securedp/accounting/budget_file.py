"""Deprecated alias: securedp.accounting.budget_file moved to :mod:`securedp.ledger.budget_file` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.ledger import budget_file as _moved

__getattr__ = moved_module("securedp.accounting.budget_file", _moved)
