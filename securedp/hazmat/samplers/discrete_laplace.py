"""The discrete Laplace law, sampled exactly and in value-independent time.

**Law.** ``P(X = k) = (1 - q) / (1 + q) * q**|k|`` for every integer ``k``,
with ``q = exp(-1/scale)``: probabilities proportional to ``exp(-|k|/scale)``.
Adding it to an integer-valued query of sensitivity ``Delta`` with
``scale = Delta / epsilon`` gives ``epsilon``-differential privacy (the
geometric mechanism of Ghosh, Roughgarden & Sundararajan 2009; see Canonne,
Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy").

**Algorithm.** ``X = 0`` with probability ``p0 = (1 - q) / (1 + q)``;
otherwise ``|X| = 1 + G`` with ``G`` geometric of ratio ``q`` and a fair sign.
Proof: for ``k >= 1``, ``P(X = k) = (1 - p0) / 2 * (1 - q) q**(k-1)`` and
``(1 - p0) / 2 = q / (1 + q)``, which gives ``(1 - q) / (1 + q) * q**k``.
No rejection, no loop: one exact comparison for the zero, one fair bit for the
sign and the geometric plan of :mod:`securedp.hazmat.samplers.geometric`,
whose work does not depend on the value drawn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Real
from securedp.hazmat.exact.rational import positive_rational
from securedp.hazmat.samplers.decide import WORD_BITS, Thresholds
from securedp.hazmat.samplers.geometric import MAX_SCALE, ExpRatio, GeometricPlan, scale_range_error
from securedp.hazmat.samplers.params import PlanCache, check_size, count_of, shaped
from securedp.hazmat.samplers.pool import pooled


def fair_signs(n: int, source: RandomSource) -> np.ndarray:
    """``n`` independent fair signs (+1 / -1) as int64, one random bit each."""
    nbytes = (n + 7) // 8
    bits = np.unpackbits(np.frombuffer(source.random_bytes(nbytes), dtype=np.uint8), bitorder="little")[:n]
    return 1 - 2 * bits.astype(np.int64)


class DiscreteLaplacePlan:
    """Thresholds and geometric plan for one scale, computed once."""

    def __init__(self, scale: Any, width: int = WORD_BITS) -> None:
        self.scale = positive_rational(scale, "scale")
        if self.scale > MAX_SCALE:
            raise scale_range_error("scale", self.scale)
        ratio = ExpRatio(1 / self.scale)
        self.magnitude = GeometricPlan(ratio, width)
        q = ratio.power(1)
        self.zero = Thresholds.of([Real(lambda prec: (1 - q.interval(prec)) / (1 + q.interval(prec)), "p0")], width)
        self.int64 = self.magnitude.int64  # magnitudes below 2**62, so 1 + magnitude fits int64
        self.comparisons_per_draw = 1 + self.magnitude.comparisons_per_draw
        self.slow_path_bound = self.comparisons_per_draw * 2.0 ** -width  # float-ok: documented bound

    def draw(self, n: int, source: RandomSource) -> np.ndarray:
        """``n`` independent draws."""
        zero = self.zero.bernoulli(n, source)
        sign = fair_signs(n, source)
        magnitude = 1 + self.magnitude.draw(n, source)
        if magnitude.dtype == object:
            sign = sign.astype(object)
        # Multiply by 0/1 rather than assign through the mask: a masked
        # assignment costs more the more zeros were drawn (defect 3 of 0.1).
        out: np.ndarray = sign * magnitude * (~zero).astype(np.int64)
        return out


_PLANS: PlanCache[DiscreteLaplacePlan] = PlanCache(DiscreteLaplacePlan)


def discrete_laplace(scale: Any, size: Any = None, *, rng: RandomSource | None = None) -> Any:
    """Draw from the discrete Laplace law with the given ``scale``, exactly.

    ``P(X = k)`` is proportional to ``exp(-|k| / scale)`` over all integers
    ``k``; ``scale`` is any rational > 0 (int, Fraction, decimal string such
    as ``"0.5"``, gmpy2 rational, or a float taken at its exact binary value).
    Returns an ``int`` when ``size`` is ``None``, else an ``int64`` array
    (for a scale of 2**57 or more, where values may exceed int64, an object
    array of Python ints; either may occur between 2**56 and 2**57, see
    :func:`~securedp.hazmat.samplers.geometric`). A scale above ``2**256`` raises ``ValueError`` at once.
    """
    plan = _PLANS.get(scale)
    n = check_size(size)
    source = resolve_source(rng)
    if n is None:
        return pooled(source, plan, plan.draw)
    return shaped(plan.draw(count_of(n), source), n)
