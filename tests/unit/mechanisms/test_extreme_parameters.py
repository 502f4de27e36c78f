"""Every sampler at extreme parameters: dtype, sign, range and a coarse exact law.

The class test for defects such as issue 8 item 1 (an int64 accumulator that
overflowed past 2**63 and returned negative geometric values) and the
"parameters that must work or fail at once" list (non-dyadic ``p = 2/3``
raising after 5 s, ``OverflowError`` or ``ZeroDivisionError`` from float
planning, the int-to-text digit limit).

A hypothesis sweep covers scales from 2**-60 to 2**200 units, ``p`` from
2**-200 to 1 - 2**-200 and exotic rationals (non-dyadic, huge terms). For each
example it checks

* the dtype: ``int64`` when the scale is small enough that every value fits,
  an object array of Python ints when values may exceed int64;
* the sign and range of every value;
* a coarse exact law: the count of an event (``G >= m`` near the median,
  ``value >= 2**63``, ``X > 0`` against ``X < 0``) against its exact
  probability, bounded with gmpy2 under directed rounding independently of the
  library's own interval code, by an exact binomial test at ``ALPHA = 1e-9``.

Seeds are derived from the example's parameters (SHA-256), and hypothesis runs
with ``derandomize=True`` and no database: the same examples and the same
draws on every run, so a correct sampler never fails. The explicit regression
cases below failed before the fix (checked against the 0.1 code).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

import securedp
from securedp import ChaChaSource
from securedp.hazmat import samplers
from securedp.hazmat.exact.interval import Real
from securedp.hazmat.samplers.decide import Thresholds
from securedp.hazmat.samplers.geometric import ExpRatio, GeometricPlan, RationalRatio

ALPHA = 1e-9
N = 2000
SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, database=None)
PREC = 256
_CTX = {"precision": PREC, "emax": gmpy2.get_emax_max(), "emin": gmpy2.get_emin_min()}
INT63 = 2**63


# ---------------------------------------------------------------- exact bounds (independent of securedp)


def _mpq(q: Fraction | int) -> Any:
    q = Fraction(q)
    return gmpy2.mpq(q.numerator, q.denominator)


def _ctx(rounding: Any) -> Any:
    return gmpy2.context(round=rounding, **_CTX)


def exp_neg(x: Fraction) -> tuple[Any, Any]:
    """Rigorous ``[lo, hi]`` around ``exp(-x)`` for a rational ``x >= 0``."""
    with _ctx(gmpy2.RoundUp):
        x_hi = gmpy2.mpfr(_mpq(x))
    with _ctx(gmpy2.RoundDown):
        x_lo = gmpy2.mpfr(_mpq(x))
        lo = gmpy2.exp(-x_hi)
    with _ctx(gmpy2.RoundUp):
        hi = gmpy2.exp(-x_lo)
    return lo, hi


def power(base: Fraction, m: int) -> tuple[Any, Any]:
    """Rigorous ``[lo, hi]`` around ``base**m`` for a rational ``base`` in [0, 1]."""
    with _ctx(gmpy2.RoundDown):
        lo = gmpy2.mpfr(_mpq(base)) ** m
    with _ctx(gmpy2.RoundUp):
        hi = gmpy2.mpfr(_mpq(base)) ** m
    return lo, hi


def _float_down(x: Any) -> float:
    f = float(x)
    return max(0.0, math.nextafter(f, -math.inf)) if f > 0 else 0.0


def _float_up(x: Any) -> float:
    return min(1.0, math.nextafter(float(x), math.inf))


def check_count(count: int, n: int, lo: Any, hi: Any, what: str) -> None:
    """Exact binomial test of ``count`` successes in ``n`` against any ``p`` in ``[lo, hi]``.

    Fails only when ``count`` is too large even for ``p = hi`` or too small even
    for ``p = lo``, each at level ``ALPHA / 2``.
    """
    p_lo, p_hi = _float_down(lo), _float_up(hi)
    too_many = stats.binom.sf(count - 1, n, p_hi) if count > 0 else 1.0
    too_few = stats.binom.cdf(count, n, p_lo)
    assert too_many >= ALPHA / 2 and too_few >= ALPHA / 2, (
        f"{what}: {count}/{n} against p in [{p_lo:.6g}, {p_hi:.6g}] (tails {too_many:.3g}, {too_few:.3g})")


def seed_of(*params: Any) -> ChaChaSource:
    """A ChaCha source whose seed is a hash of the example's parameters."""
    return ChaChaSource(hashlib.sha256(repr(params).encode()).digest())


def ints(values: np.ndarray) -> list[int]:
    """The values as Python ints, checking that each element is an integer."""
    out = values.tolist()
    assert all(type(v) is int for v in out), {type(v) for v in out}
    return out


def check_dtype(values: np.ndarray, scale_lo: Fraction, scale_hi: Fraction | None = None) -> None:
    """The documented dtype rule for a scale known to lie in ``[scale_lo, scale_hi]``.

    ``int64`` exactly when every value the plan assembles is below 2**62, which
    holds for every scale below 2**56 and for none from 2**57 (the plan needs
    about ``log2(scale) + 5.47`` bits); object arrays hold Python ints.
    """
    scale_hi = scale_lo if scale_hi is None else scale_hi
    assert values.dtype in (np.dtype(np.int64), np.dtype(object)), values.dtype
    if scale_hi < 2**56:
        assert values.dtype == np.int64, (scale_hi, values.dtype)
    if scale_lo >= 2**57:
        assert values.dtype == object, (scale_lo, values.dtype)
    if values.dtype == np.int64 and values.size:
        assert 0 <= int(np.abs(values).max()) < 2**62 + 1


# ---------------------------------------------------------------- parameter strategies


def _dyadic_with_mantissa(e: int, mantissa: int) -> Fraction:
    return Fraction(mantissa, 256) * (Fraction(2) ** e)


SCALES = st.one_of(
    st.builds(_dyadic_with_mantissa, st.integers(-60, 200), st.integers(256, 511)),
    st.sampled_from([Fraction(2, 3), Fraction(10**30, 7), Fraction(10**21), Fraction(2**70), Fraction(2**63),
                     Fraction(3**100, 2**60 * 7**20), Fraction(1, 10**18), Fraction(2**62 - 1, 3),
                     Fraction(10**400 + 1, 10**398), Fraction(3, 10**400) + Fraction(2**150, 7)]),
)


def _small_p(e: int, mantissa: int) -> Fraction:
    return Fraction(mantissa, 512) * Fraction(1, 2**e)


PROBS = st.one_of(
    st.builds(_small_p, st.integers(1, 199), st.integers(256, 511)),
    st.builds(lambda e, m: 1 - _small_p(e, m), st.integers(1, 199), st.integers(256, 511)),
    st.sampled_from([Fraction(2, 3), Fraction(6, 7), Fraction(1, 3), Fraction(1, 10**20), Fraction(1, 7),
                     Fraction(10**40 - 1, 10**40), Fraction(3**80, 4**70 * 10**10), Fraction(1, 2**200),
                     1 - Fraction(1, 2**200), Fraction(1, 3) + Fraction(1, 10**400), 1 - Fraction(1, 10**400)]),
)


def _median_point(scale: Fraction) -> int:
    """An integer ``m >= 1`` near the median of a geometric law of this scale."""
    return max(1, int(scale * Fraction(693, 1000)))


# ---------------------------------------------------------------- the sweep


@SETTINGS
@given(e=st.integers(0, 200), offset=st.integers(0, 1000))
@example(e=0, offset=0)
@example(e=63, offset=0)
@example(e=63, offset=1)
@example(e=200, offset=3)
@example(e=1400, offset=7)
def test_uniform_below_sweep(e: int, offset: int) -> None:
    n = 2**e + offset
    values = samplers.uniform_below(n, size=N, rng=seed_of("uniform", n))
    assert values.dtype == (np.int64 if n <= INT63 else object)
    vs = ints(values)
    assert all(0 <= v < n for v in vs)
    if n > 1:
        half = n // 2
        check_count(sum(v >= n - half for v in vs), N, Fraction(half, n), Fraction(half, n), f"uniform {n}")
    if n > INT63:
        p = Fraction(n - INT63, n)
        check_count(sum(v >= INT63 for v in vs), N, p, p, f"uniform {n} >= 2**63")


@SETTINGS
@given(p=PROBS)
@example(p=Fraction(1, 2**200))
@example(p=1 - Fraction(1, 2**200))
@example(p=Fraction(1, 10**400))
def test_bernoulli_sweep(p: Fraction) -> None:
    values = samplers.bernoulli(p, size=N, rng=seed_of("bernoulli", p))
    assert values.dtype == np.int64
    assert set(ints(values)) <= {0, 1}
    check_count(int(values.sum()), N, p, p, f"bernoulli {p}")


@SETTINGS
@given(x=SCALES)
@example(x=Fraction(1, 2**60))
@example(x=Fraction(2**200))
@example(x=Fraction(10**400 + 1, 10**400))
@example(x=Fraction(1, 10**400))
def test_bernoulli_exp_sweep(x: Fraction) -> None:
    values = samplers.bernoulli_exp(x, size=N, rng=seed_of("bernoulli_exp", x))
    assert values.dtype == np.int64
    assert set(ints(values)) <= {0, 1}
    lo, hi = exp_neg(x)
    check_count(int(values.sum()), N, lo, hi, f"bernoulli_exp {x}")


def _check_geometric(values: np.ndarray, scale: Fraction, survival: Callable[[int], tuple[Any, Any]],
                     what: str) -> None:
    vs = ints(values)
    assert min(vs) >= 0, f"{what}: negative value {min(vs)}"
    m = _median_point(scale)
    check_count(sum(v >= m for v in vs), N, *survival(m), f"{what}: G >= {m}")
    if scale >= 2**56:
        check_count(sum(v >= INT63 for v in vs), N, *survival(INT63), f"{what}: G >= 2**63")


@SETTINGS
@given(scale=SCALES)
@example(scale=Fraction(2**200))
@example(scale=Fraction(1, 2**60))
@example(scale=Fraction(2**70))
@example(scale=Fraction(2**55))
@example(scale=Fraction(2**56) - 1)
@example(scale=Fraction(2**57))
def test_geometric_scale_sweep(scale: Fraction) -> None:
    values = samplers.geometric(scale, size=N, rng=seed_of("geometric", scale))
    check_dtype(values, scale)
    _check_geometric(values, scale, lambda m: exp_neg(Fraction(m) / scale), f"geometric({scale})")


@SETTINGS
@given(p=PROBS)
@example(p=Fraction(1, 2**200))
@example(p=1 - Fraction(1, 2**200))
@example(p=Fraction(2, 3))
@example(p=Fraction(6, 7))
@example(p=Fraction(1, 10**20))
def test_geometric_p_sweep(p: Fraction) -> None:
    values = samplers.geometric(p=p, size=N, rng=seed_of("geometric-p", p))
    # The scale 1/ln(1/(1-p)) lies between 1/p - 1 and 1/p.
    check_dtype(values, 1 / p - 1, 1 / p)
    _check_geometric(values, 1 / p - 1, lambda m: power(1 - p, m), f"geometric(p={p})")


@SETTINGS
@given(scale=SCALES)
@example(scale=Fraction(2**200))
@example(scale=Fraction(1, 2**60))
@example(scale=Fraction(10**21))
def test_discrete_laplace_sweep(scale: Fraction) -> None:
    values = samplers.discrete_laplace(scale, size=N, rng=seed_of("laplace", scale))
    check_dtype(values, scale)
    vs = ints(values)
    q_lo, q_hi = exp_neg(1 / scale)
    with _ctx(gmpy2.RoundDown):
        pos_lo = q_lo / (1 + q_lo)  # q / (1 + q) is increasing in q
    with _ctx(gmpy2.RoundUp):
        pos_hi = q_hi / (1 + q_hi)
    check_count(sum(v > 0 for v in vs), N, pos_lo, pos_hi, f"laplace({scale}) > 0")
    check_count(sum(v < 0 for v in vs), N, pos_lo, pos_hi, f"laplace({scale}) < 0")
    m = _median_point(scale)
    qm_lo, qm_hi = exp_neg(Fraction(m) / scale)
    with _ctx(gmpy2.RoundDown):
        tail_lo = 2 * qm_lo / (1 + q_hi)  # P(|X| >= m) = 2 q**m / (1 + q)
    with _ctx(gmpy2.RoundUp):
        tail_hi = min(gmpy2.mpfr(1), 2 * qm_hi / (1 + q_lo))
    check_count(sum(abs(v) >= m for v in vs), N, tail_lo, tail_hi, f"laplace({scale}) |X| >= {m}")
    if scale >= 2**56:
        big_lo, big_hi = exp_neg(Fraction(INT63) / scale)
        with _ctx(gmpy2.RoundDown):
            b_lo = 2 * big_lo / (1 + q_hi)
        with _ctx(gmpy2.RoundUp):
            b_hi = min(gmpy2.mpfr(1), 2 * big_hi / (1 + q_lo))
        check_count(sum(abs(v) >= INT63 for v in vs), N, b_lo, b_hi, f"laplace({scale}) |X| >= 2**63")


def _gaussian_tail(sigma: Fraction, m: int) -> tuple[float, float]:
    """Bounds on ``P(|X| >= m)`` (m >= 1) and ``P(X = 0)``-free: for the discrete Gaussian of this sigma.

    Small sigma: a direct sum (float, relative error far below the test's resolution). Large
    sigma: the continuous tail ``erfc(m / (sigma sqrt 2))``, within ``2 f(m) / Z <= 1/sigma`` of the
    discrete one (a decreasing summand differs from its integral by at most its first term, and
    ``Z = sigma sqrt(2 pi) (1 + O(exp(-2 pi**2 sigma**2)))``), widened by that band.
    """
    s = float(sigma)
    if sigma <= 256:
        ks = np.arange(0, int(40 * s) + 3, dtype=float)
        f = np.exp(-(ks**2) / (2 * s * s))
        z = f[0] + 2 * f[1:].sum()
        p = 2 * f[m:].sum() / z
        return p * (1 - 1e-9), p * (1 + 1e-9) + 1e-300
    p = math.erfc(m / (s * math.sqrt(2)))
    band = 1 / s
    return max(0.0, p - band), min(1.0, p + band)


@settings(SETTINGS, max_examples=8)  # a large sigma costs ~0.5 s: each proposal's acceptance is computed alone
@given(sigma=SCALES)
@example(sigma=Fraction(2**200))
@example(sigma=Fraction(1, 2**60))
@example(sigma=Fraction(10**17))
def test_discrete_gaussian_sweep(sigma: Fraction) -> None:
    values = samplers.discrete_gaussian(sigma, size=N, rng=seed_of("gaussian", sigma))
    check_dtype(values, sigma, sigma + 1)  # the proposal's scale is floor(sigma) + 1
    vs = ints(values)
    pos, neg = sum(v > 0 for v in vs), sum(v < 0 for v in vs)
    if pos + neg:  # sign symmetry given non-zero: exactly 1/2
        check_count(pos, pos + neg, Fraction(1, 2), Fraction(1, 2), f"gaussian({sigma}) sign")
    m = max(1, int(sigma))
    lo, hi = _gaussian_tail(sigma, m)
    check_count(sum(abs(v) >= m for v in vs), N, lo, hi, f"gaussian({sigma}) |X| >= {m}")
    if sigma >= 2**60:
        lo, hi = _gaussian_tail(sigma, INT63)
        check_count(sum(abs(v) >= INT63 for v in vs), N, lo, hi, f"gaussian({sigma}) |X| >= 2**63")


# ---------------------------------------------------------------- explicit regressions


def test_geometric_2_70_is_non_negative_with_the_right_top_bits() -> None:
    """Issue 8 item 1: ~31% negative values before (int64 accumulation past 2**63)."""
    values = samplers.geometric(2**70, size=200_000, rng=ChaChaSource(bytes([70]) * 32))
    assert values.dtype == object
    vs = ints(values)
    assert min(vs) >= 0
    scale = Fraction(2**70)
    for m in (INT63, 2**69, 2**70, 2**71):  # P(G >= m) = exp(-m / scale) exactly
        check_count(sum(v >= m for v in vs), len(vs), *exp_neg(Fraction(m) / scale), f"G >= {m}")


def test_geometric_p_1e_20() -> None:
    """The planning log of 1 - p rounded to 0 at 53 bits: 72 digits into int64, negatives."""
    p = Fraction(1, 10**20)
    values = samplers.geometric(p="1e-20", size=N, rng=ChaChaSource(bytes([20]) * 32))
    assert values.dtype == object
    vs = ints(values)
    assert min(vs) >= 0
    for m in (10**19, 10**20, INT63, 2 * 10**20):
        check_count(sum(v >= m for v in vs), N, *power(1 - p, m), f"G >= {m}")


def test_sum_with_a_fine_lattice_keeps_its_noise_law() -> None:
    """Issue 8 item 1 at the release level: a sum whose noise scale is 10**21 units (bounds of 10**18 units at
    epsilon 1/1000; bounds past 2**62 units are refused, below).

    P(|output| < 10**19) = P(|Z| < 10**19) = 1 - 2 q**(10**19) / (1 + q) with q = exp(-10**-21),
    about 0.00995; it was 0.447 when the overflowed noise wrapped around.
    """
    with pytest.raises(ValueError, match="2\\*\\*62 lattice units"):
        securedp.prepare_sum([0.0], bounds=(0, 10**6), lattice="1e-15", epsilon=1)  # 10**21 units: public, refused
    rng = ChaChaSource(bytes([21]) * 32)
    n = 2000
    small = 0
    for _ in range(n):
        release = securedp.sum([0], bounds=(0, 10**18), lattice=1, epsilon="1/1000", rng=rng)
        small += abs(Fraction(release.value)) < 10**19
    q_lo, q_hi = exp_neg(Fraction(1, 10**21))
    qm_lo, qm_hi = exp_neg(Fraction(10**19, 10**21))
    with _ctx(gmpy2.RoundDown):
        lo = 1 - 2 * qm_hi / (1 + q_lo)
    with _ctx(gmpy2.RoundUp):
        hi = 1 - 2 * qm_lo / (1 + q_hi)
    check_count(small, n, lo, hi, "P(|sum| < 1e4)")
    assert small < 0.05 * n


@pytest.mark.parametrize("call", [
    lambda rng: samplers.geometric(2**70, rng=rng),
    lambda rng: samplers.geometric(p="1e-20", rng=rng),
    lambda rng: abs(samplers.discrete_laplace(2**70, rng=rng)),
    lambda rng: abs(samplers.discrete_gaussian(2**70, rng=rng)),
])
def test_scalar_draws_at_large_scales_are_python_ints(call: Callable[[ChaChaSource], Any]) -> None:
    """The pooled scalar path serves the same values: Python ints, never a wrapped int64."""
    rng = ChaChaSource(bytes([7]) * 32)
    values = [call(rng) for _ in range(1100)]  # past one pool refill
    assert all(type(v) is int and v >= 0 for v in values)
    assert sum(v >= INT63 for v in values) > 900  # P(|X| >= 2**63) >= exp(-1/128) ~ 0.99 for each law


def test_top_event_promotes_to_python_ints() -> None:
    """``H >> d != 0`` (probability <= 2**-64, forced here) adds ``2**value_bits * (1 + G')``: an
    int64 plan must then return Python ints rather than wrap around."""
    plan = GeometricPlan(ExpRatio(Fraction(1, 2**56)))
    assert plan.int64 and plan.value_bits == 62
    plan.top = Thresholds.of([Real.rational(Fraction(1, 2))], 64)  # test only: the top event half the time
    values = plan.draw(2000, ChaChaSource(bytes([56]) * 32))
    assert values.dtype == object
    vs = ints(values)
    assert min(vs) >= 0
    check_count(sum(v >= 2**62 for v in vs), 2000, Fraction(1, 2), Fraction(1, 2), "top event")


def test_dyadic_thresholds_are_exact_at_any_width() -> None:
    """q = 1/3 makes digit 0 exactly 1/4: decided at once, and the resolver (forced by a 4-bit
    width) answers it exactly; dyadic powers (3/4)**e are exact at every width."""
    plan = GeometricPlan(RationalRatio(Fraction(1, 3)), width=4)
    values = plan.draw(20_000, ChaChaSource(bytes([3]) * 32))
    # P(G = 0) = 2/3; P(G >= 2) = 1/9.
    check_count(int((values == 0).sum()), 20_000, Fraction(2, 3), Fraction(2, 3), "P(G = 0)")
    check_count(int((values >= 2).sum()), 20_000, Fraction(1, 9), Fraction(1, 9), "P(G >= 2)")
    real = RationalRatio(Fraction(3, 4)).power(128)
    for k in (64, 255, 256, 300):
        exact = Fraction(3**128, 4**128) * 2**k
        low = exact.numerator // exact.denominator
        assert real.floor_ceil(k) == (low, low if exact.denominator == 1 else low + 1)
    digit = RationalRatio(Fraction(7, 9)).digit(0)  # 7/16
    assert digit.floor_ceil(64) == (7 * 2**60, 7 * 2**60)


# ---------------------------------------------------------------- parameters that work or fail at once

FAST = 1.5  # seconds; the failures took 5.5 s before, and a success includes its first draw


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    try:
        result: Any = call()
    except Exception as exc:  # the exception is the result under test
        result = exc
    return time.perf_counter() - start, result


@pytest.mark.parametrize("name, call", [
    ("geometric p=2/3", lambda: samplers.geometric(p="2/3", size=10, rng=ChaChaSource(bytes(32)))),
    ("geometric p=6/7", lambda: samplers.geometric(p="6/7", size=10, rng=ChaChaSource(bytes(32)))),
    ("discrete_gaussian sigma=1e17", lambda: samplers.discrete_gaussian(sigma=1e17, size=10,
                                                                         rng=ChaChaSource(bytes(32)))),
    ("geometric p=1-1/10**5000", lambda: samplers.geometric(p=1 - Fraction(1, 10**5000), size=10,
                                                            rng=ChaChaSource(bytes(32)))),
    ("discrete_laplace 1e-400", lambda: samplers.discrete_laplace("1e-400", size=10, rng=ChaChaSource(bytes(32)))),
    ("bernoulli_exp 1e-5000", lambda: samplers.bernoulli_exp("1e-5000", size=10, rng=ChaChaSource(bytes(32)))),
])
def test_supported_extremes_succeed_at_once(name: str, call: Callable[[], Any]) -> None:
    elapsed, result = _timed(call)
    assert isinstance(result, np.ndarray), f"{name}: {result!r}"
    assert elapsed < FAST, f"{name} took {elapsed:.2f} s"


@pytest.mark.parametrize("name, call, words", [
    ("discrete_laplace 10**400", lambda: samplers.discrete_laplace(10**400), ["scale", "2**256"]),
    ("discrete_laplace 1e400", lambda: samplers.discrete_laplace("1e400"), ["scale", "2**256"]),
    ("geometric p=1/10**400", lambda: samplers.geometric(p=Fraction(1, 10**400)), ["p", "2**-256"]),
    ("geometric scale 2**300", lambda: samplers.geometric(2**300), ["scale", "2**256"]),
    ("discrete_gaussian 2**300", lambda: samplers.discrete_gaussian(sigma=2**300), ["sigma", "2**256"]),
    ("sum epsilon 1e-400", lambda: securedp.sum([0.0], bounds=(0, 1), epsilon="1e-400"), ["scale", "2**256"]),
    ("discrete_laplace -10**5000", lambda: samplers.discrete_laplace(-(10**5000)), ["scale", "> 0"]),
])
def test_unsupported_extremes_fail_at_once_clearly(name: str, call: Callable[[], Any], words: list[str]) -> None:
    elapsed, result = _timed(call)
    assert isinstance(result, ValueError), f"{name}: {result!r}"
    message = str(result)
    assert "\n" not in message and all(w in message for w in words), f"{name}: {message}"
    assert elapsed < FAST, f"{name} took {elapsed:.2f} s"
