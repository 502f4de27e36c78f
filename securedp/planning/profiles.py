"""What a contribution report is computed from: the data's exact joint counts, or noisy histograms.

A :class:`Profile` gives the totals (rows, persons, cells), the distributions of groups per person
and rows per (person, group) pair, and for a bounding ``(k, m)`` the rows kept and the persons kept
whole. :class:`ExactProfile` computes them exactly from the data (the random-function model of
:mod:`securedp.planning.contributions`); :class:`NoisyProfile` estimates them from a contribution
histogram release, by post-processing only.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

import polars as pl

from securedp.mechanisms.release import Release
from securedp.privacy.accuracy import laplace_halfwidth

PERSON, GROUPS, ROWS = "_securedp_person", "_securedp_groups", "_securedp_rows"


class Profile(Protocol):
    """What a report is computed from: totals, the two distributions, and the kept rows and persons."""

    @property
    def rows(self) -> Fraction: ...

    @property
    def persons(self) -> Fraction: ...

    @property
    def cells(self) -> Fraction: ...

    @property
    def groups_per_person(self) -> dict[int, int]: ...

    @property
    def rows_per_pair(self) -> dict[int, int]: ...

    def kept_rows(self, k: int, m: int) -> Fraction: ...

    def whole_persons(self, k: int, m: int) -> Fraction: ...


@dataclass(frozen=True)
class ExactProfile:
    """The exact joint counts: ``pairs[(g, r)]`` pairs of persons with ``g`` groups having ``r`` rows, and
    ``people[(g, top)]`` persons with ``g`` groups whose largest pair has ``top`` rows."""

    pairs: dict[tuple[int, int], int]
    people: dict[tuple[int, int], int]
    cells: Fraction

    @classmethod
    def of(cls, pairs: pl.DataFrame, group_by: list[str]) -> ExactProfile:
        joint = pairs.group_by(GROUPS, ROWS).agg(pl.len().alias("n"))
        people = (pairs.group_by(PERSON).agg(pl.col(GROUPS).first(), pl.col(ROWS).max().alias("top"))
                  .group_by(GROUPS, "top").agg(pl.len().alias("n")))
        cells = pairs.select(group_by).n_unique() if pairs.height else 0
        return cls({(int(g), int(r)): int(n) for g, r, n in joint.iter_rows()},
                   {(int(g), int(t)): int(n) for g, t, n in people.iter_rows()}, Fraction(cells))

    @property
    def rows(self) -> Fraction:
        return Fraction(sum(r * n for (_, r), n in self.pairs.items()))

    @property
    def persons(self) -> Fraction:
        return Fraction(sum(self.people.values()))

    @property
    def groups_per_person(self) -> dict[int, int]:
        return _marginal(self.people, 0)

    @property
    def rows_per_pair(self) -> dict[int, int]:
        return _marginal(self.pairs, 1)

    def kept_rows(self, k: int, m: int) -> Fraction:
        by_g: dict[int, int] = {}
        for (g, r), n in self.pairs.items():
            by_g[g] = by_g.get(g, 0) + n * min(r, m)
        return sum((Fraction(s * min(g, k), g) for g, s in by_g.items()), Fraction(0))

    def whole_persons(self, k: int, m: int) -> Fraction:
        return Fraction(sum(n for (g, top), n in self.people.items() if g <= k and top <= m))


def _marginal(joint: dict[tuple[int, int], int], axis: int) -> dict[int, int]:
    out: dict[int, int] = {}
    for key, n in joint.items():
        out[key[axis]] = out.get(key[axis], 0) + n
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class NoisyProfile:
    """The profile of a contribution histogram release: ``groups[g - 1]`` persons with ``g`` groups (the last
    bin: at least ``len(groups)``), ``pairs_by_rows[r - 1]`` pairs with ``r`` rows (the last bin: at least
    ``len(pairs_by_rows)``), and the number of cells (see the module docstring).

    Built by :meth:`of`, post-processing only: a histogram's noisy count at most its threshold (the
    half-width of its noise at level ``1 - alpha / bins``, which an empty bin's count exceeds with
    probability at most ``alpha / bins``) is read as 0, and the cells as at least 1.
    """

    groups: tuple[int, ...]
    pairs_by_rows: tuple[int, ...]
    cells: Fraction

    @classmethod
    def of(cls, release: Release, alpha: Fraction) -> NoisyProfile:
        cap_g, cap_r = release.parameters["groups_cap"], release.parameters["rows_cap"]
        scales = release.parameters["scales"]
        values = [int(v) for v in release.value]

        def denoised(counts: list[int], scale: Fraction) -> tuple[int, ...]:
            tau = laplace_halfwidth(scale, alpha / len(counts))
            return tuple(c if c > tau else 0 for c in counts)

        return cls(denoised(values[:cap_g], scales[0]), denoised(values[cap_g:cap_g + cap_r], scales[1]),
                   Fraction(max(values[-1], 1)))

    @property
    def persons(self) -> Fraction:
        return Fraction(sum(self.groups))

    @property
    def groups_per_person(self) -> dict[int, int]:
        return dict(enumerate(self.groups, 1))

    @property
    def rows_per_pair(self) -> dict[int, int]:
        return dict(enumerate(self.pairs_by_rows, 1))

    def _per_pair(self, m: int) -> Fraction:
        """``E_B[min(r, m)]``: rows kept per pair at ``m`` (0 without any pair)."""
        total = sum(self.pairs_by_rows)
        return Fraction(sum(n * min(r, m) for r, n in enumerate(self.pairs_by_rows, 1)), total) if total else \
            Fraction(0)

    @property
    def rows(self) -> Fraction:
        return self.kept_rows(len(self.groups), len(self.pairs_by_rows))

    def kept_rows(self, k: int, m: int) -> Fraction:
        return sum(n * min(g, k) for g, n in enumerate(self.groups, 1)) * self._per_pair(m)

    def whole_persons(self, k: int, m: int) -> Fraction:
        total = sum(self.pairs_by_rows)
        within = Fraction(sum(self.pairs_by_rows[:m]), total) if total else Fraction(1)
        return sum((n * within**g for g, n in enumerate(self.groups, 1) if g <= k), Fraction(0))
