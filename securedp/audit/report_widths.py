"""What a record's noise and selections mean in the column's units: a mean's half-width, a selection's rank error.

Both are read from the record's parts (:func:`securedp.audit.report_noise.parts`) of format 2, or from
the flat parameters of a format-1 release of one column, without trusting any value's type.

* **A mean's half-width in the column's units** (:func:`mean_widths`): see :class:`MeanWidth`. A
  variance gets a sentence saying that none is stated (:class:`Unstated`).
* **Selections** (:func:`selections`): a median, quantile or IQR adds no noise; the exponential
  mechanism selects a point of the column's lattice. A record of format 2 states, per selection, its
  level ``q``, ``epsilon_cell``, ``sensitivity``, ``candidates`` and ``rank_error_bound``; a format-1
  record states ``qs``, ``epsilon_each``, ``sensitivity`` and ``bounds_units``, from which the report
  derives the candidates and the rank error bound by the rule securedp 0.1 stated them with
  (``hi_u - lo_u + 1`` lattice points; :func:`~securedp.mechanisms.rank_utility.rank_error_bound` at 0.1's
  rank rate ``epsilon / (2 * sensitivity)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.audit.report_noise import (
    LARGEST_BITS,
    NoiseLaw,
    flat_laws,
    halfwidth,
    level_of,
    part_laws,
    parts,
    positive,
    rational,
    record_format,
)
from securedp.mechanisms.mean import mean_error
from securedp.mechanisms.moments import centre_of_bounds
from securedp.mechanisms.rank_utility import rank_error_bound

SELECTED = ("median", "quantile", "quantiles", "iqr")
"""The statistics of format 1 released by the exponential mechanism over a column's lattice."""


@dataclass(frozen=True)
class MeanWidth:
    """A mean's half-width in the column's units, at a true count ``n``, at level ``1 - alpha``.

    A mean is released as ``step * round(clamp(c + S~ / max(N~, 1), lo_u, hi_u))`` from a noisy count
    ``N~ = n + X`` and a noisy centred sum ``S~ = s + Y`` (:mod:`securedp.mechanisms.mean`), where
    ``|s| <= n * R`` with ``R = max(hi_u - c, c - lo_u)``. With ``|X| <= t_n`` and ``|Y| <= t_s``, each
    at level ``1 - alpha / 2`` (so both at ``1 - alpha``, by a union bound) and ``n > t_n`` (so that
    ``N~ >= 1``): ``|S~ / N~ - s / n| = |n Y - s X| / (n N~) <= (t_s + R t_n) / (n - t_n)``. Clamping
    to the bounds, which hold the true mean, moves nothing farther; rounding adds at most half a unit;
    and no error exceeds the width of the bounds. So the released mean is within
    ``min((t_s + R t_n) / (n - t_n) + 1/2, hi_u - lo_u) * step`` of the true mean, exactly: the plan's
    statement (:func:`securedp.mechanisms.mean.mean_error`).
    """

    label: str
    count_halfwidth: int
    sum_halfwidth: int
    half_range: int
    span: int
    step: Fraction
    alpha: Fraction
    cells: str | None = None
    """A table's aggregation name (its cells state intervals ``<cells>_low`` to ``<cells>_high``), else ``None``."""

    def at(self, n: int) -> Fraction | None:
        """The half-width at a true count of ``n`` rows, or ``None`` when ``n <= t_n`` (no bound is stated)."""
        if n <= self.count_halfwidth:
            return None
        return mean_error(n, self.count_halfwidth, self.sum_halfwidth, self.half_range, self.span) * self.step

    def counts(self) -> list[int]:
        """Five stated counts: the powers of ten from the first above ``t_n``."""
        first = 10
        while first <= self.count_halfwidth:
            first *= 10
        return [first * 10**i for i in range(5)]


@dataclass(frozen=True)
class Unstated:
    """A mean or variance whose half-width in the column's units the report does not state, and why."""

    label: str
    reason: str


VARIANCE = ("a variance is stated from three noisy moments (count, centred sum and centred sum of squares); "
            "securedp states its half-width in a cell of n rows before the draw (the plan's value_halfwidth, "
            "securedp release --dry-run), not for the released cell, and this report derives none from the record")


def whole(value: object) -> int | None:
    """``value`` as an integer when it is a whole rational of at most :data:`LARGEST_BITS` bits, else ``None``."""
    found = rational(value)
    if found is None or found.denominator != 1 or found.numerator.bit_length() > LARGEST_BITS:
        return None
    return int(found)


def _mean(label: str, cells: str | None, laws: dict[str, NoiseLaw], fields: dict[str, Any],
          alpha: Fraction) -> MeanWidth | Unstated:
    """The half-width of one mean from its two moments' laws (taken again at ``alpha / 2``).

    ``fields`` holds its ``bounds_units``, ``lattice_step`` and ``centre_units``; without a centre (a
    format-1 table's mean) the centre is the mechanism's rule, the floor of the bounds' midpoint.
    """
    count, total = laws.get("count"), laws.get("centred sum")
    lattice, bounds, centre = (positive(fields.get("lattice_step")), fields.get("bounds_units"),
                               fields.get("centre_units"))
    ends = [whole(b) for b in bounds] if isinstance(bounds, list) and len(bounds) == 2 else [None]
    lo_u, hi_u = (ends[0], ends[-1]) if len(ends) == 2 else (None, None)
    if count is None or total is None or lattice is None or lo_u is None or hi_u is None or lo_u > hi_u:
        return Unstated(label, "not derived: the record does not state both moments' noise, whole bounds in units "
                               "and a positive lattice step, as this report reads them")
    c_u = centre_of_bounds(lo_u, hi_u)[0] if centre is None else whole(centre)
    if c_u is None or not lo_u <= c_u <= hi_u:
        return Unstated(label, f"not derived: the centre {centre!r} is not a whole unit within the bounds")
    t_n = halfwidth(count.mechanism, count.parameter, alpha / 2)
    t_s = halfwidth(total.mechanism, total.parameter, alpha / 2)
    if t_n is None or t_s is None:
        return Unstated(label, "not derived: a noise parameter is too long to compute with")
    return MeanWidth(label, t_n, t_s, max(hi_u - c_u, c_u - lo_u), hi_u - lo_u, lattice, alpha, cells)


def mean_widths(record: dict[str, Any]) -> list[MeanWidth | Unstated]:
    """The half-width in the column's units of every mean of ``record`` (and, in words, of every variance)."""
    parameters = record.get("parameters")
    if not isinstance(parameters, dict) or record.get("kind") == "partition":
        return []
    alpha, statistic = level_of(parameters).alpha, record.get("statistic")
    found: list[MeanWidth | Unstated] = []
    if record_format(record) == 1 and statistic == "mean":  # a format-1 mean's flat parameters
        found.append(_mean("mean", None, dict(flat_laws(record, parameters, alpha)), parameters, alpha))
    if record_format(record) == 1 and statistic == "variance":
        found.append(Unstated("variance", VARIANCE))
    for part in parts(record):
        if len(part.fields["noise"]) == 3:
            found.append(Unstated(part.label, VARIANCE))
        elif len(part.fields["noise"]) == 2:
            found.append(_mean(part.label, part.name if part.table else None, dict(part_laws(part, alpha)),
                               part.fields, alpha))
    return found


@dataclass(frozen=True)
class Selection:
    """A value selected, not noised: its rule, level(s), epsilon, sensitivity, candidates and rank error bound."""

    label: str
    rule: str
    q: str
    """The quantile level, or the levels (an IQR's two quartiles), as exact rationals."""
    epsilon: Fraction | None
    """The epsilon of each selection (per cell; ``None`` when not a positive rational)."""
    sensitivity: int | None
    candidates: int | None
    """The number of lattice points selected among."""
    step: Fraction | None
    """The lattice step: candidates are this far apart, in the column's units."""
    rank_error_bound: int | None
    """``r``: with probability at least ``1 - alpha`` the selected point's utility is within ``r`` of the best."""
    alpha: Fraction
    derived: bool
    """True when the report derived :attr:`candidates` and :attr:`rank_error_bound` (format 1 states neither)."""
    fallback: Fraction | None = None
    """The fallback probability ``p`` (``None``: the record states no fallback point)."""
    fallback_rows: int | None = None
    """The rows from which a cell releases the fallback point with probability at most ``alpha``."""


def _levels(value: object) -> str:
    """A quantile level, or a list of them, written exactly (as recorded when it is no rational)."""
    if isinstance(value, list):
        return ", ".join(_levels(v) for v in value)
    level = rational(value)
    return str(value) if level is None else str(level)


def _derived(label: str, parameters: dict[str, Any], levels: object, alpha: Fraction) -> Selection:
    """A format-1 selection: candidates ``hi_u - lo_u + 1`` and the rank error bound at ``alpha``, derived."""
    epsilon, sensitivity = positive(parameters.get("epsilon_each")), whole(parameters.get("sensitivity"))
    bounds = parameters.get("bounds_units")
    ends = [whole(b) for b in bounds] if isinstance(bounds, list) and len(bounds) == 2 else []
    lo_u, hi_u = (ends[0], ends[1]) if len(ends) == 2 else (None, None)
    candidates = hi_u - lo_u + 1 if lo_u is not None and hi_u is not None and hi_u >= lo_u else None
    bound = None
    if epsilon is not None and sensitivity is not None and sensitivity > 0 and candidates is not None and max(
            epsilon.numerator.bit_length(), epsilon.denominator.bit_length()) <= LARGEST_BITS:
        bound = rank_error_bound(epsilon / (2 * sensitivity), candidates, alpha)  # 0.1's law: exp(-eps |j - q n| / 2s)
    return Selection(label, "exponential", _levels(levels), epsilon, sensitivity, candidates,
                     positive(parameters.get("lattice_step")), bound, alpha, True)


def selections(record: dict[str, Any]) -> list[Selection]:
    """Every selection of ``record`` (see the module docstring), in the order recorded."""
    parameters = record.get("parameters")
    if not isinstance(parameters, dict) or record.get("kind") == "partition":
        return []
    alpha, statistic = level_of(parameters).alpha, str(record.get("statistic"))
    found: list[Selection] = []
    if record_format(record) == 1 and statistic in SELECTED and record.get("mechanism") == "exponential":
        qs = parameters.get("qs")
        levels = qs if isinstance(qs, list) and qs else [parameters.get("q")]
        if statistic == "quantiles" and len(levels) > 1:
            found += [_derived(f"{statistic}, q = {_levels(q)}", parameters, q, alpha) for q in levels]
        else:
            found.append(_derived(statistic, parameters, levels if len(levels) > 1 else levels[0], alpha))
    for part in parts(record):
        fields = part.fields
        if "selection" in fields:
            found.append(Selection(part.label, str(fields["selection"]), _levels(fields.get("q")),
                                   positive(fields.get("epsilon_cell")), whole(fields.get("sensitivity")),
                                   whole(fields.get("candidates")), positive(fields.get("lattice_step")),
                                   whole(fields.get("rank_error_bound")), alpha, False,
                                   rational(fields.get("fallback")), whole(fields.get("fallback_rows_bound"))))
    return found
