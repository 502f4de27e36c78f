"""Scores of the selection mechanisms as exact integers on a common rational unit.

Every score ``s_i`` is read at its exact value (ints as they are, Fractions
and decimal strings exactly, floats at their binary value; see
:func:`~securedp.hazmat.exact.rational.to_rational`) and written as
``s_i = units_i * unit`` with integer ``units_i`` and one rational
``unit > 0``. NaN, infinities, bools and non-numbers raise ``ValueError`` /
``TypeError`` naming the offending index, before anything is drawn.
Integers of any size are kept exactly (object arrays of Python ints past
int64).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.bounding.data_phase import reading_data
from securedp.hazmat.exact.rational import positive_rational, to_rational
from securedp.hazmat.samplers import FloatGaps
from securedp.lattice import round_half_even
from securedp.reading.columns import check_ordered, column_values, refuse_unordered

_INT64_MAX = np.iinfo(np.int64).max


class Scores:
    """``score_i = units[i] * unit`` exactly.

    Float inputs are validated at once but written on their integer unit only
    when ``units`` / ``unit`` are first read (for 100,000 floats of different
    binary exponents that takes Python integers, tens of milliseconds); the
    selection samplers read them through :meth:`sampler_gaps`, which for
    floats hands over the float64 values themselves (exactly, as
    :class:`~securedp.hazmat.samplers.FloatGaps`).
    """

    __slots__ = ("_exact", "_float_span", "_unit", "_units", "floats")

    def __init__(self, units: np.ndarray | None = None, unit: Fraction | None = None, *,
                 floats: np.ndarray | None = None, exact: Callable[[], Scores] | None = None,
                 float_span: tuple[float, float] | None = None) -> None:
        self._units = units  # int64, or object array of Python ints
        self._unit = unit
        self._exact = exact
        self.floats = floats  # finite float64 values equal to the scores, when the input was floats
        self._float_span = float_span  # (min, max) of floats, when known

    def _resolve(self) -> Scores:
        make_exact = self._exact
        assert make_exact is not None  # built with units and unit, or with exact (kept until resolved)
        exact = make_exact()
        self._units, self._unit, self._exact = exact.units, exact.unit, None
        return exact

    @property
    def units(self) -> np.ndarray:
        if self._units is None:
            return self._resolve().units
        return self._units

    @property
    def unit(self) -> Fraction:
        if self._unit is None:
            return self._resolve().unit
        return self._unit

    def __len__(self) -> int:
        return len(self.floats) if self.floats is not None else len(self.units)

    def sampler_gaps(self) -> tuple[np.ndarray | FloatGaps, Fraction]:
        """Gaps ``max - score_i`` for the selection samplers, exactly, and their unit.

        Integer gaps on ``unit`` (:meth:`gaps`), or for float scores the float64
        values themselves (:class:`FloatGaps`, unit 1): no conversion to
        integers is needed to sample.
        """
        if self.floats is not None:
            return FloatGaps(self.floats, self._float_span), Fraction(1)
        return self.gaps(), self.unit

    def gaps(self) -> np.ndarray:
        """``max(units) - units`` (integers >= 0; int64 when they fit, else Python ints)."""
        top, bottom = int(self.units.max()), int(self.units.min())
        if self.units.dtype != object and top - bottom <= _INT64_MAX:
            gaps: np.ndarray = np.int64(top) - self.units
            return gaps
        return np.array([top - int(v) for v in self.units], dtype=object)

    def snapped(self, step: Fraction) -> np.ndarray:
        """``round_half_even(score_i / step)`` for every score, exactly.

        int64 when every result fits, else an object array of Python ints. Float
        scores with a power-of-two ``step`` are scaled by ``ldexp`` (exact: a power
        of two only moves the exponent; a result that underflows is below 1/2 and
        rounds to 0 either way) and rounded by ``rint`` (ties to even, exact on
        doubles); anything else goes through the exact integer units.
        """
        if self.floats is not None and step.numerator & (step.numerator - 1) == 0 \
                and step.denominator & (step.denominator - 1) == 0:
            shift = step.denominator.bit_length() - step.numerator.bit_length()  # step = 2**-shift
            with np.errstate(over="ignore"):
                scaled = np.ldexp(self.floats, shift)
            if np.isfinite(scaled).all():
                rounded = np.rint(scaled)
                if float(np.abs(rounded).max()) < 2.0**63:
                    return np.asarray(rounded, dtype=np.int64)
                return np.array([int(v) for v in rounded], dtype=object)
        ratio = self.unit / step
        a, b = ratio.numerator, ratio.denominator
        units = self.units
        if units.dtype != object and b < 2**61 and \
                max(abs(int(units.max())), abs(int(units.min()))) * a < 2**62:
            quotient, remainder = np.divmod(units * np.int64(a), np.int64(b))
            twice = 2 * remainder
            up = (twice > b) | ((twice == b) & (quotient & 1 == 1))
            return np.asarray(quotient + up.astype(np.int64))
        return np.array([round_half_even(int(v) * a, b) for v in units], dtype=object)


def _int_units(arr: np.ndarray) -> np.ndarray:
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > _INT64_MAX:
        return np.array([int(v) for v in arr], dtype=object)
    return arr.astype(np.int64, copy=False)


def _float_scores(arr: np.ndarray, name: str) -> Scores:
    values = arr.astype(np.float64)  # a private copy: a prepared release must not see later edits
    bottom, top = float(values.min()), float(values.max())
    if not (math.isfinite(top) and math.isfinite(bottom)):  # NaN and infinities reach max or min
        i = int(np.flatnonzero(~np.isfinite(values))[0])
        raise ValueError(f"{name}[{i}] must be finite, got {arr[i]!r}")
    return Scores(floats=values, exact=lambda: _float_units(values), float_span=(bottom, top))


def _float_units(values: np.ndarray) -> Scores:
    mantissa, exponent = np.frexp(values)
    mant = np.ldexp(mantissa, 53).astype(np.int64)  # exact: a double has 53 significant bits
    exp = exponent.astype(np.int64) - 53
    nonzero = mant != 0
    low = int(exp[nonzero].min()) if nonzero.any() else 0
    shift = np.where(nonzero, exp - low, 0)
    if int(shift.max()) <= 9:  # |mant| < 2**53, so mant << 9 stays below 2**62
        units = mant << shift
    else:
        units = np.array([int(m) << int(s) for m, s in zip(mant, shift, strict=True)], dtype=object)
    return Scores(units, Fraction(2) ** low)


def _rational_scores(values: list[Any], name: str) -> Scores:
    if all(type(v) is float for v in values):  # exact binary values; sampled without integer conversion
        floats = np.array(values, dtype=np.float64)
        bad = ~np.isfinite(floats)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}[{i}] must be finite, got {values[i]!r}")
        return Scores(floats=floats, exact=lambda: _exact_rational_scores(values, name))
    return _exact_rational_scores(values, name)


def _exact_rational_scores(values: list[Any], name: str) -> Scores:
    if all(type(v) is int for v in values):
        try:
            return Scores(np.array(values, dtype=np.int64), Fraction(1))
        except OverflowError:
            return Scores(np.array(values, dtype=object), Fraction(1))
    qs = [to_rational(v, f"{name}[{i}]") for i, v in enumerate(values)]
    den = math.lcm(*(q.denominator for q in qs))
    ints = [q.numerator * (den // q.denominator) for q in qs]
    try:
        units = np.array(ints, dtype=np.int64)
    except OverflowError:
        units = np.array(ints, dtype=object)
    return Scores(units, Fraction(1, den))


def parse_scores(scores: Any, name: str = "scores") -> Scores:
    """Validate a non-empty 1-d sequence of scores and return it exactly as :class:`Scores`.

    A NumPy array is read by its dtype. Another column (pandas, Polars) whose exact reading
    (:func:`~securedp.reading.columns.column_values`) is an int, uint or float array is read as that
    array (one vectorised pass, no Python object per score); a pyarrow array, or an object column
    without a missing value, as its exact Python values; anything else score by score.
    """
    if isinstance(scores, (str, bytes)) or not hasattr(scores, "__len__"):
        raise TypeError(f"{name} must be a sequence or 1-d array of numbers")
    refuse_unordered(scores, name)
    if len(scores) == 0:
        raise ValueError(f"{name} must not be empty: there is nothing to select from")
    if not isinstance(scores, np.ndarray):
        records = column_values(scores)
        if isinstance(records, np.ndarray) and records.dtype.kind in "iuf":
            scores = records.copy()  # a numeric column read exactly (a private copy, never a view of the column)
        elif isinstance(records, np.ndarray) and records.dtype == object and None not in (values := records.tolist()):
            return _rational_scores(values, name)  # e.g. pandas Float64 without a missing value: Python floats
        elif isinstance(records, list) and type(scores).__module__.split(".")[0] == "pyarrow":
            return _rational_scores(records, name)  # exact Python values (None for a null)
        else:
            return _rational_scores(list(scores), name)  # a missing value is named as the caller's own object
    if scores.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {scores.shape}")
    kind = scores.dtype.kind
    if kind in "iu":
        return Scores(_int_units(scores), Fraction(1))
    if kind == "f" and scores.dtype.itemsize <= 8:
        return _float_scores(scores, name)
    if kind == "f":  # longdouble: wider than a double, read exactly (never through float64)
        return _exact_rational_scores(list(scores), name)
    if kind != "O":
        raise TypeError(f"{name} must hold numbers, got dtype {scores.dtype}")
    return _rational_scores(list(scores), name)


def selection_inputs(
    scores: Any, epsilon: Any, sensitivity: Any, candidates: Any, data: Any
) -> tuple[Fraction, Fraction, list[Any] | None, Scores]:
    """The checked ``(epsilon, sensitivity, candidates, scores)`` shared by the selection mechanisms.

    ``scores`` is a sequence of scores, or a utility ``scores(data, candidate)``
    evaluated on every candidate (``candidates`` then required).
    """
    eps = positive_rational(epsilon, "epsilon")
    sens = positive_rational(sensitivity, "sensitivity")
    if candidates is not None:
        check_ordered(candidates, "candidates", "a sequence of public candidates")
    cands = None if candidates is None else list(candidates)
    if callable(scores) and cands is None:
        raise TypeError("a utility function needs candidates=[...] to score")
    reading_data()  # the public inputs are checked; the scores (or the data a utility scores) are read from here
    if callable(scores) and cands is not None:
        utility: Callable[[Any, Any], Any] = scores
        scores = [utility(data, c) for c in cands]
    parsed = parse_scores(scores)
    if cands is not None and len(cands) != len(parsed):
        raise ValueError(f"{len(cands)} candidates but {len(parsed)} scores")
    return eps, sens, cands, parsed

