"""The ``delta`` a thresholding plan charges: the one its threshold proves, not the one asked for.

A thresholding plan (Laplace, :mod:`securedp.mechanisms.partition_selection`; Gaussian,
:mod:`securedp.mechanisms.gaussian_threshold`) takes the least ``tau = s + t*`` with
``k P(Z >= t*) <= delta`` for the ``delta`` asked, and its theorem holds for *every*
``delta' >= k P(Z >= tau - s)``: the only use of ``delta`` in either proof is to bound the
probability that one of the at most ``k`` keys only the added person holds is released, which is at most
``k P(Z >= tau - s)``. The threshold is an integer, so that probability is usually well below the
``delta`` asked (x1.02 to x2.2 for Laplace, x3.9 to x109 for Gaussian thresholds on the cases of issue
42). The plan therefore charges ``delta_spent = min(delta, up(max(k * P_hi, FLOOR * delta)))``, ``P_hi``
the upper end of an interval enclosure of ``P(Z >= tau - s)`` (directed rounding) and ``up`` rounding up to
``DIGITS = 4`` significant decimal digits (at most 0.1 % above the proven value): a proven bound, depending
only on the public ``(epsilon or rho, delta, k, s)``. The difference stays in the budget's delta ledger for
later releases.

Releases before issue 42 (0.2.0) charged (and recorded as ``parameters["delta"]``) the ``delta`` asked; their
records state no ``delta_asked``, and a replay re-runs them by their rules, where a plan charges the ``delta``
asked, as they did (``charges_asked_delta`` of :class:`~securedp.mechanisms.record_rules.RecordRules`).
"""

from __future__ import annotations

from fractions import Fraction

from securedp.hazmat.exact.interval import Interval
from securedp.mechanisms.record_rules import current_rules

DIGITS = 4
FLOOR = Fraction(1, 10**30)
"""A plan never charges less than ``FLOOR`` times the ``delta`` asked (a threshold far in the tail proves a
delta beyond any use; the charge stays a short number)."""


def _round_up(x: Fraction) -> Fraction:
    """``x > 0`` rounded up to ``DIGITS`` significant decimal digits (a number a person can read and type)."""
    exponent = len(str(x.numerator)) - len(str(x.denominator))  # 10**(exponent - 1) <= x < 10**(exponent + 1)
    if x < Fraction(10) ** exponent:
        exponent -= 1
    scale = Fraction(10) ** (DIGITS - 1 - exponent)
    return Fraction(-(-x * scale // 1)) / scale


def charged_delta(asked: Fraction, max_groups: int, tail: Interval) -> Fraction:
    """``min(asked, up(max_groups * tail.hi))``: the ``delta`` a plan proves, given an enclosure ``tail`` of
    ``P(Z >= tau - s)`` (module docstring); ``asked`` itself under the rules of a record that charged it."""
    if current_rules().charges_asked_delta:
        return asked
    return min(asked, _round_up(max(max_groups * tail.upper, asked * FLOOR)))
