"""Grouped table releases: counts, sums, means and variances per group, exactly, over one table.

``prepare_table(data, group_by=[...], aggregations=[...], ...)`` validates
everything that can be checked before a draw (columns, key and id cells, the
values of every aggregated column under the ``missing`` policy, the budget
split) and prices the release; ``.execute(rng)`` then runs the two steps of
the aggregate/noise boundary:

1. **Exact aggregates, by an engine.** A secret 32-byte salt is drawn from the
   release's random source; every person is bounded to ``max_groups`` keys and
   ``max_rows`` rows per key by the SHA-256 rule of
   :mod:`securedp.engines.bounding`, and every key gets exact integers (rows,
   distinct persons, sums and sums of squares of lattice units). Polars runs
   it in memory (pandas, polars and pyarrow tables, CSV and Parquet files);
   the same integers come from Spark for a Spark DataFrame
   (:mod:`securedp.engines.spark`).
2. **Noise, once, here.** Keys are the caller's public keys (every given key
   gets a cell, data keys outside the list are dropped before bounding) or
   private keys chosen by partition selection
   (:mod:`securedp.mechanisms.partition_selection`: Laplace thresholding,
   whose noisy person count is then released for free, or the optimal rule).
   Every aggregate of every kept cell gets exact noise
   (:mod:`securedp.tables.noise`), calibrated as :mod:`securedp.tables.spec`
   states.

**Budget.** The total ``epsilon`` (or ``rho``) is split across the
aggregations (and partition selection, for private keys, ``1/2`` of
``epsilon`` by default) in exact rational shares: an aggregation's ``share=``
fixes its fraction of the total, and the rest is divided equally among those
without one. :attr:`PreparedTable.shares` shows the split before anything is
drawn; the shares must add up to exactly 1. ``delta`` (private keys only) goes
wholly to partition selection.

**Output.** A :class:`TableRelease` whose ``value`` holds the exact rows (key
values, then per aggregation its value and the bounds of its confidence
interval at level ``1 - alpha``) and whose :attr:`TableRelease.frame` is a
DataFrame of the caller's kind (pandas, polars or pyarrow; polars for a file).
Counts are ints, lattice values are exact ``Decimal`` (or ``"num/den"``
strings for a step with no finite decimal form), never rounded floats. The
interval of a count or sum covers the true aggregate with probability at least
``1 - alpha`` (exact noise law, directed rounding); a mean's interval holds
with probability at least ``1 - alpha`` by a union bound over its two noisy
moments (each at ``alpha / 2``); a variance carries none.

The privacy unit is the person of ``id_column``; without one, each row is a
person (and the release says so).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import gmpy2
import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import to_rational
from securedp.mechanisms import partition_selection
from securedp.mechanisms.accuracy import check_alpha
from securedp.mechanisms.contributions import analyst_facing, data_policy
from securedp.mechanisms.noise import Cost, privacy_cost
from securedp.mechanisms.quantile import Quantile as QuantileSelection
from securedp.mechanisms.quantile import SortedUnits
from securedp.mechanisms.records import LatticeColumn
from securedp.mechanisms.release import PreparedRelease, Release, encode_input
from securedp.tables.noise import CellNoise
from securedp.tables.spec import Aggregation, Count, Mean, Persons, Quantile, Sum, Variance

if TYPE_CHECKING:  # the engines load Polars (and Spark) only when a table is prepared
    import polars as pl

    from securedp.engines.bounding import KeyAggregates, UnitCounts
    from securedp.tables.engines import ColumnSpec, Engine

SELECTION_RULES = ("laplace", "optimal")


@dataclass(frozen=True)
class TableRelease(Release):
    """A released table: :attr:`value` is the tuple of exact rows, :attr:`labels` the column names."""

    frame: Any = field(default=None, compare=False)
    """The released table as a DataFrame of the caller's kind."""
    delta: Fraction | None = None
    """The ``delta`` of partition selection (private keys), else ``None``."""


@dataclass(frozen=True)
class PreparedTable(PreparedRelease):
    """A validated, priced table release; nothing is drawn until ``.execute(rng)``."""

    delta: Fraction | None = None
    shares: dict[str, Fraction] = field(default_factory=dict)
    """The exact fraction of the total budget each component receives."""


@dataclass(frozen=True)
class _Column:
    """One aggregation of a value column: its public lattice and its index among the engine's columns."""

    aggregation: Sum | Mean | Variance | Quantile
    step: Fraction
    lo_u: int
    hi_u: int
    index: int


def _columns(aggregations: Sequence[Aggregation]) -> list[_Column]:
    """The value-column aggregations; those on the same column, lattice and bounds share one engine column."""
    columns: list[_Column] = []
    specs: dict[tuple[str, Fraction, int, int], int] = {}
    for a in aggregations:
        if isinstance(a, (Sum, Mean, Variance, Quantile)):
            lattice, lo_u, hi_u = a.lattice_of()
            if max(abs(lo_u), abs(hi_u)) >= 1 << 62:
                raise ValueError(f"{a.name}: the bounds reach 2**62 lattice units; choose a coarser lattice")
            index = specs.setdefault((a.column, lattice.step, lo_u, hi_u), len(specs))
            columns.append(_Column(a, lattice.step, lo_u, hi_u, index))
    return columns


def _engine_specs(columns: list[_Column]) -> list[ColumnSpec]:
    from securedp.tables.engines import ColumnSpec

    specs: dict[int, ColumnSpec] = {}
    for c in columns:
        specs.setdefault(c.index, ColumnSpec(c.aggregation.column, c.step, c.lo_u, c.hi_u))
    return [specs[i] for i in range(len(specs))]


class _Aggregates:
    """Step (1) for one salt: each engine column bounded and aggregated once (with squares if any needs them).

    The row and person counts come from the first column's pass when no value is dropped (every
    column then keeps the same rows, and bounding keeps ``min(rows, max_rows)`` of each pair and the
    same pairs whatever the units), else from a pass of their own.
    """

    def __init__(self, engine: Engine, columns: list[_Column], salt: bytes, same_rows: bool) -> None:
        self._engine, self._salt = engine, salt
        self._cache: dict[int, KeyAggregates] = {}
        self._squares = {c.index for c in columns if isinstance(c.aggregation, Variance)}
        self.counts = self.column(0) if same_rows and columns else engine.counts(salt)

    def column(self, index: int) -> KeyAggregates:
        if index not in self._cache:
            self._cache[index] = self._engine.column(index, self._salt, index in self._squares)
        return self._cache[index]

    def unit_counts(self, index: int) -> UnitCounts:
        return self._engine.unit_counts(index, self._salt)


def _shares(aggregations: Sequence[Aggregation], private: bool, selection_share: Any) -> dict[str, Fraction]:
    given: dict[str, Fraction | None] = {}
    if private:
        given["partition_selection"] = (Fraction(1, 2) if selection_share is None
                                        else to_rational(selection_share, "selection_share"))
    for a in aggregations:
        if a.name in given:
            raise ValueError(f"two aggregations are both named {a.name!r}")
        given[a.name] = None if a.share is None else to_rational(a.share, f"{a.name} share")
    fixed = sum((v for v in given.values() if v is not None), Fraction(0))
    free = [n for n, v in given.items() if v is None]
    if any(v is not None and not 0 < v <= 1 for v in given.values()):
        raise ValueError("every share must lie in (0, 1]")
    if free and fixed >= 1:
        raise ValueError(f"the given shares already add up to {fixed}: nothing is left for {free}")
    shares = {n: (v if v is not None else (1 - fixed) / len(free)) for n, v in given.items()}
    if sum(shares.values()) != 1:
        raise ValueError(f"the shares must add up to exactly 1, not {sum(shares.values())}")
    return shares


def _limit(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not a bool")
    n = int(to_rational(value, name))
    if n != to_rational(value, name) or n < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return n


def prepare_table(
    data: Any,
    *,
    group_by: Sequence[str] = (),
    aggregations: Sequence[Aggregation] = (Count(),),
    keys: Any = None,
    id_column: str | None = None,
    max_groups: Any = 1,
    max_rows: Any = 1,
    epsilon: Any = None,
    rho: Any = None,
    delta: Any = None,
    selection: str = "laplace",
    selection_share: Any = None,
    alpha: Any = "0.05",
    missing: str = "raise",
    fill: Any = None,
) -> PreparedTable:
    """Validate and price a grouped table release; see the module docstring."""
    cost = privacy_cost(epsilon, rho)
    k, m = _limit(max_groups, "max_groups"), _limit(max_rows, "max_rows")
    level = check_alpha(alpha)
    group_by = [group_by] if isinstance(group_by, str) else list(group_by)
    aggregations = list(aggregations)
    if not aggregations:
        raise ValueError("give at least one aggregation")
    for a in aggregations:
        if not isinstance(a, (Count, Persons, Sum, Mean, Variance, Quantile)):
            raise TypeError(f"not an aggregation: {a!r}")
        if isinstance(a, Quantile) and cost.epsilon is None:
            raise ValueError(f"{a.name}: quantiles are released by the exponential mechanism, priced in epsilon; "
                             "a rho table cannot hold them")
    private = keys is None
    if private and not group_by:
        private = False  # one cell, always released
    if selection not in SELECTION_RULES:
        raise ValueError(f"selection must be one of {SELECTION_RULES}, got {selection!r}")
    if private:
        if delta is None:
            raise ValueError("private keys need delta= (partition selection is (epsilon, delta)-DP); "
                             "or pass the public keys with keys=")
        if cost.epsilon is None:
            raise ValueError("private keys are selected with epsilon (Laplace thresholding or the optimal rule); "
                             "a rho table needs public keys= for now")
        dlt = to_rational(delta, "delta")
    elif delta is not None:
        raise ValueError("delta= is only used to select private keys; with public keys= the release is pure")
    from securedp.engines.digest import draw_salt
    from securedp.tables.engines import Bounds, engine_for, public_keys

    shares = _shares(aggregations, private, selection_share)
    columns = _columns(aggregations)
    public = public_keys(keys, group_by) if not private and group_by else None

    analyst = analyst_facing()
    missing = data_policy(missing)[0]  # analyst-facing: "raise" acts as "drop"
    engine = engine_for(data, id_column, Bounds(group_by, k, m, analyst), _engine_specs(columns), public, missing,
                        fill)

    def part(name: str) -> tuple[Fraction | None, Fraction | None]:
        share = shares[name]
        return (cost.epsilon * share if cost.epsilon is not None else None,
                cost.rho * share if cost.rho is not None else None)

    plan = None
    if private:
        eps_s, _ = part("partition_selection")
        assert eps_s is not None
        plan = (partition_selection.laplace_threshold(eps_s, dlt, k) if selection == "laplace"
                else partition_selection.optimal_selection(eps_s, dlt, k))

    committed: dict[str, Any] = {}

    def run(source: RandomSource) -> Release:
        salt = draw_salt(source)
        aggregates = _Aggregates(engine, columns, salt, same_rows=missing != "drop")
        counted = aggregates.counts
        committed.clear()
        committed.update(_commitment_parts("", counted))
        cells = _cells(counted, public, group_by)
        extra: dict[str, list[Any]] = {}
        if plan is not None:
            persons = np.array([counted.persons[i] for i in cells.index], dtype=np.int64)
            if isinstance(plan, partition_selection.LaplaceThreshold):
                chosen = plan.select(persons, source)
                keep = chosen.keep
                extra["persons"] = [int(v) for v in np.asarray(chosen.noisy)[keep]]
            else:
                keep = plan.select(persons, source)
            cells = cells.subset(np.flatnonzero(keep))
        names, rows = _release_cells(cells, counted, aggregates, columns, aggregations, part, k, m, level,
                                     source, extra, group_by, committed)
        parameters = {
            "group_by": list(group_by), "keys": "private" if private else "public", "max_groups": k,
            "max_rows": m, "privacy_unit": id_column or "row", "alpha": level, "shares": dict(shares),
            "salt_commitment": hashlib.sha256(salt).hexdigest(),
        }
        if plan is not None:
            parameters["selection"] = selection
            parameters["delta"] = dlt
            if isinstance(plan, partition_selection.LaplaceThreshold):
                parameters["threshold"] = plan.threshold
        parameters.update(_noise_records(columns, aggregations, part, k, m, level))
        frame_out = engine.output(names, rows)
        return TableRelease(value=tuple(rows), statistic="table", mechanism=_mechanism(cost.epsilon),
                            parameters=parameters, epsilon=cost.epsilon, rho=cost.rho, max_contributions=k * m,
                            labels=tuple(names), source=source.describe(), frame=frame_out,
                            delta=dlt if private else None)

    def input_bytes() -> bytes:
        return encode_input("table", committed)

    return PreparedTable("table", cost.epsilon, cost.rho, run, input_bytes, dlt if private else None, shares)


def _commitment_parts(prefix: str, agg: KeyAggregates) -> dict[str, Any]:
    """The exact per-key integers of ``agg`` as input-commitment parts (keys as their canonical JSON text)."""
    parts: dict[str, Any] = {f"{prefix}keys": json.dumps([list(r) for r in agg.keys.iter_rows()]),
                             f"{prefix}rows": agg.rows, f"{prefix}persons": agg.persons}
    if agg.total is not None:
        parts[f"{prefix}sum_units"] = agg.total
    if agg.total_squares is not None:
        parts[f"{prefix}sum_squares"] = agg.total_squares
    return parts


def _mechanism(epsilon: Fraction | None) -> str:
    return "discrete_laplace" if epsilon is not None else "discrete_gaussian"


@dataclass(frozen=True)
class _Cells:
    """The released cells: their key rows and, for each, its index in the engine's aggregates (or -1)."""

    keys: list[tuple[Any, ...]]
    index: list[int]

    def subset(self, chosen: np.ndarray) -> _Cells:
        return _Cells([self.keys[i] for i in chosen], [self.index[i] for i in chosen])


def _cells(counted: KeyAggregates, public: pl.DataFrame | None, group_by: list[str]) -> _Cells:
    data_keys = [tuple(r) for r in counted.keys.iter_rows()] if group_by else [()] * len(counted.rows)
    position = {key: i for i, key in enumerate(data_keys)}
    if public is None:
        if not group_by:
            return _Cells([()], [0 if data_keys else -1])
        return _Cells(data_keys, list(range(len(data_keys))))
    wanted = [tuple(r) for r in public.iter_rows()]
    return _Cells(wanted, [position.get(key, -1) for key in wanted])


def _at(values: list[int] | None, index: list[int]) -> list[int]:
    if values is None:
        return [0] * len(index)
    return [values[i] if i >= 0 else 0 for i in index]


def _round_half_even(x: Fraction) -> int:
    q, r = divmod(x.numerator, x.denominator)
    twice = 2 * r
    return q + (1 if twice > x.denominator or (twice == x.denominator and q & 1) else 0)


def _centre(lo_u: int, hi_u: int) -> tuple[int, int]:
    c = (lo_u + hi_u) // 2
    return c, max(hi_u - c, c - lo_u, 1)


def _noises(a: Aggregation, column: _Column | None, part: Any, k: int, m: int) -> list[CellNoise]:
    """The noise of each noisy integer of ``a``, in draw order (see :mod:`securedp.tables.spec`)."""
    eps, rho = part(a.name)
    if isinstance(a, Count):
        return [CellNoise(k, m, eps, rho)]
    if isinstance(a, Persons):
        return [CellNoise(k, 1, eps, rho)]
    assert column is not None
    if isinstance(a, Quantile):
        return []  # a selection, not additive noise: see _quantiles
    if isinstance(a, Sum):
        return [CellNoise(k, m * max(abs(column.lo_u), abs(column.hi_u), 1), eps, rho)]
    _, h = _centre(column.lo_u, column.hi_u)
    parts = 2 if isinstance(a, Mean) else 3
    e, r = (eps / parts if eps is not None else None), (rho / parts if rho is not None else None)
    sensitivities = [m, m * h] if isinstance(a, Mean) else [m, m * h, m * h * h]
    return [CellNoise(k, s, e, r) for s in sensitivities][:parts]


def _noise_records(columns: list[_Column], aggregations: Sequence[Aggregation], part: Any, k: int,
                   m: int, alpha: Fraction) -> dict[str, Any]:
    by_name = {c.aggregation.name: c for c in columns}
    out: dict[str, Any] = {}
    for a in aggregations:
        column = by_name.get(a.name)
        record: dict[str, Any] = {"noise": [n.record() for n in _noises(a, column, part, k, m)]}
        if column is not None:
            record.update(column=column.aggregation.column, lattice_step=column.step,
                          bounds_units=[column.lo_u, column.hi_u])
        if isinstance(a, Quantile):
            eps = part(a.name)[0]
            assert eps is not None and column is not None  # prepare_table refuses quantiles in rho tables
            candidates = column.hi_u - column.lo_u + 1
            record.update(noise=[], selection="exponential", q=to_rational(a.q, "q"), epsilon_cell=eps / k,
                          sensitivity=m, candidates=candidates,
                          rank_error_bound=rank_error_bound(eps / k, m, candidates, alpha))
        out[a.name] = record
    return out


def _release_cells(cells: _Cells, counted: KeyAggregates, aggregates: _Aggregates, columns: list[_Column],
                   aggregations: Sequence[Aggregation], part: Any, k: int, m: int, alpha: Fraction,
                   source: RandomSource, extra: dict[str, list[Any]], group_by: list[str],
                   committed: dict[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Noise every aggregate of every cell (aggregation order, then cell order) and assemble the rows."""
    names = list(group_by)
    table: list[list[Any]] = [list(key) for key in cells.keys]
    n = len(cells.keys)

    def add(name: str, values: list[Any], low: list[Any] | None = None, high: list[Any] | None = None) -> None:
        names.append(name)
        for row, v in zip(table, values, strict=True):
            row.append(v)
        if low is not None and high is not None:
            names.extend([f"{name}_low", f"{name}_high"])
            for row, lo, hi in zip(table, low, high, strict=True):
                row.extend([lo, hi])

    if "persons" in extra:
        t = CellNoise(k, 1, part("partition_selection")[0], None).halfwidth(alpha)
        noisy = extra["persons"]
        add("selection_persons", noisy, [v - t for v in noisy], [v + t for v in noisy])
    by_name = {c.aggregation.name: c for c in columns}
    for a in aggregations:
        column = by_name.get(a.name)
        noises = _noises(a, column, part, k, m)
        if column is None:
            exact = _at(counted.rows if isinstance(a, Count) else counted.persons, cells.index)
            noise = noises[0]
            noisy = [x + z for x, z in zip(exact, noise.draw(n, source), strict=True)]
            t = noise.halfwidth(alpha)
            add(a.name, noisy, [v - t for v in noisy], [v + t for v in noisy])
            continue
        if isinstance(a, Quantile):
            eps = part(a.name)[0]
            assert eps is not None  # prepare_table refuses quantiles in rho tables
            add(a.name, _quantiles(a, column, aggregates.unit_counts(column.index), cells, group_by, eps / k, m,
                                   source, committed))
            continue
        agg = aggregates.column(column.index)
        committed.update(_commitment_parts(f"{column.index}.", agg))
        index = _column_index(agg, cells, group_by)
        rows, total = _at(agg.rows, index), _at(agg.total, index)
        step = column.step
        if isinstance(a, Sum):
            noisy = [x + z for x, z in zip(total, noises[0].draw(n, source), strict=True)]
            t = noises[0].halfwidth(alpha)
            add(a.name, [v * step for v in noisy], [(v - t) * step for v in noisy], [(v + t) * step for v in noisy])
        elif isinstance(a, Mean):
            add(a.name, *_means(rows, total, noises, column, alpha, n, source))
        else:
            add(a.name, _variances(rows, total, _at(agg.total_squares, index), noises, column, n, source))
    return names, [tuple(row) for row in table]


def _quantiles(a: Quantile, column: _Column, counted: UnitCounts, cells: _Cells, group_by: list[str],
               epsilon_cell: Fraction, m: int, source: RandomSource, committed: dict[str, Any]) -> list[Any]:
    """One exact exponential-mechanism selection per cell over the lattice points of the bounds.

    Each cell's selection is :class:`securedp.mechanisms.quantile.Quantile` (utility
    ``-|#{x < y} - q n|``, sensitivity ``m``) at ``epsilon_a / k`` on that cell's kept rows; a cell
    without rows selects from the empty multiset (every point has the same utility).
    """
    statistic = QuantileSelection(Cost(epsilon_cell, None), _lattice_column(a, column, m),
                                  (to_rational(a.q, "q"),))
    position = ({tuple(r): i for i, r in enumerate(counted.keys.iter_rows())} if group_by
                else {(): 0} if counted.points else {})
    committed[f"{column.index}.quantile_keys"] = json.dumps([list(r) for r in counted.keys.iter_rows()])
    committed[f"{column.index}.quantile_points"] = [p for points in counted.points for p in points]
    committed[f"{column.index}.quantile_counts"] = [c for counts in counted.counts for c in counts]
    values = []
    for key in cells.keys:
        i = position.get(key)
        units = (SortedUnits.from_counts(counted.points[i], counted.counts[i]) if i is not None
                 else SortedUnits(np.zeros(0, dtype=np.int64)))
        values.append(statistic.sampler(units)(source))
    return values


def _lattice_column(a: Quantile, column: _Column, m: int) -> LatticeColumn:
    lattice = LatticeColumn.of(bounds=a.bounds, lattice=column.step, max_contributions=m, missing="raise",
                               fill=None)
    assert (lattice.lo_u, lattice.hi_u) == (column.lo_u, column.hi_u)
    return lattice


def rank_error_bound(epsilon: Fraction, sensitivity: int, candidates: int, alpha: Fraction) -> int:
    """An integer ``r`` with ``P(u(y) < OPT - r) <= alpha`` for the exponential mechanism's output ``y``.

    McSherry and Talwar (2007): ``P(u(y) <= OPT - (2 s / epsilon)(ln |Y| + t)) <= exp(-t)``; with
    ``t = ln(1 / alpha)`` that is ``(2 s / epsilon) ln(|Y| / alpha)``, rounded up with MPFR.
    """
    with gmpy2.context(precision=128, round=gmpy2.RoundUp):
        bound = 2 * sensitivity * gmpy2.log(gmpy2.mpq(candidates * alpha.denominator, alpha.numerator))
        return int(gmpy2.ceil(bound / gmpy2.mpq(epsilon.numerator, epsilon.denominator)))


def _column_index(agg: KeyAggregates, cells: _Cells, group_by: list[str]) -> list[int]:
    if not group_by:
        return [0 if agg.rows else -1] * len(cells.keys)
    position = {tuple(r): i for i, r in enumerate(agg.keys.iter_rows())}
    return [position.get(key, -1) for key in cells.keys]


def _means(rows: list[int], total: list[int], noises: list[CellNoise], column: _Column, alpha: Fraction, n: int,
           source: RandomSource) -> tuple[list[Fraction], list[Fraction], list[Fraction]]:
    """Mean per cell: ``step * round(clamp(c + S~ / max(N~, 1)))``; interval by a union bound at ``alpha / 2`` each."""
    c, _ = _centre(column.lo_u, column.hi_u)
    lo_u, hi_u, step = column.lo_u, column.hi_u, column.step
    counts = [x + z for x, z in zip(rows, noises[0].draw(n, source), strict=True)]
    sums = [s - c * x + z for s, x, z in zip(total, rows, noises[1].draw(n, source), strict=True)]
    t_n, t_s = noises[0].halfwidth(alpha / 2), noises[1].halfwidth(alpha / 2)
    values, lows, highs = [], [], []
    for count, centred in zip(counts, sums, strict=True):
        mean = min(max(c + Fraction(centred, max(count, 1)), Fraction(lo_u)), Fraction(hi_u))
        values.append(_round_half_even(mean) * step)
        n_hi, n_lo = count + t_n, max(count - t_n, 1)
        if n_hi < 1:
            lows.append(lo_u * step)
            highs.append(hi_u * step)
            continue
        corners = [c + Fraction(s, d) for s in (centred - t_s, centred + t_s) for d in (n_lo, n_hi)]
        lows.append(max(lo_u, min(corners).__floor__()) * step)
        highs.append(min(hi_u, max(corners).__ceil__()) * step)
    return values, lows, highs


def _variances(rows: list[int], total: list[int], squares: list[int], noises: list[CellNoise], column: _Column,
               n: int, source: RandomSource) -> list[Fraction]:
    """Variance per cell from three noisy centred moments, clamped to ``[0, ((hi_u - lo_u) / 2)**2]``.

    Rounded half to even onto the lattice of ``step**2``.
    """
    c, _ = _centre(column.lo_u, column.hi_u)
    top = Fraction(column.hi_u - column.lo_u, 2) ** 2
    counts = [x + z for x, z in zip(rows, noises[0].draw(n, source), strict=True)]
    s1 = [s - c * x + z for s, x, z in zip(total, rows, noises[1].draw(n, source), strict=True)]
    s2 = [q - 2 * c * s + c * c * x + z
          for q, s, x, z in zip(squares, total, rows, noises[2].draw(n, source), strict=True)]
    out = []
    for count, first, second in zip(counts, s1, s2, strict=True):
        d = max(count, 1)
        v = min(max(Fraction(second, d) - Fraction(first, d) ** 2, Fraction(0)), top)
        out.append(_round_half_even(v) * column.step**2)
    return out
