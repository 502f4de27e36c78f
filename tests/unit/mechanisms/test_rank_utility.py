"""The quantiles' score, its entries, its sensitivity and rate, and the default lattice (issue 26, items 1-3).

The score is checked against its definition ``g(y) = max(0, b #{x < y} - a n, a n - b #{x <= y})``
(``tests/statistical/_selection_laws.py``) candidate by candidate, and its sensitivity
``m max(a, b - a)`` on every neighbour (up to ``m`` rows added) of hypothesis-drawn data.
"""

from __future__ import annotations

import sys
from collections import Counter
from fractions import Fraction
from itertools import accumulate
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp
from securedp import ChaChaSource
from securedp.mechanisms.quantile import QUANTILE_RESOLUTION, default_lattice
from securedp.mechanisms.rank_utility import (
    CAPPED_UTILITY,
    UTILITY,
    LevelLaw,
    Window,
    rank_error_bound,
)
from securedp.mechanisms.record_rules import RecordRules, rules_scope

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "statistical"))
from _selection_laws import quantile_rate, quantile_score


@st.composite
def levels(draw: st.DrawFn) -> Fraction:
    b = draw(st.integers(1, 12))
    return Fraction(draw(st.integers(0, b)), b)


def expanded(data: list[int], lo: int, hi: int, q: Fraction, far: int = 10**9) -> list[int]:
    """The library's score of every candidate ``lo .. hi``, expanded from the window's near entries (each scoring
    less than ``far``) and its far candidates (each scoring ``far`` or more, by :meth:`Window.score_at`)."""
    tally = sorted(Counter(data).items())
    window = Window([p for p, _ in tally], [c for _, c in tally], lo, hi, q, far)
    near = len(window.scores) - (window.far_entry is not None)
    assert int(window.widths.sum()) == hi - lo + 1
    out: dict[int, int] = {}
    for i in range(near):
        for k in range(int(window.widths[i])):
            y = window.start(i) + k
            assert y not in out and window.score_at(y) == int(window.scores[i]) < far
            out[y] = int(window.scores[i])
    assert window.near_lo == min(out) and window.near_hi == max(out)  # one run of consecutive candidates
    for k in range(window.far_width):
        y = window.far_point(k)
        assert y not in out and window.score_at(y) >= far
        out[y] = window.score_at(y)
    assert sorted(out) == list(range(lo, hi + 1))  # the entries cut the candidates, without overlap or hole
    return [out[y] for y in range(lo, hi + 1)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=12), levels(), st.integers(1, 30))
def test_a_window_scores_every_candidate_by_the_definition_whatever_its_far_score(data, q, far):
    scores = expanded(data, 0, 9, q, far)
    assert scores == [quantile_score(data, q, y) for y in range(10)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=12), levels())
def test_the_window_of_the_whole_range_scores_every_candidate_by_the_definition(data, q):
    scores = expanded(data, 0, 9, q)
    assert scores == [quantile_score(data, q, y) for y in range(10)]
    assert min(scores) == 0  # some candidate is an exact q-quantile


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=10), st.lists(st.integers(0, 6), min_size=1, max_size=3), levels())
def test_a_person_moves_the_score_by_at_most_m_max_a_b_minus_a(data, person, q):
    m = len(person)
    law = LevelLaw(q, Fraction(1), m)
    assert law.sensitivity == m * max(q.numerator, q.denominator - q.numerator)
    before, after = expanded(data, 0, 6, q), expanded(data + person, 0, 6, q)
    moves = [b - a for a, b in zip(before, after, strict=True)]
    assert max(abs(d) for d in moves) <= law.sensitivity
    if law.monotone:  # q 0 or 1: adding rows never lowers the score, the premise of the rate epsilon / m
        assert min(moves) >= 0


def test_the_sensitivity_is_attained():
    """``m max(a, b - a)`` is the least bound: one person's ``m`` rows reach it (so the rate is not wasted)."""
    for q in (Fraction(1, 2), Fraction(1, 3), Fraction(9, 10), Fraction(0), Fraction(1)):
        for m in (1, 2, 3):
            sensitivity = LevelLaw(q, Fraction(1), m).sensitivity
            worst = max(abs(quantile_score(list(x) + extra, q, y) - quantile_score(list(x), q, y))
                        for x in ([], [0], [0, 3], [3, 3, 3], [0, 0, 3, 3])
                        for extra in ([0] * m, [3] * m, [1] * m) for y in range(4))
            assert worst == sensitivity, (q, m)


@given(levels(), st.integers(1, 5), st.fractions(min_value=Fraction(1, 100), max_value=10))
def test_the_rate_is_the_stated_one(q, m, epsilon):
    law = LevelLaw(q, epsilon, m)
    assert law.rate == quantile_rate(q, epsilon, m)
    assert law.rank_rate == law.rate * q.denominator


def test_monotone_levels_get_twice_the_rate():
    assert LevelLaw(Fraction(0), Fraction(1), 3).rate == Fraction(1, 3)
    assert LevelLaw(Fraction(1), Fraction(1), 3).rate == Fraction(1, 3)
    assert LevelLaw(Fraction(1, 2), Fraction(1), 3).rate == Fraction(1, 6)   # 0.1: 1/12
    assert LevelLaw(Fraction(9, 10), Fraction(1), 1).rate == Fraction(1, 18)  # 0.1: 1/20


def test_a_tie_block_holding_the_median_scores_zero():
    """The record point holding ``q n`` inside its block scores 0; the old ``-|#{x < y} - q n|`` tied it with
    every candidate from 1 to 9 (the wages failure of issue 26: the nearest candidate lost to its neighbour)."""
    data = [0] * 3 + [5] * 4 + [9] * 3
    scores = expanded(data, 0, 10, Fraction(1, 2))
    assert scores[5] == 0 and min(scores[:5] + scores[6:]) == 4
    source = ChaChaSource(bytes([7]) * 32)
    prepared = securedp.prepare_median(data, bounds=(0, 10), lattice=1, epsilon=20)
    assert {prepared.execute(source).value for _ in range(30)} == {5}


def test_wide_units_score_exactly():
    """Bounds beyond int64 units: the entries hold Python ints, exactly."""
    lo, hi = -(2**70), 2**70
    window = Window([-(2**69), 5, 2**69], [2, 1, 3], lo, hi, Fraction(1, 2), 10**9)
    assert [window.start(i) for i in (0, 1, 4)] == [lo, -(2**69) + 1, -(2**69)]  # gaps 0 and 1, point 1
    assert int(window.widths.sum()) == hi - lo + 1 and window.far_entry is None
    assert window.scores.tolist() == [6, 2, 0, 6, 2, 0, 0]  # gaps 0 .. 3, points 1 .. 3
    split = Window([-(2**69), 5, 2**69], [2, 1, 3], lo, hi, Fraction(1, 2), 3)  # gaps 0 and 3 score 6: far
    assert split.scores.tolist() == [2, 0, 2, 0, 0, 3]  # gaps 1, 2, points 1 .. 3, the far entry
    assert (split.near_lo, split.near_hi, split.far_width) == (-(2**69), 2**69, 2**70)
    assert split.far_point(0) == lo and split.far_point(split.far_width - 1) == hi
    assert split.score_at(lo) == split.score_at(hi) == 6


def test_rank_error_bound_is_the_least_integer_above_the_bound():
    import math

    cases = ((Fraction(1, 2), 129, Fraction(1, 20)), (Fraction(1, 8), 2**33, Fraction(1, 100)),
             (Fraction(3), 2, Fraction(1, 2)))
    for rank_rate, candidates, alpha in cases:
        r = rank_error_bound(rank_rate, candidates, alpha)
        exact = math.log(candidates / alpha) / rank_rate
        assert r - 1 < exact <= r


@pytest.mark.parametrize("bounds, step", [((0, 1), Fraction(1, 2**20)), ((0, 10), Fraction(1, 2**17)),
                                          ((0, 120), Fraction(1, 2**14)), ((0, 2**20), Fraction(1)),
                                          ((-1, 2), Fraction(1, 2**19)), ((0, "0.5"), Fraction(1, 2**21)),
                                          ((3, 3), Fraction(1))])
def test_default_lattice_has_2_20_to_2_21_steps(bounds, step):
    lattice = default_lattice(None, bounds)
    assert lattice.step == step
    lo, hi = (Fraction(b) for b in bounds)
    if lo < hi:
        assert QUANTILE_RESOLUTION <= (hi - lo) / step < 2 * QUANTILE_RESOLUTION


def test_integer_typed_columns_keep_step_1_and_integer_valued_floats_say_lattice_1():
    ints = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    release = securedp.median(ints, bounds=(0, 10), epsilon=1, rng=ChaChaSource(bytes(32)))
    assert release.parameters["data_median"]["lattice_step"] == 1
    floats = securedp.median(ints.astype(float), bounds=(0, 10), epsilon=1, rng=ChaChaSource(bytes(32)))
    assert floats.parameters["data_median"]["lattice_step"] == Fraction(1, 2**17)
    whole = securedp.median(ints.astype(float), bounds=(0, 10), lattice=1, epsilon=1, rng=ChaChaSource(bytes(32)))
    assert whole.parameters["data_median"]["lattice_step"] == 1


def test_equal_bounds_release_the_bound():
    release = securedp.median([1, 5, 3], bounds=(3, 3), epsilon=1, rng=ChaChaSource(bytes(32)))
    assert release.value == 3 and release.parameters["data_median"]["candidates"] == 1


def test_the_record_states_the_utility_the_sensitivity_and_the_rate_exactly():
    release = securedp.quantile([1, 2, 3], "9/10", bounds=(0, 4), lattice=1, epsilon="1/2", max_contributions=2,
                                ids=[1, 2, 3], rng=ChaChaSource(bytes(32)))
    record = release.parameters["data_q0.9"]
    assert record["sensitivity"] == 18 and record["rate"] == Fraction(1, 72)
    assert record["utility"] == CAPPED_UTILITY and record["tie_margin"] == 8  # ceil(1 / (10 / 72))
    assert record["fallback_weight"] == 15  # floor(5 candidates (3/4) / (1/4))
    assert record["rank_error_bound"] == rank_error_bound(Fraction(10, 72), 5 + 15, Fraction(1, 20)) + 8
    # how a replay re-runs a record of before the margin: c = 0, the earlier text
    with rules_scope(RecordRules(tie_margin=False)):
        earlier = securedp.quantile([1, 2, 3], "9/10", bounds=(0, 4), lattice=1, epsilon="1/2", max_contributions=2,
                                    ids=[1, 2, 3], rng=ChaChaSource(bytes(32))).parameters["data_q0.9"]
    assert earlier["utility"] == UTILITY and "tie_margin" not in earlier
    assert earlier["rank_error_bound"] == rank_error_bound(Fraction(10, 72), 5 + 15, Fraction(1, 20))


def test_levels_of_one_statistic_share_one_law():
    from securedp.mechanisms.quantile import Quantiles
    from securedp.mechanisms.records import LatticeColumn
    from securedp.privacy.cost import Cost

    column = LatticeColumn.of(bounds=(0, 4), lattice=1, max_contributions=1)
    Quantiles(Cost.of(1, None), column, (Fraction(1, 4), Fraction(3, 4)))  # q and 1 - q: one law
    with pytest.raises(ValueError, match="share one law"):
        Quantiles(Cost.of(1, None), column, (Fraction(1, 4), Fraction(1, 2)))


def test_a_table_states_the_rank_interval_of_its_median_cells_and_no_values():
    """Issue 28 item 8: a median cell's statement is the rank bound r, from the released law alone (the record's
    rate, candidates and alpha), the same in the plan; no ``_low`` / ``_high`` value columns (the values at ranks
    ``q n -/+ r`` are the data's). With probability at least ``1 - alpha`` the rank error is at most r (5 rows
    here, 9 candidates): in 400 draws of two cells no more than a binomial ``alpha`` of them exceed it."""
    import polars as pl

    from securedp.tables import Count, Median

    frame = pl.DataFrame({"g": ["a"] * 30 + ["b"] * 5, "x": [float(i % 7) for i in range(35)]})
    prepared = securedp.prepare_table(frame, group_by=["g"], keys=["a", "b"],
                                      aggregations=[Count(), Median("x", (0, 8), lattice=1)], epsilon=2, alpha="1/10")
    source = ChaChaSource(bytes([9]) * 32)
    releases = [prepared.execute(source) for _ in range(400)]
    record = releases[0].parameters["x_median"]
    r = rank_error_bound(record["rate"] * 2, record["candidates"] + record["fallback_weight"], Fraction(1, 10)) \
        + record["tie_margin"]
    assert record["rank_error_bound"] == r == prepared.plan.outputs[1].rank_error_bound == 6 + 1
    assert releases[0].labels == ("g", "count", "count_low", "count_high", "x_median")
    cells = {"a": [float(i % 7) for i in range(30)], "b": [float(i % 7) for i in range(30, 35)]}
    exceed = 0
    for release in releases:
        for key, _, _, _, y in release.value:
            data = cells[key]
            below, through = sum(x < y for x in data), sum(x <= y for x in data)
            exceed += max(0.0, below - len(data) / 2, len(data) / 2 - through) > r
    assert exceed <= 800 / 10 + 3 * (800 * 0.09) ** 0.5  # at most alpha of the 800 cells, with a binomial margin


def _scores_by_definition(points: list[int], counts: list[int], q: Fraction) -> list[int]:
    """``|t_j|`` for the gaps, ``max(0, t_{j-1}, -t_j)`` for the points, in Python integers."""
    running = [0, *accumulate(counts)]
    n = running[-1]
    t = [q.denominator * c - q.numerator * n for c in running]
    return [abs(v) for v in t] + [max(0, t[j - 1], -t[j]) for j in range(1, len(points) + 1)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 4)), max_size=15), levels(),
       st.sampled_from([0, 2**61]))
def test_the_window_of_the_whole_range_holds_every_entry_in_int64_or_python_integers(tally, q, wide):
    """With a far score above every score the window holds the ``2 d + 1`` entries, gaps then points, scored as
    ``|t_j|`` and ``max(0, t_{j-1}, -t_j)``: the same integers in int64 and in Python integers (``wide`` counts
    push ``b (n + 1)`` past ``2**62``)."""
    points = sorted({p for p, _ in tally})
    counts = [sum(c for p2, c in tally if p2 == p) for p in points]
    if counts and wide:
        counts[0] += wide
    window = Window(points, counts, 0, 40, q, 2**200)
    assert window.far_entry is None and len(window.scores) == 2 * len(points) + 1
    assert window.scores.dtype == (object if q.denominator * (window.n + 1) >= 2**62 else np.int64)
    assert [int(s) for s in window.scores] == _scores_by_definition(points, counts, q)
