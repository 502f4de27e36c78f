"""Contribution analysis: how many groups and rows each person has, and what bounding them would cost.

:func:`analyze_contributions` reads a table with a person column (``id_column``) and group columns
(``group_by``) and reports, for the bounding of :func:`securedp.prepare_table` (each person keeps at
most ``k = max_groups`` groups and ``m = max_rows`` rows per kept group,
:mod:`securedp.engines.polars.bounding`):

* the distribution of the number of groups per person, and of rows per (person, group) pair;
* for each candidate ``(k, m)``: the fraction of rows kept, the fraction of persons kept whole (every
  row of theirs kept), and the predicted error per cell of a count (and, with ``column`` and
  ``bounds``, of a sum) released by a table at ``release_epsilon`` and level ``1 - alpha``;
* a recommended pair.

**Exact report (not private).** Without ``epsilon`` every figure is computed from the data exactly,
for the data holder only: it is refused in an analyst-facing session or mode (the report is made of
the raw data's counts), and says ``private: False``. The bounding rule keeps a person's groups and
rows by salted SHA-256 digests; modelling SHA-256 as a random function, a person with ``g > k`` groups
keeps a uniformly random ``k`` of them, so a (person, group) pair with ``r`` rows keeps ``min(r, m)``
rows with probability ``min(1, k / g)`` and none otherwise. The fraction of rows kept is the exact
expectation of that model, a rational: ``sum over pairs of min(r, m) * min(1, k / g)`` over the rows.
A person is kept whole iff ``g <= k`` and every pair has ``r <= m`` (under any salt).

**Private report.** With ``epsilon`` the data is read once into three noisy histograms
(:func:`prepare_contribution_histogram`, an ``epsilon``-DP release charged to ``session`` when given),
and the same report is computed from them alone (post-processing): the pairs are modelled as
independent of the number of groups of their person, so the rows kept are estimated as
``sum_g A_g min(g, k) * E_B[min(r, m)]`` and the persons kept whole as ``sum_{g <= k} A_g P_B(r <= m)^g``
(``A``: persons by groups, ``B``: pairs by rows). These figures are exact rationals *of the noisy
counts*: estimates, not bounds. A noisy count at most its threshold is read as 0
(:class:`~securedp.planning.profiles.NoisyProfile`), so what lies in such bins is not seen: the report
states, per histogram, how many bins were read as 0 and what their noisy counts add up to
(:class:`~securedp.planning.profiles.Unseen`), and when that is as much as the bins kept (the histogram is
*mostly hidden*, at a small ``epsilon`` or for data spread thinly over many bins) it **withholds** its
recommendation, saying why and about what ``epsilon`` would see those bins.

**Predicted error per cell** (the same for both reports). ``cells`` is the number of group keys in the
data. The *bias* of a count is the mean over cells of the expected number of rows bounding drops,
``(rows - kept rows) / cells``; its *noise* is the half-width ``t`` at level ``1 - alpha`` of the
discrete Laplace noise a table adds at ``release_epsilon`` (scale ``k m / release_epsilon``, exactly
:func:`securedp.privacy.accuracy.laplace_halfwidth`). Their sum is the count's predicted error. For a
sum over ``bounds`` (``W = max(|lo|, |hi|)``, lattice as :class:`securedp.tables.spec.Sum` chooses it),
the bias is at most ``W`` per dropped row and the noise half-width is that of scale ``k m W_u /
release_epsilon`` in lattice units, times the step. Both half-widths are those the table's own plan
states (:attr:`securedp.tables.table.PreparedTable.plan`) for a count or a sum at ``release_epsilon``.

**Recommendation rule.** The candidate with the smallest predicted error per cell (of the sum when
``bounds`` are given, else of the count); ties go to the smaller ``k m``, then to the smaller ``k``. The
prediction gives the count (or the sum) all of ``release_epsilon``: a table of several aggregations
splits its epsilon among them, so ``release_epsilon`` should be the share the count (or the sum) will get.
Default candidates: ``k`` and ``m`` each in the powers of two up to the largest observed (or capped)
value, and that value.

**Performance.** The exact report is three Polars group-bys (rows per pair, pairs per person, and the joint
counts of pairs by ``(g, r)`` and of persons by ``(g, largest r)``); each candidate is read from those tables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl

from securedp.bounding.contributions import analyst_facing, positive_count
from securedp.bounding.data_phase import reading_data
from securedp.engines.frames import read_table
from securedp.engines.protocol import drops_missing_keys, group_columns, refuse_reserved
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import display_rational, positive_rational
from securedp.ledger.release import PreparedRelease, Release, canonical_input, jsonable
from securedp.planning.noisy_counts import NoisyCounts
from securedp.planning.profiles import GROUPS, PERSON, ROWS, ExactProfile, NoisyProfile, Profile, Unseen, withheld
from securedp.privacy.accuracy import check_alpha, laplace_halfwidth
from securedp.privacy.cost import Cost
from securedp.privacy.noise import Noise
from securedp.reading.files import table_column_names
from securedp.session.methods import session_method
from securedp.session.session import Session
from securedp.tables.spec import Sum

NOT_PRIVATE = "not private: computed from the raw data, for the data holder only"
HISTOGRAM_SHARES = (Fraction(1, 3), Fraction(1, 3), Fraction(1, 3))
"""The exact shares of ``epsilon`` of the three noisy parts: persons by groups, pairs by rows, cells."""


class AnalystFacingRefused(ValueError):
    """The exact (not private) analysis was asked for in an analyst-facing session or mode."""


def _read_pairs(data: Any, id_column: str, group_by: list[str], drop_keys: bool) -> pl.DataFrame:
    """Rows per (person, group) pair, with each person's number of groups ``g``: one row per pair (``drop_keys``:
    the rows of a missing or blank group key are dropped, :data:`~securedp.engines.protocol.MISSING_KEYS`)."""
    frames = read_table(data, PERSON, id_column, group_by, drop_bad_keys=analyst_facing(), drop_missing_keys=drop_keys)
    return (frames.frame.lazy().group_by([PERSON, *group_by]).agg(pl.len().alias(ROWS))
            .with_columns(pl.len().over(PERSON).alias(GROUPS)).collect())


def _check_public(id_column: Any, group_by: Any) -> list[str]:
    if not isinstance(id_column, str) or not id_column:
        raise ValueError("id_column must name the person column: the analysis counts each person's groups and rows")
    groups = group_columns(group_by)
    if not groups:
        raise ValueError("group_by must name at least one group column")
    if id_column in groups:
        raise ValueError(f"id_column {id_column!r} is also a group_by column")
    refuse_reserved([id_column, *groups])
    return groups


@dataclass(frozen=True)
class Candidate:
    """The predicted effect of bounding at ``(max_groups, max_rows)``; every figure an exact rational
    (see the module docstring: expectations under the random-function model, or estimates from noisy
    counts in a private report)."""

    max_groups: int
    max_rows: int
    rows_kept: Fraction
    """The fraction of rows kept."""
    persons_whole: Fraction
    """The fraction of persons every row of whom is kept."""
    count_bias: Fraction
    """The mean over cells of the rows dropped from a cell."""
    count_halfwidth: int
    """The half-width of the count's noise at level ``1 - alpha``."""
    sum_bias: Fraction | None = None
    """At most ``W`` per dropped row: ``W * count_bias`` (with ``bounds``)."""
    sum_halfwidth: Fraction | None = None
    """The half-width of the sum's noise at level ``1 - alpha``, in the column's units (with ``bounds``)."""

    @property
    def count_error(self) -> Fraction:
        """The count's predicted error per cell: bias plus noise half-width."""
        return self.count_bias + self.count_halfwidth

    @property
    def sum_error(self) -> Fraction | None:
        """The sum's predicted error per cell: bias bound plus noise half-width (with ``bounds``)."""
        if self.sum_bias is None or self.sum_halfwidth is None:
            return None
        return self.sum_bias + self.sum_halfwidth

    def record(self) -> dict[str, Any]:
        """The candidate as JSON-ready exact values."""
        out = {"max_groups": self.max_groups, "max_rows": self.max_rows, "rows_kept": self.rows_kept,
               "persons_whole": self.persons_whole, "count_bias": self.count_bias,
               "count_halfwidth": self.count_halfwidth, "count_error": self.count_error}
        if self.sum_error is not None:
            out.update(sum_bias=self.sum_bias, sum_halfwidth=self.sum_halfwidth, sum_error=self.sum_error)
        return dict(jsonable(out))


@dataclass(frozen=True)
class ContributionReport:
    """What :func:`analyze_contributions` returns (see the module docstring)."""

    private: bool
    """``False``: exact figures of the raw data, for the data holder only; ``True``: from :attr:`release`."""
    rows: Fraction
    persons: Fraction
    cells: Fraction
    groups_per_person: dict[int, int]
    rows_per_pair: dict[int, int]
    candidates: tuple[Candidate, ...]
    recommended: Candidate | None
    """The candidate the rule recommends; ``None`` when a private report withholds it (:attr:`withheld`)."""
    release_epsilon: Fraction
    alpha: Fraction
    release: Release | None = None
    """The contribution histogram release the private report is computed from (``None``: exact report)."""
    unseen: tuple[Unseen, ...] = ()
    """A private report's bins read as 0, per histogram (empty for the exact report)."""
    withheld: str | None = None
    """Why a private report recommends nothing (its histogram is mostly hidden), else ``None``."""

    @property
    def label(self) -> str:
        """What the figures are: ``"not private ..."`` or the release's exact epsilon."""
        if self.release is None:
            return NOT_PRIVATE
        assert self.release.epsilon is not None
        return f"private: estimates from an epsilon = {display_rational(self.release.epsilon)} contribution histogram"

    def record(self) -> dict[str, Any]:
        """The report as JSON-ready exact values (rationals as ``"num/den"``)."""
        out: dict[str, Any] = {
            "private": self.private, "label": self.label, "rows": self.rows, "persons": self.persons,
            "cells": self.cells, "groups_per_person": self.groups_per_person, "rows_per_pair": self.rows_per_pair,
            "release_epsilon": self.release_epsilon, "alpha": self.alpha,
            "recommended": None if self.recommended is None else {"max_groups": self.recommended.max_groups,
                                                                  "max_rows": self.recommended.max_rows},
        }
        out = dict(jsonable(out))
        out["candidates"] = [c.record() for c in self.candidates]
        if self.release is not None:
            out.update(withheld=self.withheld, unseen=[u.record() for u in self.unseen], release=self.release.record())
        return out


def _powers_up_to(top: int) -> list[int]:
    return sorted({*(1 << i for i in range(max(top, 1).bit_length()) if 1 << i <= top), max(top, 1)})


def _candidates(candidates: Any) -> tuple[tuple[int, int], ...] | None:
    """The given candidates, checked (``None``: the default, fixed by the profile)."""
    if candidates is None:
        return None
    if isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__iter__"):
        raise TypeError("candidates must be a sequence of (max_groups, max_rows) pairs")
    pairs = []
    for pair in candidates:
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"a candidate is a (max_groups, max_rows) pair, not {pair!r}")
        pairs.append((positive_count(pair[0], "max_groups"), positive_count(pair[1], "max_rows")))
    if not pairs:
        raise ValueError("give at least one candidate (max_groups, max_rows) pair")
    return tuple(dict.fromkeys(pairs))


@dataclass(frozen=True)
class ReportPlan:
    """The public inputs of a report, checked before any data is read: the planned table release's
    ``release_epsilon`` and ``alpha``, a sum's lattice ``(step, W in units, W)`` and the candidates."""

    release_epsilon: Fraction
    alpha: Fraction
    sum_lattice: tuple[Fraction, int, Fraction] | None
    candidates: tuple[tuple[int, int], ...] | None

    @classmethod
    def of(cls, *, column: str | None = None, bounds: Any = None, candidates: Any = None, release_epsilon: Any = 1,
           alpha: Any = "0.05") -> ReportPlan:
        """The options of :func:`analyze_contributions`, checked."""
        if (column is None) != (bounds is None):
            raise ValueError("give both column= and bounds= to predict a sum's error, or neither")
        lattice = None
        if column is not None:
            lattice_column = Sum(column, bounds).lattice_column()
            step_lattice, lo_u, hi_u = lattice_column.lattice, lattice_column.lo_u, lattice_column.hi_u
            width_u = max(abs(lo_u), abs(hi_u), 1)
            lattice = (step_lattice.step, width_u, width_u * step_lattice.step)
        return cls(positive_rational(release_epsilon, "release_epsilon"), check_alpha(alpha), lattice,
                   _candidates(candidates))

    def candidate(self, profile: Profile, k: int, m: int) -> Candidate:
        """The predictions for bounding ``profile`` at ``(k, m)``."""
        rows, kept, cells = profile.rows, profile.kept_rows(k, m), profile.cells
        bias = (rows - kept) / cells if cells else Fraction(0)
        t = laplace_halfwidth(Fraction(k * m) / self.release_epsilon, self.alpha)
        sum_bias = sum_half = None
        if self.sum_lattice is not None:
            step, width_u, width = self.sum_lattice
            sum_bias = bias * width
            sum_half = laplace_halfwidth(Fraction(k * m * width_u) / self.release_epsilon, self.alpha) * step
        return Candidate(k, m, kept / rows if rows else Fraction(1),
                         profile.whole_persons(k, m) / profile.persons if profile.persons else Fraction(1),
                         bias, t, sum_bias, sum_half)

    def report(self, profile: Profile, release: Release | None) -> ContributionReport:
        """The report of ``profile`` (default candidates: powers of two up to the largest values seen)."""
        pairs = self.candidates
        if pairs is None:
            top_g = max((g for g, n in profile.groups_per_person.items() if n), default=1)
            top_r = max((r for r, n in profile.rows_per_pair.items() if n), default=1)
            pairs = tuple((k, m) for k in _powers_up_to(top_g) for m in _powers_up_to(top_r))
        candidates = tuple(self.candidate(profile, k, m) for k, m in pairs)

        def rank(c: Candidate) -> tuple[Fraction, int, int]:
            error = c.sum_error if c.sum_error is not None else c.count_error
            return error, c.max_groups * c.max_rows, c.max_groups

        return ContributionReport(release is not None, profile.rows, profile.persons, profile.cells,
                                  profile.groups_per_person, profile.rows_per_pair, candidates,
                                  min(candidates, key=rank), self.release_epsilon, self.alpha, release)

    def from_histogram(self, release: Release) -> ContributionReport:
        """The private report computed from a contribution histogram ``release`` alone (post-processing:
        no data is read and nothing is charged)."""
        if release.statistic != "contribution_histogram":
            raise ValueError("a contribution report is computed from a contribution_histogram release, "
                             f"not from a {release.statistic!r} release")
        profile = NoisyProfile.of(release, self.alpha)
        assert release.epsilon is not None
        why = withheld(profile.unseen, release.epsilon)
        report = dataclasses.replace(self.report(profile, release), unseen=profile.unseen, withheld=why)
        return report if why is None else dataclasses.replace(report, recommended=None)


def prepare_contribution_histogram(data: Any, *, id_column: str, group_by: Sequence[str] | str, epsilon: Any,
                                   groups_cap: Any = 16, rows_cap: Any = 16, missing_keys: str = "raise"
                                   ) -> PreparedRelease:
    """Validate and price the contribution histogram, an ``epsilon``-DP release; nothing is drawn yet.

    Its value is a tuple of ``groups_cap + rows_cap + 1`` noisy integers, labelled in :attr:`Release.labels`:

    * ``A_g`` (``g = 1 .. G``, ``G = groups_cap``): the persons with ``g`` groups (the last: at least ``G``).
      One person is in one bin: L1 sensitivity 1.
    * ``B_r`` (``r = 1 .. R``, ``R = rows_cap``): the (person, group) pairs with ``r`` rows (the last: at
      least ``R``), counting only the pairs of persons with at most ``G`` groups: L1 sensitivity ``G``.
    * ``C``: the group keys among those pairs: sensitivity ``G``.

    Each part gets an exact third of ``epsilon`` and independent discrete Laplace noise of scale
    ``sensitivity / (epsilon / 3)`` (:class:`securedp.privacy.noise.Noise`, sampled exactly as
    Canonne, Kamath and Steinke 2020): each part is ``epsilon / 3``-DP by the geometric mechanism (Ghosh,
    Roughgarden and Sundararajan 2009, the discrete Laplace mechanism of Dwork, McSherry, Nissim and Smith
    2006), and the release is ``epsilon``-DP for adding or removing one person with any number of rows
    (basic composition of the three). The record's ``max_contributions`` is 1 (the field is a row bound);
    the guarantee above needs none: it holds for a person with any number of rows. ``missing_keys="drop"``
    drops the rows of a missing or blank group key first (a rule of each row alone), as a table does.
    """
    groups, drop_keys = _check_public(id_column, group_by), drops_missing_keys(missing_keys)
    cost = Cost.of(epsilon=epsilon)
    eps = cost.amount
    cap_g, cap_r = positive_count(groups_cap, "groups_cap"), positive_count(rows_cap, "rows_cap")
    noises = [Noise.of(sensitivity, cost.share(share)) for sensitivity, share in zip((1, cap_g, cap_g),
                                                                                       HISTOGRAM_SHARES, strict=True)]
    scales = [noise.parameter for noise in noises]
    reading_data()
    pairs = _read_pairs(data, id_column, groups, drop_keys)
    persons = pairs.group_by(PERSON).agg(pl.col(GROUPS).first())
    a = np.bincount(np.minimum(persons[GROUPS].to_numpy(), cap_g) - 1, minlength=cap_g).astype(np.int64)
    light = pairs.filter(pl.col(GROUPS) <= cap_g)
    b = np.bincount(np.minimum(light[ROWS].to_numpy(), cap_r) - 1, minlength=cap_r).astype(np.int64)
    c = light.select(groups).n_unique() if light.height else 0
    labels = (*[f"groups={g}" for g in range(1, cap_g)], f"groups>={cap_g}",
              *[f"rows={r}" for r in range(1, cap_r)], f"rows>={cap_r}", "cells")
    parameters = {"id_column": id_column, "group_by": groups, "groups_cap": cap_g, "rows_cap": cap_r,
                  "shares": list(HISTOGRAM_SHARES), "sensitivities": [1, cap_g, cap_g], "scales": scales,
                  **({"missing_keys": "drop"} if drop_keys else {})}

    template = Release(value=(), statistic="contribution_histogram", mechanism=noises[0].mechanism,
                       parameters=parameters, epsilon=eps, rho=None, max_contributions=1, labels=labels)
    route = NoisyCounts((a, b, c), noises, template, canonical_input("contribution_histogram", groups=a, rows=b,
                                                                      cells=c))
    return PreparedRelease("contribution_histogram", eps, None, route, route.input_bytes)


_charged: Callable[..., Release] = session_method(prepare_contribution_histogram)


def analyze_contributions(
    data: Any, *, id_column: str, group_by: Sequence[str] | str, column: str | None = None, bounds: Any = None,
    candidates: Any = None, epsilon: Any = None, release_epsilon: Any = 1, alpha: Any = "0.05",
    groups_cap: Any = 16, rows_cap: Any = 16, session: Session | None = None, rng: RandomSource | None = None,
    missing_keys: str = "raise",
) -> ContributionReport:
    """The contribution report of ``data`` (a pandas, Polars or pyarrow table, or a CSV or Parquet path).

    See the module docstring. ``release_epsilon`` and ``alpha`` describe the planned table release whose
    error is predicted: ``release_epsilon`` is the epsilon the count (or the sum) receives, its share of
    the table's epsilon. ``column`` and ``bounds`` add a sum's prediction (the column must be in
    ``data``; its values are not read: the bias bound uses the bounds alone). ``candidates``: the
    ``(max_groups, max_rows)`` pairs to evaluate (default: powers of two up to the largest value seen,
    and that value). ``missing_keys``: ``"raise"`` (default) refuses a missing or blank group key, ``"drop"``
    drops its rows (:data:`~securedp.engines.protocol.MISSING_KEYS`, as :func:`securedp.prepare_table`).

    Without ``epsilon``: the exact report, refused (``ValueError``) in an analyst-facing session or mode.
    With ``epsilon``: the contribution histogram (:func:`prepare_contribution_histogram`, capped at
    ``groups_cap`` groups and ``rows_cap`` rows) is released, charged to ``session`` if given (in its error
    mode, audited), else drawn from ``rng``; the report is computed from it and carries it as ``release``.
    """
    groups, drop_keys = _check_public(id_column, group_by), drops_missing_keys(missing_keys)
    plan = ReportPlan.of(column=column, bounds=bounds, candidates=candidates, release_epsilon=release_epsilon,
                         alpha=alpha)
    if epsilon is None:
        if analyst_facing() or (session is not None and session.analyst_facing):
            raise AnalystFacingRefused(
                "the exact contribution analysis reads the raw data and is not private: it is for the data "
                "holder; an analyst-facing session runs it with epsilon= (a private contribution histogram)")
        if session is not None or rng is not None:
            raise ValueError("session= and rng= go with the private analysis: give epsilon= too, or drop them")
        if column is not None and column not in table_column_names(data):
            raise ValueError(f"column {column!r} is not in the table")
        return plan.report(ExactProfile.of(_read_pairs(data, id_column, groups, drop_keys), groups), None)
    if session is not None and rng is not None:
        raise ValueError("give session= (its source draws) or rng=, not both")
    options = {"id_column": id_column, "group_by": groups, "epsilon": epsilon, "groups_cap": groups_cap,
               "rows_cap": rows_cap, "missing_keys": missing_keys}
    if session is not None:
        release = _charged(session, data, **options)
    else:
        release = prepare_contribution_histogram(data, **options).execute(rng)
    return plan.from_histogram(release)
