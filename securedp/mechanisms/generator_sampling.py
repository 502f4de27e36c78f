"""Deprecated alias: securedp.mechanisms.generator_sampling moved to
:mod:`securedp.hazmat.generator_sampling` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.hazmat import generator_sampling as _moved

__getattr__ = moved_module("securedp.mechanisms.generator_sampling", _moved)
