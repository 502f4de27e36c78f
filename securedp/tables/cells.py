"""The noise step of a grouped table: from exact per-key integers to released cells.

Given the engine's exact aggregates for one salt (:class:`Aggregates`), each
aggregation of :mod:`securedp.tables.spec` is released for every cell, in
aggregation order then cell order (so a seeded release replays): integer noise
on counts, sums and moments (:mod:`securedp.tables.noise`), with confidence
intervals, or one exact exponential-mechanism selection per cell for quantiles
(:class:`securedp.mechanisms.quantile.Quantile` on the cell's counts per
lattice point). Nothing here reads rows: only the per-key integers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import repeat
from math import gcd
from typing import TYPE_CHECKING, Any

import gmpy2
import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.kernels import round_half_even
from securedp.hazmat.exact.rational import to_rational
from securedp.mechanisms.moments import centre_of_bounds
from securedp.mechanisms.noise import Cost
from securedp.mechanisms.quantile import Quantile as QuantileSelection
from securedp.mechanisms.quantile import SortedUnits
from securedp.mechanisms.records import LatticeColumn
from securedp.tables.noise import CellNoise
from securedp.tables.spec import Aggregation, Count, Mean, Persons, Quantile, Sum, Variance, quantile_cell_epsilon

if TYPE_CHECKING:
    import polars as pl

    from securedp.engines.bounding import KeyAggregates, UnitCounts
    from securedp.tables.engines import Engine


@dataclass(frozen=True)
class Column:
    """One aggregation of a value column: its public lattice and its index among the engine's columns."""

    aggregation: Sum | Mean | Variance | Quantile
    step: Fraction
    lo_u: int
    hi_u: int
    index: int


class Aggregates:
    """Step (1) for one salt: each engine column bounded and aggregated once (with squares if any needs them).

    The row and person counts come from the first column's pass when no value is dropped (every
    column then keeps the same rows, and bounding keeps ``min(rows, max_rows)`` of each pair and the
    same pairs whatever the units), else from a pass of their own.
    """

    def __init__(self, engine: Engine, columns: list[Column], salt: bytes, same_rows: bool) -> None:
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


def commitment_parts(prefix: str, agg: KeyAggregates) -> dict[str, Any]:
    """The exact per-key integers of ``agg`` as input-commitment parts (keys as their canonical JSON text)."""
    parts: dict[str, Any] = {f"{prefix}keys": json.dumps(agg.keys.rows()),
                             f"{prefix}rows": agg.rows, f"{prefix}persons": agg.persons}
    if agg.total is not None:
        parts[f"{prefix}sum_units"] = agg.total
    if agg.total_squares is not None:
        parts[f"{prefix}sum_squares"] = agg.total_squares
    return parts


@dataclass(frozen=True)
class Cells:
    """The released cells: their key rows and, for each, its index in the engine's aggregates (or -1)."""

    keys: list[tuple[Any, ...]]
    index: list[int]

    def subset(self, chosen: np.ndarray) -> Cells:
        return Cells([self.keys[i] for i in chosen], [self.index[i] for i in chosen])


def cells_of(counted: KeyAggregates, public: pl.DataFrame | None, group_by: list[str]) -> Cells:
    data_keys = counted.keys.rows() if group_by else [()] * len(counted.rows)
    position = {key: i for i, key in enumerate(data_keys)}
    if public is None:
        if not group_by:
            return Cells([()], [0 if data_keys else -1])
        return Cells(data_keys, list(range(len(data_keys))))
    wanted = public.rows()
    return Cells(wanted, [position.get(key, -1) for key in wanted])


def _at(values: list[int] | None, index: list[int]) -> list[int]:
    if values is None:
        return [0] * len(index)
    return [values[i] if i >= 0 else 0 for i in index]


def _fraction(numerator: int, denominator: int) -> Fraction:
    """The Fraction ``numerator / denominator`` of two coprime ints, ``denominator > 0``, not re-normalised.

    What CPython's own ``Fraction._from_coprime_ints`` (3.12+) does: the two slots are set directly,
    so the object is the one ``Fraction(numerator, denominator)`` would build, without its type checks
    and ``gcd`` (the caller guarantees lowest terms).
    """
    q = object.__new__(Fraction)
    q._numerator = numerator  # type: ignore[attr-defined]
    q._denominator = denominator  # type: ignore[attr-defined]
    return q


def _on_lattice(units: list[int], step: Fraction) -> list[Fraction]:
    """``u * step`` for each integer ``u``, exactly, as reduced Fractions (:func:`_fraction`).

    With ``step = p / q`` in lowest terms, ``gcd(u p, q) = gcd(u, q)``, so dividing ``u p`` and ``q``
    by ``g = gcd(u p, q)`` gives lowest terms (``u = 0`` gives ``0 / 1``).
    """
    p, q = step.numerator, step.denominator
    if q == 1:
        return list(map(_fraction, [u * p for u in units] if p != 1 else units, repeat(1)))
    gs = list(map(gcd, units, repeat(q)))
    return list(map(_fraction, [u // g * p for u, g in zip(units, gs, strict=True)], [q // g for g in gs]))


def _centre(lo_u: int, hi_u: int) -> tuple[int, int]:
    """The centre of the bounds and ``h = max(half, 1)``, as the single-column mean and variance use them."""
    c, half = centre_of_bounds(lo_u, hi_u)
    return c, max(half, 1)


def _noises(a: Aggregation, column: Column | None, part: Any, k: int, m: int) -> list[CellNoise]:
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


def noise_records(columns: list[Column], aggregations: Sequence[Aggregation], part: Any, k: int,
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
            assert column is not None
            eps, rho = part(a.name)
            cell = quantile_cell_epsilon(eps, rho, k)
            candidates = column.hi_u - column.lo_u + 1
            record.update(noise=[], selection="exponential", q=to_rational(a.q, "q"), epsilon_cell=cell,
                          sensitivity=m, candidates=candidates,
                          rank_error_bound=rank_error_bound(cell, m, candidates, alpha))
            if rho is not None:
                record.update(rho_cells=k * cell * cell / 2,
                              conversion="epsilon-DP is epsilon**2/2-zCDP (Bun and Steinke 2016, Prop. 1.4)")
        out[a.name] = record
    return out


def release_cells(cells: Cells, counted: KeyAggregates, aggregates: Aggregates, columns: list[Column],
                   aggregations: Sequence[Aggregation], part: Any, k: int, m: int, alpha: Fraction,
                   source: RandomSource, extra: dict[str, list[Any]], group_by: list[str],
                   committed: dict[str, Any]) -> tuple[list[str], list[tuple[Any, ...]], dict[str, Fraction | None]]:
    """Noise every aggregate of every cell (aggregation order, then cell order) and assemble the rows.

    Also returns each value column's lattice step (``None`` for integer columns), so that the output
    frame has the same exact types whatever the values (and when no cell is released).
    """
    names = list(group_by)
    steps: dict[str, Fraction | None] = {}
    table: list[list[Any]] = []  # the value columns
    n = len(cells.keys)

    def add(name: str, values: list[Any], low: list[Any] | None = None, high: list[Any] | None = None,
            step: Fraction | None = None) -> None:
        names.append(name)
        steps[name] = steps[f"{name}_low"] = steps[f"{name}_high"] = step
        table.append(values)
        if low is not None and high is not None:
            names.extend([f"{name}_low", f"{name}_high"])
            table.extend([low, high])

    if "persons" in extra:
        selection = CellNoise(k, 1, *part("partition_selection"))
        t = selection.halfwidth(alpha)
        noisy = extra["persons"]
        add("selection_persons", noisy, [v - t for v in noisy], [v + t for v in noisy],
            step=selection.output_step(alpha))
    by_name = {c.aggregation.name: c for c in columns}
    indexed: dict[int, list[int]] = {}  # engine column -> each cell's position in its aggregates
    for a in aggregations:
        column = by_name.get(a.name)
        noises = _noises(a, column, part, k, m)
        if column is None:
            exact = _at(counted.rows if isinstance(a, Count) else counted.persons, cells.index)
            noise = noises[0]
            noisy = [x + z for x, z in zip(exact, noise.draw(n, source), strict=True)]
            t = noise.halfwidth(alpha)
            add(a.name, noisy, [v - t for v in noisy], [v + t for v in noisy], step=noise.output_step(alpha))
            continue
        if isinstance(a, Quantile):
            eps, rho = part(a.name)
            add(a.name, _quantiles(a, column, aggregates.unit_counts(column.index), cells, group_by,
                                   quantile_cell_epsilon(eps, rho, k), m, source, committed), step=column.step)
            continue
        agg = aggregates.column(column.index)
        if column.index not in indexed:  # aggregations of one engine column share its aggregates
            committed.update(commitment_parts(f"{column.index}.", agg))
            indexed[column.index] = cells.index if agg is counted else _column_index(agg, cells, group_by)
        index = indexed[column.index]
        rows, total = _at(agg.rows, index), _at(agg.total, index)
        step = column.step
        if isinstance(a, Sum):
            noisy = [x + z for x, z in zip(total, noises[0].draw(n, source), strict=True)]
            t = noises[0].halfwidth(alpha)
            add(a.name, _on_lattice(noisy, step), _on_lattice([v - t for v in noisy], step),
                _on_lattice([v + t for v in noisy], step), step=step)
        elif isinstance(a, Mean):
            add(a.name, *_means(rows, total, noises, column, alpha, n, source), step=step)
        else:
            add(a.name, _variances(rows, total, _at(agg.total_squares, index), noises, column, n, source),
                step=step * step)
    return names, [key + values for key, values in zip(cells.keys, zip(*table, strict=True), strict=True)], steps


def _quantiles(a: Quantile, column: Column, counted: UnitCounts, cells: Cells, group_by: list[str],
               epsilon_cell: Fraction, m: int, source: RandomSource, committed: dict[str, Any]) -> list[Any]:
    """One exact exponential-mechanism selection per cell over the lattice points of the bounds.

    Each cell's selection is :class:`securedp.mechanisms.quantile.Quantile` (utility
    ``-|#{x < y} - q n|``, sensitivity ``m``) at ``epsilon_a / k`` on that cell's kept rows; a cell
    without rows selects from the empty multiset (every point has the same utility).
    """
    statistic = QuantileSelection(Cost(epsilon_cell, None), _lattice_column(a, column, m),
                                  (to_rational(a.q, "q"),))
    position = ({r: i for i, r in enumerate(counted.keys.rows())} if group_by
                else {(): 0} if counted.points else {})
    committed[f"{column.index}.quantile_keys"] = json.dumps(counted.keys.rows())
    committed[f"{column.index}.quantile_points"] = [p for points in counted.points for p in points]
    committed[f"{column.index}.quantile_counts"] = [c for counts in counted.counts for c in counts]
    values = []
    for key in cells.keys:
        i = position.get(key)
        units = (SortedUnits.from_counts(counted.points[i], counted.counts[i]) if i is not None
                 else SortedUnits(np.zeros(0, dtype=np.int64)))
        values.append(statistic.sampler(units)(source))
    return values


def _lattice_column(a: Quantile, column: Column, m: int) -> LatticeColumn:
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


def _column_index(agg: KeyAggregates, cells: Cells, group_by: list[str]) -> list[int]:
    if not group_by:
        return [0 if agg.rows else -1] * len(cells.keys)
    position = {r: i for i, r in enumerate(agg.keys.rows())}
    return [position.get(key, -1) for key in cells.keys]


def _means(rows: list[int], total: list[int], noises: list[CellNoise], column: Column, alpha: Fraction, n: int,
           source: RandomSource) -> tuple[list[Fraction], list[Fraction], list[Fraction]]:
    """Mean per cell: ``step * round(clamp(c + S~ / max(N~, 1)))``; interval by a union bound at ``alpha / 2`` each."""
    c, _ = _centre(column.lo_u, column.hi_u)
    counts = [x + z for x, z in zip(rows, noises[0].draw(n, source), strict=True)]
    sums = [s - c * x + z for s, x, z in zip(total, rows, noises[1].draw(n, source), strict=True)]
    t_n, t_s = noises[0].halfwidth(alpha / 2), noises[1].halfwidth(alpha / 2)
    units = mean_units(counts, sums, c, column.lo_u, column.hi_u, t_n, t_s)
    return (_on_lattice(units[0], column.step), _on_lattice(units[1], column.step),
            _on_lattice(units[2], column.step))


def mean_units(counts: list[int], sums: list[int], c: int, lo_u: int, hi_u: int, t_n: int,
               t_s: int) -> tuple[list[int], list[int], list[int]]:
    """Each cell's mean and interval ends in units, from its noisy count ``N~`` and centred sum ``S~``.

    The mean is ``round(clamp(c + S~ / d, lo_u, hi_u))``, ``d = max(N~, 1)``, rounded half to even;
    the interval is ``[max(lo_u, floor(min K)), min(hi_u, ceil(max K))]`` over the corners
    ``K = c + s / d'``, ``s in {S~ - t_s, S~ + t_s}``, ``d' in {max(N~ - t_n, 1), N~ + t_n}`` (the
    whole bounds when ``N~ + t_n < 1``). All in integers (``t_n, t_s >= 0``): rounding half to even
    is monotone and the bounds are integers, so rounding the clamped mean is clamping
    ``round((c d + S~) / d)`` (:func:`round_half_even`, a ``divmod``). With ``1 <= d_lo <= d_hi``
    the least corner is ``s_lo / d_hi`` if ``s_lo >= 0`` else ``s_lo / d_lo``, the greatest
    ``s_hi / d_lo`` if ``s_hi >= 0`` else ``s_hi / d_hi``; floor and ceil commute with adding the
    integer ``c`` and are floor divisions (``ceil(a / b) = -(-a // b)``).
    """
    values, lows, highs = [], [], []
    for count, centred in zip(counts, sums, strict=True):
        d = count if count > 1 else 1
        mean = round_half_even(c * d + centred, d)
        values.append(lo_u if mean < lo_u else hi_u if mean > hi_u else mean)
        d_hi = count + t_n
        if d_hi < 1:
            lows.append(lo_u)
            highs.append(hi_u)
            continue
        d_lo = count - t_n if count - t_n > 1 else 1
        s_lo, s_hi = centred - t_s, centred + t_s
        low = c + (s_lo // d_hi if s_lo >= 0 else s_lo // d_lo)
        high = c - (-s_hi // d_lo if s_hi >= 0 else -s_hi // d_hi)
        lows.append(low if low > lo_u else lo_u)
        highs.append(high if high < hi_u else hi_u)
    return values, lows, highs


def _variances(rows: list[int], total: list[int], squares: list[int], noises: list[CellNoise], column: Column,
               n: int, source: RandomSource) -> list[Fraction]:
    """Variance per cell from three noisy centred moments (:func:`variance_units`), on the lattice of ``step**2``."""
    c, _ = _centre(column.lo_u, column.hi_u)
    counts = [x + z for x, z in zip(rows, noises[0].draw(n, source), strict=True)]
    s1 = [s - c * x + z for s, x, z in zip(total, rows, noises[1].draw(n, source), strict=True)]
    s2 = [q - 2 * c * s + c * c * x + z
          for q, s, x, z in zip(squares, total, rows, noises[2].draw(n, source), strict=True)]
    return _on_lattice(variance_units(counts, s1, s2, column.hi_u - column.lo_u), column.step**2)


def variance_units(counts: list[int], s1: list[int], s2: list[int], width: int) -> list[int]:
    """Each cell's variance in units of ``step**2``: ``round(clamp(S2~ / d - (S1~ / d)**2, 0, (width / 2)**2))``.

    ``d = max(N~, 1)``, rounded half to even. In integers: the variance is ``(S2~ d - S1~**2) / d**2``,
    and rounding half to even is monotone, so rounding the clamped value is clamping the rounded one
    to ``[0, round(width**2 / 4)]``.
    """
    top = round_half_even(width * width, 4)
    out = []
    for count, first, second in zip(counts, s1, s2, strict=True):
        d = count if count > 1 else 1
        v = round_half_even(second * d - first * first, d * d)
        out.append(0 if v < 0 else top if v > top else v)
    return out
