"""Deprecated alias: securedp.accounting.methods moved to :mod:`securedp.session.methods` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.session import methods as _moved

__getattr__ = moved_module("securedp.accounting.methods", _moved)
