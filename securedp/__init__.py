"""securedp: exact differential-privacy noise from cryptographically secure bits.

Layers, bottom up (imports only point downwards; ``tests/test_layers.py``):

0. ``securedp.hazmat``: exact numbers, random bits, the exact timing-hardened samplers, the drop-in
   generator and the samplers' self-test (no privacy accounting)
1. ``securedp.privacy``: what a release costs and the noise it buys; ``securedp.reading``: the one exact
   reader of every input kind
2. ``securedp.lattice``: fixed-point values; ``securedp.bounding``: the per-person bounding rule;
   ``securedp.ledger``: a release, its record, and the budget it is charged to
3. ``securedp.mechanisms``: each statistic and selection with its privacy map; ``securedp.engines`` beside
   it: exact per-key aggregates of grouped tables (Polars, Spark)
4. ``securedp.tables``: the one route of every release (a column is a one-cell table)
5. ``securedp.session``: the ``Session``; ``securedp.planning`` beside it: contribution analysis, private bounds
6. ``securedp.audit``: hash-chained audit log, verification, replay, report
7. ``securedp.cli``: the ``securedp`` command, beside this package

**Where to stand.** The top level exports what an analyst or data holder
uses: the releases (``count`` ... ``quantiles``, each with its
``prepare_*`` form), the selections, :class:`Session`, the drop-in
:class:`SecureGenerator`, the random sources and the audit log. The exact
samplers carry no privacy accounting of their own: they stay in
``securedp.hazmat.samplers`` (``securedp.hazmat.samplers.discrete_laplace``
...). Their old top-level names still work in this release, with a
:class:`DeprecationWarning`.
"""

# ruff: noqa: I001 - imports are grouped by layer, bottom up
from securedp.deprecation import deprecated
from typing import Any

from securedp._version import __version__

# Layer 0: random sources, exact numbers, the drop-in generator.
from securedp.hazmat.bits import ChaChaSource, RandomSource, SystemSource
from securedp.hazmat.exact.rational import InexactFloatWarning
from securedp.hazmat.generator import SecureGenerator

# Layer 2: lattice values; a release and the ledger's errors.
from securedp.lattice import Lattice
from securedp.ledger.errors import BudgetExceeded, DataRefused, IncompatibleCost
from securedp.ledger.release import PreparedRelease, Release

# Layer 3: the selections.
from securedp.mechanisms.exponential import exponential_mechanism, prepare_exponential_mechanism
from securedp.mechanisms.noisy_max import prepare_report_noisy_max, report_noisy_max
from securedp.mechanisms.permute_and_flip import permute_and_flip, prepare_permute_and_flip

# Layer 4: tables, the one route of every release.
from securedp.tables import prepare_table, table
from securedp.tables.one_column import (  # every release of one column is the one-cell table of it
    count,
    histogram,
    iqr,
    mean,
    median,
    prepare_count,
    prepare_histogram,
    prepare_iqr,
    prepare_mean,
    prepare_median,
    prepare_quantile,
    prepare_quantiles,
    prepare_sum,
    prepare_trimmed_mean,
    prepare_variance,
    quantile,
    quantiles,
    sum,  # noqa: A004 - the statistic's name; shadows builtins.sum here only
    trimmed_mean,
    variance,
)

# Layer 5: the session, planning beside it.
from securedp.session.session import Session
from securedp.planning import analyze_contributions, prepare_private_bounds, private_bounds

# Layer 6: audit.
from securedp.audit import AuditLog, AuditLogError, verify_log

__all__ = [  # noqa: RUF022 - grouped by what a user looks for, not alphabetically
    "__version__",
    # randomness
    "ChaChaSource", "RandomSource", "SystemSource",
    # values and releases
    "Lattice", "Release", "PreparedRelease", "InexactFloatWarning",
    "count", "sum", "mean", "variance", "trimmed_mean", "histogram",
    "prepare_count", "prepare_sum", "prepare_mean", "prepare_variance", "prepare_trimmed_mean", "prepare_histogram",
    # grouped tables (the aggregations are in securedp.tables)
    "table", "prepare_table",
    # selection
    "exponential_mechanism", "report_noisy_max", "permute_and_flip", "median", "quantile", "quantiles", "iqr",
    "prepare_exponential_mechanism", "prepare_report_noisy_max", "prepare_permute_and_flip",
    "prepare_median", "prepare_quantile", "prepare_quantiles", "prepare_iqr",
    # drop-in noise source
    "SecureGenerator",
    # accounting
    "Session", "BudgetExceeded", "DataRefused", "IncompatibleCost",
    # planning (contribution bounds, clamping bounds)
    "analyze_contributions", "private_bounds", "prepare_private_bounds",
    # audit
    "AuditLog", "AuditLogError", "verify_log",
]

MOVED_TO_HAZMAT = frozenset(
    {"bernoulli", "bernoulli_exp", "discrete_gaussian", "discrete_laplace", "geometric", "uniform_below"}
)
"""Samplers exported at the top level by securedp 0.1; now ``securedp.hazmat.samplers.<name>`` only."""


def __getattr__(name: str) -> Any:
    """The samplers' old top-level names, for one more release, with a :class:`DeprecationWarning`."""
    if name in MOVED_TO_HAZMAT:
        from securedp.hazmat import samplers

        deprecated(f"securedp.{name}", f"securedp.hazmat.samplers.{name} (a sampler with no privacy accounting), "
                   "or a release such as securedp.count / securedp.sum for a private statistic")
        return getattr(samplers, name)
    raise AttributeError(f"module 'securedp' has no attribute {name!r}")
