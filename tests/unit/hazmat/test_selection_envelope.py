"""The exponent-group envelope of ExpCategorical: every float64 exponent is a rigorous bound.

``e_i`` must satisfy ``exp(-rate * g_i) <= 2**-e_i``, i.e. ``rate * g_i >= e_i * ln 2``; checked
here against MPFR with directed rounding (``ln 2`` rounded up at 256 bits), for random gaps and
rates, gaps whose ``t_i = rate * g_i / ln 2`` lies within ``1e-30`` of an integer (on both sides),
huge integer gaps, and float gaps with overflowing, subnormal and tiny differences. The envelope
must also be efficient: ``e_i >= t_i - 1 - 2**-14`` unless ``e_i = K``.
"""

from __future__ import annotations

from fractions import Fraction

import gmpy2
import numpy as np
import pytest

import securedp
from securedp import ChaChaSource
from securedp.hazmat.samplers.categorical import ExpCategorical, ExponentGroups
from securedp.hazmat.samplers.envelope import FloatGaps, envelope_exponents, exact_envelope_exponents, int64_fill

_CTX = {"precision": 256, "emax": gmpy2.get_emax_max(), "emin": gmpy2.get_emin_min()}
with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
    LN2_UP = gmpy2.log(2)
with gmpy2.context(round=gmpy2.RoundDown, **_CTX):
    LN2_DOWN = gmpy2.log(2)
LN2_ABOVE = Fraction(*(int(v) for v in LN2_UP.as_integer_ratio()))  # > ln 2, within 2**-255
LN2_BELOW = Fraction(*(int(v) for v in LN2_DOWN.as_integer_ratio()))  # < ln 2


def check(exponents, exact_gaps, rate: Fraction, K: int) -> None:
    for e, g in zip(exponents.tolist(), exact_gaps, strict=True):
        x = gmpy2.mpq(rate.numerator, rate.denominator) * gmpy2.mpq(g)
        assert 0 <= e <= K
        with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
            need = e * LN2_UP  # rate * g >= e ln 2 is implied by rate * g >= e * (ln 2 rounded up)
        assert x >= need, (g, rate, e)
        if e < K:  # efficiency: e >= t - 1 - 2**-14 with t = x / ln 2
            with gmpy2.context(round=gmpy2.RoundDown, **_CTX):
                t_low = x / LN2_UP
            assert e >= t_low - 1 - gmpy2.mpfr(2) ** -14, (g, rate, e)


def int_exponents(gaps: np.ndarray, rate: Fraction, K: int = 128) -> np.ndarray:
    if gaps.dtype == object:
        return exact_envelope_exponents(gaps, rate, K)
    return envelope_exponents(int64_fill(gaps), len(gaps), rate, K)


def test_random_integer_gaps_and_rates():
    rng = np.random.default_rng(1)  # test data only
    for _ in range(40):
        rate = Fraction(int(rng.integers(1, 10**6)), int(rng.integers(1, 10**9)))
        gaps = rng.integers(0, 2**int(rng.integers(1, 62)), 300)
        check(int_exponents(gaps, rate), gaps.tolist(), rate, 128)


@pytest.mark.parametrize("ln2", [LN2_ABOVE, LN2_BELOW])
@pytest.mark.parametrize("scale", [0, 7, 40])
def test_near_integer_t(ln2, scale):
    """rate = ln2' / 2**scale with ln2' within 2**-255 of ln 2: t_i = g_i / 2**scale (1 +- 2**-255)."""
    rate = ln2 / 2**scale
    gaps = np.array([k << scale for k in range(200)] + [(k << scale) + d for k in range(1, 140) for d in (-1, 1)],
                    dtype=np.int64)
    check(int_exponents(gaps, rate), gaps.tolist(), rate, 128)


def test_huge_integer_gaps_and_extreme_rates():
    small = np.array([0, 1, 3, 10**9, 2**53 + 1, 2**62, 2**63 - 1], dtype=np.int64)
    huge = np.array([0, 1, 3, 10**9, 2**62, 2**63 + 5, 2**300, 10**400, 2**2000 + 1], dtype=object)
    for rate in (Fraction(1), Fraction(1, 2**70), Fraction(1, 2**1100), Fraction(1, 3 * 2**1990),
                 Fraction(2**1100), Fraction(7, 10**300), LN2_BELOW / 2**64, Fraction(3, 2**1023)):
        check(int_exponents(huge, rate, 192), huge.tolist(), rate, 192)
        check(int_exponents(small, rate, 192), small.tolist(), rate, 192)


def test_float_gaps():
    for values in (np.array([0.0, -0.0, 5e-324, -5e-324, 1e-300, 2.0**-1022, 0.1, 1.0, 1000.0, -7e307, 8e307,
                             3.0, 2.0**60, -2.0**60 + 1024]),
                   np.array([5e-324, 0.0, -5e-324, 2.0**-1060, -2.0**-1030, 1e-310])):
        gaps = FloatGaps(values)
        assert gaps.finite
        exact = [gaps.exact(i) for i in range(len(values))]
        top = float(values.max())
        assert exact == [gmpy2.mpq(top) - gmpy2.mpq(v) for v in values.tolist()]
        for rate in (Fraction(1), Fraction(1, 2**1074), Fraction(1, 2**1200), Fraction(2**1074), Fraction(3, 7),
                     LN2_ABOVE * 2**1070, LN2_BELOW / 2**900, Fraction(2**999), Fraction(2**1100)):
            check(envelope_exponents(gaps.approx_into, len(values), rate, 128), exact, rate, 128)


def test_float_scores_spanning_more_than_dbl_max():
    """fl(top - v) would overflow: the plan switches to exact integer gaps and stays exact and efficient."""
    gaps = FloatGaps(np.array([1e308, -1e308, 1e308 - 2**970]))
    assert not gaps.finite
    plan = ExpCategorical(gaps, Fraction(1, 2**1000))
    assert plan.float_gaps is None and isinstance(plan.groups, ExponentGroups)
    source = ChaChaSource(bytes([73]) * 32)
    assert {plan.draw(source)[0] for _ in range(100)} <= {0, 2}


def test_float_gaps_near_integer_t():
    """Gaps k * 2**-40 exactly (floats), rate = ln 2 (+-) * 2**40: t within 2**-200 of k."""
    values = -np.arange(0, 300, dtype=np.float64) * 2.0**-40
    gaps = FloatGaps(values)
    exact = [gaps.exact(i) for i in range(len(values))]
    for ln2 in (LN2_ABOVE, LN2_BELOW):
        rate = ln2 * 2**40
        check(envelope_exponents(gaps.approx_into, len(values), rate, 256), exact, rate, 256)


def test_distinct_gaps_use_exponent_groups_and_stay_exact():
    """A plan over many distinct gaps has at most K + 1 groups; the far entries keep their mass."""
    gaps = np.concatenate((np.arange(0, 50_000, dtype=np.int64) * 7, np.array([10**15], dtype=np.int64)))
    plan = ExpCategorical(gaps, Fraction(1, 10**5))
    assert isinstance(plan.groups, ExponentGroups) and len(plan.ends) == plan.K + 1
    far = 1 if plan.tight_counts is None else int(plan.tight_counts[-1])  # its points: 1, or the tight count
    assert plan.ends[-1] - plan.ends[-2] == far  # the gap 10**15 (t > K): one envelope unit 2**-K a point
    assert plan.slow_path_bound < 2.0**-60


def test_exponent_groups_with_counts():
    """Counts in exponent mode: the envelope mass of a group is its total count times 2**(K - e)."""
    gaps = np.array([0, 5 * 10**5, 10**6, 10**12], dtype=np.int64)
    counts = np.array([3, 0, 2, 7], dtype=np.int64)
    plan = ExpCategorical(gaps, Fraction(1, 10**5), counts)
    assert isinstance(plan.groups, ExponentGroups)
    source = ChaChaSource(bytes([70]) * 32)
    for _ in range(200):
        i, j = plan.draw(source)
        assert counts[i] > 0 and 0 <= j < counts[i]


def test_hundred_thousand_distinct_float_scores_select_near_the_top():
    """Speed is measured in benchmarks/bench_selection.py; here, the selections are valid and sensible."""
    scores = np.linspace(0.0, 1000.0, 100_000)
    source = ChaChaSource(bytes([71]) * 32)
    winners = [securedp.exponential_mechanism(scores, epsilon=1, sensitivity=1, rng=source).value for _ in range(20)]
    assert all(isinstance(w, int) and 0 <= w < 100_000 for w in winners)
    assert min(scores[w] for w in winners) > 1000.0 - 40  # P(gap > 40) < 100000 * exp(-20)


def test_float_scores_bad_input_names_the_index():
    for scores in ([1.0, 2.0, float("nan")], np.array([1.0, np.inf, 0.0]), np.array([-np.inf, 1.0])):
        source = ChaChaSource(bytes(32))
        with pytest.raises(ValueError, match=r"scores\[\d\] must be finite"):
            securedp.exponential_mechanism(scores, epsilon=1, sensitivity=1, rng=source)
        assert source.bytes_served == 0


def test_prepared_float_scores_do_not_see_later_edits():
    scores = np.array([0.0, -1000.0, -1000.5])
    prepared = securedp.prepare_exponential_mechanism(scores, epsilon=1, sensitivity=1)
    scores[:] = [-1000.0, 0.0, -3.0]
    source = ChaChaSource(bytes([72]) * 32)
    assert {prepared.execute(source).value for _ in range(50)} == {0}
