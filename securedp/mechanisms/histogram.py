"""Private histogram over declared categories or bin edges.

Give exactly one of

* ``categories``: the declared labels (distinct, hashable). A row equal to a
  label counts for it; a row matching no label is *unknown*: with
  ``unknown="raise"`` (default) it is an error before anything is drawn,
  with ``unknown="drop"`` it is ignored. Keys are never taken from the data.
  Labels may be tuples (a histogram over pairs such as ``("north", 2024)``):
  ``data`` is then one column whose records are tuples (a list of tuples,
  ``list(zip(df["a"], df["b"]))``, or an object Series of tuples); each tuple
  is one value, compared with the labels, never flattened. Without tuple
  labels a tuple record matches no label (the ``unknown="raise"`` error
  says so). A table or a 2-D array is refused in both cases.
* ``bins``: edges ``e0 < e1 < ... < ek`` (exact rationals). Bin ``i`` holds
  ``[e_i, e_{i+1})``, the last bin ``[e_{k-1}, e_k]``. Records are screened,
  clamped to ``[e0, ek]`` (so values outside fall in the edge bins) and
  rounded onto a lattice on which every edge lies (default: the step of
  ``Lattice.for_bounds(e0, ek)`` refined to divide every edge), exactly as
  for :mod:`securedp.mechanisms.sum`; ``missing=``/``fill=`` apply.

**Privacy map (parallel composition).** Each kept row falls in exactly one
bin, so adding or removing one person (at most ``m = max_contributions``
rows) changes the vector of counts by at most ``m`` in L1 norm and in L2
norm. Independent discrete Laplace noise of scale ``m / epsilon`` on every
bin gives ``epsilon``-DP for the whole histogram; discrete Gaussian noise of
variance ``m**2 / (2 rho)`` gives ``rho``-zCDP. The budget is charged once,
whatever the number of bins.

**Errors.** The ``unknown="raise"`` and ``missing="raise"`` errors name the
first offending record and count them, for the data holder. In an
analyst-facing :class:`~securedp.Session` both policies act as ``"drop"``
(see :mod:`securedp.mechanisms.contributions`).

**Contributions.** With ``ids``, a person with more than ``m`` rows keeps
the ``m`` whose salted digests are smallest, the row's canonical integer
being the index of its declared category or bin
(:mod:`securedp.mechanisms.contributions`).

**Aggregate / noise** (:mod:`securedp.mechanisms.statistic`): step (1) is
:class:`HistogramAggregate` (the exact count per label, in declared order);
step (2), :meth:`Histogram.noise_step`, adds independent noise to each.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import to_rational
from securedp.lattice import Lattice, screen_units
from securedp.lattice.columns import ONE_COLUMN_HINT, as_records, first_row_record
from securedp.mechanisms.contributions import analyst_facing, bound_rows, check_max_contributions, data_policy
from securedp.mechanisms.noise import Cost, Noise, privacy_cost
from securedp.mechanisms.records import check_missing_policy
from securedp.mechanisms.release import PreparedRelease
from securedp.mechanisms.statistic import Pending, Statistic, bounded, public_function, release_function

UNKNOWN_POLICIES = ("raise", "drop")


def _category_index(records: Any, labels: tuple[Any, ...], unknown: str) -> tuple[np.ndarray, np.ndarray | None]:
    if not labels:
        raise ValueError("categories must not be empty")
    index: dict[Any, int] = {}
    for i, label in enumerate(labels):
        try:
            if label in index:
                raise ValueError(f"category {label!r} is declared twice")
        except TypeError:
            raise TypeError(f"category {label!r} is not hashable") from None
        index[label] = i
    rows = records.tolist() if isinstance(records, np.ndarray) else records

    def look(x: Any) -> int:
        try:
            return index.get(x, -1)
        except TypeError:
            return -1

    idx = np.fromiter(map(look, rows), dtype=np.int64, count=len(rows))
    found = idx >= 0
    if found.all():
        return idx, None
    if unknown == "raise" and not analyst_facing():  # analyst-facing: unknown records are dropped, never reported
        unknown_rows = np.flatnonzero(~found)
        first = int(unknown_rows[0])
        row = first_row_record(rows, unknown_rows)
        hint = "" if row is None else (
            f"; record {row[0]} is a {type(rows[row[0]]).__name__} that matches no category: to count rows of "
            "a table, declare tuple categories and pass a list of tuples (e.g. list(zip(df['a'], df['b'])))"
        )
        raise ValueError(
            f"record {first} is not a declared category ({unknown_rows.size} unknown record(s)){hint}; "
            "declare it, or pass unknown='drop'"
        )
    return idx[found], found


def _edges(bins: Any) -> list[Fraction]:
    edges = [to_rational(e, "bin edge") for e in bins]
    if len(edges) < 2:
        raise ValueError("bins needs at least two edges")
    if any(b <= a for a, b in itertools.pairwise(edges)):
        raise ValueError("bin edges must be strictly increasing")
    return edges


def _edge_lattice(edges: list[Fraction], lattice: Any) -> Lattice:
    if lattice is not None:
        lat = lattice if isinstance(lattice, Lattice) else Lattice(lattice)
        if any((e / lat.step).denominator != 1 for e in edges):
            raise ValueError("every bin edge must lie on the given lattice")
        return lat
    step = Lattice.for_bounds(edges[0], edges[-1]).step
    num, den = step.numerator, step.denominator
    for e in edges:  # gcd of rationals: gcd of numerators over lcm of denominators
        num, den = math.gcd(num, e.numerator), math.lcm(den, e.denominator)
    return Lattice(Fraction(num, den))


def _bin_index(
    records: Any, edges: list[Fraction], lat: Lattice, missing: str, fill: Any
) -> tuple[np.ndarray, np.ndarray | None]:
    edge_units = [int(e / lat.step) for e in edges]
    policy, refuse_rows = data_policy(missing)
    units, usable = screen_units(records, lat.step, edge_units[0], edge_units[-1], missing=policy, fill=fill,
                                 refuse_rows=refuse_rows)
    if units.dtype == object:
        wide = np.array(edge_units, dtype=object)
        idx = np.fromiter((int(np.searchsorted(wide, u, side="right")) - 1 for u in units), dtype=np.int64,
                          count=units.size)
    else:
        idx = np.searchsorted(np.array(edge_units, dtype=np.int64), units, side="right") - 1
    return np.minimum(idx, len(edges) - 2), usable


@dataclass(frozen=True)
class HistogramAggregate:
    """Step (1) of a histogram: the exact count of kept rows in each declared category or bin, in order."""

    counts: list[int]

    def __add__(self, other: HistogramAggregate) -> HistogramAggregate:
        """The counts of two disjoint sets of rows, added bin by bin."""
        return HistogramAggregate([a + b for a, b in zip(self.counts, other.counts, strict=True)])


@dataclass(frozen=True)
class Histogram(Statistic[HistogramAggregate]):
    """The histogram's definition: independent noise on each count, one cost for all (see the module docstring).

    ``categories`` (declared labels) or ``edges`` with their lattice: exactly one is set.
    """

    statistic = "histogram"
    cost: Cost
    max_contributions: int
    categories: tuple[Any, ...] | None
    edges: tuple[Fraction, ...] | None
    lattice: Lattice | None
    unknown: str = "raise"
    missing: str = "raise"
    fill: Any = None

    @classmethod
    def prepare(
        cls,
        data: Any,
        *,
        categories: Any = None,
        bins: Any = None,
        epsilon: Any = None,
        rho: Any = None,
        max_contributions: Any = 1,
        ids: Any = None,
        unknown: str = "raise",
        lattice: Any = None,
        missing: str = "raise",
        fill: Any = None,
    ) -> PreparedRelease:
        cost = privacy_cost(epsilon, rho)
        m = check_max_contributions(max_contributions)
        if (categories is None) == (bins is None):
            raise TypeError("give exactly one of categories= (declared labels) or bins= (edges)")
        if unknown not in UNKNOWN_POLICIES:
            raise ValueError(f"unknown must be one of {UNKNOWN_POLICIES}, got {unknown!r}")
        if categories is not None:
            if isinstance(categories, (str, bytes)) or not hasattr(categories, "__iter__"):
                raise TypeError("categories must be a sequence of declared labels")
            return cls(cost, m, tuple(categories), None, None, unknown).prepare_data(data, ids)
        edges = _edges(bins)
        lat = _edge_lattice(edges, lattice)
        check_missing_policy(lat.step, int(edges[0] / lat.step), int(edges[-1] / lat.step), missing, fill)
        return cls(cost, m, None, tuple(edges), lat, unknown, missing, fill).prepare_data(data, ids)

    @property
    def noise(self) -> Noise:
        return Noise.of(self.max_contributions, self.cost)

    @property
    def parameters(self) -> dict[str, Any]:
        kind: dict[str, Any] = {"kind": "categories"} if self.edges is None else {"kind": "bins", "edges": self.edges}
        return {**kind, **self.noise.parameters()}

    @property
    def labels(self) -> tuple[Any, ...]:
        if self.edges is None:
            assert self.categories is not None  # exactly one of categories and edges
            return self.categories
        return tuple(itertools.pairwise(self.edges))

    @property
    def column_hint(self) -> str:
        if self.categories is not None and any(isinstance(c, tuple) for c in self.categories):
            return "for tuple categories pass one column whose records are tuples, e.g. list(zip(df['a'], df['b']))"
        return ONE_COLUMN_HINT

    def aggregate(self, data: Any, ids: Any = None) -> HistogramAggregate | Pending[HistogramAggregate]:
        if self.categories is not None:
            records = as_records(data, hint=self.column_hint)
            idx, usable = _category_index(records, self.categories, self.unknown)
        else:
            assert self.edges is not None and self.lattice is not None
            records = as_records(data)
            idx, usable = _bin_index(records, list(self.edges), self.lattice, self.missing, self.fill)
        rule = bound_rows(len(records), ids, self.max_contributions, usable)
        if rule is None:
            return self.reduce(idx)
        return bounded(self.reduce, idx[rule.settled], rule.choices(idx))

    def reduce(self, idx: np.ndarray) -> HistogramAggregate:
        """The aggregate of kept rows given by the index of their category or bin (their canonical integer)."""
        size = len(self.labels)
        return HistogramAggregate(np.bincount(idx, minlength=size).tolist() if idx.size else [0] * size)

    def sampler(self, aggregate: HistogramAggregate) -> Callable[[RandomSource], tuple[int, ...]]:
        noise, counts = self.noise, aggregate.counts

        def draw(source: RandomSource) -> tuple[int, ...]:
            return tuple(int(c) + z for c, z in zip(counts, noise.draw(source, len(counts)), strict=True))

        return draw


prepare_histogram = public_function(
    Histogram.prepare, "prepare_histogram",
    """Validate and price a histogram; nothing is drawn until ``.execute(rng)``.""")
histogram = release_function(prepare_histogram, "histogram", """Release noisy counts for declared categories or \
bins; one ``epsilon`` for all bins (see the module docstring).""")
