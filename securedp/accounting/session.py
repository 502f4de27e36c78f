"""Deprecated alias: securedp.accounting.session moved to :mod:`securedp.session.session` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.session import session as _moved

__getattr__ = moved_module("securedp.accounting.session", _moved)
