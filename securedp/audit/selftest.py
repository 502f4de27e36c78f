"""Deprecated alias: securedp.audit.selftest moved to :mod:`securedp.hazmat.selftest` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.hazmat import selftest as _moved

__getattr__ = moved_module("securedp.audit.selftest", _moved)
