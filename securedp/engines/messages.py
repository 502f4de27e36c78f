"""Deprecated alias: the bounding rule moved to :mod:`securedp.bounding.messages` (securedp 0.2).

It sits below both the statistics and the engines, so that neither imports the other. Every name
still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.bounding import messages as _moved
from securedp.deprecation import moved_module

__getattr__ = moved_module("securedp.engines.messages", _moved)
