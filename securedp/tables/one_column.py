"""Releases of one column: each is the one-cell table of that column, by the one route of every release.

``securedp.sum(data, bounds=(0, 100), epsilon=1, ids=ids)`` is
``securedp.table({"data": data, "ids": ids}, aggregations=[Sum("data", (0, 100))], id_column="ids",
max_rows=max_contributions, epsilon=1)`` with its one cell as the value: the same reader (ids and values
cell by cell, :mod:`securedp.reading`), the same bounding (each person keeps ``max_contributions`` rows,
chosen by the salted rule of :mod:`securedp.bounding`), the same noise, the same random bits and the same
record. So a one-column release and the one-cell table of the same data and seed are the same bytes,
and replaying either re-derives the other.

``data`` is one column of any kind (a list, a NumPy array, a pandas, Polars or pyarrow column); a table
or a 2-D array is refused, never flattened (:func:`securedp.lattice.columns.check_one_column`). ``ids``
(optional) holds one person id per row, read by the one rule of ids and keys
(:mod:`securedp.reading.keys`); without it every row is its own person and ``max_contributions`` is the
caller's promise. The release's ``value`` is the cell's exact value (an ``int`` when it is whole, else a
``Fraction``; a tuple for several quantiles or a histogram), its ``statistic`` the function's name, and
its ``parameters`` the table's (:mod:`securedp.tables.table`): the cell's laws under the aggregation's
name (``"data_sum"``), the bounds per person, the salt commitment.

Each ``prepare_<name>`` validates every public argument, reads the column (refusing a bad record for
the data holder, dropping it in an analyst-facing session) and prices the release; ``.execute(rng)``
draws it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import probability
from securedp.lattice.columns import ONE_COLUMN_HINT, NotOneColumnError
from securedp.mechanisms.contributions import check_max_contributions
from securedp.mechanisms.data_phase import check_shape
from securedp.mechanisms.quantile import check_levels
from securedp.mechanisms.quantile_split import split_depths
from securedp.mechanisms.record_schema import bounded_range
from securedp.mechanisms.records import exact_value
from securedp.mechanisms.release import Execution, PreparedRelease, Release
from securedp.mechanisms.statistic import release_function
from securedp.mechanisms.trimmed_mean import DEFAULT_SELECTION_SHARE, DEFAULT_TRIM
from securedp.privacy.accuracy import check_alpha
from securedp.tables.spec import (
    IQR,
    Aggregation,
    Count,
    Histogram,
    Mean,
    Quantile,
    Sum,
    TrimmedMean,
    Variance,
)
from securedp.tables.split_quantiles import Quantiles
from securedp.tables.table import PreparedTable, prepare_table

DATA, IDS = "data", "ids"
"""The names of the one-column table's columns: the data, and the person ids."""
POINTS = ("median", "quantile", "quantiles", "iqr", "trimmed_mean")
"""The statistics that select lattice points, each with a fallback point (``fallback=``)."""


@dataclass(frozen=True)
class OneCell:
    """How the one cell of the table becomes a release of one column: its name, the table columns holding its
    value (one, or several for a tuple) and the labels of a tuple."""

    statistic: str
    names: tuple[str, ...]
    single: bool = True
    labels: tuple[Any, ...] | None = None

    def value(self, table: Release) -> Any:
        row = dict(zip(table.labels or (), table.value[0], strict=True))
        values = tuple(_exact(row[name]) for name in self.names)
        return values[0] if self.single else values


def _exact(value: Any) -> Any:
    return exact_value(value) if isinstance(value, Fraction) else value


def request(statistic: str, column: str, *, bounds: Any = None, lattice: Any = None, levels: Any = None,
            categories: Any = None, bins: Any = None, unknown: str = "raise", trim: Any = DEFAULT_TRIM,
            selection_share: Any = DEFAULT_SELECTION_SHARE, fallback: Any = None) -> tuple[OneCell, list[Aggregation]]:
    """The table aggregations releasing ``statistic`` of ``column`` in one cell, and how that cell becomes the
    release's value: the one definition of each statistic of one column (the functions below, the command's
    ``--column --stat``, and their replay all ask here). ``levels`` are a quantile's (one) or quantiles' levels;
    ``trim`` and ``selection_share`` a trimmed mean's; ``fallback`` the fallback probability of every selection
    (``None``: its default, :mod:`securedp.mechanisms.rank_utility`)."""
    if fallback is not None and statistic not in POINTS:
        raise ValueError(f"fallback= applies to the selections ({', '.join(POINTS)}), not to a {statistic}")
    if statistic == "count":
        return OneCell("count", ("count",)), [Count()]
    if statistic in ("sum", "mean", "variance"):
        kinds: dict[str, type[Sum | Mean | Variance]] = {"sum": Sum, "mean": Mean, "variance": Variance}
        made = kinds[statistic](column, bounds, lattice)
        return OneCell(statistic, (made.name,)), [made]
    if statistic == "iqr":
        spread = IQR(column, bounds, lattice, fallback=fallback)
        return OneCell(statistic, (spread.name,)), [spread]
    if statistic == "trimmed_mean":
        trimmed = TrimmedMean(column, bounds, lattice, trim=trim, selection_share=selection_share, fallback=fallback)
        return OneCell(statistic, (trimmed.name,)), [trimmed]
    if statistic in ("median", "quantile", "quantiles"):
        qs = (Fraction(1, 2),) if statistic == "median" else check_levels(levels)
        if len(set(qs)) != len(qs):
            raise ValueError("qs repeats a level: each quantile level is released once")
        if statistic == "quantiles" and split_depths(len(qs)) < len(qs):  # fewer selections' worth: the split
            split = Quantiles(column, bounds, lattice, qs=qs, fallback=fallback)
            return OneCell(statistic, tuple(f"{split.name}_{i}" for i in range(len(qs))), False, qs), [split]
        share = Fraction(1, len(qs)) if len(qs) > 1 else None
        quantiles = [Quantile(column, bounds, lattice, share, q, fallback=fallback) for q in qs]
        single = statistic != "quantiles"
        return OneCell(statistic, tuple(a.name for a in quantiles), single, None if single else qs), list(quantiles)
    if statistic == "histogram":
        histogram = Histogram(column, categories=categories, bins=bins, lattice=lattice, unknown=unknown)
        labels = histogram.derivation().labels
        return OneCell("histogram", tuple(f"{histogram.name}_{i}" for i in range(len(labels))), False, labels), \
            [histogram]
    raise ValueError(f"unknown statistic {statistic!r}")


def column_table(data: Any, ids: Any, hint: str = ONE_COLUMN_HINT) -> tuple[dict[str, Any], str | None]:
    """The table of one column: ``{"data": data, "ids": ids}`` (``ids`` optional) and its id column; a table or
    a 2-D array given as ``data`` (or ``ids``) is refused, never flattened."""
    check_shape([("data", data, hint), ("ids", ids, ONE_COLUMN_HINT)])
    return {DATA: data, **({IDS: ids} if ids is not None else {})}, (IDS if ids is not None else None)


def one_cell(cell: OneCell, aggregations: Sequence[Aggregation], table: Any, id_column: str | None, *,
             epsilon: Any, rho: Any, max_contributions: Any, missing: str = "raise", fill: Any = None,
             schema: Any = None) -> PreparedRelease:
    """The release of one column: the table ``table`` (with ``id_column``, or each row a person) released with
    no group-by and ``max_rows = max_contributions``, its one cell returned as :class:`OneCell` says (see the
    module docstring)."""
    m = check_max_contributions(max_contributions)
    prepared = prepare_table(table, aggregations=list(aggregations), id_column=id_column, max_rows=m,
                             epsilon=epsilon, rho=rho, missing=missing, fill=fill, schema=schema)
    definition = next(iter(prepared.cells.values()))
    mechanism = definition.mechanism

    def execution(source: RandomSource) -> Execution:
        done = prepared.executed(source)
        released = done.release
        release = Release(value=cell.value(released), statistic=cell.statistic, mechanism=mechanism,
                          parameters=released.parameters, epsilon=released.epsilon, rho=released.rho,
                          max_contributions=released.max_contributions, labels=cell.labels, source=released.source)
        return Execution(release, done.input_bytes)

    return PreparedRelease(cell.statistic, prepared.epsilon, prepared.rho, lambda source: execution(source).release,
                           accuracy=_accuracy(prepared), value_halfwidth=definition.value_halfwidth,
                           execution=execution, bounded_range=bounded_range(cell.statistic, mechanism))


def _accuracy(table: PreparedTable) -> Callable[[Any], Mapping[str, Fraction]]:
    def accuracy(alpha: Any) -> dict[str, Fraction]:
        level = check_alpha(alpha)  # "1/20", a Fraction, an int or a float (read exactly), in (0, 1)
        stated: dict[str, Fraction] = {}
        for definition in table.cells.values():
            stated.update(definition.accuracy(level))
        return stated

    return accuracy


def _release(statistic: str, data: Any, ids: Any, *, epsilon: Any, rho: Any, max_contributions: Any,
             missing: str = "raise", fill: Any = None, hint: str = ONE_COLUMN_HINT, **asked: Any) -> PreparedRelease:
    table, id_column = column_table(data, ids, hint)
    cell, aggregations = request(statistic, DATA, **asked)
    try:
        return one_cell(cell, aggregations, table, id_column, epsilon=epsilon, rho=rho,
                        max_contributions=max_contributions, missing=missing, fill=fill)
    except NotOneColumnError as error:  # records that are rows: a Python caller passed a table as a column
        said = str(error).replace(f"column {DATA!r}", "data", 1)
        raise NotOneColumnError(f"{said}; data looks like rows of a table, not one column: {hint}") from None


def prepare_count(data: Any, *, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
                  ids: Any = None) -> PreparedRelease:
    """Validate and price a count of the rows of ``data`` (whatever they hold); nothing is drawn until
    ``.execute(rng)``. See :mod:`securedp.mechanisms.count`."""
    return _release("count", data, ids, epsilon=epsilon, rho=rho, max_contributions=max_contributions)


def prepare_sum(data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
                ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None) -> PreparedRelease:
    """Validate and price a bounded sum; nothing is drawn until ``.execute(rng)``. See
    :mod:`securedp.mechanisms.sum`."""
    return _release("sum", data, ids, epsilon=epsilon, rho=rho, max_contributions=max_contributions,
                    missing=missing, fill=fill, bounds=bounds, lattice=lattice)


def prepare_mean(data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
                 ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None) -> PreparedRelease:
    """Validate and price a bounded mean; nothing is drawn until ``.execute(rng)``. See
    :mod:`securedp.mechanisms.mean`."""
    return _release("mean", data, ids, epsilon=epsilon, rho=rho, max_contributions=max_contributions,
                    missing=missing, fill=fill, bounds=bounds, lattice=lattice)


def prepare_variance(data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None,
                     max_contributions: Any = 1, ids: Any = None, lattice: Any = None, missing: str = "raise",
                     fill: Any = None) -> PreparedRelease:
    """Validate and price a bounded (population) variance; nothing is drawn until ``.execute(rng)``. See
    :mod:`securedp.mechanisms.variance`."""
    return _release("variance", data, ids, epsilon=epsilon, rho=rho, max_contributions=max_contributions,
                    missing=missing, fill=fill, bounds=bounds, lattice=lattice)


def prepare_quantiles(data: Any, qs: Sequence[Any], *, bounds: Any = None, epsilon: Any = None, rho: Any = None,
                      max_contributions: Any = 1, ids: Any = None, lattice: Any = None, missing: str = "raise",
                      fill: Any = None, fallback: Any = None) -> PreparedRelease:
    """Validate and price several quantiles: of three or more levels by the recursive split
    (``epsilon / ceil(log2(len(qs) + 1))`` per depth, :mod:`securedp.mechanisms.quantile_split`), else
    ``epsilon / len(qs)`` each, by the exact exponential mechanism; nothing is drawn yet. The release's value
    is a tuple in the order of ``qs``. See :mod:`securedp.mechanisms.quantile`."""
    return _release("quantiles", data, ids, epsilon=epsilon, rho=rho, max_contributions=max_contributions,
                    missing=missing, fill=fill, bounds=bounds, lattice=lattice, levels=qs, fallback=fallback)


def prepare_quantile(data: Any, q: Any, /, *, bounds: Any = None, epsilon: Any = None, rho: Any = None,
                     max_contributions: Any = 1, ids: Any = None, lattice: Any = None, missing: str = "raise",
                     fill: Any = None, fallback: Any = None) -> PreparedRelease:
    """Validate and price one quantile ``q`` (a rational in [0, 1]); nothing is drawn yet. ``fallback``: the
    probability that a cell without records releases the fallback point ``lo + q (hi - lo)`` (default 3/4; 0:
    none; :mod:`securedp.mechanisms.rank_utility`)."""
    return _release("quantile", data, ids, epsilon=epsilon, rho=rho, max_contributions=max_contributions,
                    missing=missing, fill=fill, bounds=bounds, lattice=lattice, levels=(probability(q, "q"),),
                    fallback=fallback)


def prepare_median(data: Any, /, *, bounds: Any = None, epsilon: Any = None, rho: Any = None,
                   max_contributions: Any = 1, ids: Any = None, lattice: Any = None, missing: str = "raise",
                   fill: Any = None, fallback: Any = None) -> PreparedRelease:
    """Validate and price the median (the quantile 1/2); nothing is drawn yet. ``fallback``: the probability
    that a cell without records releases the middle of the bounds (default 3/4; 0: none;
    :mod:`securedp.mechanisms.rank_utility`)."""
    return _release("median", data, ids, epsilon=epsilon, rho=rho, max_contributions=max_contributions,
                    missing=missing, fill=fill, bounds=bounds, lattice=lattice, fallback=fallback)


def prepare_iqr(data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
                ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None,
                fallback: Any = None) -> PreparedRelease:
    """Validate and price the interquartile range (both quartiles at half the cost); nothing is drawn yet.
    See :mod:`securedp.mechanisms.iqr`."""
    return _release("iqr", data, ids, epsilon=epsilon, rho=rho, max_contributions=max_contributions,
                    missing=missing, fill=fill, bounds=bounds, lattice=lattice, fallback=fallback)


def prepare_trimmed_mean(data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None,
                         max_contributions: Any = 1, ids: Any = None, trim: Any = DEFAULT_TRIM,
                         selection_share: Any = DEFAULT_SELECTION_SHARE, lattice: Any = None, missing: str = "raise",
                         fill: Any = None, fallback: Any = None) -> PreparedRelease:
    """Validate and price a trimmed (winsorized) mean: the ``trim`` and ``1 - trim`` quantiles at
    ``selection_share`` of the cost, then the bounded mean of the records clamped between them; nothing is drawn
    yet. See :mod:`securedp.mechanisms.trimmed_mean`."""
    return _release("trimmed_mean", data, ids, epsilon=epsilon, rho=rho, max_contributions=max_contributions,
                    missing=missing, fill=fill, bounds=bounds, lattice=lattice, trim=trim,
                    selection_share=selection_share, fallback=fallback)


def prepare_histogram(data: Any, *, categories: Any = None, bins: Any = None, epsilon: Any = None, rho: Any = None,
                      max_contributions: Any = 1, ids: Any = None, unknown: str = "raise", lattice: Any = None,
                      missing: str = "raise", fill: Any = None) -> PreparedRelease:
    """Validate and price a histogram over declared ``categories`` or ``bins`` (edges): one noisy count each,
    one cost for all; nothing is drawn yet. See :mod:`securedp.mechanisms.histogram`."""
    tuples = categories is not None and not isinstance(categories, (str, bytes)) and hasattr(categories, "__iter__") \
        and any(isinstance(c, tuple) for c in categories)
    hint = ("for tuple categories pass one column whose records are tuples, e.g. list(zip(df['a'], df['b']))"
            if tuples else ONE_COLUMN_HINT)
    return _release("histogram", data, ids, epsilon=epsilon, rho=rho, max_contributions=max_contributions,
                    missing=missing, fill=fill, hint=hint, categories=categories, bins=bins, lattice=lattice,
                    unknown=unknown)


count = release_function(prepare_count, "count", """Release the number of rows of ``data`` with ``epsilon``-DP \
(or ``rho``-zCDP); see :mod:`securedp.mechanisms.count`.""")
sum = release_function(  # noqa: A001 - the public name mirrors the statistic
    prepare_sum, "sum", """Release the sum of ``data`` clamped to ``bounds`` with ``epsilon``-DP (or ``rho``-zCDP); \
see :mod:`securedp.mechanisms.sum`.""")
mean = release_function(prepare_mean, "mean", """Release the mean of ``data`` clamped to ``bounds``; see \
:mod:`securedp.mechanisms.mean` for the privacy map.""")
variance = release_function(prepare_variance, "variance", """Release the population variance of ``data`` clamped \
to ``bounds``; see :mod:`securedp.mechanisms.variance`.""")
quantiles = release_function(prepare_quantiles, "quantiles", """Several quantiles, each an exact lattice value \
(a tuple, in the order of ``qs``); see :mod:`securedp.mechanisms.quantile`.""")
quantile = release_function(prepare_quantile, "quantile", """The ``q``-quantile as an exact lattice value \
(``int`` or ``Fraction``); see :mod:`securedp.mechanisms.quantile`.""")
median = release_function(prepare_median, "median", """The median as an exact lattice value (``int`` or \
``Fraction``); see :mod:`securedp.mechanisms.quantile`.""")
iqr = release_function(prepare_iqr, "iqr", """The interquartile range ``max(Q3 - Q1, 0)`` as an exact lattice \
value; see :mod:`securedp.mechanisms.iqr`.""")
trimmed_mean = release_function(prepare_trimmed_mean, "trimmed_mean", """The trimmed (winsorized) mean of \
``data`` as an exact lattice value: the mean of the records clamped between two private trim points (by default \
the 1/10 and 9/10 quantiles); see :mod:`securedp.mechanisms.trimmed_mean`.""")
histogram = release_function(prepare_histogram, "histogram", """Release noisy counts for declared categories or \
bins; one ``epsilon`` for all bins (see :mod:`securedp.mechanisms.histogram`).""")
