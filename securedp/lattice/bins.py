"""How a histogram's records become canonical integers: the index of their declared category or bin.

A histogram (:mod:`securedp.mechanisms.histogram`) counts, per cell, the rows whose record has each
canonical integer; the rule turning a record into that integer is a rule of the record alone, read by
any table engine (:class:`securedp.engines.protocol.ColumnRead`), so it lives here, below the statistics
and the engines.

* :class:`Categories`: the declared labels (distinct, hashable). A record equal to a label (Python
  equality: ``1`` and ``1.0`` are one label, ``1`` and ``"1"`` two) has that label's index; a record
  matching no label is *unknown*: refused (``unknown="raise"``, the default) or ignored
  (``unknown="drop"``, always so in an analyst-facing session).
* :class:`Bins`: edges ``e0 < e1 < ... < ek`` (exact rationals). Bin ``i`` holds ``[e_i, e_{i+1})``,
  the last ``[e_{k-1}, e_k]``; records are screened, clamped to ``[e0, ek]`` and rounded onto a lattice
  on which every edge lies (:func:`edge_lattice`), exactly as for a sum.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.rational import to_rational
from securedp.lattice.columns import first_row_record
from securedp.lattice.lattice import Lattice
from securedp.lattice.screen import screen_units
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
