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

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.lattice.bins import (
    UNKNOWN_POLICIES,
    Bins,
    Categories,
    Derivation,
    check_categories,
    check_edges,
    edge_lattice,
)
from securedp.mechanisms.statistic import CellColumn, CellStatistic
from securedp.privacy.cost import Cost
from securedp.privacy.noise import Noise

__all__ = ["UNKNOWN_POLICIES", "Bins", "Categories", "Derivation", "Histogram", "check_categories", "check_edges",
           "edge_lattice"]  # the rule of a record's bin is defined in securedp.lattice.bins, below the engines


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
