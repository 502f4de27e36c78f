"""Deprecated alias: securedp.accounting.boundary moved to :mod:`securedp.session.boundary` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from securedp.session import boundary as _moved

__getattr__ = moved_module("securedp.accounting.boundary", _moved)
