"""The noise a record declares, read for the reviewer's report: levels, the record's parts and their laws.

Everything here is read from a record's ``parameters`` (free-form JSON to the verifier), so nothing
may be assumed about a value's type: a value that is not what its name says (an ``alpha`` of ``"x"``,
a ``scale_units`` of ``"-1"``) is skipped or stated as odd, never an exception.

* **Levels.** Half-widths are stated at level ``1 - alpha``: the record's ``alpha`` when it is a
  rational in ``(0, 1)`` (a table, and so every release of data of format 2, states one), else
  :data:`DEFAULT_ALPHA`; an ``alpha`` that is recorded but is no such rational is kept, as written,
  in :attr:`Level.odd`.
* **Formats.** A record states its ``format``; one without it is of format 1 (securedp 0.1). In
  format 2 every release of data is a table: each aggregation's record is in ``parameters`` under its
  name (``"data_mean": {"noise": [...], "lattice_step": ..., ...}``), as a table's was in format 1
  too. A format-1 release of one column states its noise flat in ``parameters`` instead
  (``scale_units``; ``count_``, ``sum_`` and ``sum_of_squares_`` prefixes for a mean's or variance's
  moments).
* **Parts** (:func:`parts`): the aggregations of a record, each labelled for the reader: a table's by
  its name (``x_mean``), a release of one column (the one-cell table of it) by its statistic
  (``mean``; ``quantiles, q = 1/4`` when it has several).
* **Noise laws** (:func:`noise_laws`): each law of a part's ``noise`` list (one: a count's, a sum's, or
  a histogram's, shared by every bin; two: a mean's count and centred sum; three: a variance's count,
  centred sum and centred sum of squares), each flat law of a format-1 record, and the three laws of
  a contribution histogram (``scales``), with the smallest half-width proven by directed rounding
  (:mod:`securedp.privacy.accuracy`) and its value in the units the noisy integer measures
  (counts, or the column's units through the part's own ``lattice_step``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.privacy.accuracy import gaussian_halfwidth, laplace_halfwidth

DEFAULT_ALPHA = Fraction(1, 20)
"""The level of the half-widths shown for records that state no usable ``alpha`` of their own."""
LARGEST_BITS = 4000
"""A parameter whose numerator or denominator is longer than this many bits gets no half-width computed
(it would take seconds and could not be printed in full): the report says so instead."""
LAWS = {"scale_units": "discrete_laplace", "variance_units": "discrete_gaussian"}
COUNTED = ("count", "histogram", "bounds")
"""Statistics of format 1 whose plain ``scale_units``/``variance_units`` is the noise of counts."""
MOMENTS = {2: ("count", "centred sum"), 3: ("count", "centred sum", "centred sum of squares")}
"""What each noisy integer of a part with two (a mean) or three (a variance) noises is, in order."""
PREFIXES = {"count_": "count", "sum_of_squares_": "centred sum of squares", "sum_": "centred sum"}
"""The moments of a format-1 mean or variance, by the prefix of their flat parameters."""
CONTRIBUTIONS = ("persons by groups", "(person, key) pairs by rows", "cells")
"""The three noisy histograms of a contribution histogram, in the order of its ``scales``."""


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
        written = "(none)" if step is None else repr(step)
        return None, f"not converted: the lattice step {written} is not a positive rational"
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


def record_format(record: dict[str, Any]) -> int | None:
    """The record's format: 1 when it states none (securedp 0.1), else as recorded (``None``: no integer)."""
    written = record.get("format", 1)
    return written if isinstance(written, int) and not isinstance(written, bool) else None


@dataclass(frozen=True)
class Part:
    """One aggregation of a record: its recorded name, the label the report gives it, and its own record."""

    name: str
    label: str
    fields: dict[str, Any]
    """The aggregation's record: its ``noise`` list (empty for a selection) and its other parameters."""
    table: bool
    """True for an aggregation of a table, whose cells state intervals ``<name>_low`` to ``<name>_high``."""

    @property
    def counted(self) -> bool:
        """True when its noisy integers are counts: a count's or persons' (no lattice), a histogram's (labels)."""
        return "lattice_step" not in self.fields or "labels" in self.fields or "kind" in self.fields

    def moments(self) -> tuple[str, ...]:
        """What each noisy integer of the part is, in the order of its ``noise`` list."""
        n = len(self.fields["noise"])
        if n == 1 and "winsorized_sum_noise" in self.fields:  # a winsorized mean: its count, then a sum per cell
            return ("count",)
        if n == 1:
            histogram = "labels" in self.fields or "kind" in self.fields
            return ("count of each bin",) if histogram else ("count",) if self.counted else ("sum",)
        return MOMENTS.get(n, tuple(f"noise {i + 1}" for i in range(n)))


def _which(name: str, fields: dict[str, Any]) -> str:
    """Which of a one-column release's several parts ``name`` is: its quantile level, else its name."""
    level = rational(fields.get("q"))
    if level is not None:
        return f"q = {level}"
    column = fields.get("column")
    return name.removeprefix(f"{column}_") if isinstance(column, str) else name


def parts(record: dict[str, Any]) -> list[Part]:
    """Every aggregation of ``record`` (a dict in its ``parameters`` with a ``noise`` list), labelled.

    A table's aggregations keep their names; the one part of a release of one column is labelled by
    the release's statistic, and each of several (the levels of ``quantiles``) by the statistic and its
    level (see the module docstring).
    """
    parameters = record.get("parameters")
    if not isinstance(parameters, dict) or record.get("kind") == "partition":
        return []
    found = [(str(name), value) for name, value in parameters.items()
             if isinstance(value, dict) and isinstance(value.get("noise"), list)]
    statistic = str(record.get("statistic"))
    if statistic == "table":
        return [Part(name, name, value, True) for name, value in found]
    if len(found) == 1:
        return [Part(found[0][0], statistic, found[0][1], False)]
    return [Part(name, f"{statistic}, {_which(name, value)}", value, False) for name, value in found]


def part_laws(part: Part, alpha: Fraction) -> list[tuple[str, NoiseLaw]]:
    """(moment, law) of every noise of ``part`` that names a known law with a positive parameter."""
    noises, found = part.fields["noise"], []
    for moment, noise in zip(part.moments(), noises, strict=True):
        if not isinstance(noise, dict):
            continue
        mechanism = str(noise.get("mechanism"))
        parameter = next((noise[key] for key, law in LAWS.items() if key in noise and law == mechanism), None)
        label = part.label if len(noises) == 1 else f"{part.label}: {moment}"
        law = _law(label, mechanism, parameter, _unit(moment, part.fields.get("lattice_step"), part.counted), alpha)
        found += [] if law is None else [(moment, law)]
    return found


def flat_laws(record: dict[str, Any], parameters: dict[str, Any], alpha: Fraction) -> list[tuple[str, NoiseLaw]]:
    """(moment, law) of every flat ``*scale_units``/``*variance_units`` of a format-1 release of one column,
    labelled as the same release of format 2 labels them (``mean: count``, ``sum``)."""
    statistic, mechanism = str(record.get("statistic")), str(record.get("mechanism"))
    found = []
    for name, value in parameters.items():
        for suffix, law in LAWS.items():
            if not name.endswith(suffix) or mechanism != law:
                continue
            prefix = name.removesuffix(suffix)
            moment = PREFIXES.get(prefix, prefix.rstrip("_")) if prefix else statistic
            if prefix == "sum_" and statistic not in ("mean", "variance"):
                moment = "sum"
            counted = prefix == "" and statistic in COUNTED
            label = f"{statistic}: {moment}" if prefix else statistic
            made = _law(label, law, value, _unit(moment, parameters.get("lattice_step", 1), counted), alpha)
            found += [] if made is None else [(moment, made)]
    order = MOMENTS[3]  # the moments in the order a format-2 record lists them (a log sorts the flat names)
    return sorted(found, key=lambda pair: order.index(pair[0]) if pair[0] in order else len(order))


def _contribution_laws(record: dict[str, Any], parameters: dict[str, Any], alpha: Fraction) -> list[NoiseLaw]:
    """The laws of a contribution histogram's three noisy histograms (its ``scales``, in counts)."""
    scales = parameters.get("scales")
    if record.get("statistic") != "contribution_histogram" or not isinstance(scales, list) or len(scales) != 3:
        return []
    mechanism = str(record.get("mechanism"))
    made = [_law(f"contribution_histogram: {what}", mechanism, scale, (Fraction(1), "counts"), alpha)
            for what, scale in zip(CONTRIBUTIONS, scales, strict=True)]
    return [law for law in made if law is not None]


def noise_laws(record: dict[str, Any]) -> list[NoiseLaw]:
    """Every additive noise ``record`` declares, with its proven half-width (see the module docstring)."""
    parameters = record.get("parameters")
    if not isinstance(parameters, dict) or record.get("kind") == "partition":
        return []
    alpha = level_of(parameters).alpha
    laws = [law for _, law in flat_laws(record, parameters, alpha)] if record_format(record) == 1 else []
    laws += _contribution_laws(record, parameters, alpha)
    return laws + [law for part in parts(record) for _, law in part_laws(part, alpha)]
