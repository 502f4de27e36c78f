"""Deprecated alias: securedp.engines.bounding moved to :mod:`securedp.engines.polars.bounding` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.engines.polars import bounding as _moved

__getattr__ = moved_module("securedp.engines.bounding", _moved)
