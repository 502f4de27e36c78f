"""Grouped table releases: exact cells, the same table from every input kind, budget shares, bad input."""

from __future__ import annotations

import decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from securedp import ChaChaSource
from securedp.mechanisms.selection_price import selection_epsilon
from securedp.privacy.cost import Cost
from securedp.tables import Count, Mean, Median, Persons, Sum, Variance, prepare_table
from securedp.tables.spec import quantile_cell_epsilon


def people(n: int = 3000, seed: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)  # test data only
    return pl.DataFrame({
        "pid": rng.integers(0, 400, n),
        "region": rng.choice(["north", "south", "east"], n),
        "income": np.round(rng.uniform(0, 1000, n), 2),
        "age": rng.integers(0, 100, n),
    })


QUERY = {"group_by": ["region"], "aggregations": [Count(), Persons(), Sum("income", (0, 1000), "0.01"),
                                               Mean("age", (0, 120)), Variance("age", (0, 120), 1)],
             "id_column": "pid", "max_groups": 2, "max_rows": 3, "epsilon": 1}


def seeded(data, **query):
    return prepare_table(data, **{**QUERY, **query}).execute(ChaChaSource(bytes(range(32))))


def test_the_same_seeded_table_from_polars_pandas_pyarrow_and_lazy_input():
    frame = people()
    a, b, c, d = (seeded(x, keys=["north", "south", "east", "west"])
                  for x in (frame, frame.to_pandas(), frame.to_arrow(), frame.lazy()))
    assert a.value == b.value == c.value == d.value
    assert isinstance(b.frame, pd.DataFrame) and isinstance(c.frame, pa.Table) and isinstance(a.frame, pl.DataFrame)


def test_row_order_does_not_change_the_table():
    frame = people()
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=3)
    assert seeded(frame, keys=["north", "south"]).value == seeded(shuffled, keys=["north", "south"]).value


def test_public_keys_every_key_a_cell_data_keys_outside_dropped():
    r = seeded(people(), keys=["west", "north"])
    assert [row[0] for row in r.value] == ["west", "north"]
    assert r.labels[:4] == ("region", "count", "count_low", "count_high")


def test_values_are_exact_lattice_values_and_intervals_contain_them():
    r = seeded(people(), keys=["north"])
    row = dict(zip(r.labels, r.value[0], strict=True))
    assert isinstance(row["count"], int)
    assert row["count_low"] <= row["count"] <= row["count_high"]
    assert (row["income_sum"] * 100).denominator == 1  # on the lattice of step 0.01
    assert row["age_mean_low"] <= row["age_mean"] <= row["age_mean_high"]
    assert isinstance(r.frame["income_sum"].dtype, pl.Decimal)
    assert r.frame["income_sum"][0] == decimal.Decimal(row["income_sum"].numerator) / row["income_sum"].denominator


def test_shares_are_exact_visible_and_overridable():
    p = prepare_table(people(), **{**QUERY, "aggregations": [Count(share="1/2"), Sum("income", (0, 1000)), Persons()]},
                      keys=["north"])
    assert p.shares == {"count": Fraction(1, 2), "income_sum": Fraction(1, 4), "persons": Fraction(1, 4)}
    assert p.epsilon == 1
    private = prepare_table(people(), **{**QUERY, "aggregations": [Count()]}, delta="1e-9")
    assert private.shares == {"count": Fraction(1)}  # the released count selects the keys: no separate share
    assert private.delta == private.plan.selection.delta < Fraction(1, 10**9)  # what the threshold proves
    separate = prepare_table(people(), **{**QUERY, "aggregations": [Count()]}, delta="1e-9", selection="laplace")
    assert separate.shares == {"partition_selection": Fraction(1, 2), "count": Fraction(1, 2)}
    shared = prepare_table(people(), **{**QUERY, "aggregations": [Count()]}, delta="1e-9", selection_share="1/4")
    assert shared.shares == {"partition_selection": Fraction(1, 4), "count": Fraction(3, 4)}
    no_count = prepare_table(people(), **{**QUERY, "aggregations": [Sum("income", (0, 1000))]}, delta="1e-9")
    assert no_count.shares == {"partition_selection": Fraction(1, 2), "income_sum": Fraction(1, 2)}


def test_noise_scales_follow_the_bounding():
    r = seeded(people(), keys=["north"])
    noise = r.parameters["count"]["noise"][0]
    assert noise["cell_sensitivity_units"] == 3 and noise["scale_units"] == Fraction(2 * 3) / Fraction(1, 5)
    assert r.parameters["income_sum"]["noise"][0]["cell_sensitivity_units"] == 3 * 100000


def test_private_keys_release_only_well_populated_groups():
    frame = pl.concat([people(), pl.DataFrame({"pid": [10**6], "region": ["rare"], "income": [1.0], "age": [30]})])
    r = seeded(frame, keys=None, delta="1e-9", aggregations=[Count()])
    regions = {row[0] for row in r.value}
    assert "rare" not in regions and regions <= {"north", "south", "east"}
    assert r.parameters["threshold"] > 1 and r.delta == r.parameters["delta"] < Fraction(1, 10**9)
    assert r.parameters["delta_asked"] == Fraction(1, 10**9)


def test_rows_as_persons_without_an_id_column():
    r = seeded(people(), id_column=None, keys=["north"], max_groups=1, max_rows=1)
    assert r.parameters["privacy_unit"] == "row"


@pytest.mark.parametrize("change, error", [
    ({"group_by": ["nope"]}, ValueError),
    ({"id_column": "nope"}, ValueError),
    ({"epsilon": 0}, ValueError),
    ({"epsilon": None}, TypeError),
    ({"max_groups": 0}, ValueError),
    ({"max_rows": True}, TypeError),
    ({"keys": None}, ValueError),                      # private keys need delta
    ({"delta": "1e-9"}, ValueError),                   # delta without private keys
    ({"aggregations": []}, ValueError),
    ({"aggregations": [Count(share=2)]}, ValueError),
    ({"aggregations": [Count(share="1/2")]}, ValueError),  # shares must add up to 1
    ({"alpha": 0}, ValueError),
    ({"selection": "greedy", "keys": None, "delta": "1e-9"}, ValueError),
])
def test_bad_arguments_are_refused_before_anything_is_drawn(change, error):
    query = {**QUERY, "keys": ["north"], **change}
    with pytest.raises(error):
        prepare_table(people(), **query)


@pytest.mark.parametrize("column, values, message", [
    ("region", [None, "north"], "row 0: blank group key"),
    ("region", ["  ", "north"], "row 0: blank group key"),
    ("pid", [None, 1], "row 0: blank id"),
    ("region", [1.5, 2.5], "row 0: group key 1.5 is not a whole number"),  # a float key column holds integers
])
def test_bad_key_and_id_cells_name_the_column(column, values, message):
    frame = pl.DataFrame({"pid": [1, 2], "region": ["a", "b"], "income": [1.0, 2.0], "age": [1, 2]})
    frame = frame.with_columns(pl.Series(column, values))
    with pytest.raises((ValueError, TypeError), match=f"{column}.*{message}|{message}.*{column}"):
        prepare_table(frame, **{**QUERY, "keys": ["a"]})


def test_missing_values_follow_the_policy():
    frame = pl.DataFrame({"pid": [1, 2, 3], "region": ["a", "a", "a"], "income": [1.0, None, float("nan")],
                          "age": [1, 2, 3]})
    query = {**QUERY, "keys": ["a"], "aggregations": [Sum("income", (0, 10))]}
    with pytest.raises(ValueError, match="missing"):
        prepare_table(frame, **query)
    assert prepare_table(frame, **query, missing="drop").execute(ChaChaSource(bytes(32))).value
    assert prepare_table(frame, **query, missing="impute", fill=5).execute(ChaChaSource(bytes(32))).value


@pytest.mark.slow
def test_quantile_cells_follow_the_exact_exponential_law_at_epsilon_over_max_groups():
    """One cell: data 1, 2, 7 (one row per person, every person also in a second group, so max_groups = 2
    halves the cell's epsilon). The released median must follow exp(eps_cell * u(y) / 2) over 0..8."""
    import sys
    from pathlib import Path

    from scipy import stats

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "statistical"))
    from _selection_laws import quantile_law

    frame = pl.DataFrame({"pid": [1, 2, 3, 1, 2, 3], "g": ["a", "a", "a", "b", "b", "b"], "x": [1, 2, 7, 0, 0, 0]})
    prepared = prepare_table(frame, group_by=["g"], keys=["a"], aggregations=[Median("x", (0, 8), 1)],
                             id_column="pid", max_groups=2, max_rows=1, epsilon=4)
    assert prepared.execute(ChaChaSource(bytes(32))).parameters["x_median"]["epsilon_cell"] == 2
    law = quantile_law([1, 2, 7], Fraction(1, 2), 0, 8, Fraction(2))
    source = ChaChaSource(bytes([77]) * 32)
    draws = [prepared.execute(source).value[0][1] for _ in range(2000)]
    observed = np.bincount(np.array(draws, dtype=np.int64), minlength=9)
    expected = np.array([float((lo + hi) / 2) for lo, hi in law]) * len(draws)
    keep = expected >= 5
    assert keep.all()  # every bin expects >= 5: no pooling needed
    assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-6
    # the cell's epsilon is what the law says: at the table's full epsilon (4, not 4 / max_groups) it fails
    wrong = np.array([float((lo + hi) / 2) for lo, hi in quantile_law([1, 2, 7], Fraction(1, 2), 0, 8, Fraction(4))])
    assert stats.chisquare(observed, wrong * observed.sum() / wrong.sum()).pvalue < 1e-6


def cell_epsilon(epsilon, rho, k):
    return selection_epsilon(Cost.of(epsilon, rho), k)


def test_selection_epsilon_exact_cases():
    """epsilon tables: epsilon_a / k; rho tables: a j / 2**32 whose sharp bounded-range zCDP, k times, is at most
    rho_a (the largest with k * eps**2 / 8 <= rho_a by the earlier rule, and below epsilon 3/4)."""
    from securedp.mechanisms.record_rules import EIGHTH_ZCDP_CONVERSION, RecordRules, rules_scope
    from securedp.privacy.conversions import bounded_range_to_zcdp

    assert cell_epsilon(Fraction(1), None, 4) == Fraction(1, 4)
    with rules_scope(RecordRules(conversion=EIGHTH_ZCDP_CONVERSION)):
        assert cell_epsilon(None, Fraction(1, 2), 1) == 2  # 1 * 2**2 / 8 = 1/2 exactly
        assert cell_epsilon(None, Fraction(1, 8), 1) == 1
        assert cell_epsilon(None, Fraction(1, 2), 2) == Fraction(6074000999, 2**32)  # isqrt(2**65): sqrt(2)
    assert cell_epsilon(None, Fraction(1, 32), 1) == Fraction(1, 2)  # below 3/4: 1 * (1/2)**2 / 8 = 1/32 exactly
    assert cell_epsilon(None, Fraction(1, 2), 1) > Fraction(205, 100)  # the sharp bound allows more than 2
    for rho, k in [(Fraction(1, 3), 3), (Fraction(1, 10**6), 7), (Fraction(5, 2), 1), (Fraction(1, 2), 2)]:
        cell = cell_epsilon(None, rho, k)
        step = Fraction(1, 2**32)
        assert (cell / step).denominator == 1
        assert k * bounded_range_to_zcdp(cell) <= rho < k * (cell * Fraction(1002, 1000)) ** 2 / 8  # nearly all
        if cell < Fraction(3, 4):
            assert rho < k * (cell + step) ** 2 / 8  # the largest such
    with pytest.raises(ValueError, match="too small"):
        cell_epsilon(None, Fraction(1, 10**30), 3)


def test_the_deprecated_quantile_cell_epsilon_still_answers():
    with pytest.warns(DeprecationWarning, match="selection_epsilon"):
        assert quantile_cell_epsilon(None, Fraction(1, 2), 2) == cell_epsilon(None, Fraction(1, 2), 2)


def test_quantiles_in_rho_tables_spend_their_share_as_zcdp(monkeypatch):
    """Each cell's exponential mechanism runs at the recorded epsilon_cell, and k * rho(eps) <= rho_a."""
    from securedp.mechanisms.quantile import Quantiles

    used = []
    original = Quantiles.cell_points

    def spy(self, points, counts):
        used.append(self.share)
        return original(self, points, counts)

    monkeypatch.setattr(Quantiles, "cell_points", spy)
    release = prepare_table(people(), group_by=["region"], keys=["north", "south"], id_column="pid", max_groups=2,
                            aggregations=[Count(), Median("age", (0, 120))], rho="1/2").execute(ChaChaSource(bytes(32)))
    record = release.parameters["age_median"]
    cell = record["epsilon_cell"]
    assert set(used) == {cell} and len(used) == 2 and cell == cell_epsilon(None, Fraction(1, 4), 2)
    from securedp.privacy.conversions import bounded_range_to_zcdp

    assert record["rho_cells"] == 2 * bounded_range_to_zcdp(cell) <= Fraction(1, 4) < 2 * cell**2 / 8
    assert all(0 <= v <= 120 for v in release.frame["age_median"].to_list())


def test_a_rho_share_too_small_for_a_quantile_is_refused_before_anything_is_charged():
    from securedp import Session

    session = Session(rho="1e-30", rng=ChaChaSource(bytes(32)))
    with pytest.raises(ValueError, match="too small"):
        session.table(people(), group_by=["region"], keys=["north"], aggregations=[Median("age", (0, 120))],
                      id_column="pid", max_groups=3, rho="1e-30")
    assert session.spent == 0


def test_the_output_types_do_not_depend_on_which_cells_are_released():
    """Private keys that release nothing still give a frame with the same exact column types."""
    small = people(60)
    query = {**QUERY, "keys": None, "delta": "1e-9"}
    empty = seeded(small, **query)
    full = seeded(pl.concat([people()] * 3), **query)
    assert empty.value == () and full.value
    assert empty.frame.schema == full.frame.schema
    assert full.frame.schema["income_sum"] == pl.Decimal(38, 2)


def test_an_aggregated_column_of_the_wrong_type_is_refused_naming_it():
    frame = people().with_columns(pl.col("region").alias("label"), pl.lit(True).alias("flag"))
    with pytest.raises(ValueError, match="'label'"):
        prepare_table(frame, **{**QUERY, "keys": ["north"], "aggregations": [Sum("label", (0, 1))]})
    with pytest.raises(TypeError, match="'flag'"):
        prepare_table(frame, **{**QUERY, "keys": ["north"], "aggregations": [Sum("flag", (0, 1))]})


def test_a_longdouble_column_is_read_exactly_not_through_float64():
    """Arrow cannot hold long doubles: they reach the screening as exact num/den text (infinities clamp)."""
    values = np.array(["0.1", "1e-4000", "inf", "nan"], dtype=np.longdouble)
    frame = pd.DataFrame({"pid": [1, 2, 3, 4], "g": ["a", "a", "a", "a"], "v": values})
    exact = pd.DataFrame({"pid": [1, 2, 3, 4], "g": ["a"] * 4,
                          "v": [f"{n}/{d}" for n, d in (values[0].as_integer_ratio(), values[1].as_integer_ratio())]
                          + ["1e999999", None]})
    query = {"group_by": ["g"], "keys": ["a"], "aggregations": [Sum("v", (0, 10), Fraction(1, 2**58))],
             "id_column": "pid", "epsilon": 1, "missing": "drop"}
    assert seeded(frame, **query).value == seeded(exact, **query).value
    rounded = frame.assign(v=frame["v"].astype(np.float64))  # 0.1 as a double is 2 steps of 2**-58 away
    assert seeded(rounded, **query).value != seeded(frame, **query).value  # same seed, same noise: the data differ


def test_concurrent_executions_each_commit_to_their_own_aggregates():
    """The input of one execution is that execution's (its salt's) kept rows, even when several
    executions of one prepared table run at once (no state shared between them)."""
    from concurrent.futures import ThreadPoolExecutor

    rows = pl.DataFrame({"person": [i % 40 for i in range(400)], "group": [(i * 7) % 13 for i in range(400)],
                         "income": [(i * 7919) % 1000 for i in range(400)]})
    prepared = prepare_table(rows, group_by=["group"], aggregations=[Count(), Sum("income", (0, 1000))],
                             keys=list(range(13)), id_column="person", max_groups=2, max_rows=1, epsilon=1)
    seeds = [bytes([i]) * 32 for i in range(8)]
    alone = [prepared.executed(ChaChaSource(seed)).input_bytes() for seed in seeds]
    assert len(set(alone)) == len(seeds)  # each salt keeps other rows: a mix-up would show
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda seed: prepared.executed(ChaChaSource(seed)), seeds))
    assert [done.input_bytes() for done in together] == alone
