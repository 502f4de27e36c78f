"""Deprecated alias: securedp.mechanisms.data_phase moved to :mod:`securedp.bounding.data_phase` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.bounding import data_phase as _moved
from securedp.deprecation import moved_module

__getattr__ = moved_module("securedp.mechanisms.data_phase", _moved)
