"""Deprecated alias: securedp.mechanisms.release moved to :mod:`securedp.ledger.release` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.ledger import release as _moved

__getattr__ = moved_module("securedp.mechanisms.release", _moved)
