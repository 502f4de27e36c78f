"""Unit tests of the exact selection mechanisms: inputs, underflow, absorption, exact thresholds."""

from __future__ import annotations

from fractions import Fraction

import gmpy2
import numpy as np
import pytest

import securedp
from securedp import ChaChaSource
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.samplers.categorical import ExpCategorical
from securedp.mechanisms.scores import parse_scores


class ScriptedSource(RandomSource):
    """Serves ``prefix`` and then zero bytes forever (to steer a draw onto a chosen uniform)."""

    def __init__(self, prefix: bytes) -> None:
        super().__init__()
        self._data = prefix
        self._pos = 0

    def _generate(self, n: int) -> bytes:
        chunk = self._data[self._pos:self._pos + n]
        self._pos += n
        return chunk + bytes(n - len(chunk))

    def describe(self) -> dict:
        return {"kind": "scripted"}


def words_for_bits(x: int, nwords: int) -> bytes:
    """The words whose concatenation (first word most significant) is the integer ``x``."""
    out = b""
    for i in range(nwords):
        out += ((x >> (64 * (nwords - 1 - i))) & ((1 << 64) - 1)).to_bytes(8, "little")
    return out


def seed(n: int) -> ChaChaSource:
    return ChaChaSource(bytes([n]) * 32)


# -- bad input fails before anything is drawn or charged -------------------------------------------

BAD = [
    (securedp.exponential_mechanism, ([],), {"epsilon": 1, "sensitivity": 1}, ValueError),
    (securedp.exponential_mechanism, ([1.0, float("nan")],), {"epsilon": 1, "sensitivity": 1}, ValueError),
    (securedp.exponential_mechanism, (np.array([1.0, np.nan]),), {"epsilon": 1, "sensitivity": 1}, ValueError),
    (securedp.exponential_mechanism, ([1, 2],), {"epsilon": 0, "sensitivity": 1}, ValueError),
    # a text is one value, not a sequence of its characters (refused as such since 2026-11-28; "a" was a
    # ValueError only because 1 candidate met 2 scores, and "ab" was taken as the candidates "a" and "b")
    (securedp.exponential_mechanism, ([1, 2],), {"epsilon": 1, "sensitivity": 1, "candidates": "a"}, TypeError),
    (securedp.exponential_mechanism, ([1, 2],), {"epsilon": 1, "sensitivity": 1, "candidates": "ab"}, TypeError),
    (securedp.exponential_mechanism, ([1, 2],), {"epsilon": 1, "sensitivity": 1, "candidates": ["a"]}, ValueError),
    (securedp.exponential_mechanism, ([True, 2],), {"epsilon": 1, "sensitivity": 1}, TypeError),
    (securedp.permute_and_flip, ([],), {"epsilon": 1, "sensitivity": 1}, ValueError),
    (securedp.report_noisy_max, ([1, float("inf")],), {"epsilon": 1, "sensitivity": 1}, ValueError),
    (securedp.median, ([1, 2],), {"bounds": (5, 0), "epsilon": 1}, ValueError),
    (securedp.median, ([1, 2],), {"epsilon": 1}, TypeError),
    (securedp.quantile, ([1, 2], "1.5"), {"bounds": (0, 5), "epsilon": 1}, ValueError),
    (securedp.quantile, ([1, 2], -0.25), {"bounds": (0, 5), "epsilon": 1}, ValueError),
    (securedp.quantiles, ([1, 2], []), {"bounds": (0, 5), "epsilon": 1}, ValueError),
    (securedp.median, ([1, float("nan")],), {"bounds": (0, 5), "epsilon": 1}, ValueError),
]


@pytest.mark.parametrize("fn, args, kwargs, error", BAD)
def test_bad_input_raises_before_drawing(fn, args, kwargs, error):
    source = seed(1)
    with pytest.raises(error):
        fn(*args, **kwargs, rng=source)
    assert source.bytes_served == 0


@pytest.mark.parametrize("method, args, kwargs", [
    ("exponential_mechanism", ([],), {"epsilon": 1, "sensitivity": 1}),
    ("median", ([1, 2],), {"bounds": (3, 1), "epsilon": 1}),
    ("quantile", ([1, 2], 2), {"bounds": (0, 3), "epsilon": 1}),
    ("permute_and_flip", ([1, "x"],), {"epsilon": 1, "sensitivity": 1}),
])
def test_session_charges_nothing_on_bad_input(method, args, kwargs):
    session = securedp.Session(epsilon=1)
    with pytest.raises((ValueError, TypeError)):
        getattr(session, method)(*args, **kwargs)
    assert session.spent == 0


def test_session_charges_exact_epsilon():
    session = securedp.Session(epsilon=2)
    session.median([1, 2, 3], bounds=(0, 4), epsilon="0.5")
    session.quantiles([1, 2, 3], ["1/4", "3/4"], bounds=(0, 4), epsilon="0.5")
    session.exponential_mechanism([1, 2], epsilon="1/4", sensitivity=1)
    session.report_noisy_max([1, 2], epsilon="1/8", sensitivity=1)
    session.permute_and_flip([1, 2], epsilon="1/8", sensitivity=1)
    assert session.spent == Fraction(3, 2)


# -- exact scores ----------------------------------------------------------------------------------

def test_scores_are_exact():
    s = parse_scores(np.array([0.1, 0.2, -3.0]))
    assert [Fraction(int(u)) * s.unit for u in s.units] == [Fraction(0.1), Fraction(0.2), Fraction(-3)]
    s = parse_scores(["0.1", Fraction(1, 3), 2])
    assert [Fraction(int(u)) * s.unit for u in s.units] == [Fraction(1, 10), Fraction(1, 3), Fraction(2)]
    big = parse_scores([2**300, 2**300 - 1, -2**400])
    assert list(big.gaps()) == [0, 1, 2**300 + 2**400]


def test_release_values_and_candidates():
    r = securedp.exponential_mechanism([0, 10**6], epsilon=1, sensitivity=1, candidates=["a", "b"], rng=seed(2))
    assert r.value == "b" and r.epsilon == 1 and r.mechanism == "exponential"
    r = securedp.exponential_mechanism(lambda data, c: -abs(sum(data) - c), epsilon=10, sensitivity=1,
                                       candidates=range(20), data=[3, 4], rng=seed(3))
    assert r.value in range(20)
    r = securedp.median([0.25, 0.5, 0.75], bounds=(0, 1), lattice="0.25", epsilon=1, rng=seed(4))
    assert r.value in {Fraction(k, 4) for k in range(5)}
    assert isinstance(securedp.median([1, 2], bounds=(0, 9), lattice=1, epsilon=1, rng=seed(5)).value, int)
    r = securedp.quantiles([1, 2, 3], [0, "1/2", 1], bounds=(0, 9), lattice=1, epsilon=3, rng=seed(6))
    assert len(r.value) == 3 and r.labels == (0, Fraction(1, 2), 1)


# -- underflow and absorption ----------------------------------------------------------------------

def test_huge_gaps_keep_a_nonzero_probability():
    """exp(-10**9) and exp(-2**300) are not rounded to zero: their entries keep envelope mass.

    (Masses are in units of 2**-(K + 64) since slot envelopes are tight: a far entry weighs 2**64 units.)
    """
    plan = ExpCategorical(np.array([0, 10**9], dtype=np.int64), Fraction(1, 2))
    assert plan.ends[-1] - plan.ends[-2] == 1 << 64 and plan.table.hi[-1] == 1
    plan = ExpCategorical(np.array([0, 2**300], dtype=object), Fraction(1))
    assert plan.ends[-1] - plan.ends[-2] == 1 << 64


@pytest.mark.parametrize("gaps", [np.array([3, 0, 1, 900, 2], dtype=np.int64),
                                  np.array([3, 0, 1, 900, 2], dtype=object)], ids=["int64 gaps", "object gaps"])
def test_object_counts_draw_as_their_int64_values(gaps):
    """Counts too wide for int64 in a whole range (an object array: a lattice of 2**61 points) may sum below
    2**53 over the near entries: they were handed to ``np.bincount`` as object weights, which NumPy refuses,
    so a median over such a lattice failed after its first random bit whenever the data held a record (a
    neighbour without records released). Object counts draw the same (entry, point) pairs as int64 ones."""
    counts = [5, 1, 2, 2**61, 7]
    for rate in (Fraction(500), Fraction(1, 3)):  # far slot (dense table) and envelope groups
        wide = ExpCategorical(gaps, rate, np.array(counts, dtype=object))
        narrow = ExpCategorical(gaps.astype(np.int64), rate, np.array(counts, dtype=np.int64))  # 2**61 fits
        a, b = ChaChaSource(bytes(32)), ChaChaSource(bytes(32))
        assert [wide.draw(a) for _ in range(200)] == [narrow.draw(b) for _ in range(200)]
    small = [5, 1, 2, 3, 7]  # object counts whose total is below 2**53 too
    wide = ExpCategorical(gaps, Fraction(1, 3), np.array(small, dtype=object))
    narrow = ExpCategorical(gaps.astype(np.int64), Fraction(1, 3), np.array(small, dtype=np.int64))
    a, b = ChaChaSource(bytes(32)), ChaChaSource(bytes(32))
    assert [wide.draw(a) for _ in range(200)] == [narrow.draw(b) for _ in range(200)]


@pytest.mark.parametrize("data", [[], [5], [5, -7, 2**59]], ids=["none", "one", "three"])
def test_a_median_over_a_lattice_wider_than_int64_releases_with_or_without_records(data):
    """Neighbouring datasets, one outcome class: a median over bounds (-2**60, 2**60) at step 1 (2**61 + 1
    candidates) at epsilon 500 released on empty data and failed after its charge with one record."""
    b = 2**60
    value = securedp.median(data, bounds=(-b, b), lattice=1, epsilon=500, rng=ChaChaSource(bytes(32))).value
    assert -b <= value <= b
    if data == [5]:
        assert value == 5  # at epsilon 500 the one record's point wins


@pytest.mark.parametrize("above, expected", [(False, 1), (True, 0)])
def test_underflowing_candidate_is_chosen_exactly_at_its_threshold(above, expected):
    """Steer the uniform to just below / just above exp(-1000) * 2**K: the decision is exact.

    exp(-1000) underflows a double; here it is the acceptance threshold of the far slot, and a
    uniform that agrees with it on its first 1,600 bits is still classified correctly.
    """
    plan = ExpCategorical(np.array([0, 1000], dtype=np.int64), Fraction(1))
    assert plan.K == 128 and plan.total == (1 << 192) + (1 << 64)  # units of 2**-(K + 64): gap 0 weighs 2**192
    width = plan.total_bits + 64  # the proposal reads x of this many bits and takes floor(x * total / 2**width)
    x = (((1 << 193) + 1) << width) // (2 * plan.total)  # x * total / 2**width near 2**192 + 1/2: the far slot
    assert (x * plan.total) >> width == 1 << 192 and (x * plan.total) % (1 << width) < (1 << width) - plan.total  # kept
    proposal = x.to_bytes((width + 7) // 8, "little")
    nwords = 25
    with gmpy2.context(precision=4000, round=gmpy2.RoundDown):
        threshold = int(gmpy2.floor(gmpy2.exp(-1000) * gmpy2.mpfr(2) ** (128 + 64 * nwords)))
    # U = bits / 2**(64 nwords) followed by zero bits: just below c, or just above it.
    bits = threshold + 1 if above else threshold - 1
    source = ScriptedSource(proposal + words_for_bits(bits, nwords))
    assert plan.draw(source)[0] == expected


def test_absorption_vector_is_resolved():
    """Scores 2**300 - k are equal as doubles; exactly they differ, and so do their frequencies."""
    scores = [2**300, 2**300 - 1, 2**300 - 2]
    counts = np.bincount([securedp.exponential_mechanism(scores, epsilon=2, sensitivity=1, rng=src).value
                          for src in [seed(7)] for _ in range(3000)], minlength=3)
    assert counts[0] > counts[1] > counts[2] > 0


def test_envelope_is_permutation_invariant():
    rng = np.random.default_rng(0)  # test data only
    scores = rng.integers(-50, 50, 500)
    a = ExpCategorical(parse_scores(scores).gaps(), Fraction(1, 3))
    b = ExpCategorical(parse_scores(scores[rng.permutation(500)]).gaps(), Fraction(1, 3))
    assert a.ends == b.ends and a.total == b.total


def test_slow_path_bound_is_negligible():
    plan = ExpCategorical(np.arange(10**5, dtype=np.int64) % 1000, Fraction(1, 2))
    assert plan.slow_path_bound < 2.0**-60
    assert plan.table.window <= 2


def test_large_instances_run():
    scores = (np.arange(10**6, dtype=np.int64) * 7919) % 10**9
    r = securedp.exponential_mechanism(scores, epsilon=1, sensitivity=1, rng=seed(8))
    assert scores[r.value] > 10**9 - 10**5
    assert securedp.exponential_mechanism([0, 10**9], epsilon=1, sensitivity=1, rng=seed(9)).value == 1
    many_bits = [2**400 + 3 * k for k in range(100)]
    r = securedp.permute_and_flip(many_bits, epsilon=1, sensitivity=1, rng=seed(10))
    assert r.value >= 90
    r = securedp.report_noisy_max(many_bits, epsilon=1, sensitivity=1, rng=seed(11))
    assert r.value >= 90


def test_median_on_huge_bounds_and_records():
    data = [10**400, -10**400, 5, Fraction(10**300 + 1, 3)]
    r = securedp.median(data, bounds=(-2**61, 2**61), epsilon=1, rng=seed(12))
    assert -2**61 <= r.value <= 2**61
    with pytest.raises(ValueError, match="2\\*\\*62 lattice units"):  # public bounds past the engines' units
        securedp.median(data, bounds=(-2**70, 2**70), lattice=1, epsilon=1, rng=seed(12))
    wide = securedp.median(data, bounds=(-2**70, 2**70), epsilon=1, rng=seed(12))  # default: 2**20 steps of 2**51
    assert wide.parameters["data_median"]["lattice_step"] == 2**51 and -2**70 <= wide.value <= 2**70
