"""Empirical frequencies of the selection mechanisms against their exact laws.

Each test draws ``N`` selections from a fixed ChaCha seed and runs a G-test
against the exact law (:mod:`_selection_laws`, enclosures at 256 bits), bins
with expected count < 5 pooled. A correct sampler fails with probability
< 1e-6 per test; the seeds are fixed, so a test is deterministic.
"""

from __future__ import annotations

from bisect import bisect_left
from fractions import Fraction

import numpy as np
import pytest
from _selection_laws import exponential_law, noisy_max_pair_law, permute_and_flip_law, quantile_law, quantile_score
from scipy import stats

import securedp
from securedp import ChaChaSource
from securedp.mechanisms.record_rules import EXPONENTIAL, PERMUTE_AND_FLIP, RecordRules, rules_scope

ALPHA = 1e-6


def g_test(observed: np.ndarray, law) -> float:
    expected = np.array([float(lo + hi) / 2 for lo, hi in law]) * observed.sum()
    order = np.argsort(expected)
    obs, exp, pooled_o, pooled_e = [], [], 0, 0.0
    for i in order:  # pool the smallest bins until each expects >= 5
        pooled_o += observed[i]
        pooled_e += expected[i]
        if pooled_e >= 5:
            obs.append(pooled_o)
            exp.append(pooled_e)
            pooled_o, pooled_e = 0, 0.0
    if pooled_e and exp:
        obs[-1] += pooled_o
        exp[-1] += pooled_e
    assert pooled_o == 0 or exp, "too few samples"
    exp_arr = np.array(exp) * (observed.sum() / sum(exp))
    if len(obs) < 2:
        return 1.0
    return float(stats.power_divergence(np.array(obs), exp_arr, lambda_="log-likelihood").pvalue)


def frequencies(draw, n: int, size: int) -> np.ndarray:
    return np.bincount([draw() for _ in range(n)], minlength=size)


SCORE_CASES = [
    ([0, -1, -2, 5, 5, Fraction(-3, 2)], Fraction(1), Fraction(1), False),
    (["0.1", "0.25", "-0.5", "3"], Fraction(2), Fraction(1, 2), False),
    ([2**300, 2**300 - 1, 2**300 - 2, 2**300 - 10], Fraction(1), Fraction(1), True),
    ([0, -1000, -2, -3], Fraction(2), Fraction(1), False),
]


@pytest.mark.parametrize("case", range(len(SCORE_CASES)))
def test_exponential_mechanism_law(case):
    scores, eps, sens, monotonic = SCORE_CASES[case]
    exact = [securedp.hazmat.exact.to_rational(s, "s") for s in scores]
    law = exponential_law(exact, eps / (sens if monotonic else 2 * sens))
    prepared = securedp.prepare_exponential_mechanism(scores, epsilon=eps, sensitivity=sens, monotonic=monotonic)
    source = ChaChaSource(bytes([20 + case]) * 32)
    observed = frequencies(lambda: prepared.execute(source).value, 30000, len(scores))
    assert g_test(observed, law) > ALPHA


def test_exponential_mechanism_law_many_candidates():
    scores = [k % 37 for k in range(2000)]
    law = exponential_law([Fraction(s) for s in scores], Fraction(1, 4))
    prepared = securedp.prepare_exponential_mechanism(np.array(scores), epsilon="0.5", sensitivity=1)
    source = ChaChaSource(bytes([40]) * 32)
    winners = [prepared.execute(source).value for _ in range(20000)]
    # group candidates by score (equal scores are exchangeable) and also check the split inside a group
    by_score = np.bincount([scores[w] for w in winners], minlength=37)
    group_law = [(sum(law[i][0] for i in range(k, 2000, 37)), sum(law[i][1] for i in range(k, 2000, 37)))
                 for k in range(37)]
    assert g_test(by_score, group_law) > ALPHA
    top = [w for w in winners if scores[w] == 36]
    inside = np.bincount([w // 37 for w in top], minlength=54)
    assert stats.chisquare(inside).pvalue > ALPHA


def test_permute_and_flip_law():
    scores = [Fraction(0), Fraction(-1), Fraction(-3), Fraction(-1, 2)]
    law = permute_and_flip_law(scores, Fraction(1, 2))
    prepared = securedp.prepare_permute_and_flip(scores, epsilon=1, sensitivity=1)
    source = ChaChaSource(bytes([41]) * 32)
    assert g_test(frequencies(lambda: prepared.execute(source).value, 30000, 4), law) > ALPHA


@pytest.mark.parametrize("data, q, lo, hi, eps", [
    ([1, 3, 3, 7], Fraction(1, 2), 0, 9, Fraction(2)),
    ([0, 0, 5, 9, 9, 9], Fraction(1, 3), 0, 12, Fraction(1)),
    ([], Fraction(1, 2), -3, 3, Fraction(1)),
    ([2, 4, 6], Fraction(1), 0, 8, Fraction(3)),
    ([2, 4, 6, 6], Fraction(0), 0, 8, Fraction(1)),                # monotone: rate epsilon / m
    ([1, 4, 4, 4, 4, 4, 8], Fraction(1, 2), 0, 9, Fraction(1)),    # a tie block holding the median
    ([3, 3, 3, 3, 5, 5, 5, 5], Fraction(3, 4), 0, 7, Fraction(1, 2)),
    ([0, 9, 9], Fraction(9, 10), 0, 9, Fraction(4)),
])
@pytest.mark.parametrize("rule", [EXPONENTIAL, PERMUTE_AND_FLIP])
def test_quantile_law(data, q, lo, hi, eps, rule):
    """The default fallback (probability 3/4): the reference law holds its atom at ``f``; by each draw (priced in
    epsilon over so few candidates, permute-and-flip; the exponential mechanism under the earlier rule)."""
    law = quantile_law(data, q, lo, hi, eps, flip=rule == PERMUTE_AND_FLIP)
    with rules_scope(RecordRules(quantile_draw=rule)):
        prepared = securedp.prepare_quantile(data, q, bounds=(lo, hi), lattice=1, epsilon=eps)  # the law: step 1
    source = ChaChaSource(bytes([42 + len(data)]) * 32)
    observed = frequencies(lambda: prepared.execute(source).value - lo, 30000, hi - lo + 1)
    assert g_test(observed, law) > ALPHA


@pytest.mark.parametrize("data, q, fallback", [
    ([1, 4, 4, 4, 4, 4, 8], Fraction(1, 2), Fraction(0)),       # no fallback: the plain exponential mechanism
    ([2, 3, 3], Fraction(1, 2), Fraction(1, 2)),                # few records: the atom at 4 is drawn often
    ([0, 1, 1, 2], Fraction(1, 4), Fraction(99, 100)),           # the atom at lo + (hi - lo) / 4 = 2, weight 891
    ([5, 6, 7, 7, 8], Fraction(1), Fraction(9, 10)),             # a monotone level: the atom at hi
])
def test_quantile_law_with_a_fallback(data, q, fallback):
    """``fallback=`` sets the atom's weight ``W = floor(N p / (1 - p))``; its score is ``max(a, b - a) n``."""
    lo, hi, eps = 0, 8, Fraction(1)
    law = quantile_law(data, q, lo, hi, eps, fallback=fallback, flip=True)  # epsilon, 9 candidates: permute-and-flip
    prepared = securedp.prepare_quantile(data, q, bounds=(lo, hi), lattice=1, epsilon=eps, fallback=fallback)
    source = ChaChaSource(bytes([90 + len(data)]) * 32)
    observed = frequencies(lambda: prepared.execute(source).value - lo, 30000, hi - lo + 1)
    assert g_test(observed, law) > ALPHA
    if fallback:  # not vacuous: the atom moves the law (the plain one fails)
        assert g_test(observed, quantile_law(data, q, lo, hi, eps, fallback=Fraction(0), flip=True)) < ALPHA


@pytest.mark.parametrize("data, q, far, fallback", [
    ([1, 4, 4, 6, 9], Fraction(1, 2), 3, Fraction(0)),      # the far entry on both sides of the median's run
    ([2, 2, 2, 3, 11], Fraction(1, 4), 2, Fraction(0)),     # a tie block holding the target: a run of one point
    ([0, 1, 12], Fraction(9, 10), 5, Fraction(0)),
    ([1, 4, 4, 6, 9], Fraction(1, 2), 3, Fraction(3, 4)),   # the fallback beside the far entry (the atom at 6)
    ([0, 1, 12], Fraction(9, 10), 5, Fraction(9, 10)),      # the atom (at 11) scored above far: h = 9 * 3 = 27
])
def test_a_window_with_a_low_far_score_keeps_the_quantile_law(data, q, far, fallback):
    """The far entry's rejection step, exercised: a :class:`Window` whose far score is low enough that half or more
    of the proposals are far candidates (each kept with probability ``exp(-rate (g - far))``, else the draw starts
    again) must still give ``P(y) ~ exp(-rate g(y))`` over every candidate ``0 .. 12``, and the fallback entry its
    ``W exp(-rate h)`` at its point."""
    from securedp.hazmat.samplers.categorical import ExpCategorical
    from securedp.mechanisms.quantile import _select
    from securedp.mechanisms.rank_utility import LevelLaw, Window, fallback_weight

    lo, hi, eps = 0, 12, Fraction(1)
    rate = LevelLaw(q, eps, 1).rate
    points = sorted(set(data))
    window = Window(points, [data.count(p) for p in points], lo, hi, q, far, fallback_weight(fallback, hi - lo + 1),
                    LevelLaw(q, eps, 1).tie_margin)  # the oracle computes the same margin from its definition
    assert window.far_entry is not None and window.far_width >= 4
    assert (window.fallback_entry is not None) == (fallback > 0)
    plan = ExpCategorical(window.scores, rate, window.widths)
    source = ChaChaSource(bytes([77 + far + fallback.denominator]) * 32)
    observed = frequencies(lambda: _select(window, rate, plan, source) - lo, 30000, hi - lo + 1)
    assert g_test(observed, quantile_law(data, q, lo, hi, eps, fallback=fallback)) > ALPHA


CELLS = 100
"""Groups of the table below: each a copy of the same six rows, so one release draws ``CELLS`` selections."""


@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(1), Fraction(1, 4)])
def test_quantile_law_with_two_rows_per_person(q):
    """``max_rows = 2``: the rate is ``epsilon / (2 * 2 max(a, b - a))`` (``epsilon / 2`` for q = 1).

    The persons of a release by ids go through the salted bounding pass at every execution (milliseconds), so
    the draws come from a table of ``CELLS`` public keys, each holding the same six rows of its own persons
    (``max_groups = 1``): its cells' selections are independent draws of one law, that of the one-column
    release with ``ids=`` and ``max_contributions=2`` (the same route:
    ``tests/unit/mechanisms/test_one_definition.py``).
    """
    data, ids = [1, 1, 2, 5, 5, 6], [1, 1, 2, 3, 3, 4]  # nobody has more than 2 rows: none is dropped
    law = quantile_law(data, q, 0, 7, Fraction(2), sensitivity=2, flip=True)  # epsilon, 8 candidates
    frame = {"g": [g for g in range(CELLS) for _ in data], "x": data * CELLS,
             "p": [g * 10 + i for g in range(CELLS) for i in ids]}
    prepared = securedp.tables.prepare_table(
        frame, group_by=["g"], keys=list(range(CELLS)), id_column="p", max_groups=1, max_rows=2, epsilon=2,
        aggregations=[securedp.tables.Quantile("x", (0, 7), lattice=1, q=q)])
    source = ChaChaSource(bytes([60 + q.denominator]) * 32)
    drawn = [int(row[1]) for _ in range(30000 // CELLS) for row in prepared.execute(source).value]
    assert len(drawn) == 30000 and g_test(np.bincount(drawn, minlength=8), law) > ALPHA


def test_median_on_the_default_lattice_by_entry():
    """The default lattice of a float column on (0, 1): 2**20 steps. The law over the entries (open gaps and record
    points, each weighted by its number of lattice points) is checked exactly, and the point inside the likeliest
    gap is uniform."""
    data = [0.1, 0.25, 0.25, 0.7, 0.9]
    prepared = securedp.prepare_median(data, bounds=(0, 1), epsilon=3)
    source = ChaChaSource(bytes([61]) * 32)
    draws = [prepared.execute(source) for _ in range(20000)]
    record = draws[0].parameters["data_median"]
    step, (lo_u, hi_u) = record["lattice_step"], record["bounds_units"]
    assert step == Fraction(1, 2**20) and record["rate"] == Fraction(3, 2)
    points = sorted({securedp.Lattice(step).units(x) for x in data})
    units = [securedp.Lattice(step).units(x) for x in data]
    ends = [lo_u - 1, *points, hi_u + 1]
    widths, scores = [], []
    for j in range(len(points) + 1):  # gap j, then point j + 1
        widths.append(ends[j + 1] - ends[j] - 1)
        scores.append(-Fraction(quantile_score(units, Fraction(1, 2), ends[j] + 1)))
        if j < len(points):
            widths.append(1)
            scores.append(-Fraction(quantile_score(units, Fraction(1, 2), points[j])))
    # the fallback: weight 3 N (probability 3/4) at the middle (2**19, inside a gap) scored n = 5, an entry of its own
    fallback = (lo_u + hi_u) // 2
    widths.append(3 * (hi_u - lo_u + 1))
    scores.append(-Fraction(len(data)))
    law = exponential_law(scores, Fraction(3, 2), widths)
    assert fallback not in points and record["fallback_units"] == fallback
    drawn = [int(r.value / step) for r in draws]
    entry = [2 * bisect_left(points, u) + (u in points) for u in drawn]
    # a draw of the fallback point is the atom's (the lattice point itself has odds about 2**-20 against it)
    entry = [len(law) - 1 if u == fallback else i for u, i in zip(drawn, entry, strict=True)]
    assert g_test(np.bincount(entry, minlength=len(law)), law) > ALPHA
    likeliest = max(range(0, len(law) - 1, 2), key=lambda i: law[i][0])
    start = ends[likeliest // 2] + 1
    inside = [(u - start) * 16 // widths[likeliest] for u, i in zip(drawn, entry, strict=True) if i == likeliest]
    assert len(inside) > 1000 and stats.chisquare(np.bincount(inside, minlength=16)).pvalue > ALPHA


def test_median_on_a_fractional_lattice():
    """Lattice step 1/4 on [0, 2]: the candidates are the 9 points k/4, data rounded onto them."""
    data = ["0.25", "0.5", "1.75"]
    law = quantile_law([1, 2, 7], Fraction(1, 2), 0, 8, Fraction(3), flip=True)  # epsilon, 9 candidates
    prepared = securedp.prepare_median(data, bounds=(0, 2), lattice="0.25", epsilon=3)
    source = ChaChaSource(bytes([50]) * 32)
    observed = frequencies(lambda: int(prepared.execute(source).value * 4), 30000, 9)
    assert g_test(observed, law) > ALPHA


@pytest.mark.parametrize("scores, eps, gap", [
    ([0, 2], Fraction(1), 2 * 4096),            # snapped to 0 and 8192 steps of 1/4096
    (np.array([1e-5, 1.0]), Fraction(1), 4096),  # 1e-5 snaps to 0: the lattice is public, not the scores' unit
    (["1/3", "0.5"], Fraction(1, 2), 683),       # 4096/3 -> 1365, 2048 (ties to even: 1365.33 -> 1365)
])
def test_report_noisy_max_law(scores, eps, gap):
    """Two candidates: candidate 0 wins iff c0 + Z0 >= c1 + Z1, i.e. Z0 - Z1 >= c1 - c0 (closed form)."""
    lo, hi = noisy_max_pair_law(gap, Fraction(2 * 4096) / eps)
    p0 = float((lo + hi) / 2)
    prepared = securedp.prepare_report_noisy_max(scores, epsilon=eps, sensitivity=1)
    assert prepared.execute(ChaChaSource(bytes(32))).parameters["noise_scale"] == 2 / eps
    source = ChaChaSource(bytes([51 + gap % 7]) * 32)
    wins0 = sum(prepared.execute(source).value == 0 for _ in range(30000))
    assert stats.binomtest(wins0, 30000, p0).pvalue > ALPHA


# -- exponent groups (many distinct gaps: rational scores on a fine unit, float scores) -------------

EXPONENT_CASES = [
    # distinct rationals on the unit 1/1000003: the far boundary is ~10**8, so exponent groups are used
    ([Fraction(k * k % 41, 7) + Fraction(k, 1000003) for k in range(12)] + [Fraction(-200)], Fraction(1)),
    ([Fraction(3, 1000003), Fraction(-1, 3), Fraction(-2, 3), Fraction(-7, 5), Fraction(-1, 1000003),
      Fraction(-11, 10), Fraction(-3, 2), Fraction(-140, 1)], Fraction(2)),
]


@pytest.mark.parametrize("case", range(len(EXPONENT_CASES)))
def test_exponential_mechanism_law_with_exponent_groups(case):
    scores, eps = EXPONENT_CASES[case]
    prepared = securedp.prepare_exponential_mechanism(scores, epsilon=eps, sensitivity=1)
    from securedp.hazmat.samplers.categorical import ExpCategorical
    from securedp.hazmat.samplers.groups import ExponentGroups
    from securedp.mechanisms.scores import parse_scores
    gaps, unit = parse_scores(scores).sampler_gaps()
    assert isinstance(ExpCategorical(gaps, eps * unit / 2).groups, ExponentGroups)
    law = exponential_law(scores, eps / 2)
    source = ChaChaSource(bytes([80 + case]) * 32)
    assert g_test(frequencies(lambda: prepared.execute(source).value, 30000, len(scores)), law) > ALPHA


def test_exponential_mechanism_law_with_float_scores():
    """Float scores of very different binary exponents, sampled through their float64 gaps."""
    values = [0.1, 1.7, 3.14159, -2.5, 1e-300, 5e-324, 2.0**-60, 2.9999999999999996, 3.1415900000000003, -90.0]
    law = exponential_law([Fraction(v) for v in values], Fraction(1))
    for scores, seed in ((np.array(values), 90), (values, 91)):
        prepared = securedp.prepare_exponential_mechanism(scores, epsilon=2, sensitivity=1)
        source = ChaChaSource(bytes([seed]) * 32)
        draw = lambda prepared=prepared, source=source: prepared.execute(source).value  # bound to this pass
        assert g_test(frequencies(draw, 30000, len(values)), law) > ALPHA


def test_exponent_groups_with_counts_law():
    """P(i) proportional to m_i exp(-rate g_i) in exponent mode, and the offset uniform inside m_i."""
    from securedp.hazmat.samplers.categorical import ExpCategorical
    from securedp.hazmat.samplers.groups import ExponentGroups
    gaps = np.array([0, 70001, 150000, 9 * 10**5, 3 * 10**5, 10**10], dtype=np.int64)
    counts = np.array([1, 3, 0, 1000, 5, 4], dtype=np.int64)
    rate = Fraction(1, 100003)
    plan = ExpCategorical(gaps, rate, counts)
    assert isinstance(plan.groups, ExponentGroups)
    law = exponential_law([-rate * int(g) for g in gaps], Fraction(1), multiplicity=[int(c) for c in counts])
    source = ChaChaSource(bytes([92]) * 32)
    draws = [plan.draw(source) for _ in range(30000)]
    assert g_test(np.bincount([i for i, _ in draws], minlength=len(gaps)), law) > ALPHA
    offsets = np.bincount([j for i, j in draws if i == 3], minlength=1000)
    assert stats.chisquare(offsets.reshape(10, 100).sum(axis=1)).pvalue > ALPHA


def test_permute_and_flip_law_with_exponent_groups():
    scores = [Fraction(0), Fraction(-1, 1000003), Fraction(-3), Fraction(-1, 2)]
    law = permute_and_flip_law(scores, Fraction(1, 2))
    prepared = securedp.prepare_permute_and_flip(scores, epsilon=1, sensitivity=1)
    source = ChaChaSource(bytes([93]) * 32)
    assert g_test(frequencies(lambda: prepared.execute(source).value, 30000, 4), law) > ALPHA
