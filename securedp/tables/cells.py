"""The noise step of a grouped table: from exact per-key integers to released cells.

Given the engine's exact aggregates for one salt (:class:`Aggregates`), each
aggregation of :mod:`securedp.tables.spec` is released for every cell, in
aggregation order then cell order (so a seeded release replays), by its one
definition (:meth:`~securedp.tables.spec.Count.definition`, a statistic of
:mod:`securedp.mechanisms` with ``max_groups = k``): noisy integers and their
post-processing, with confidence intervals, for counts, sums and moments
(:meth:`~securedp.mechanisms.statistic.AdditiveStatistic.release_cells`), or
one exact exponential-mechanism selection per cell for quantiles (the
statistic's sampler on the cell's counts per lattice point). What an
aggregation reads from the engine (:attr:`~securedp.tables.spec.Count.reads`)
chooses how its cells are fed, by the table :data:`FEEDS`. Nothing here reads
rows: only the per-key integers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import chain, repeat
from math import gcd
from typing import TYPE_CHECKING, Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.mechanisms.count import Count
from securedp.mechanisms.gaussian_threshold import GaussianThreshold
from securedp.mechanisms.histogram import Bins, Categories, Histogram
from securedp.mechanisms.partition_selection import LaplaceThreshold
from securedp.mechanisms.quantile import Quantiles
from securedp.mechanisms.statistic import AdditiveStatistic, CellColumn, CellSums
from securedp.privacy.cost import Cost
from securedp.privacy.noise import Noise
from securedp.tables.spec import Aggregation, ColumnAggregation, Definition

if TYPE_CHECKING:
    import polars as pl

    from securedp.engines.protocol import Engine, KeyAggregates, UnitCounts


@dataclass(frozen=True)
class Column:
    """One aggregation of a value column: its public lattice, its index among the engine's columns and, for a
    histogram, how records become the index of their category or bin."""

    aggregation: ColumnAggregation
    step: Fraction
    lo_u: int
    hi_u: int
    index: int
    derivation: Categories | Bins | None = None


class Aggregates:
    """Step (1) for one salt: each engine column bounded and aggregated once (with squares if any needs them).

    The row and person counts come from the first column's pass when no value is dropped (every
    column then keeps the same rows, and bounding keeps ``min(rows, max_rows)`` of each pair and the
    same pairs whatever the units), else from a pass of their own.
    """

    def __init__(self, engine: Engine, columns: list[Column], salt: bytes, same_rows: bool) -> None:
        self._engine, self._salt = engine, salt
        self._cache: dict[int, KeyAggregates] = {}
        self._points: dict[int, UnitCounts] = {}
        self._squares = {c.index for c in columns if c.aggregation.reads == "squares"}
        self.counts = self.column(0) if same_rows and columns else engine.counts(salt)

    def column(self, index: int) -> KeyAggregates:
        if index not in self._cache:
            self._cache[index] = self._engine.column(index, self._salt, index in self._squares)
        return self._cache[index]

    def unit_counts(self, index: int) -> UnitCounts:
        if index not in self._points:  # the aggregations of one column (several quantiles) share its counts
            self._points[index] = self._engine.unit_counts(index, self._salt)
        return self._points[index]


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


def definitions(aggregations: Sequence[Aggregation], part: Callable[[str], Cost], k: int,
                m: int) -> dict[str, Definition]:
    """Each aggregation's statistic at its share of the budget, for ``k`` keys and ``m`` rows per person.

    Built when the table is prepared, so that a public parameter no statistic accepts (a ``rho`` share too
    small for a quantile's selection) is refused before anything is read, naming the aggregation.
    """
    def define(a: Aggregation) -> Definition:
        try:
            return a.definition(part(a.name), k, m)
        except ValueError as error:
            raise ValueError(f"{a.name}: {error}") from None

    return {a.name: define(a) for a in aggregations}


def noise_records(columns: list[Column], aggregations: Sequence[Aggregation], defined: dict[str, Definition],
                  alpha: Fraction) -> dict[str, Any]:
    """Each aggregation's record: its statistic's laws (:meth:`cell_record`) and, for a column, its lattice."""
    by_name = {c.aggregation.name: c for c in columns}
    out: dict[str, Any] = {}
    for a in aggregations:
        record: dict[str, Any] = {"noise": []}
        column = by_name.get(a.name)
        if column is not None:
            record.update(column=a.column, lattice_step=column.step, bounds_units=[column.lo_u, column.hi_u])
        record.update(defined[a.name].cell_record(alpha))
        out[a.name] = record
    return out


@dataclass
class Output:
    """The released table being assembled: column names, value columns and each column's frame step."""

    names: list[str]
    table: list[list[Any]]
    steps: dict[str, Fraction | None]

    def add(self, name: str, cell: CellColumn) -> None:
        """The value column ``name`` (values as exact ints or lattice Fractions), then its interval's ends."""
        step = cell.step
        columns = [("", cell.values)]
        if cell.low is not None and cell.high is not None:
            columns += [("_low", cell.low), ("_high", cell.high)]
        for suffix, units in columns:
            self.names.append(name + suffix)
            self.steps[name + suffix] = cell.frame_step
            self.table.append(units if step is None else _on_lattice(units, step))


@dataclass(frozen=True)
class Feed:
    """What one cell-release needs: the cells, the engine's aggregates, the noise source and the outputs."""

    cells: Cells
    counted: KeyAggregates
    aggregates: Aggregates
    group_by: list[str]
    alpha: Fraction
    source: RandomSource
    committed: dict[str, Any]
    """The engine's integers read so far, as input-commitment parts (this execution's own: see
    :attr:`ReleasedCells.committed`)."""
    indexed: dict[int, list[int]]
    """Each engine column's cell positions in its aggregates (shared by the aggregations of one column)."""


def _from_keys(definition: Definition, column: Column | None, feed: Feed) -> list[CellColumn]:  # noqa: ARG001
    """Counts and persons: the per-key rows and persons of the bounding pass."""
    assert isinstance(definition, AdditiveStatistic)
    index = feed.cells.index
    sums = CellSums(_at(feed.counted.rows, index), _at(feed.counted.persons, index))
    return [definition.release_cells(definition.exact_cells(sums), feed.source, feed.alpha)]


def _from_sums(definition: Definition, column: Column | None, feed: Feed) -> list[CellColumn]:
    """Sums and moments: the value column's per-key rows, sums (and sums of squares) of units."""
    assert isinstance(definition, AdditiveStatistic) and column is not None
    agg = feed.aggregates.column(column.index)
    if column.index not in feed.indexed:  # aggregations of one engine column share its aggregates
        feed.committed.update(commitment_parts(f"{column.index}.", agg))
        feed.indexed[column.index] = (feed.cells.index if agg is feed.counted
                                      else _column_index(agg, feed.cells, feed.group_by))
    index = feed.indexed[column.index]
    sums = CellSums(_at(agg.rows, index), _at(agg.persons, index), _at(agg.total, index),
                    None if agg.total_squares is None else _at(agg.total_squares, index))
    return [definition.release_cells(definition.exact_cells(sums), feed.source, feed.alpha)]


def _flat(parts: Sequence[Sequence[int] | np.ndarray]) -> list[int] | np.ndarray:
    """Every key's integers in one sequence, in key order (one array when the engine gave arrays: the engine's own
    array when there is one key, read only)."""
    arrays = [p for p in parts if isinstance(p, np.ndarray)]
    if parts and len(arrays) == len(parts):
        return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
    return list(chain.from_iterable(parts))


def _unit_counts(column: Column, feed: Feed) -> tuple[list[Sequence[int] | np.ndarray],
                                                      list[Sequence[int] | np.ndarray]]:
    """Each released cell's counts per lattice point (its distinct points, ascending, and their counts), from the
    engine's counts per key; a cell without rows has none. The engine's integers join the input commitment."""
    counted = feed.aggregates.unit_counts(column.index)
    position = ({r: i for i, r in enumerate(counted.keys.rows())} if feed.group_by
                else {(): 0} if counted.points else {})
    if f"{column.index}.point_keys" not in feed.committed:
        feed.committed[f"{column.index}.point_keys"] = json.dumps(counted.keys.rows())
        feed.committed[f"{column.index}.points"] = _flat(counted.points)
        feed.committed[f"{column.index}.point_counts"] = _flat(counted.counts)
    points: list[Sequence[int] | np.ndarray] = []
    counts: list[Sequence[int] | np.ndarray] = []
    for key in feed.cells.keys:
        i = position.get(key)
        points.append(counted.points[i] if i is not None else [])
        counts.append(counted.counts[i] if i is not None else [])
    return points, counts


def _from_points(definition: Definition, column: Column | None, feed: Feed) -> list[CellColumn]:
    """A selection per cell over the lattice points of the bounds, from the cell's counts per point
    (:meth:`~securedp.mechanisms.quantile.Quantiles.release_points`; a mean between two selected points then noises it).

    Each cell's selection is the statistic's (:mod:`securedp.mechanisms.rank_utility`) on that cell's kept
    rows; a cell without rows selects from the empty multiset (every point scores 0).
    """
    assert isinstance(definition, Quantiles) and column is not None
    return definition.release_columns(*_unit_counts(column, feed), feed.source, feed.alpha)


def _from_bins(definition: Definition, column: Column | None, feed: Feed) -> list[CellColumn]:
    """A histogram per cell: the count of each label's index among the cell's kept rows, all noised at once."""
    assert isinstance(definition, Histogram) and column is not None
    points, counts = _unit_counts(column, feed)
    return definition.release_bins(definition.exact_bins(points, counts), feed.source, feed.alpha)


FEEDS: dict[str, Callable[[Definition, Column | None, Feed], list[CellColumn]]] = {
    "keys": _from_keys, "sums": _from_sums, "squares": _from_sums, "points": _from_points, "bins": _from_bins}
"""How the cells of an aggregation are fed, by what it reads (:attr:`~securedp.tables.spec.Count.reads`)."""


def threshold_cells(definition: Definition, plan: LaplaceThreshold | GaussianThreshold, cells: Cells,
                    counted: KeyAggregates, source: RandomSource, alpha: Fraction) -> tuple[np.ndarray, CellColumn]:
    """Partition selection by the released count ``definition`` (rule ``"count"``), over every data key.

    The count's exact integers for each of ``cells`` are noised once, by ``plan`` (whose law is the count's
    own: :func:`securedp.tables.pricing.price_table` checks it), and a key is kept iff its noisy count is at
    least the threshold. Returns ``keep`` and the count's released column over the kept cells: the same
    noisy counts, post-processed by the count's :meth:`finish` (its interval ``value -/+ t``).
    """
    assert isinstance(definition, Count) and plan.noise == definition.noise
    sums = CellSums(_at(counted.rows, cells.index), _at(counted.persons, cells.index))
    chosen = plan.select(np.asarray(definition.exact_cells(sums)[0], dtype=np.int64), source)
    return chosen.keep, definition.finish([[int(v) for v in chosen.noisy[chosen.keep]]], alpha)


@dataclass(frozen=True)
class CellNoise:
    """The public side of a table's noise step, the same for every execution: what is released, and how."""

    group_by: list[str]
    columns: list[Column]
    aggregations: Sequence[Aggregation]
    defined: dict[str, Definition]
    alpha: Fraction
    selection: Noise | None = None
    """The law of a separate threshold selection's noisy person counts (``selection_persons``), else ``None``."""


@dataclass(frozen=True)
class ReleasedCells:
    """The rows of one execution's noise step, and the engine's integers it read."""

    names: list[str]
    rows: list[tuple[Any, ...]]
    steps: dict[str, Fraction | None]
    """Each value column's frame step, so that the output frame has the same exact types whatever the values
    (and when no cell is released)."""
    committed: dict[str, Any]
    """The per-column integers the noise step read (:func:`commitment_parts`, counts per point), as parts
    of the execution's input commitment."""


def release_cells(noise: CellNoise, cells: Cells, aggregates: Aggregates, source: RandomSource, *,
                  persons: list[int] | None = None, given: Mapping[str, CellColumn] | None = None) -> ReleasedCells:
    """Noise every aggregate of every cell (aggregation order, then cell order) and assemble the rows.

    ``persons`` are the noisy person counts of a separate threshold selection, released as
    ``selection_persons`` (by the law ``noise.selection``). ``given`` holds the columns already released
    by name (the count that selected the keys, :func:`threshold_cells`): they are placed in order, not
    drawn again.
    """
    out = Output(list(noise.group_by), [], {})
    if persons is not None and noise.selection is not None:
        t = noise.selection.halfwidth(noise.alpha)
        out.add("selection_persons", CellColumn.within(persons, t, None, noise.selection.output_step(noise.alpha)))
    by_name = {c.aggregation.name: c for c in noise.columns}
    feed = Feed(cells, aggregates.counts, aggregates, noise.group_by, noise.alpha, source, {}, {})
    for a in noise.aggregations:
        released = [given[a.name]] if given and a.name in given else \
            FEEDS[a.reads](noise.defined[a.name], by_name.get(a.name), feed)
        for i, cell in enumerate(released):
            out.add(a.name if len(released) == 1 and a.reads != "bins" else f"{a.name}_{i}", cell)
    rows = [key + values for key, values in zip(cells.keys, zip(*out.table, strict=True), strict=True)]
    return ReleasedCells(out.names, rows, out.steps, feed.committed)


def _column_index(agg: KeyAggregates, cells: Cells, group_by: list[str]) -> list[int]:
    if not group_by:
        return [0 if agg.rows else -1] * len(cells.keys)
    position = {r: i for i, r in enumerate(agg.keys.rows())}
    return [position.get(key, -1) for key in cells.keys]
