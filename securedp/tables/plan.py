"""What a prepared table will release, stated before a single bit is drawn or charged.

:attr:`PreparedTable.plan <securedp.tables.table.PreparedTable.plan>` is a :class:`TablePlan`. It
depends on the public parameters only (the query, the budget split, ``alpha``), never on the data, so
it is safe to show in an analyst-facing session, and it is what the release will state:

* for each aggregation, the half-width of each noisy integer's interval at level ``1 - alpha`` in the
  column's own units (:meth:`~securedp.mechanisms.statistic.AdditiveStatistic.halfwidths`: a count's
  or a sum's released interval is exactly ``value -/+`` it); for a mean or a variance, whose error
  depends on the cell's row count, also the half-width of the value in the column's units in a cell of
  ``n`` rows, for a few ``n`` (:data:`ROWS`; :meth:`OutputPlan.value_halfwidth`); or for a quantile the rank error bound
  ``r`` (McSherry and Talwar 2007; :func:`~securedp.mechanisms.rank_utility.rank_error_bound`);
* with private keys, the partition selection rule, its threshold, ``delta / k`` (the proven bound on
  the chance that a key only one person holds appears) and, for a key with ``n`` persons in the data
  (``n`` rows, when the rule thresholds a count of rows), the probability that it is released: an
  enclosure ``[low, high]`` of rationals computed with outward rounding (``P(n + Z >= tau)`` for the
  threshold rules, from the exact noise law; the optimal rule's probability is exact), for a few
  ``n``; and the persons a key needs: the least ``n`` whose release probability is proven at least
  1/2 and 19/20 (:data:`NEEDED`).

Every number is exact or rounded outward: a half-width is an integer number of units times the
lattice step, a probability an interval that contains it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import gmpy2

from securedp.hazmat.exact.interval import Interval
from securedp.hazmat.exact.rational import display_rational, exact_text, format_rational, round_up
from securedp.hazmat.exact.search import least_holding
from securedp.mechanisms.gaussian_threshold import GaussianThreshold, gaussian_tail
from securedp.mechanisms.histogram import Histogram
from securedp.mechanisms.moments import ColumnStatistic
from securedp.mechanisms.partition_selection import LaplaceThreshold, OptimalSelection
from securedp.mechanisms.quantile import Quantiles
from securedp.mechanisms.statistic import AdditiveStatistic
from securedp.tables.spec import Aggregation, Definition

ROWS = (100, 1000, 10_000, 100_000)
"""The row counts ``n`` of a cell at which a plan states a mean's or a variance's half-width."""
PERSONS = (1, 2, 5, 10, 20, 50, 100, 1000)
"""The person counts ``n`` whose release probability a plan with private keys states."""
NEEDED = (Fraction(1, 2), Fraction(19, 20))
"""The release probabilities for which a plan states the least ``n`` that reaches them."""
_PRECISION = 128


@dataclass(frozen=True)
class OutputPlan:
    """One aggregation's accuracy: half-widths in output units (by noisy integer) or a rank error bound."""

    name: str
    statistic: str
    mechanism: str
    halfwidths: dict[str, Fraction] = field(default_factory=dict)
    """Each noisy integer's half-width (``""``: the value's own, for a count or a sum)."""
    rank_error_bound: int | None = None
    level_rank_errors: tuple[tuple[Fraction, int], ...] = ()
    """Several quantiles by the recursive split: each level and its own rank error bound (the largest is
    :attr:`rank_error_bound`)."""
    fallback_rows: int | None = None
    """A selection with a fallback point: the rows from which a cell releases it with probability at most alpha."""
    lattice_step: Fraction | None = None
    """The step of the column's lattice (given, the declared grid of the column's type, or the bounds' rule:
    :func:`~securedp.mechanisms.records.typed_lattice`), as the release records it; ``None`` without a column."""
    value_halfwidth: Callable[[int], Fraction] | None = field(default=None, compare=False, repr=False)
    """For a mean or a variance: the half-width of the released value in the column's units (squared, for a
    variance) at the plan's level in a cell that keeps ``n`` rows, exact
    (:meth:`~securedp.mechanisms.mean.Mean.value_halfwidth`); ``None`` for the others."""


@dataclass(frozen=True)
class SelectionPlan:
    """Partition selection of private keys: its rule, threshold and ``P(released | n persons)`` enclosures."""

    rule: str
    delta: Fraction
    threshold: int | None
    release_probability: dict[int, tuple[Fraction, Fraction]]
    delta_per_key: Fraction | None = None
    """``delta / k``: the proven bound on the chance that a key only one person holds is released."""
    counted: str | None = None
    """Rule ``"count"``: the released count that selects the keys (``"count"`` or ``"persons"``)."""
    unit: str = "persons"
    """What ``n`` counts: ``"persons"``, or ``"rows"`` when the rule thresholds a count of rows (``max_rows > 1``)."""
    needed: dict[Fraction, int] = field(default_factory=dict)
    """For each level of :data:`NEEDED`, the least ``n`` whose release probability is proven at least that level."""
    delta_asked: Fraction | None = None
    """The ``delta`` asked, when the threshold proves (and charges) a smaller :attr:`delta`."""
    sensitivity: int = 1
    """The thresholded count's cell sensitivity (``max_rows`` for a count of rows; 1 for persons)."""
    cheaper: SelectionPlan | None = None
    """Rule ``"count"`` on a count of rows: the plan of the separate selection on distinct persons at half the budget
    (``selection="optimal"`` in epsilon, ``"gaussian"`` in rho) when a key of one-row persons needs fewer persons
    for a 1/2 chance under it (:func:`securedp.tables.pricing.PricedTable.plan`), else ``None``."""

    @property
    def delta_text(self) -> str:
        """The ``delta`` charged, and the one asked when it is larger."""
        charged = display_rational(self.delta)
        if self.delta_asked is None or self.delta_asked == self.delta:
            return charged
        return f"{charged} (proven by the threshold; {display_rational(self.delta_asked)} asked)"

    def lines(self) -> list[str]:
        """The selection as text (the keys' part of :meth:`TablePlan.lines`)."""
        if self.counted is not None:
            rule = f"thresholding the released {self.counted} at {self.threshold} {self.unit}"
        else:
            rule = self.rule + ("" if self.threshold is None else f", threshold {self.threshold} persons")
        if self.delta_per_key is not None:
            rule += f"; a key one person holds appears with probability at most {display_rational(self.delta_per_key)}"
        out = [f"  keys: private, selected by {rule}; P(key released | n {self.unit}):"]
        out += [f"    n = {n}: in [{_decimal(low, False)}, {_decimal(high, True)}]"
                for n, (low, high) in self.release_probability.items()]
        if self.needed:
            needs = " and ".join(f"{n} {self.unit} for a {display_rational(level)} chance"
                                 for level, n in self.needed.items())
            out.append(f"    a key needs {needs}")
        if self.cheaper is not None:
            out += self._hint(self.cheaper)
        return out

    def _hint(self, other: SelectionPlan) -> list[str]:
        """Where a key's persons hold about one row each: the cheaper rule, the persons a key needs under each and
        the chance it is kept at the counts this rule needs."""
        half, most = NEEDED
        kept = "; ".join(f"{n} persons: {_decimal(other.release_probability[n][0], False)} (here at least "
                         f"{display_rational(level)})" for level, n in self.needed.items())
        noise = "twice the noise scale" if other.rule == "optimal" else "sqrt(2) times the noise's standard deviation"
        return [f"  hint: where a key's persons hold about one row each, selection='{other.rule}' (the command's "
                f"--selection {other.rule}) keeps more of the keys: it selects on a separate count of distinct persons "
                f"(sensitivity 1, where this count's is max_rows = {self.sensitivity}) at half the budget, so a key "
                f"needs {other.needed[half]} persons for a {display_rational(half)} chance and {other.needed[most]} "
                f"for {display_rational(most)} (here {self.needed[half]} and {self.needed[most]} rows); the chance "
                f"it keeps a key of {kept}. Every aggregation then gets half its share ({noise})."]


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

    def __str__(self) -> str:
        """The plan as the command's ``--dry-run`` prints it (:meth:`lines`): ``print(prepared.plan)`` reads as
        text, where the dataclass's ``repr`` (kept for exactness) shows every ``Fraction``."""
        return "\n".join(self.lines())

    def lines(self, rows: Sequence[int] = ROWS) -> list[str]:
        """The plan as text, one statement per line (the command's ``--dry-run``); a mean's or a variance's
        half-width in the column's units at each row count of ``rows``."""
        cost = f"epsilon {display_rational(self.epsilon)}" if self.epsilon is not None else \
            f"rho {display_rational(self.rho)}"  # type: ignore[arg-type]
        out = [f"cost     {cost}" + ("" if self.selection is None
                                     else f", delta {self.selection.delta_text}"),
               f"accuracy intervals at level 1 - {display_rational(self.alpha)}; nothing drawn, nothing charged"]
        for o in self.outputs:
            share = format_rational(self.shares[o.name])
            if o.lattice_step is not None:
                share += f", lattice step {exact_text(o.lattice_step)}"
            if o.rank_error_bound is not None:
                out.append(f"  {o.name}: {o.mechanism}, share {share}; rank error at most {o.rank_error_bound} "
                           "rows with probability 1 - alpha" + ("" if o.fallback_rows is None else
                                                               ", the fallback point included, which a cell "
                                                               f"of {o.fallback_rows:,} rows or more releases "
                                                               "with probability at most alpha"))
                if o.level_rank_errors:
                    each = ", ".join(f"q {exact_text(q)}: {r:,}" for q, r in o.level_rank_errors)
                    out.append(f"    by the recursive split, each level's rank error at most (rows) {each}")
                if o.value_halfwidth is not None:  # a mean between selected points
                    at = ", ".join(f"+/- {width_text(o.value_halfwidth(n))} at {n:,} rows" for n in sorted(set(rows)))
                    out.append(f"    its mean between them: {at} kept in the cell (column units)")
                continue
            widths = ", ".join(f"{k or 'value'} +/- {width_text(v)}" for k, v in o.halfwidths.items())
            if o.value_halfwidth is None:
                out.append(f"  {o.name}: {o.mechanism}, share {share}; {widths}")
                continue
            at = ", ".join(f"+/- {width_text(o.value_halfwidth(n))} at {n:,} rows" for n in sorted(set(rows)))
            squared = " squared" if o.statistic == "variance" else ""
            out += [f"  {o.name}: {o.mechanism}, share {share}; value {at} kept in the cell (column units{squared})",
                    f"    its noisy parts: {widths}"]
        out += [f"  note: {note}" for note in self.notes]
        if self.selection is not None:
            out += self.selection.lines()
        return out


def width_text(q: Fraction) -> str:
    """A half-width as a person writes it: its exact decimal when it has one of at most 12 significant
    digits (steps that are powers of two or ten), else rounded up to 6 significant digits after ``<=``
    (outward: the true half-width is no larger)."""
    d = q.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    places = 0
    if d == 1:
        while (q * 10**places).denominator != 1:
            places += 1
    scaled = q * 10**places
    if d == 1 and len(str(abs(scaled.numerator)).rstrip("0")) <= 12:
        text = str(scaled.numerator).rjust(places + 1, "0")
        return text if places == 0 else f"{text[:-places]}.{text[-places:]}"
    return f"<= {display_rational(round_up(q, 6))}"


def _decimal(q: Fraction, up: bool) -> str:
    """``q`` to 6 decimal places, rounded ``up`` or down (outward when used for the ends of an enclosure)."""
    scaled = q * 10**6
    units = -((-scaled.numerator) // scaled.denominator) if up else scaled.numerator // scaled.denominator
    return f"{units // 10**6}.{units % 10**6:06d}"


_TINY = -4096
"""An end of an enclosure below ``2**_TINY`` is widened outward to ``0`` or ``2**_TINY``: the discrete Gaussian's
tail at a tiny variance (rho 10**6) is about ``exp(-10**12)``, whose exact rational has a denominator of 10**12
bits (converting it hung the table's plan)."""


def _end(value: Any, up: bool) -> Fraction:
    """An mpfr end of an enclosure as a rational bound in its direction (widened below ``2**_TINY``)."""
    if value > 0 and gmpy2.get_exp(value) < _TINY:
        return Fraction(1, 1 << -_TINY) if up else Fraction(0)
    return Fraction(*gmpy2.mpq(value).as_integer_ratio())


def _interval_fraction(interval: Interval) -> tuple[Fraction, Fraction]:
    low, high = _end(interval.lo, False), _end(interval.hi, True)
    return max(low, Fraction(0)), min(high, Fraction(1))


def _laplace_at_least(j: int, scale: Fraction) -> tuple[Fraction, Fraction]:
    """An enclosure of ``P(Z >= j)``, ``Z`` discrete Laplace of ``scale``: ``q**j / (1 + q)`` for ``j >= 1``,
    ``q = exp(-1 / scale)``, and ``1 - P(Z >= 1 - j)`` for ``j <= 0`` (the law is symmetric)."""
    t = j if j >= 1 else 1 - j
    # 1 - q is about 1 / scale, and q**t loses about log2(t) bits: past a scale of 2**32 the precision grows with
    # both, else q rounds to 1 at a scale past 2**128 and the search for the least n never ends (epsilon 1e-39).
    scale_bits = scale.numerator.bit_length() - scale.denominator.bit_length()
    precision = _PRECISION if scale_bits <= 32 else _PRECISION + 2 * scale_bits + t.bit_length()
    q = (-Interval.exact(1 / scale, precision)).exp()
    tail = q**t / (q + 1)
    return _interval_fraction(tail if j >= 1 else 1 - tail)


def _gaussian_at_least(j: int, variance: Fraction) -> tuple[Fraction, Fraction]:
    """An enclosure of ``P(Z >= j)``, ``Z`` discrete Gaussian of ``variance`` (symmetric, as above)."""
    if j >= 0:
        return _interval_fraction(gaussian_tail(j, variance, _PRECISION))
    return _interval_fraction(1 - gaussian_tail(1 - j, variance, _PRECISION))


Selection = LaplaceThreshold | OptimalSelection | GaussianThreshold
"""The plan of a partition selection rule."""


def release_probability(plan: Selection, n: int) -> tuple[Fraction, Fraction]:
    """An enclosure of the probability that ``plan`` releases a key whose count is ``n``."""
    if isinstance(plan, OptimalSelection):
        return (plan.probability(n),) * 2
    if isinstance(plan, LaplaceThreshold):
        return _laplace_at_least(plan.threshold - n, plan.scale)
    return _gaussian_at_least(plan.threshold - n, plan.variance)


def least_needed(plan: LaplaceThreshold | OptimalSelection | GaussianThreshold, level: Fraction) -> int:
    """The least ``n >= 1`` whose release probability under ``plan`` is proven at least ``level < 1``
    (its enclosure's lower end; the probability increases with ``n`` and tends to 1)."""
    least = least_holding(lambda n: release_probability(plan, n)[0] >= level, 1)
    assert least is not None  # no limit: the search ends where the bound holds
    return least


def selection_plan(rule: str, plan: LaplaceThreshold | OptimalSelection | GaussianThreshold,
                   delta: Fraction, persons: Sequence[int] = PERSONS, *,
                   counted: str | None = None, cheaper: Selection | None = None) -> SelectionPlan:
    """The release probability of a key with ``n`` persons under ``plan``, for each ``n`` in ``persons``, and
    the least ``n`` reaching each level of :data:`NEEDED` (``counted``: the released count the rule
    ``"count"`` thresholds; its ``n`` counts rows when the plan's sensitivity is above 1; ``cheaper``: the
    separate selection on distinct persons that rule could name instead, stated as :attr:`SelectionPlan.cheaper`
    when a key needs fewer persons for a 1/2 chance under it)."""
    threshold = None if isinstance(plan, OptimalSelection) else plan.threshold
    sensitivity = 1 if isinstance(plan, OptimalSelection) else plan.sensitivity
    rows = counted is not None and sensitivity > 1
    needed = {level: least_needed(plan, level) for level in NEEDED}
    other = None
    if cheaper is not None:
        rule_name = "optimal" if isinstance(cheaper, OptimalSelection) else "gaussian"
        spent = cheaper.delta if isinstance(cheaper, OptimalSelection) else cheaper.delta_spent
        other = selection_plan(rule_name, cheaper, spent, sorted(set(needed.values())))
        other = other if other.needed[NEEDED[0]] < needed[NEEDED[0]] else None
    return SelectionPlan(rule, delta, threshold, {n: release_probability(plan, n) for n in persons},
                         delta / plan.max_groups, counted, "rows" if rows else "persons", needed, plan.delta,
                         sensitivity, other)


def _value_halfwidth(d: Definition, alpha: Fraction) -> Callable[[int], Fraction] | None:
    """The half-width of ``d``'s value at a cell's row count, for a statistic that states one (a mean, a
    variance, a winsorized mean: :meth:`~securedp.mechanisms.statistic.CellStatistic.value_halfwidth`), else None."""
    if d.value_halfwidth(alpha, 1) is None:
        return None

    def at(rows: int) -> Fraction:
        width = d.value_halfwidth(alpha, rows)
        assert width is not None
        return width

    return at


def table_plan(aggregations: Sequence[Aggregation], defined: dict[str, Definition], alpha: Fraction,
               epsilon: Fraction | None, rho: Fraction | None, shares: dict[str, Fraction],
               selection: SelectionPlan | None) -> TablePlan:
    """The plan of a prepared table (every statistic is already defined at its share)."""
    outputs = []
    for a in aggregations:
        d = defined[a.name]
        at = _value_halfwidth(d, alpha)
        step = d.column.lattice.step if isinstance(d, ColumnStatistic) else None
        if isinstance(d, Quantiles):
            record: dict[str, Any] = d.cell_record(alpha)
            levels = tuple(zip(record["q"], record["rank_error_bounds"], strict=True)) \
                if "rank_error_bounds" in record else ()
            outputs.append(OutputPlan(a.name, d.statistic, d.mechanism, rank_error_bound=record["rank_error_bound"],
                                      level_rank_errors=levels, fallback_rows=record.get("fallback_rows_bound"),
                                      lattice_step=step, value_halfwidth=at))
        else:
            assert isinstance(d, (AdditiveStatistic, Histogram))
            outputs.append(OutputPlan(a.name, d.statistic, d.mechanism, halfwidths=d.halfwidths(alpha),
                                      lattice_step=step, value_halfwidth=at))
    return TablePlan(alpha, epsilon, rho, shares, outputs, selection)
