"""The quantiles' fallback point (issue 26, small groups): its point, weight, score, record and parameter.

The law it gives is checked against the reference in ``tests/statistical/test_selection_laws.py`` and its
privacy map in ``tests/privacy/test_selection_privacy.py``; here: the definitions, exactly, the public
parameter on every route (one column, a table, the command, a recorded query), its refusals, and that
``fallback=0`` is the plain exponential mechanism byte for byte.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import securedp
from securedp import ChaChaSource
from securedp.mechanisms import quantile_draw
from securedp.mechanisms.quantile import Quantile
from securedp.mechanisms.rank_utility import (
    DEFAULT_FALLBACK,
    FALLBACK_LAW,
    LAW,
    LevelLaw,
    Window,
    check_fallback,
    fallback_point,
    fallback_rows,
    fallback_score,
    fallback_weight,
    rank_error_bound,
)
from securedp.mechanisms.record_rules import EXPONENTIAL, PERMUTE_AND_FLIP, RecordRules, rules_scope
from securedp.mechanisms.records import LatticeColumn
from securedp.privacy.cost import Cost
from securedp.tables import IQR, Median, TrimmedMean
from securedp.tables import Quantile as QuantileAggregation

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "statistical"))
from _selection_laws import quantile_score


@given(st.integers(-50, 50), st.integers(0, 100), st.integers(1, 12), st.data())
def test_the_fallback_point_is_the_lattice_point_nearest_the_bounds_q_point(lo, span, b, data):
    q = Fraction(data.draw(st.integers(0, b)), b)
    f = fallback_point(q, lo, lo + span)
    target = lo + q * span
    assert lo <= f <= lo + span and abs(f - target) <= Fraction(1, 2)
    assert f - target != Fraction(-1, 2)  # halves up


def test_the_fallback_points_of_the_levels():
    assert fallback_point(Fraction(1, 2), 0, 10) == 5 and fallback_point(Fraction(1, 2), 0, 9) == 5
    assert fallback_point(Fraction(0), -3, 7) == -3 and fallback_point(Fraction(1), -3, 7) == 7
    assert fallback_point(Fraction(1, 4), 0, 1050) == 263  # 262.5 rounds up
    assert fallback_point(Fraction(9, 10), -50, 1000) == 895


@given(st.integers(1, 2**70), st.integers(1, 1000), st.integers(0, 999))
def test_the_weight_is_floor_candidates_p_over_1_minus_p(candidates, den, num):
    p = Fraction(num % den, den)
    w = fallback_weight(p, candidates)
    assert w == math.floor(candidates * p / (1 - p)) and (w == 0) == (candidates * p < 1 - p)
    # an empty cell (every weight exp(0)) draws the fallback with probability W / (W + N), within 1 / N of p
    assert abs(Fraction(w, w + candidates) - p) <= Fraction(1, candidates)


@given(st.lists(st.integers(0, 9), max_size=12), st.integers(1, 12), st.data())
def test_the_score_is_the_worst_any_candidate_can_have(data, b, drawn):
    """``h = max(a, b - a) n`` bounds every candidate's score, and a candidate outside the records attains it."""
    q = Fraction(drawn.draw(st.integers(0, b)), b)
    h = fallback_score(q, len(data))
    scores = [quantile_score(data, q, y) for y in range(-1, 11)]
    assert max(scores) <= h and max(quantile_score(data, q, -1), quantile_score(data, q, 10)) == h


@given(st.lists(st.integers(0, 9), max_size=10), st.lists(st.integers(0, 9), min_size=1, max_size=4), st.data())
def test_one_person_moves_the_fallback_score_by_at_most_the_sensitivity_and_never_down(data, person, drawn):
    b = drawn.draw(st.integers(1, 12))
    q = Fraction(drawn.draw(st.integers(0, b)), b)
    law = LevelLaw(q, Fraction(1), len(person))
    moved = fallback_score(q, len(data) + len(person)) - fallback_score(q, len(data))
    assert 0 <= moved <= law.sensitivity


def test_fallback_rows_is_the_least_n_with_w_exp_minus_rate_h_at_most_alpha():
    rate, q, alpha = Fraction(1, 16), Fraction(1, 2), Fraction(1, 20)
    w = fallback_weight(DEFAULT_FALLBACK, 1310721)
    n = fallback_rows(rate, q, w, alpha)
    assert w * math.exp(-float(rate) * n) <= float(alpha) < w * math.exp(-float(rate) * (n - 1))
    assert fallback_rows(rate, q, 0, alpha) == 0  # no fallback
    assert fallback_rows(rate, q, 1, Fraction(1, 2)) == math.ceil(16 * math.log(2))  # W = 1: h >= ln(2) / rate


@pytest.mark.parametrize("given, exact", [(0, Fraction(0)), ("3/4", Fraction(3, 4)), ("0.5", Fraction(1, 2)),
                                          (0.25, Fraction(1, 4)), (Fraction(99, 100), Fraction(99, 100))])
def test_the_fallback_probability_is_read_exactly(given, exact):
    assert check_fallback(given) == exact


@pytest.mark.parametrize("bad, error", [(1, ValueError), (-0.1, ValueError), ("2", ValueError),
                                        (float("nan"), ValueError), (float("inf"), ValueError), ("x", ValueError),
                                        ([0.5], TypeError), (True, TypeError)])
def test_a_fallback_outside_0_1_or_not_a_number_is_refused(bad, error):
    with pytest.raises(error):
        check_fallback(bad)
    with pytest.raises(error, match="fallback"):
        securedp.prepare_median([1.0, 2.0], bounds=(0, 4), epsilon=1, fallback=bad)


def test_no_fallback_given_is_the_default():
    with pytest.raises(TypeError):
        check_fallback(None)
    released = securedp.median([1.0], bounds=(0, 4), epsilon=1, fallback=None, rng=ChaChaSource(bytes(32)))
    assert released.parameters["data_median"]["fallback"] == DEFAULT_FALLBACK


def test_a_fallback_is_refused_by_a_statistic_that_selects_nothing():
    from securedp.tables.one_column import request

    with pytest.raises(ValueError, match="fallback= applies to the selections"):
        request("sum", "data", bounds=(0, 1), fallback="1/2")
    with pytest.raises(TypeError, match="fallback"):
        securedp.mean([1.0], bounds=(0, 1), epsilon=1, fallback="1/2")  # type: ignore[call-arg]


def _definition(fallback: Fraction, q: Fraction = Fraction(1, 2)) -> Quantile:
    column = LatticeColumn.of(bounds=(0, 8), lattice=1, max_contributions=1)
    return Quantile(Cost.of(Fraction(1), None), column, (q,), fallback=fallback)


@pytest.mark.parametrize(("rule", "laws"), [(EXPONENTIAL, (LAW, FALLBACK_LAW)),
                                           (PERMUTE_AND_FLIP,
                                            (quantile_draw.SHIFTED_LAW, quantile_draw.SHIFTED_FALLBACK_LAW))])
def test_the_record_states_the_fallback(rule: str, laws: tuple[str, str]):
    with rules_scope(RecordRules(quantile_draw=rule)):  # 9 candidates priced in epsilon: permute-and-flip by this rule
        record = _definition(Fraction(3, 4)).cell_record(Fraction(1, 20))
        none = _definition(Fraction(0)).cell_record(Fraction(1, 20))
    assert record["selection"] == none["selection"] == rule
    assert record["fallback"] == Fraction(3, 4) and record["fallback_weight"] == 27 and record["fallback_units"] == 4
    margin = record["tie_margin"]
    assert margin == 1  # ceil(1 / rank_rate), rank rate 1
    assert record["fallback_rows_bound"] == fallback_rows(Fraction(1, 2), Fraction(1, 2), 27, Fraction(1, 20), 1) \
        == fallback_rows(Fraction(1, 2), Fraction(1, 2), 27, Fraction(1, 20)) + 2  # + ceil(b c / max(a, b - a))
    assert not {"fallback", "fallback_weight", "fallback_units", "fallback_rows_bound"} & none.keys()
    assert none["law"] == laws[0] and record["law"] == laws[1]  # without a fallback: the record of the plain law
    rank_rate = Fraction(1, 2) * 2  # rate epsilon / (2 sensitivity), times b
    assert none["rank_error_bound"] == rank_error_bound(rank_rate, 9, Fraction(1, 20)) + margin
    assert record["rank_error_bound"] == rank_error_bound(rank_rate, 9 + 27, Fraction(1, 20)) + margin  # fallback too


def test_several_levels_record_one_fallback_point_each():
    prepared = securedp.prepare_quantiles([1.0, 2.0, 3.0], ["1/4", "3/4"], bounds=(0, 8), lattice=1, epsilon=1)
    released = prepared.execute(ChaChaSource(bytes(32)))
    assert [p["fallback_units"] for p in released.parameters.values() if isinstance(p, dict) and "q" in p] == [2, 6]
    iqr = securedp.iqr([1.0, 2.0, 3.0], bounds=(0, 8), lattice=1, epsilon=1, rng=ChaChaSource(bytes(32)))
    assert iqr.parameters["data_iqr"]["fallback_units"] == [2, 6]


def test_a_window_without_a_fallback_has_no_fallback_entry():
    window = Window([1, 3], [1, 2], 0, 8, Fraction(1, 2), 100)
    assert window.fallback_entry is None and len(window.widths) == 5
    weighted = Window([1, 3], [1, 2], 0, 8, Fraction(1, 2), 100, fallback=27)
    assert weighted.fallback_entry == 5 and weighted.widths[-1] == 27 and weighted.scores[-1] == 3
    assert weighted.fallback_point == 4 and list(weighted.widths[:5]) == list(window.widths)


def test_a_wide_fallback_weight_is_held_in_python_integers():
    big = 2**63  # beyond int64: the window keeps its entries as Python integers
    window = Window([1, 3], [1, 2], 0, 2**62, Fraction(1, 2), 10**6, fallback=big)
    assert window.widths.dtype == object and window.widths[-1] == big


CELLS = [1.0, 2.0, 2.5, 7.0]


ENTRY_POINTS = {
    "median": (lambda **kw: securedp.median(CELLS, bounds=(0, 8), epsilon=1, **kw),
               lambda fb: Median("data", (0, 8), fallback=fb)),
    "quantile": (lambda **kw: securedp.quantile(CELLS, "0.25", bounds=(0, 8), epsilon=1, **kw),
                 lambda fb: QuantileAggregation("data", (0, 8), q="0.25", fallback=fb)),
    "iqr": (lambda **kw: securedp.iqr(CELLS, bounds=(0, 8), epsilon=1, **kw),
            lambda fb: IQR("data", (0, 8), fallback=fb)),
    "trimmed_mean": (lambda **kw: securedp.trimmed_mean(CELLS, bounds=(0, 8), epsilon=1, **kw),
                     lambda fb: TrimmedMean("data", (0, 8), fallback=fb)),
}
SEEDS = [bytes([s]) * 32 for s in range(12)]


def _cell(release) -> tuple:
    """A release's one value and its selection's record (the one-column value, or the table's one cell)."""
    (record,) = [v for v in release.parameters.values() if isinstance(v, dict) and "fallback" in v]
    value = release.value[0][0] if hasattr(release, "labels") and release.labels else release.value
    return value, record


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_the_one_column_release_is_the_one_cell_table_with_the_same_fallback(name):
    """Same seed, same bytes: ``securedp.<stat>(..., fallback=p)`` and the one-cell table of the aggregation
    with ``fallback=p`` release the same value and record, seed by seed, at ``p = 1/2`` and by default; and the
    fallback is not vacuous here (``p = 1/2`` and ``p = 0`` differ on these 4 records at epsilon 1)."""
    one_column, aggregation = ENTRY_POINTS[name]

    def both(fallback):
        kw = {} if fallback is None else {"fallback": fallback}
        columns = [_cell(one_column(rng=ChaChaSource(seed), **kw)) for seed in SEEDS]
        tables = [_cell(securedp.table({"data": CELLS}, aggregations=[aggregation(fallback)], epsilon=1,
                                       rng=ChaChaSource(seed))) for seed in SEEDS]
        return columns, tables

    for fallback, stated in (("1/2", Fraction(1, 2)), (None, DEFAULT_FALLBACK)):
        columns, tables = both(fallback)
        assert [v for v, _ in columns] == [v for v, _ in tables]
        assert [r for _, r in columns] == [r for _, r in tables]
        assert {r["fallback"] for _, r in columns} == {stated}
    half = [v for v, _ in both("1/2")[0]]
    plain = [one_column(rng=ChaChaSource(seed), fallback=0).value for seed in SEEDS]
    assert half != plain


def test_a_fallback_too_small_to_weigh_is_refused_before_anything_is_read():
    """``W = floor(N p / (1 - p)) = 0`` would release the plain law and record no fallback: the asked ``p`` would
    be lost. It is refused from the parameters alone (9 candidates: below 1/10), and nothing is spent."""
    session = securedp.Session(epsilon=2)
    for data in ([], [1.0, 2.0], [float("nan")]):
        with pytest.raises(ValueError, match="no weight against 9 candidates"):
            session.median(data, bounds=(0, 8), lattice=1, epsilon=1, fallback="1/11")
        with pytest.raises(ValueError, match="at least 1/10"):
            securedp.prepare_median(data, bounds=(0, 8), lattice=1, epsilon=1, fallback="1/1000")
    assert session.remaining == 2
    assert securedp.prepare_median([1.0], bounds=(0, 8), lattice=1, epsilon=1, fallback="1/10")  # W = 1


def test_an_empty_cell_releases_the_fallback_point_about_p_of_the_time():
    """No records: every candidate scores 0 and ``h = 0``, so ``P(f) = (W + 1) / (W + N)``."""
    prepared = securedp.prepare_median([], bounds=(0, 8), lattice=1, epsilon=1, fallback="3/4")
    source = ChaChaSource(bytes([5]) * 32)
    drawn = [prepared.execute(source).value for _ in range(2000)]
    share = drawn.count(4) / len(drawn)
    assert abs(share - 28 / 36) < 0.05  # W = 27 against N = 9: (27 + 1) / 36; the binomial sd is 0.009


def test_fallback_zero_is_the_plain_exponential_mechanism_byte_for_byte():
    """``fallback=0`` builds no fallback entry: the window, the sampler and so the draws are those of the plain
    law, so the same seed releases what the exponential mechanism alone releases (checked against the window
    built without a fallback, drawn from the same stream)."""
    from securedp.hazmat.samplers.categorical import ExpCategorical
    from securedp.mechanisms.quantile import _select
    from securedp.mechanisms.rank_utility import far_score

    points, counts = [1, 2, 5], [1, 2, 1]
    law = LevelLaw(Fraction(1, 2), Fraction(1), 1)
    rate = law.rate
    window = Window(points, counts, 0, 8, Fraction(1, 2), far_score(rate, 9, law.least_score), margin=law.tie_margin)
    plain = ExpCategorical(window.scores, rate, window.widths)
    source = ChaChaSource(bytes([11]) * 32)
    expected = [_select(window, rate, plain, source) for _ in range(50)]
    with rules_scope(RecordRules(quantile_draw=EXPONENTIAL)):  # 9 candidates: else permute-and-flip
        draw = _definition(Fraction(0)).cell_points(points, counts)
        weighted = _definition(Fraction(3, 4)).cell_points(points, counts)
    source = ChaChaSource(bytes([11]) * 32)
    assert [draw(source)[0] for _ in range(50)] == expected
    source = ChaChaSource(bytes([11]) * 32)
    assert [weighted(source)[0] for _ in range(50)] != expected  # not vacuous: the atom changes the draws


def test_fallback_zero_by_permute_and_flip_is_the_public_permute_and_flip_byte_for_byte():
    """An epsilon-priced quantile over few candidates draws by permute-and-flip (:mod:`~securedp.mechanisms.
    quantile_draw`): with ``fallback=0`` its coins are the scores ``-g(y)`` in the lattice's order, so the same
    seed releases what ``securedp.permute_and_flip`` of those scores releases (one definition of the draw)."""
    points, counts = [1, 2, 5], [1, 2, 1]
    definition = _definition(Fraction(0))
    assert definition.selection == PERMUTE_AND_FLIP
    draw = definition.cell_points(points, counts)
    source = ChaChaSource(bytes([11]) * 32)
    drawn = [draw(source)[0] for _ in range(50)]
    margin = LevelLaw(Fraction(1, 2), Fraction(1), 1).tie_margin
    scores = [-Window(points, counts, 0, 8, Fraction(1, 2), 10**6, margin=margin).score_at(y) for y in range(9)]
    source = ChaChaSource(bytes([11]) * 32)
    assert drawn == [securedp.permute_and_flip(scores, epsilon=1, sensitivity=1, rng=source).value
                     for _ in range(50)]
    weighted = _definition(Fraction(3, 4)).cell_points(points, counts)
    source = ChaChaSource(bytes([11]) * 32)
    assert [weighted(source)[0] for _ in range(50)] != drawn  # not vacuous: the atom's coins change the draws
