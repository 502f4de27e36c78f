"""The Bernoulli law with a rational probability, sampled exactly.

**Law.** ``P(B = 1) = p``, ``P(B = 0) = 1 - p`` for a rational ``p`` in [0, 1].

**Algorithm.** ``B = [U < p]`` for a uniform ``U``, decided by one 64-bit
comparison with ``floor(p * 2**64)`` and, when the word equals it
(probability ``2**-64``), exact long division against further bits
(:mod:`securedp.hazmat.samplers.decide`). ``p = 0`` and ``p = 1`` consume no
randomness. Every draw does the same work whatever its outcome.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Real
from securedp.hazmat.exact.rational import probability
from securedp.hazmat.samplers.decide import WORD_BITS, Thresholds
from securedp.hazmat.samplers.params import PlanCache, check_size, count_of, shaped


class BernoulliPlan:
    """One threshold, prepared once per probability (a :class:`~securedp.hazmat.samplers.plan.Plan`)."""

    def __init__(self, real: Real, constant: bool | None = None, width: int = WORD_BITS) -> None:
        self.constant = constant
        self.thresholds = None if constant is not None else Thresholds.of([real], width)
        self.slow_path_bound = 0.0 if constant is not None else 2.0**-width  # float-ok: a documented bound

    def draw(self, n: int, source: RandomSource) -> np.ndarray:
        if self.thresholds is None:
            return np.full(n, int(bool(self.constant)), dtype=np.int64)
        return self.thresholds.bernoulli(n, source).astype(np.int64)

    def draw_one(self, source: RandomSource) -> int:
        if self.thresholds is None:
            return int(bool(self.constant))
        return int(self.thresholds.decide_one(source))


def rational_plan(p: Fraction, width: int = WORD_BITS) -> BernoulliPlan:
    """The plan for a rational ``p`` in [0, 1]."""
    if p == 0 or p == 1:
        return BernoulliPlan(Real.rational(p), constant=(p == 1))
    return BernoulliPlan(Real.rational(p), width=width)


_PLANS: PlanCache[BernoulliPlan] = PlanCache(lambda p: rational_plan(probability(p, "p")))


def bernoulli(p: Any, size: Any = None, *, rng: RandomSource | None = None) -> Any:
    """Draw 1 with probability ``p`` and 0 otherwise, exactly.

    ``p`` is a rational in [0, 1] (int, Fraction, decimal string such as
    ``"0.1"``, gmpy2 rational, or a float taken at its exact binary value).
    Returns an ``int`` (0 or 1) when ``size`` is ``None``, else an ``int64`` array.
    """
    plan = _PLANS.get(p)
    n = check_size(size)
    source = resolve_source(rng)
    if n is None:
        return plan.draw_one(source)
    return shaped(plan.draw(count_of(n), source), n)
