"""Deprecated alias: securedp.tables.frames moved to :mod:`securedp.engines.frames` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.engines import frames as _moved

__getattr__ = moved_module("securedp.tables.frames", _moved)
