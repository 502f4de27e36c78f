"""Deprecated alias: securedp.accounting.partition moved to :mod:`securedp.session.partition` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.session import partition as _moved

__getattr__ = moved_module("securedp.accounting.partition", _moved)
