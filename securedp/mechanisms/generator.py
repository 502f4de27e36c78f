"""Deprecated alias: securedp.mechanisms.generator moved to :mod:`securedp.hazmat.generator` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.hazmat import generator as _moved

__getattr__ = moved_module("securedp.mechanisms.generator", _moved)
