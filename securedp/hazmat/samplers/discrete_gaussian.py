"""The discrete Gaussian law, sampled exactly and in value-independent time.

**Law.** ``P(X = k)`` proportional to ``exp(-k**2 / (2 * sigma**2))`` over all
integers ``k``. The parameter is ``sigma`` or, so that irrational ``sigma``
such as ``sqrt(2)`` is expressible exactly, the ``variance`` ``sigma**2``;
either is any rational > 0. Adding it to an integer query of sensitivity
``Delta`` gives ``rho``-zCDP with ``rho = Delta**2 / (2 * sigma**2)``
(Canonne, Kamath & Steinke 2020, Theorem 14).

**Algorithm** (Canonne, Kamath & Steinke 2020, Algorithm 3). With
``t = floor(sigma) + 1``: draw ``Y`` from the discrete Laplace law of scale
``t``; accept it with probability
``exp(-(|Y| - sigma**2 / t)**2 / (2 * sigma**2))``; otherwise repeat. The
accepted ``Y`` has exactly the discrete Gaussian law (their Theorem on
Algorithm 3), and by the usual property of rejection sampling the number of
rounds is independent of the value accepted.

**Timing.** Each round costs the same whatever ``Y``: the Laplace draw is
value-independent (:mod:`securedp.hazmat.samplers.discrete_laplace`), and the
acceptance is one fixed-width comparison against a threshold looked up in a
table indexed by ``|Y|`` (built once per variance with rigorous bounds).
Beyond the table the acceptance probability is below ``2**-64``: such a
proposal (about 3e-5 of them) gets its threshold computed on its own, work
that depends on its value, but it is then rejected except with probability
below ``2**-64``, and rejected proposals are independent of the value
finally returned. For very large ``sigma`` (a table longer than
``TABLE_LIMIT``, sigma above about 25,000) no table is built and each
proposal's threshold is computed on its own: exact, fast to set up, but its
time is not certified value-independent.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import repeat
from typing import Any

import numpy as np

from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Real, exp_neg
from securedp.hazmat.exact.kernels import directed_products, scaled_bounds, tabulated_floors
from securedp.hazmat.exact.rational import positive_rational
from securedp.hazmat.samplers.decide import WORD_BITS, Thresholds, leading_bits, resolve_below
from securedp.hazmat.samplers.discrete_laplace import DiscreteLaplacePlan
from securedp.hazmat.samplers.geometric import MAX_SCALE, MAX_SCALE_TEXT, magnitude_text
from securedp.hazmat.samplers.params import PlanCache, check_size, count_of, shaped
from securedp.hazmat.samplers.pool import pooled

TABLE_LIMIT = 1 << 18
# 128 * ln 2 < 89: beyond |y| - c > sqrt(89 v), exp(-(|y| - c)**2 / 2v) < 2**-64.
_TAIL_FACTOR = 89
_SLOW_PATH_TARGET = 2.0**-61  # float-ok: planning only
# Past this proposal scale the acceptance estimate uses its continuous limit (floats lose 1 - q).
_CONTINUOUS_T = 2**40
_TINY_VARIANCE = 2.0**-1000  # float-ok: planning only


def _gaussian_acceptance_lows(variance: Fraction, center: Fraction, count: int, width: int) -> list[int]:
    """``floor(exp(-(y - c)**2 / 2v) * 2**width)`` for ``y = 0 .. count-1``, by iterated products.

    ``a(y + 1) = a(y) * r(y)`` with ``r(y) = exp(-(2y + 1 - 2c) / 2v)`` and
    ``r(y + 1) = r(y) * exp(-1/v)``: two runs of
    :func:`~securedp.hazmat.exact.kernels.directed_products`, whose directed
    rounding keeps every bound rigorous; entries whose bounds are not within
    one unit are recomputed.
    """
    prec = width + 48 + 2 * max(count, 1).bit_length()
    a0 = scaled_bounds(exp_neg(center * center / (2 * variance)).interval(prec), prec)
    r0 = scaled_bounds(exp_neg((1 - 2 * center) / (2 * variance)).interval(prec), prec)
    beta = scaled_bounds(exp_neg(1 / variance).interval(prec), prec)
    ratios = zip(*directed_products(r0, repeat(beta), max(count - 1, 0), prec), strict=True)
    lows, highs = directed_products(a0, ratios, count, prec)
    return tabulated_floors(lows, highs, prec, width, lambda y: _acceptance_real(variance, center, y))


def _acceptance_real(variance: Fraction, center: Fraction, y: int) -> Real:
    return exp_neg((y - center) ** 2 / (2 * variance))


class DiscreteGaussianPlan:
    """Laplace proposal and acceptance table for one variance, computed once."""

    def __init__(self, variance: Fraction, width: int | None = None) -> None:
        if variance >= MAX_SCALE * MAX_SCALE:
            raise ValueError(f"sigma must be below {MAX_SCALE_TEXT} (variance below 2**512), "
                             f"got a variance of {magnitude_text(variance)}")
        self.variance = variance
        self.t = math.isqrt(variance.numerator // variance.denominator) + 1
        self.center = variance / self.t
        tail = math.isqrt(-(-_TAIL_FACTOR * variance.numerator // variance.denominator)) + 1
        self.cutoff = int(self.center) + tail + 1  # acceptance < 2**-64 for |y| >= cutoff
        # Past TABLE_LIMIT a table would cover a vanishing share of the proposals: skip it.
        self.table_size = self.cutoff if self.cutoff <= TABLE_LIMIT else 0
        acceptance = self._acceptance_estimate()
        self.expected_rounds = 1 / acceptance
        proposal = DiscreteLaplacePlan(self.t, width or WORD_BITS)
        if width is None:
            per_round = proposal.comparisons_per_draw + 1
            if per_round * self.expected_rounds * 2.0**-WORD_BITS > _SLOW_PATH_TARGET:
                width = 2 * WORD_BITS
                proposal = DiscreteLaplacePlan(self.t, width)
            else:
                width = WORD_BITS
        self.width = width
        self.proposal = proposal
        lows = [*_gaussian_acceptance_lows(variance, self.center, self.table_size, width), 0]
        self.accept = Thresholds(lows, self._real, width)
        self.comparisons_per_draw = self.expected_rounds * (self.proposal.comparisons_per_draw + 1)
        self.slow_path_bound = self.comparisons_per_draw * 2.0**-width  # float-ok: documented bound

    def _real(self, y: int) -> Real:
        return _acceptance_real(self.variance, self.center, y)

    def _decide_beyond(self, magnitude: int, words: np.ndarray, source: RandomSource) -> bool:
        """Acceptance of a proposal past the table, decided from its exact threshold alone (no tabulated floor)."""
        return resolve_below(self._real(magnitude), leading_bits(words, self.width), self.width, source)

    def _acceptance_estimate(self) -> float:
        """P(accept) for one round, in floating point: for planning and bounds only.

        Finite and positive for every supported variance: past ``t = 2**40``
        (where ``1 - exp(-1/t)`` would lose its digits) the continuous limit
        ``(sigma/t) * sqrt(pi/2) * exp(-v / 2t**2)`` is used (the centre ``v/t``
        completes the square), within ``O(1/t)`` of the sum.
        """
        if self.t > _CONTINUOUS_T:
            ratio = float(self.variance / (self.t * self.t))  # float-ok: planning only, in (1/4, 1]
            return math.sqrt(ratio * math.pi / 2) * math.exp(-ratio / 2)  # float-ok: planning only
        v = max(float(self.variance), _TINY_VARIANCE)  # float-ok: planning only (a tiny v only accepts y = 0)
        q = math.exp(-1 / self.t)  # float-ok: planning only
        step = max(1, self.cutoff >> 16)  # a Riemann sum suffices for an estimate
        ys = np.arange(0, max(self.cutoff, 1) + 1, step, dtype=float)
        lap = (1 - q) / (1 + q) * q**ys * np.where(ys == 0, 1, 2 * step)
        acc = np.exp(-((ys - float(self.center)) ** 2) / (2 * v))  # float-ok: planning only
        return float((lap * acc).sum())

    def draw(self, n: int, source: RandomSource) -> np.ndarray:
        """``n`` independent draws."""
        out = np.empty(n, dtype=np.int64 if self.proposal.int64 else object)
        todo = np.arange(n)
        while todo.size:
            m = todo.size
            y = self.proposal.draw(m, source)
            magnitude = np.abs(y)
            words = self.accept.draw_words(m, source)
            beyond = magnitude >= self.table_size
            index = np.where(beyond, self.table_size, magnitude).astype(np.int64)
            keep = self.accept.decide(words, source, index)
            if beyond.any():  # rare, and only ever for proposals that are then almost surely rejected
                for e in np.flatnonzero(beyond):
                    keep[e] = self._decide_beyond(int(magnitude[e]), words[:, e], source)
            out[todo[keep]] = y[keep]
            todo = todo[~keep]
        return out


def _build_plan(sigma: Any, variance: Any) -> DiscreteGaussianPlan:
    if (sigma is None) == (variance is None):
        raise TypeError("discrete_gaussian takes exactly one of sigma or variance")
    if sigma is not None:
        s = positive_rational(sigma, "sigma")
        return DiscreteGaussianPlan(s * s)
    return DiscreteGaussianPlan(positive_rational(variance, "variance"))


_PLANS: PlanCache[DiscreteGaussianPlan] = PlanCache(_build_plan)


def discrete_gaussian(
    sigma: Any = None, size: Any = None, *, variance: Any = None, rng: RandomSource | None = None
) -> Any:
    """Draw from the discrete Gaussian law, exactly.

    ``P(X = k)`` is proportional to ``exp(-k**2 / (2 * sigma**2))`` over all
    integers. Give ``sigma`` (a rational > 0) or, keyword only, the
    ``variance`` ``sigma**2`` (a rational > 0, so ``variance=2`` means
    ``sigma = sqrt(2)`` exactly). Returns an ``int`` when ``size`` is
    ``None``, else an ``int64`` array of that shape (an object array of Python
    ints for ``sigma`` of 2**57 or more, as :func:`~securedp.hazmat.samplers.discrete_laplace`).
    ``sigma`` must be below ``2**256`` (else ``ValueError`` at once).
    """
    plan = _PLANS.get(sigma, variance)
    n = check_size(size)
    source = resolve_source(rng)
    if n is None:
        return pooled(source, plan, plan.draw)
    return shaped(plan.draw(count_of(n), source), n)
