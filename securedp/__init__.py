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

# Audit trail and the drop-in generator (layers 2 and 4).
from securedp.audit import AuditLog, AuditLogError, verify_log  # noqa: E402
from securedp.mechanisms.generator import SecureGenerator  # noqa: E402

__all__ += ["AuditLog", "AuditLogError", "SecureGenerator", "verify_log"]

# Fixed-point releases and exact accounting (layers 3 and 4).
from securedp.accounting.errors import BudgetExceeded, IncompatibleCost  # noqa: E402
from securedp.accounting.session import Session  # noqa: E402
from securedp.lattice import Lattice  # noqa: E402
from securedp.mechanisms.count import count, prepare_count  # noqa: E402
from securedp.mechanisms.histogram import histogram, prepare_histogram  # noqa: E402
from securedp.mechanisms.mean import mean, prepare_mean  # noqa: E402
from securedp.mechanisms.sum import prepare_sum, sum  # noqa: E402
from securedp.mechanisms.variance import prepare_variance, variance  # noqa: E402

__all__ += [
    "BudgetExceeded", "IncompatibleCost", "Lattice", "Session", "count", "histogram", "mean", "prepare_count",
    "prepare_histogram", "prepare_mean", "prepare_sum", "prepare_variance", "sum", "variance",
]

# Selection: exponential mechanism, report noisy max, permute-and-flip, median and quantiles (layer 3).
from securedp.mechanisms.exponential import exponential_mechanism, prepare_exponential_mechanism  # noqa: E402
from securedp.mechanisms.noisy_max import prepare_report_noisy_max, report_noisy_max  # noqa: E402
from securedp.mechanisms.permute_and_flip import permute_and_flip, prepare_permute_and_flip  # noqa: E402
from securedp.mechanisms.quantile import (  # noqa: E402
    median,
    prepare_median,
    prepare_quantile,
    prepare_quantiles,
    quantile,
    quantiles,
)

__all__ += [
    "exponential_mechanism", "median", "permute_and_flip", "prepare_exponential_mechanism", "prepare_median",
    "prepare_permute_and_flip", "prepare_quantile", "prepare_quantiles", "prepare_report_noisy_max", "quantile",
    "quantiles", "report_noisy_max",
]
