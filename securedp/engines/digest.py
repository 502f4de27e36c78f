"""Deprecated alias: the digests of the bounding rule moved to :mod:`securedp.bounding.digest` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.bounding import digest as _moved
from securedp.deprecation import moved_module

__getattr__ = moved_module("securedp.engines.digest", _moved)
