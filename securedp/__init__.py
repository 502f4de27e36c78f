"""securedp: exact differential-privacy noise from cryptographically secure bits.

Layers, bottom up (imports only point downwards):

1. ``securedp.hazmat.exact``, ``securedp.hazmat.bits``: exact numbers, random bits
2. ``securedp.hazmat.samplers``: exact, timing-hardened samplers
3. ``securedp.lattice``, ``securedp.mechanisms``: fixed-point values, releases and their privacy maps
4. ``securedp.accounting``: budgets and sessions
5. ``securedp.audit``, ``securedp.cli``: audit logs, replay, the ``securedp`` command
"""

from securedp._version import __version__
from securedp.hazmat.bits import ChaChaSource, RandomSource, SystemSource
from securedp.hazmat.samplers import (
    bernoulli,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    geometric,
    uniform_below,
)

__all__ = [
    "ChaChaSource",
    "RandomSource",
    "SystemSource",
    "__version__",
    "bernoulli",
    "bernoulli_exp",
    "discrete_gaussian",
    "discrete_laplace",
    "geometric",
    "uniform_below",
]
