"""Deprecated alias: securedp.tables.engines moved to :mod:`securedp.engines.registry` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.engines import registry as _moved

__getattr__ = moved_module("securedp.tables.engines", _moved)
