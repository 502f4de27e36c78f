"""Issue 27: the trimmed (winsorized) mean, a selection feeding a mean (securedp.mechanisms.trimmed_mean).

* the winsorized sum from counts per lattice point, exactly (small cases and hypothesis against a brute force);
* the privacy map: the selections' and the noises' shares add up to the declared epsilon (rho) exactly, at
  ``k`` cells and ``m`` rows per person; a bad trim, a bad share or reversed bounds are refused before reading;
* the exact law at a huge epsilon: the value is the true winsorized mean at the (unique) trim points;
* the one route: the one-column release is the one-cell table, to the byte, for one seed;
* the record lists every law; the plan states the value's half-width.
"""

from __future__ import annotations

import json
from fractions import Fraction

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp
from securedp import ChaChaSource
from securedp.mechanisms.mean import Mean
from securedp.mechanisms.records import LatticeColumn
from securedp.mechanisms.trimmed_mean import TrimmedMean, winsorized
from securedp.privacy.cost import Cost
from securedp.privacy.noise import Noise
from securedp.tables import TrimmedMean as TrimmedMeanAggregation

HUGE = 10**12
DATA = [0, 1, 1, 1, *range(2, 10), *range(2, 10), 10, 10, 10, 1000]
"""24 records: ``p n = 2.4`` falls strictly inside the block of 1s (ranks 2 to 4) and ``(1 - p) n = 21.6`` inside
the block of 10s (ranks 21 to 23), so the exact trim points are unique: ``a = 1``, ``b = 10``; winsorized, the 0
counts 1 and the 1000 counts 10: the mean is ``(1 + 3 + 88 + 30 + 10) / 24 = 11/2``."""
BOUNDS = (0, 1000)


def test_the_winsorized_sum_of_small_cases() -> None:
    points, counts = [0, 1, 5, 9, 20], [2, 1, 3, 1, 4]
    assert winsorized(points, counts, 1, 9) == (11, 2 * 1 + 1 + 15 + 9 + 4 * 9)
    assert winsorized(points, counts, 5, 5) == (11, 11 * 5)
    assert winsorized(points, counts, -3, 100) == (11, 1 + 15 + 9 + 80)  # nothing clamped
    assert winsorized(points, counts, 2, 4) == (11, 3 * 2 + 8 * 4)  # a and b between record points
    assert winsorized([], [], 0, 7) == (0, 0)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(-50, 50), st.integers(1, 5), max_size=12), st.integers(-60, 60),
       st.integers(0, 40))
def test_the_winsorized_sum_is_the_clamped_records_sum(held: dict[int, int], a: int, width: int) -> None:
    points = sorted(held)
    b = a + width
    records = [u for u in points for _ in range(held[u])]
    assert winsorized(points, [held[u] for u in points], a, b) == (len(records),
                                                                   sum(min(max(u, a), b) for u in records))


def _column(m: int = 1) -> LatticeColumn:
    return LatticeColumn.of(bounds=BOUNDS, lattice=1, max_contributions=m)


@pytest.mark.parametrize("share", [Fraction(1, 2), Fraction(1, 5)])
def test_the_shares_add_up_to_the_declared_epsilon(share: Fraction) -> None:
    k, m, epsilon = 3, 2, Fraction(7, 5)
    d = TrimmedMean(Cost.of(epsilon), _column(m), selection_share=share, max_groups=k)
    assert d.levels == (Fraction(1, 10), Fraction(9, 10))
    selections = [law.epsilon * k for law in d.laws]  # each level's epsilon over the k cells of a person
    assert selections == [epsilon * share / 2] * 2
    count = d.count_noise
    assert count == Noise.of(m, Cost.of(epsilon * (1 - share) / 2), k)
    assert count.parameter == Fraction(k * m) / (epsilon * (1 - share) / 2)  # Laplace scale k s / epsilon
    for a, b, half in ((0, 1000, 500), (10, 20, 5), (7, 7, 0), (3, 6, 2)):  # c = floor((a + b) / 2)
        noise = d.sum_noise(a, b)
        assert noise.sensitivity == m * max(half, 1) and noise.amount == epsilon * (1 - share) / 2
    assert sum(selections) + 2 * count.amount == epsilon  # sequential composition: exactly the budget


def test_the_shares_add_up_to_the_declared_rho() -> None:
    k, m, rho = 2, 1, Fraction(1, 2)
    d = TrimmedMean(Cost.of(rho=rho), _column(m), max_groups=k)
    cell = d.share
    assert k * cell * cell / 8 <= rho / 4 < k * (cell + Fraction(1, 2**32)) ** 2 / 8  # selection_epsilon's grid
    assert d.count_noise.amount == rho / 4 and d.sum_noise(0, 10).amount == rho / 4
    record = d.cell_record(Fraction(1, 20))
    assert 2 * record["rho_cells"] + 2 * d.count_noise.amount <= rho
    assert d.count_noise.parameter == Fraction(k * m * m) / (2 * rho / 4)  # Gaussian variance k s**2 / (2 rho)


@pytest.mark.parametrize("trim", [0, "1/2", -1, "0.6", "x", 1])
def test_a_bad_trim_is_refused_before_reading(trim: object) -> None:
    with pytest.raises(ValueError, match="trim"):
        securedp.prepare_trimmed_mean(DATA, bounds=BOUNDS, epsilon=1, trim=trim)


@pytest.mark.parametrize("share", [0, 1, "3/2", "-1/2", "x"])
def test_a_bad_selection_share_is_refused(share: object) -> None:
    with pytest.raises(ValueError, match="selection_share"):
        securedp.prepare_trimmed_mean(DATA, bounds=BOUNDS, epsilon=1, selection_share=share)


def test_reversed_bounds_are_refused_and_nothing_is_spent() -> None:
    session = securedp.Session(epsilon=1, rng=ChaChaSource(bytes(32)))
    with pytest.raises(ValueError, match="bounds"):
        session.trimmed_mean(DATA, bounds=(10, 0), epsilon="1/2")
    with pytest.raises(ValueError, match="trim"):
        session.trimmed_mean(DATA, bounds=BOUNDS, epsilon="1/2", trim="1/2")
    assert session.spent == 0


@pytest.mark.parametrize("currency", ["epsilon", "rho"])
def test_a_huge_budget_releases_the_true_winsorized_mean(currency: str) -> None:
    huge = HUGE if currency == "epsilon" else HUGE**4
    for seed in range(4):
        release = securedp.trimmed_mean(pl.Series("v", DATA), bounds=BOUNDS, **{currency: huge},
                                        rng=ChaChaSource(bytes([seed]) * 32))
        assert release.value == Fraction(11, 2)
    table = securedp.table(pl.DataFrame({"v": DATA}), aggregations=[TrimmedMeanAggregation("v", BOUNDS)],
                           **{currency: huge}, rng=ChaChaSource(bytes(32)))
    assert table.labels == ("v_trimmed_mean", "v_trimmed_mean_low", "v_trimmed_mean_high")
    assert table.value == ((Fraction(11, 2), 1, 10),)  # the value, then the released trim points


def test_a_wider_trim_moves_the_trim_points_inward() -> None:
    """trim 1/4 of 24 records: ranks 6 and 18 (``p n = 6`` is the last 2, so ``a`` is 2 or any point up to 3;
    18 the last 8, ``b`` in [8, 9]); on the lattice of step 1 the value is the rounded winsorized mean."""
    table = securedp.table(pl.DataFrame({"v": DATA}), epsilon=HUGE, rng=ChaChaSource(bytes(32)),
                           aggregations=[TrimmedMeanAggregation("v", BOUNDS, lattice=1, trim="1/4")])
    value, a, b = table.value[0]
    assert 2 <= a <= 3 and 8 <= b <= 9
    expected = Fraction(sum(min(max(u, a), b) for u in DATA), len(DATA))
    assert value == round(expected)  # rounded half to even onto the lattice of step 1


def test_the_one_column_release_is_the_one_cell_table_to_the_byte() -> None:
    ids = [i % 9 for i in range(len(DATA))]
    query = {"epsilon": "1/2"}
    one_column = securedp.trimmed_mean(pl.Series("v", DATA), bounds=BOUNDS, ids=pl.Series("p", ids),
                                       max_contributions=2, trim="1/5", **query, rng=ChaChaSource(bytes(32)))
    table = securedp.table({"data": pl.Series("v", DATA), "ids": pl.Series("p", ids)}, id_column="ids", max_rows=2,
                           aggregations=[TrimmedMeanAggregation("data", BOUNDS, trim="1/5")], **query,
                           rng=ChaChaSource(bytes(32)))
    assert one_column.value == table.value[0][0]
    assert json.dumps(one_column.record()["parameters"], sort_keys=True) == \
        json.dumps(table.record()["parameters"], sort_keys=True)


def test_the_trim_points_and_the_value_are_ordered_whatever_the_draws() -> None:
    """Levels near 1/2 at a small epsilon: the upper trim point is often drawn below the lower (then b = a)."""
    prepared = securedp.prepare_table(pl.DataFrame({"v": DATA}), epsilon="1/10", aggregations=[
        TrimmedMeanAggregation("v", BOUNDS, lattice=1, trim="49/100")])
    source = ChaChaSource(bytes(32))
    rows = [prepared.execute(source).value[0] for _ in range(200)]
    assert all(a <= value <= b for value, a, b in rows)
    assert any(a == b for _, a, b in rows)  # the swap case happened, and was released as a point


def test_the_record_lists_every_law() -> None:
    release = securedp.trimmed_mean(DATA, bounds=BOUNDS, epsilon=1, rng=ChaChaSource(bytes(32)))
    record = release.parameters["data_trimmed_mean"]
    assert release.statistic == "trimmed_mean" and release.mechanism == "exponential, then discrete_laplace"
    assert record["q"] == [Fraction(1, 10), Fraction(9, 10)] and record["trim"] == Fraction(1, 10)
    assert record["selection"] == "exponential" and record["epsilon_cell"] == Fraction(1, 4)
    assert record["sensitivity"] == 9 and record["rate"] == Fraction(1, 4) / 18  # m max(a, b - a) for q = 1/10
    assert record["noise"] == [{"mechanism": "discrete_laplace", "cell_sensitivity_units": 1, "scale_units": 4}]
    assert record["winsorized_sum_noise"]["scale_units_at_h_1"] == 4
    assert "rank_error_bound" in record and "budget_split" in record


def test_the_plan_states_the_rank_error_and_the_value_halfwidth() -> None:
    prepared = securedp.prepare_table(pl.DataFrame({"v": DATA}), epsilon=1,
                                      aggregations=[TrimmedMeanAggregation("v", BOUNDS, lattice=1)])
    (output,) = prepared.plan.outputs
    alpha = prepared.plan.alpha
    d = TrimmedMean(Cost.of(1), _column())
    assert output.rank_error_bound == d.rank_error(alpha)
    assert output.value_halfwidth is not None
    mean = Mean(Cost.of(Fraction(1, 2)), _column())  # the widest [a, b]: a mean on the bounds at half the cost
    for n in (10, 1000, 10**6):
        assert output.value_halfwidth(n) == mean.value_halfwidth(alpha, n) == d.value_halfwidth(alpha, n)
    assert any("its mean between them" in line for line in prepared.plan.lines())
