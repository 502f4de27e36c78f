"""The Bernoulli law with probability ``exp(-x)``, sampled exactly.

**Law.** ``P(B = 1) = exp(-x)`` for a rational ``x >= 0``.

**Algorithm.** ``B = [U < exp(-x)]``: one 64-bit comparison of a uniform word
with ``floor(exp(-x) * 2**64)``, computed once per ``x`` with MPFR under
directed rounding (rigorous lower and upper bounds); when the word equals it
(probability ``2**-64``) further bits are compared with tighter bounds until
decided (:mod:`securedp.hazmat.samplers.decide`). Unlike the loop of
Canonne, Kamath & Steinke (2020, Algorithm 1), whose length depends on the
outcome, every draw does the same work.
"""

from __future__ import annotations

from typing import Any

from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import exp_neg
from securedp.hazmat.exact.rational import nonnegative_rational
from securedp.hazmat.samplers.bernoulli import BernoulliPlan
from securedp.hazmat.samplers.params import PlanCache, check_size, count_of, shaped


def _build(x: Any) -> BernoulliPlan:
    rate = nonnegative_rational(x, "x")
    if rate == 0:
        return BernoulliPlan(exp_neg(rate), constant=True)
    return BernoulliPlan(exp_neg(rate))


_PLANS: PlanCache[BernoulliPlan] = PlanCache(_build)


def bernoulli_exp(x: Any, size: Any = None, *, rng: RandomSource | None = None) -> Any:
    """Draw 1 with probability ``exp(-x)`` and 0 otherwise, exactly, for a rational ``x >= 0``.

    Returns an ``int`` when ``size`` is ``None``, else an ``int64`` array.
    """
    plan = _PLANS.get(x)
    n = check_size(size)
    source = resolve_source(rng)
    if n is None:
        return plan.draw_one(source)
    return shaped(plan.draw(count_of(n), source), n)
