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
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from securedp.hazmat.exact.rational import positive_rational, to_rational

_INT64_MAX = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Scores:
    """``score_i = units[i] * unit`` exactly."""

    units: np.ndarray  # int64, or object array of Python ints
    unit: Fraction

    def __len__(self) -> int:
        return len(self.units)

    def gaps(self) -> np.ndarray:
        """``max(units) - units`` (integers >= 0; int64 when they fit, else Python ints)."""
        top, bottom = int(self.units.max()), int(self.units.min())
        if self.units.dtype != object and top - bottom <= _INT64_MAX:
            return np.int64(top) - self.units
        return np.array([top - int(v) for v in self.units], dtype=object)

    def refined(self, value: Fraction) -> "Scores":
        """The same scores on the coarsest unit that also makes ``value`` an integer multiple."""
        unit = Fraction(math.gcd(self.unit.numerator, value.numerator),
                        math.lcm(self.unit.denominator, value.denominator))
        factor = self.unit / unit  # an integer
        if factor == 1:
            return self
        k = factor.numerator
        if self.units.dtype != object and max(abs(int(self.units.max())), abs(int(self.units.min()))) * k <= _INT64_MAX:
            return Scores(self.units * np.int64(k), unit)
        return Scores(np.array([int(v) * k for v in self.units], dtype=object), unit)


def _int_units(arr: np.ndarray) -> np.ndarray:
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > _INT64_MAX:
        return np.array([int(v) for v in arr], dtype=object)
    return arr.astype(np.int64, copy=False)


def _float_scores(arr: np.ndarray, name: str) -> Scores:
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] must be finite, got {arr[i]!r}")
    mantissa, exponent = np.frexp(arr.astype(np.float64))
    mant = np.ldexp(mantissa, 53).astype(np.int64)  # exact: a double has 53 significant bits
    exp = exponent.astype(np.int64) - 53
    nonzero = mant != 0
    low = int(exp[nonzero].min()) if nonzero.any() else 0
    shift = np.where(nonzero, exp - low, 0)
    if int(shift.max()) <= 9:  # |mant| < 2**53, so mant << 9 stays below 2**62
        units = mant << shift
    else:
        units = np.array([int(m) << int(s) for m, s in zip(mant, shift)], dtype=object)
    return Scores(units, Fraction(2) ** low)


def _rational_scores(values: list[Any], name: str) -> Scores:
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
    """Validate a non-empty 1-d sequence of scores and return it exactly as :class:`Scores`."""
    if isinstance(scores, (str, bytes)) or not hasattr(scores, "__len__"):
        raise TypeError(f"{name} must be a sequence or 1-d array of numbers")
    if len(scores) == 0:
        raise ValueError(f"{name} must not be empty: there is nothing to select from")
    if isinstance(scores, np.ndarray):
        if scores.ndim != 1:
            raise ValueError(f"{name} must be 1-dimensional, got shape {scores.shape}")
        kind = scores.dtype.kind
        if kind in "iu":
            return Scores(_int_units(scores), Fraction(1))
        if kind == "f":
            return _float_scores(scores, name)
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
    cands = None if candidates is None else list(candidates)
    if callable(scores):
        if cands is None:
            raise TypeError("a utility function needs candidates=[...] to score")
        utility: Callable[[Any, Any], Any] = scores
        scores = [utility(data, c) for c in cands]
    parsed = parse_scores(scores)
    if cands is not None and len(cands) != len(parsed):
        raise ValueError(f"{len(cands)} candidates but {len(parsed)} scores")
    return eps, sens, cands, parsed
