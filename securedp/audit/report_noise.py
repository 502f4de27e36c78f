"""The noise a record declares, read for the reviewer's report: laws, levels and a mean's half-width.

Everything here is read from a record's ``parameters`` (free-form JSON to the verifier), so nothing
may be assumed about a value's type: a value that is not what its name says (an ``alpha`` of ``"x"``,
a ``scale_units`` of ``"-1"``) is skipped or stated as odd, never an exception.

* **Levels.** Half-widths are stated at level ``1 - alpha``: the record's ``alpha`` when it is a
  rational in ``(0, 1)`` (a table states one), else :data:`DEFAULT_ALPHA`; an ``alpha`` that is
  recorded but is no such rational is kept, as written, in :attr:`Level.odd`.
* **Noise laws** (:func:`noise_laws`): each ``scale_units`` of a discrete Laplace and
  ``variance_units`` of a discrete Gaussian, of a one-column release (``count_``, ``sum_``,
  ``sum_of_squares_`` prefixes for the moments of a mean or variance), of every aggregation of a
  table, and of a release whose parameters hold a top-level ``noise`` list (two noises are a mean's
  count and centred sum, three a variance's), with
  the smallest half-width proven by directed rounding (:mod:`securedp.mechanisms.accuracy`) and its
  value in the units the noisy integer measures (counts, or the column's units through
  ``lattice_step``).
* **A mean's half-width in the column's units** (:func:`mean_widths`): see :class:`MeanWidth`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.mechanisms.accuracy import gaussian_halfwidth, laplace_halfwidth
from securedp.mechanisms.moments import centre_of_bounds

DEFAULT_ALPHA = Fraction(1, 20)
"""The level of the half-widths shown for records that state no usable ``alpha`` of their own."""
LARGEST_BITS = 4000
"""A parameter whose numerator or denominator is longer than this many bits gets no half-width computed
(it would take seconds and could not be printed in full): the report says so instead."""
LAWS = {"scale_units": "discrete_laplace", "variance_units": "discrete_gaussian"}
COUNTED = ("count", "histogram", "bounds", "contribution_histogram")
"""Statistics whose plain ``scale_units``/``variance_units`` is the noise of counts."""
MOMENTS = {1: ("",), 2: ("count", "centred sum"), 3: ("count", "centred sum", "centred sum of squares")}


def rational(value: object) -> Fraction | None:
    """``value`` as an exact rational (a JSON integer, or text such as ``"3/8"`` or ``"0.05"``), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, str) and len(value) < 2000:
        try:
            return Fraction(value)
        except (ValueError, ZeroDivisionError):
            return None
    return None


def positive(value: object) -> Fraction | None:
    found = rational(value)
    return found if found is not None and found > 0 else None


@dataclass(frozen=True)
class Level:
    """The level ``1 - alpha`` of a record's half-widths."""

    alpha: Fraction
    stated: bool
    """True when ``alpha`` is the record's own, False when it is :data:`DEFAULT_ALPHA`."""
    odd: str | None = None
    """The record's ``alpha`` as written, when it is there but is no rational in ``(0, 1)``."""


def level_of(parameters: dict[str, Any]) -> Level:
    """The level stated by ``parameters`` (see the module docstring)."""
    if "alpha" not in parameters:
        return Level(DEFAULT_ALPHA, False)
    found = rational(parameters["alpha"])
    if found is None or not 0 < found < 1:
        written = parameters["alpha"]
        return Level(DEFAULT_ALPHA, False, written if isinstance(written, str) else repr(written))
    return Level(found, True)


def halfwidth(mechanism: str, parameter: Fraction, alpha: Fraction) -> int | None:
    """The proven half-width of the law at level ``1 - alpha``, or ``None`` for a parameter too long to compute."""
    if max(parameter.numerator.bit_length(), parameter.denominator.bit_length()) > LARGEST_BITS:
        return None
    if mechanism == "discrete_laplace":
        return laplace_halfwidth(parameter, alpha)
    return gaussian_halfwidth(parameter, alpha)


@dataclass(frozen=True)
class NoiseLaw:
    """One additive noise of a release: its law, parameter (in lattice units) and proven half-width."""

    label: str
    mechanism: str
    parameter: Fraction
    """``scale`` of a discrete Laplace, ``sigma**2`` of a discrete Gaussian, in lattice units."""
    step: Fraction | None
    """The value of one unit in the units :attr:`measure` names, or ``None`` when the report cannot tell."""
    measure: str
    """What the noisy integer measures: ``"counts"``, ``"column units"``, ``"column units, summed over rows"``..."""
    halfwidth_units: int | None
    """The half-width in lattice units, or ``None`` for a parameter too long to compute (:data:`LARGEST_BITS`)."""
    alpha: Fraction

    @property
    def halfwidth(self) -> Fraction | None:
        """The half-width in the units of :attr:`measure` (``units * step``), or ``None`` when not known."""
        return None if self.step is None or self.halfwidth_units is None else self.halfwidth_units * self.step


def _unit(moment: str, step: object, counted: bool) -> tuple[Fraction | None, str]:
    """The value of one unit of a noisy integer of kind ``moment`` and what it measures."""
    if moment == "count" or counted:
        return Fraction(1), "counts"
    if moment not in ("sum", "centred sum", "centred sum of squares"):
        return None, f"not converted: this report does not know what the noise of a {moment!r} measures"
    lattice = positive(step)
    if lattice is None:
        return None, f"not converted: the lattice step {step!r} is not a positive rational"
    if moment == "centred sum of squares":
        return lattice * lattice, "squared column units, summed over rows"
    if moment == "centred sum":
        return lattice, "column units, summed over rows"
    return lattice, "column units"


def _law(label: str, mechanism: str, parameter: object, unit: tuple[Fraction | None, str],
         alpha: Fraction) -> NoiseLaw | None:
    value = positive(parameter)
    if value is None or mechanism not in LAWS.values():
        return None
    return NoiseLaw(label, mechanism, value, unit[0], unit[1], halfwidth(mechanism, value, alpha), alpha)


def _one_column(record: dict[str, Any], parameters: dict[str, Any], alpha: Fraction) -> list[NoiseLaw]:
    statistic, mechanism = str(record.get("statistic")), str(record.get("mechanism"))
    moments = {"": statistic, "count_": "count", "sum_of_squares_": "centred sum of squares",
               "sum_": "centred sum" if statistic in ("mean", "variance") else "sum"}
    laws = []
    for name, value in parameters.items():
        for suffix, law in LAWS.items():
            if name.endswith(suffix) and mechanism == law:
                prefix = name.removesuffix(suffix)
                moment = moments.get(prefix, prefix.rstrip("_"))
                counted = prefix == "" and statistic in COUNTED
                found = _law(moment, law, value, _unit(moment, parameters.get("lattice_step", 1), counted), alpha)
                laws += [found] if found is not None else []
    return laws


def aggregations(record: dict[str, Any], parameters: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each part of ``record`` that states its noise as a ``noise`` list: (name, its parameters).

    A table's aggregations (``parameters[name]["noise"]``), and the release itself, named by its
    statistic, when its ``parameters`` carry a top-level ``noise`` list (the shape a table aggregation
    records, which a one-column release may record too).
    """
    found = [(str(name), value) for name, value in parameters.items()
             if isinstance(value, dict) and isinstance(value.get("noise"), list)]
    if isinstance(parameters.get("noise"), list):
        found.insert(0, (str(record.get("statistic")), parameters))
    return found


def _listed(record: dict[str, Any], parameters: dict[str, Any], alpha: Fraction) -> list[NoiseLaw]:
    laws = []
    for name, value in aggregations(record, parameters):
        noises = value["noise"]
        moments = MOMENTS.get(len(noises), tuple(f"noise {i}" for i in range(len(noises))))
        for moment, noise in zip(moments, noises, strict=True):
            if not isinstance(noise, dict):
                continue
            mechanism = str(noise.get("mechanism"))
            parameter = next((noise[key] for key, law in LAWS.items() if key in noise and law == mechanism), None)
            counted = "lattice_step" not in value or (value is parameters and record.get("statistic") in COUNTED)
            label = f"{name}: {moment}" if moment else name
            found = _law(label, mechanism, parameter, _unit(moment or "sum", value.get("lattice_step"), counted), alpha)
            laws += [found] if found is not None else []
    return laws


def noise_laws(record: dict[str, Any]) -> list[NoiseLaw]:
    """Every additive noise ``record`` declares, with its proven half-width (see the module docstring)."""
    parameters = record.get("parameters")
    if not isinstance(parameters, dict) or record.get("kind") == "partition":
        return []
    alpha = level_of(parameters).alpha
    return _one_column(record, parameters, alpha) + _listed(record, parameters, alpha)


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
    ``min((t_s + R t_n) / (n - t_n) + 1/2, hi_u - lo_u) * step`` of the true mean, exactly.
    """

    label: str
    count_halfwidth: int
    sum_halfwidth: int
    half_range: int
    span: int
    step: Fraction
    alpha: Fraction

    def at(self, n: int) -> Fraction | None:
        """The half-width at a true count of ``n`` rows, or ``None`` when ``n <= t_n`` (no bound is stated)."""
        t_n = self.count_halfwidth
        if n <= t_n:
            return None
        units = Fraction(self.sum_halfwidth + self.half_range * t_n, n - t_n) + Fraction(1, 2)
        return min(units, Fraction(self.span)) * self.step

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
            "securedp states no interval for it, and this report derives no half-width in the column's units")


def _whole(value: object) -> int | None:
    found = rational(value)
    return None if found is None or found.denominator != 1 else int(found)


def _mean(label: str, laws: dict[str, NoiseLaw], bounds: object, centre: object, step: object,
          alpha: Fraction) -> MeanWidth | Unstated:
    """The half-width of one mean from its two moments' laws (taken again at ``alpha / 2``).

    ``centre`` is the recorded ``centre_units``, or ``None`` when the record states none (a table's
    mean): it is then the mechanism's rule, the floor of the bounds' midpoint.
    """
    count, total = laws.get("count"), laws.get("centred sum")
    lattice = positive(step)
    ends = [_whole(b) for b in bounds] if isinstance(bounds, list) and len(bounds) == 2 else [None]
    lo_u, hi_u = (ends[0], ends[-1]) if len(ends) == 2 else (None, None)
    if count is None or total is None or lattice is None or lo_u is None or hi_u is None or lo_u > hi_u:
        return Unstated(label, "not derived: the record does not state both moments' noise, whole bounds in units "
                               "and a positive lattice step, as this report reads them")
    c_u = centre_of_bounds(lo_u, hi_u)[0] if centre is None else _whole(centre)
    if c_u is None or not lo_u <= c_u <= hi_u:
        return Unstated(label, f"not derived: the centre {centre!r} is not a whole unit within the bounds")
    t_n = halfwidth(count.mechanism, count.parameter, alpha / 2)
    t_s = halfwidth(total.mechanism, total.parameter, alpha / 2)
    if t_n is None or t_s is None:
        return Unstated(label, "not derived: a noise parameter is too long to compute with")
    return MeanWidth(label, t_n, t_s, max(hi_u - c_u, c_u - lo_u), hi_u - lo_u, lattice, alpha)


def mean_widths(record: dict[str, Any]) -> list[MeanWidth | Unstated]:
    """The half-width in the column's units of every mean of ``record`` (and, in words, of every variance)."""
    parameters = record.get("parameters")
    if not isinstance(parameters, dict) or record.get("kind") == "partition":
        return []
    alpha, statistic = level_of(parameters).alpha, record.get("statistic")
    found: list[MeanWidth | Unstated] = []
    laws = noise_laws(record)
    listed = aggregations(record, parameters)
    if statistic == "mean" and "noise" not in parameters:  # a one-column mean's prefixed parameters
        own = {law.label: law for law in laws}
        found.append(_mean("mean", own, parameters.get("bounds_units"), parameters.get("centre_units"),
                           parameters.get("lattice_step"), alpha))
    if statistic == "variance" and "noise" not in parameters:
        found.append(Unstated("variance", VARIANCE))
    for name, value in listed:
        if len(value["noise"]) == 3:
            found.append(Unstated(name, VARIANCE))
        elif len(value["noise"]) == 2:
            own = {law.label.removeprefix(f"{name}: "): law for law in laws if law.label.startswith(f"{name}: ")}
            found.append(_mean(name, own, value.get("bounds_units"), value.get("centre_units"),
                               value.get("lattice_step"), alpha))
    return found
