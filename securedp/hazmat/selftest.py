"""Goodness-of-fit self-test of every sampler against its exact law (used by ``securedp selftest``).

For each :data:`CASES` entry, the exact probability of every value in a
range holding all but a negligible mass (< 2**-100) is computed with MPFR
under directed rounding (:class:`~securedp.hazmat.exact.interval.Interval`;
the enclosures are narrower than 2**-100, so their midpoints are used as
expected frequencies). Neighbouring values are merged from both ends until
every bin expects at least 5 draws, draws outside the range join the end
bins, and the G statistic ``2 * sum(O * ln(O / E))`` is referred to the
chi-square law with ``bins - 1`` degrees of freedom. Its survival function
is the regularized upper incomplete gamma ``Q(df/2, G/2)``, computed here
with MPFR (series or continued fraction, Numerical Recipes 6.2), so SciPy
is not needed. A correct sampler fails a case with probability ``ALPHA``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import gmpy2
import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Interval
from securedp.hazmat.samplers import (
    bernoulli,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    geometric,
    uniform_below,
)

ALPHA = 1e-6
"""A case fails when its p-value is below this."""

MIN_EXPECTED = 5
_PREC = 160


def _exp_neg(x: Fraction) -> Interval:
    return (-Interval.exact(x, _PREC)).exp()


def _mid(iv: Interval) -> float:
    return float((iv.lo + iv.hi) / 2)


def _uniform(n: int) -> Callable[[], dict[int, float]]:
    return lambda: dict.fromkeys(range(n), 1 / n)


def _bernoulli(p: Fraction) -> Callable[[], dict[int, float]]:
    return lambda: {0: float(1 - p), 1: float(p)}


def _bernoulli_exp(x: Fraction) -> Callable[[], dict[int, float]]:
    def pmf() -> dict[int, float]:
        e = _exp_neg(x)
        return {0: _mid(1 - e), 1: _mid(e)}

    return pmf


def _geometric(q: Callable[[int], Interval], tail: int) -> Callable[[], dict[int, float]]:
    """``P(k) = (1 - q) q**k`` for ``k < tail``; ``q(k)`` bounds ``q**k``."""
    return lambda: {k: _mid((1 - q(1)) * q(k)) for k in range(tail)}


def _laplace(scale: Fraction, tail: int) -> Callable[[], dict[int, float]]:
    def pmf() -> dict[int, float]:
        q = _exp_neg(1 / scale)
        norm = (1 - q) / (1 + q)
        return {k: _mid(norm * _exp_neg(Fraction(abs(k)) / scale)) for k in range(-tail, tail + 1)}

    return pmf


def _gaussian(variance: Fraction, tail: int) -> Callable[[], dict[int, float]]:
    def pmf() -> dict[int, float]:
        weights = {k: _exp_neg(Fraction(k * k) / (2 * variance)) for k in range(-tail, tail + 1)}
        total = Interval.exact(0, _PREC)
        for w in weights.values():
            total = total + w
        return {k: _mid(w / total) for k, w in weights.items()}

    return pmf


@dataclass(frozen=True)
class Case:
    """One sampler at one parameter: how to draw ``n`` values and their exact law."""

    name: str
    draw: Callable[[int, RandomSource], np.ndarray]
    pmf: Callable[[], dict[int, float]]


CASES: tuple[Case, ...] = (
    Case("uniform_below(10)", lambda n, r: uniform_below(10, n, rng=r), _uniform(10)),
    Case("bernoulli(1/3)", lambda n, r: bernoulli("1/3", n, rng=r), _bernoulli(Fraction(1, 3))),
    Case("bernoulli_exp(1/2)", lambda n, r: bernoulli_exp("1/2", n, rng=r), _bernoulli_exp(Fraction(1, 2))),
    Case("geometric(scale=3)", lambda n, r: geometric(3, n, rng=r),
         _geometric(lambda k: _exp_neg(Fraction(k, 3)), 240)),
    Case("geometric(p=1/4)", lambda n, r: geometric(size=n, p="1/4", rng=r),
         _geometric(lambda k: Interval.exact(Fraction(3, 4) ** k, _PREC), 260)),
    Case("discrete_laplace(5/2)", lambda n, r: discrete_laplace("5/2", n, rng=r), _laplace(Fraction(5, 2), 200)),
    Case("discrete_laplace(40)", lambda n, r: discrete_laplace(40, n, rng=r), _laplace(Fraction(40), 2900)),
    Case("discrete_gaussian(3)", lambda n, r: discrete_gaussian(3, n, rng=r), _gaussian(Fraction(9), 60)),
    Case("discrete_gaussian(variance=2)", lambda n, r: discrete_gaussian(size=n, variance=2, rng=r),
         _gaussian(Fraction(2), 30)),
)


@dataclass(frozen=True)
class Result:
    """The outcome of one case: the G-test and the data behind it (for tables and plots)."""

    name: str
    draws: int
    bins: int  # values = the value each bin is shown at, expected/observed = its probability and count
    g: float
    p_value: float
    values: tuple[int, ...]
    expected: tuple[float, ...]
    observed: tuple[int, ...]

    @property
    def passed(self) -> bool:
        return self.p_value >= ALPHA


def chi2_sf(x: float, df: int) -> float:
    """``P(X > x)`` for ``X`` chi-square with ``df`` degrees of freedom: ``Q(df/2, x/2)``."""
    if x <= 0:
        return 1.0
    with gmpy2.context(precision=128):
        a, z = gmpy2.mpfr(df) / 2, gmpy2.mpfr(x) / 2
        log_front = a * gmpy2.log(z) - z - gmpy2.lgamma(a)[0]
        if z < a + 1:  # series for P(a, z)
            term = total = 1 / a
            n = a
            while abs(term) > total * gmpy2.mpfr(2) ** -120:
                n += 1
                term *= z / n
                total += term
            return float(1 - total * gmpy2.exp(log_front))
        # continued fraction for Q(a, z) (modified Lentz)
        tiny = gmpy2.mpfr(2) ** -400
        b = z + 1 - a
        c, d = 1 / tiny, 1 / b
        h = d
        i = 1
        while True:
            an = -i * (i - a)
            b += 2
            d = an * d + b
            d = tiny if abs(d) < tiny else d
            c = b + an / c
            c = tiny if abs(c) < tiny else c
            d = 1 / d
            delta = d * c
            h *= delta
            i += 1
            if abs(delta - 1) < gmpy2.mpfr(2) ** -120:
                return float(gmpy2.exp(log_front) * h)


def merge_bins(pmf: dict[int, float], n: int) -> list[tuple[list[int], float]]:
    """Consecutive values grouped so each group expects at least ``MIN_EXPECTED`` of ``n`` draws."""
    keys = sorted(pmf)
    groups: list[tuple[list[int], float]] = []
    current: list[int] = []
    mass = 0.0
    for k in keys:
        current.append(k)
        mass += pmf[k]
        if mass * n >= MIN_EXPECTED:
            groups.append((current, mass))
            current, mass = [], 0.0
    if current:
        if groups:
            last, last_mass = groups.pop()
            groups.append((last + current, last_mass + mass))
        else:
            groups.append((current, mass))
    return groups


def g_test(samples: np.ndarray, pmf: dict[int, float]) -> tuple[float, float, list[tuple[list[int], float]], list[int]]:
    """The G statistic, its p-value, the bins and their observed counts (out-of-range draws in the end bins)."""
    n = int(samples.size)
    groups = merge_bins(pmf, n)
    edges = np.array([g[0][0] for g in groups[1:]], dtype=np.int64)
    index = np.searchsorted(edges, samples.astype(np.int64), side="right")
    observed = np.bincount(index, minlength=len(groups)).tolist()
    g = 0.0
    for o, (_, mass) in zip(observed, groups, strict=True):
        if o:
            g += 2 * o * float(np.log(o / (mass * n)))  # float-ok: G statistic of the self-test, not sampling
    return g, chi2_sf(g, len(groups) - 1), groups, observed


def run_case(case: Case, draws: int, source: RandomSource, progress: Callable[[int], None], chunks: int = 10) -> Result:
    """Draw ``draws`` values in ``chunks`` batches (calling ``progress`` with the count so far) and test them."""
    pieces = []
    done = 0
    for i in range(chunks):
        size = draws * (i + 1) // chunks - done
        pieces.append(np.asarray(case.draw(size, source)).reshape(-1))
        done += size
        progress(done)
    samples = np.concatenate(pieces)
    pmf = case.pmf()
    g, p, groups, observed = g_test(samples, pmf)
    # Each bin is shown at its value nearest the centre: the pooled left tail at its largest value.
    values = tuple(keys[-1] if i == 0 else keys[0] for i, (keys, _) in enumerate(groups))
    return Result(case.name, draws, len(groups), g, p, values, tuple(m for _, m in groups), tuple(observed))
