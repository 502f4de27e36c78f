"""Deprecated alias: securedp.accounting.recording moved to :mod:`securedp.session.recording` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.session import recording as _moved

__getattr__ = moved_module("securedp.accounting.recording", _moved)
