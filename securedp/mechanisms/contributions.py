"""Deprecated alias: securedp.mechanisms.contributions moved to :mod:`securedp.bounding.contributions` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.bounding import contributions as _moved
from securedp.deprecation import moved_module

__getattr__ = moved_module("securedp.mechanisms.contributions", _moved)
