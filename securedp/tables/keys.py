"""Deprecated alias: securedp.tables.keys moved to :mod:`securedp.engines.keys` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.engines import keys as _moved

__getattr__ = moved_module("securedp.tables.keys", _moved)
