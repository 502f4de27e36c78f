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
from typing import Any, Protocol

import polars as pl

from securedp.hazmat.exact.rational import display_rational, round_up
from securedp.ledger.release import Release, jsonable
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
class Unseen:
    """What one noisy histogram's threshold hid: ``zeroed`` of its ``bins`` bins were read as 0 (noisy count at
    most ``threshold``). ``hidden`` is what their noisy counts add up to, each clipped at 0 and weighted (a bin
    of ``g`` groups, or of ``r`` rows, by ``g`` or ``r``; the last bin by its cap), and ``kept`` the same sum
    over the bins kept: rows (or pairs) the report sees, against those it may not.

    The histogram is read as **mostly hidden** when ``hidden >= kept``: a rule of thumb on the noisy counts
    (post-processing), not a bound. An empty bin's clipped noise weighs about half its scale."""

    part: str
    bins: int
    zeroed: int
    threshold: int
    hidden: Fraction
    kept: Fraction
    typical: Fraction | None
    """The weighted mean of the positive noisy counts read as 0 (``None`` without one): how large a bin the
    report would have to see."""

    def record(self) -> dict[str, Any]:
        """As a report's JSON states it, exactly (rationals as ``"num/den"``)."""
        return {"part": self.part, "bins": self.bins, "read_as_zero": self.zeroed, "threshold": self.threshold,
                "hidden": jsonable(self.hidden), "kept": jsonable(self.kept)}

    @property
    def mostly(self) -> bool:
        """Whether more of what the histogram counted lies in the bins read as 0 than in those kept."""
        return self.hidden >= self.kept

    def needed(self, epsilon: Fraction) -> Fraction | None:
        """About the epsilon at which the threshold falls to :attr:`typical` (the threshold scales as
        ``1 / epsilon``), rounded up to two significant digits; ``None`` without a positive count read as 0."""
        if self.typical is None:
            return None
        return round_up(epsilon * self.threshold / self.typical, 2)


def withheld(unseen: tuple[Unseen, ...], epsilon: Fraction) -> str | None:
    """Why a private report recommends nothing (a histogram of ``unseen`` is mostly hidden), and about what
    ``epsilon`` would see its bins; ``None`` when none is."""
    hidden = [u for u in unseen if u.mostly]
    if not hidden:
        return None
    needed = [n for n in (u.needed(epsilon) for u in hidden) if n is not None]
    more = "" if not needed else f"; an epsilon of about {display_rational(max(needed))} would lower the " \
        "thresholds to the counts read as 0"
    first = hidden[0]
    return (f"most of what the histogram of {first.part} counted lies in bins read as 0 ({first.zeroed} of "
            f"{first.bins}, noisy counts at most {first.threshold}), which the report cannot see{more}; a smaller "
            "groups cap lowers the noise of the pairs, and the data holder's exact analysis sees every bin")


def unseen(part: str, counts: list[int], threshold: int) -> Unseen:
    """The :class:`Unseen` of one histogram, ``counts[i]`` the noisy count of bin ``i + 1`` (weight ``i + 1``)."""
    weighted = [(i + 1, c) for i, c in enumerate(counts)]
    hidden = [(w, c) for w, c in weighted if c <= threshold]
    positive = [(w, c) for w, c in hidden if c > 0]
    weight = sum(w for w, _ in positive)
    return Unseen(part, len(counts), len(hidden), threshold, Fraction(sum(w * max(c, 0) for w, c in hidden)),
                  Fraction(sum(w * c for w, c in weighted if c > threshold)),
                  Fraction(sum(w * c for w, c in positive), weight) if weight else None)


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
    unseen: tuple[Unseen, ...] = ()
    """What the thresholds hid, of the persons by groups and of the pairs by rows (:class:`Unseen`)."""

    @classmethod
    def of(cls, release: Release, alpha: Fraction) -> NoisyProfile:
        cap_g, cap_r = release.parameters["groups_cap"], release.parameters["rows_cap"]
        scales = release.parameters["scales"]
        values = [int(v) for v in release.value]
        parts = [("groups per person", values[:cap_g], Fraction(scales[0])),
                 ("rows per (person, group)", values[cap_g:cap_g + cap_r], Fraction(scales[1]))]
        hid = tuple(unseen(part, counts, laplace_halfwidth(scale, alpha / len(counts)))
                    for part, counts, scale in parts)
        denoised = [tuple(c if c > h.threshold else 0 for c in counts)
                    for (_, counts, _), h in zip(parts, hid, strict=True)]
        return cls(denoised[0], denoised[1], Fraction(max(values[-1], 1)), hid)

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
