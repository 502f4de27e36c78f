"""Private histogram over declared categories or bin edges: one noisy count per category or bin.

Each record gets a **canonical integer**, the index of its category or bin, by a rule of that record
alone (:class:`Categories`, :class:`Bins`); the counts of kept rows per index are the histogram's exact
integers, read by a table engine like the counts per lattice point of a quantile (``reads = "points"``).

* **Categories**: the declared labels (distinct, hashable). A record equal to a label (Python equality:
  ``1`` and ``1.0`` are one label, ``1`` and ``"1"`` two) has that label's index; a record matching no
  label is *unknown*: with ``unknown="raise"`` (default) an error before anything is drawn, with
  ``unknown="drop"`` it is ignored (always so in an analyst-facing session). Keys are never taken from
  the data. Labels may be tuples (a histogram over pairs ``("north", 2024)``): ``data`` is then one
  column whose records are tuples (``list(zip(df["a"], df["b"]))``), each compared whole.
* **Bins**: edges ``e0 < e1 < ... < ek`` (exact rationals). Bin ``i`` holds ``[e_i, e_{i+1})``, the last
  ``[e_{k-1}, e_k]``. Records are screened, clamped to ``[e0, ek]`` (so values outside fall in the edge
  bins) and rounded onto a lattice on which every edge lies (default: the step of
  ``Lattice.for_bounds(e0, ek)`` refined to divide every edge), exactly as for a sum; ``missing=`` and
  ``fill=`` apply.

**Privacy map (parallel composition).** Each kept row falls in exactly one bin, so adding or removing
one person (at most ``m`` rows in a cell, ``m = max_rows``, in at most ``k = max_groups`` cells) changes
the counts by at most ``k m`` in L1 norm and ``sqrt(k) m`` in L2 norm. Independent discrete Laplace noise
of scale ``k m / epsilon`` on every bin gives ``epsilon``-DP for the whole histogram; discrete Gaussian
noise of variance ``k m**2 / (2 rho)`` gives ``rho``-zCDP. The budget is charged once, whatever the
number of bins. With person ids, a person with more than ``m`` rows in a cell keeps the ``m`` whose
salted digests over their canonical integers are smallest (:mod:`securedp.bounding`), as every release does.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.rational import to_rational
from securedp.lattice import Lattice, screen_units
from securedp.lattice.columns import first_row_record
from securedp.mechanisms.statistic import CellColumn, CellStatistic
from securedp.privacy.cost import Cost
from securedp.privacy.noise import Noise
from securedp.reading.columns import check_ordered

UNKNOWN_POLICIES = ("raise", "drop")


def check_categories(categories: Any) -> tuple[Any, ...]:
    """The declared labels as a tuple: a sequence of distinct, hashable labels, at least one."""
    check_ordered(categories, "categories", "a sequence of declared labels")
    labels = tuple(categories)
    if not labels:
        raise ValueError("categories must not be empty")
    seen: set[Any] = set()
    for label in labels:
        try:
            if label in seen:
                raise ValueError(f"category {label!r} is declared twice")
        except TypeError:
            raise TypeError(f"category {label!r} is not hashable") from None
        seen.add(label)
    return labels


def check_edges(bins: Any) -> tuple[Fraction, ...]:
    """The bin edges as exact rationals, at least two, strictly increasing."""
    check_ordered(bins, "bins", "a sequence of bin edges")
    edges = tuple(bounds.parameter(to_rational(e, "bin edge"), "bin edge") for e in bins)
    if len(edges) < 2:
        raise ValueError("bins needs at least two edges")
    if any(b <= a for a, b in itertools.pairwise(edges)):
        raise ValueError("bin edges must be strictly increasing")
    return edges


def edge_lattice(edges: tuple[Fraction, ...], lattice: Any) -> Lattice:
    """The lattice of the bins: ``lattice`` (every edge must lie on it), or by default the step of
    ``Lattice.for_bounds(e0, ek)`` refined to divide every edge."""
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


@dataclass(frozen=True)
class Categories:
    """The canonical integer of a record: the index of the declared label it equals (see the module)."""

    labels: tuple[Any, ...]
    unknown: str = "raise"

    def units(self, records: Any, *, missing: str, fill: Any, refuse_rows: bool,  # noqa: ARG002 - no lattice
              where: Callable[[int], str] | None = None, whole: bool = False,  # noqa: ARG002
              ) -> tuple[np.ndarray, np.ndarray | None]:
        """``(index of each kept record, mask of the records kept or None)``; unknown records follow
        :attr:`unknown` (``"raise"`` acts as ``"drop"`` when ``refuse_rows`` is off: analyst-facing)."""
        index = {label: i for i, label in enumerate(self.labels)}
        rows = records.tolist() if isinstance(records, np.ndarray) else list(records)

        def look(x: Any) -> int:
            try:
                return index.get(x, -1)
            except TypeError:
                return -1

        idx = np.fromiter(map(look, rows), dtype=np.int64, count=len(rows))
        found = idx >= 0
        if found.all():
            return idx, None
        if self.unknown == "raise" and refuse_rows:
            unknown_rows = np.flatnonzero(~found)
            first = int(unknown_rows[0])
            row = first_row_record(rows, unknown_rows)
            hint = "" if row is None else (
                "; to count rows of a table, declare tuple categories and pass a list of tuples "
                "(e.g. list(zip(df['a'], df['b'])))")
            place = f"record {first}" if where is None else where(first)
            raise ValueError(f"{place}: not a declared category ({unknown_rows.size} unknown cell(s)){hint}; "
                             "declare it, or pass unknown='drop'")
        return idx[found], found


@dataclass(frozen=True)
class Bins:
    """The canonical integer of a record: the index of its bin, on the bins' lattice (see the module)."""

    edges: tuple[Fraction, ...]
    lattice: Lattice

    @property
    def labels(self) -> tuple[tuple[Fraction, Fraction], ...]:
        """Each bin as the pair of its edges."""
        return tuple(itertools.pairwise(self.edges))

    @property
    def edge_units(self) -> list[int]:
        return [int(e / self.lattice.step) for e in self.edges]

    def units(self, records: Any, *, missing: str, fill: Any, refuse_rows: bool,
              where: Callable[[int], str] | None = None, whole: bool = False,
              ) -> tuple[np.ndarray, np.ndarray | None]:
        """``(bin index of each kept record, mask of the records kept or None)``, screened like a sum's records."""
        edges = self.edge_units
        units, kept = screen_units(records, self.lattice.step, edges[0], edges[-1], missing=missing, fill=fill,
                                   refuse_rows=refuse_rows, where=where, whole=whole)
        if units.dtype == object:
            wide = np.array(edges, dtype=object)
            idx = np.fromiter((int(np.searchsorted(wide, u, side="right")) - 1 for u in units), dtype=np.int64,
                              count=units.size)
        else:
            idx = np.searchsorted(np.array(edges, dtype=np.int64), units, side="right") - 1
        return np.minimum(idx, len(edges) - 2), kept


Derivation = Categories | Bins
"""How a histogram's records become canonical integers: the index of their category or bin."""


@dataclass(frozen=True)
class Histogram(CellStatistic):
    """The histogram's definition: one noisy count per label, each with the same law (see the module)."""

    statistic = "histogram"
    cost: Cost
    max_contributions: int
    derivation: Derivation
    max_groups: int = field(default=1, kw_only=True)

    @property
    def labels(self) -> tuple[Any, ...]:
        return self.derivation.labels

    @property
    def noise(self) -> Noise:
        return Noise.of(self.max_contributions, self.cost, self.max_groups)

    @property
    def parameters(self) -> dict[str, Any]:
        kind: dict[str, Any] = ({"kind": "categories"} if isinstance(self.derivation, Categories)
                                else {"kind": "bins", "edges": self.derivation.edges})
        return kind

    def exact_bins(self, points: list[Sequence[int] | np.ndarray],
                   counts: list[Sequence[int] | np.ndarray]) -> list[list[int]]:
        """The count of each label in each cell, from each cell's (label index, count) pairs: one list per label."""
        size = len(self.labels)
        dense = np.zeros((size, len(points)), dtype=np.int64)
        for cell, (where, how_many) in enumerate(zip(points, counts, strict=True)):
            dense[np.asarray(where, dtype=np.int64), cell] = how_many
        return dense.tolist()

    def release_bins(self, exact: list[list[int]], source: RandomSource, alpha: Fraction) -> list[CellColumn]:
        """Every label's counts in every cell, all noised in one batch (one law), label by label."""
        cells = len(exact[0]) if exact else 0
        noise = self.noise.draw(source, cells * len(exact))
        t = self.noise.halfwidth(alpha)
        step = self.noise.output_step(alpha)
        out = []
        for i, column in enumerate(exact):
            values = [x + z for x, z in zip(column, noise[i * cells:(i + 1) * cells], strict=True)]
            out.append(CellColumn.within(values, t, None, step))
        return out

    def halfwidths(self, alpha: Fraction) -> dict[str, Fraction]:
        """``{"": t}``: each count's interval is ``value -/+ t``."""
        return {"": Fraction(self.noise.halfwidth(alpha))}

    def accuracy(self, alpha: Fraction) -> dict[str, Fraction]:
        """The half-width of :meth:`halfwidths`."""
        return self.halfwidths(alpha)

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:  # noqa: ARG002 - the laws do not depend on it
        """The law of every label's noisy count (one law for all) and the labels."""
        return {"noise": [self.noise.record()], "labels": list(self.labels), **self.parameters}
