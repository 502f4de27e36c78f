"""What a prepared table will release, stated before a single bit is drawn or charged.

:attr:`PreparedTable.plan <securedp.tables.table.PreparedTable.plan>` is a :class:`TablePlan`. It
depends on the public parameters only (the query, the budget split, ``alpha``), never on the data, so
it is safe to show in an analyst-facing session, and it is what the release will state:

* for each aggregation, the half-width of each noisy integer's interval at level ``1 - alpha`` in the
  column's own units (:meth:`~securedp.mechanisms.statistic.AdditiveStatistic.halfwidths`: a count's
  or a sum's released interval is exactly ``value -/+`` it), or for a quantile the rank error bound
  ``r`` (McSherry and Talwar 2007; :func:`~securedp.mechanisms.rank_utility.rank_error_bound`);
* with private keys, the partition selection rule, its threshold and, for a key with ``n`` persons in
  the data, the probability that it is released: an enclosure ``[low, high]`` of rationals computed
  with outward rounding (``P(n + Z >= tau)`` for the threshold rules, from the exact noise law; the
  optimal rule's probability is exact), for a few ``n``.

Every number is exact or rounded outward: a half-width is an integer number of units times the
lattice step, a probability an interval that contains it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import gmpy2

from securedp.hazmat.exact.interval import Interval
from securedp.hazmat.exact.rational import format_rational
from securedp.mechanisms.gaussian_threshold import GaussianThreshold, gaussian_tail
from securedp.mechanisms.histogram import Histogram
from securedp.mechanisms.partition_selection import LaplaceThreshold, OptimalSelection
from securedp.mechanisms.quantile import Quantiles
from securedp.mechanisms.statistic import AdditiveStatistic
from securedp.tables.spec import Aggregation, Definition

PERSONS = (1, 2, 5, 10, 20, 50, 100, 1000)
"""The person counts ``n`` whose release probability a plan with private keys states."""
_PRECISION = 128


@dataclass(frozen=True)
class OutputPlan:
    """One aggregation's accuracy: half-widths in output units (by noisy integer) or a rank error bound."""

    name: str
    statistic: str
    mechanism: str
    halfwidths: dict[str, Fraction] = field(default_factory=dict)
    rank_error_bound: int | None = None


@dataclass(frozen=True)
class SelectionPlan:
    """Partition selection of private keys: its rule, threshold and ``P(released | n persons)`` enclosures."""

    rule: str
    delta: Fraction
    threshold: int | None
    release_probability: dict[int, tuple[Fraction, Fraction]]


@dataclass(frozen=True)
class TablePlan:
    """Everything a table release states before it draws (see the module docstring)."""

    alpha: Fraction
    epsilon: Fraction | None
    rho: Fraction | None
    shares: dict[str, Fraction]
    outputs: list[OutputPlan]
    selection: SelectionPlan | None
    notes: tuple[str, ...] = ()
    """Where the release will not be useful, from the query alone (:func:`securedp.tables.notes.plan_notes`)."""

    def lines(self) -> list[str]:
        """The plan as text, one statement per line (the command's ``--dry-run``)."""
        cost = f"epsilon {format_rational(self.epsilon)}" if self.epsilon is not None else \
            f"rho {format_rational(self.rho)}"  # type: ignore[arg-type]
        out = [f"cost     {cost}" + ("" if self.selection is None
                                     else f", delta {format_rational(self.selection.delta)}"),
               f"accuracy intervals at level 1 - {format_rational(self.alpha)}; nothing drawn, nothing charged"]
        for o in self.outputs:
            share = format_rational(self.shares[o.name])
            if o.rank_error_bound is not None:
                out.append(f"  {o.name}: {o.mechanism}, share {share}; rank error at most {o.rank_error_bound} "
                           "rows with probability 1 - alpha")
                continue
            widths = ", ".join(f"{k or 'value'} +/- {width_text(v)}" for k, v in o.halfwidths.items())
            out.append(f"  {o.name}: {o.mechanism}, share {share}; {widths}")
        out += [f"  note: {note}" for note in self.notes]
        if self.selection is not None:
            s = self.selection
            rule = s.rule + ("" if s.threshold is None else f", threshold {s.threshold} persons")
            out.append(f"  keys: private, selected by {rule}; P(key released | n persons):")
            for n, (low, high) in s.release_probability.items():
                out.append(f"    n = {n}: in [{_decimal(low, False)}, {_decimal(high, True)}]")
        return out


def width_text(q: Fraction) -> str:
    """A half-width as a person writes it: its exact decimal when it has one (steps that are powers of two
    or ten), else rounded up to 6 places after ``<=`` (outward: the true half-width is no larger)."""
    d = q.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d == 1:
        places = 0
        while (q * 10**places).denominator != 1:
            places += 1
        text = str((q * 10**places).numerator).rjust(places + 1, "0")
        return text if places == 0 else f"{text[:-places]}.{text[-places:]}"
    return f"<= {_decimal(q, True)}"


def _decimal(q: Fraction, up: bool) -> str:
    """``q`` to 6 decimal places, rounded ``up`` or down (outward when used for the ends of an enclosure)."""
    scaled = q * 10**6
    units = -((-scaled.numerator) // scaled.denominator) if up else scaled.numerator // scaled.denominator
    return f"{units // 10**6}.{units % 10**6:06d}"


def _interval_fraction(interval: Interval) -> tuple[Fraction, Fraction]:
    low, high = (Fraction(*gmpy2.mpq(v).as_integer_ratio()) for v in (interval.lo, interval.hi))
    return max(low, Fraction(0)), min(high, Fraction(1))


def _laplace_at_least(j: int, scale: Fraction) -> tuple[Fraction, Fraction]:
    """An enclosure of ``P(Z >= j)``, ``Z`` discrete Laplace of ``scale``: ``q**j / (1 + q)`` for ``j >= 1``,
    ``q = exp(-1 / scale)``, and ``1 - P(Z >= 1 - j)`` for ``j <= 0`` (the law is symmetric)."""
    t = j if j >= 1 else 1 - j
    q = (-Interval.exact(1 / scale, _PRECISION)).exp()
    tail = q**t / (q + 1)
    return _interval_fraction(tail if j >= 1 else 1 - tail)


def _gaussian_at_least(j: int, variance: Fraction) -> tuple[Fraction, Fraction]:
    """An enclosure of ``P(Z >= j)``, ``Z`` discrete Gaussian of ``variance`` (symmetric, as above)."""
    if j >= 0:
        return _interval_fraction(gaussian_tail(j, variance, _PRECISION))
    return _interval_fraction(1 - gaussian_tail(1 - j, variance, _PRECISION))


def selection_plan(rule: str, plan: LaplaceThreshold | OptimalSelection | GaussianThreshold,
                   delta: Fraction, persons: Sequence[int] = PERSONS) -> SelectionPlan:
    """The release probability of a key with ``n`` persons under ``plan``, for each ``n`` in ``persons``."""
    if isinstance(plan, OptimalSelection):
        return SelectionPlan(rule, delta, None, {n: (plan.probability(n),) * 2 for n in persons})
    if isinstance(plan, LaplaceThreshold):
        return SelectionPlan(rule, delta, plan.threshold,
                             {n: _laplace_at_least(plan.threshold - n, plan.scale) for n in persons})
    return SelectionPlan(rule, delta, plan.threshold,
                         {n: _gaussian_at_least(plan.threshold - n, plan.variance) for n in persons})


def table_plan(aggregations: Sequence[Aggregation], defined: dict[str, Definition], alpha: Fraction,
               epsilon: Fraction | None, rho: Fraction | None, shares: dict[str, Fraction],
               selection: SelectionPlan | None) -> TablePlan:
    """The plan of a prepared table (every statistic is already defined at its share)."""
    outputs = []
    for a in aggregations:
        d = defined[a.name]
        if isinstance(d, Quantiles):
            record: dict[str, Any] = d.cell_record(alpha)
            outputs.append(OutputPlan(a.name, d.statistic, "exponential",
                                      rank_error_bound=record["rank_error_bound"]))
        else:
            assert isinstance(d, (AdditiveStatistic, Histogram))
            outputs.append(OutputPlan(a.name, d.statistic, d.mechanism, halfwidths=d.halfwidths(alpha)))
    return TablePlan(alpha, epsilon, rho, shares, outputs, selection)
