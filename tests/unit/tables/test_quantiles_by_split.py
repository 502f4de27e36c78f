"""Several quantiles in tables (issue 42.2): the statistic ``quantiles`` of the one list as a table aggregation
(:class:`securedp.tables.QuantilesBySplit`, the recursive split), on Polars and pandas, in a recorded query, and
its levels' declared bound."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import polars as pl
import pytest

import securedp
import securedp.tables.split_quantiles as split_module
from securedp import ChaChaSource
from securedp.cli.example_data import PATH as EXAMPLE
from securedp.hazmat.exact.bounds import MAX_LEVELS
from securedp.mechanisms import quantile
from securedp.tables import QuantilesBySplit
from securedp.tables.query import AggregationQuery, Query
from securedp.tables.spec import KINDS, STATISTICS

DECILES = tuple(Fraction(i, 10) for i in range(1, 10))
KEYS = ["north", "south", "east", "west"]


def released(frame: object) -> securedp.tables.TableRelease:
    return securedp.table(frame, group_by=["region"], keys=KEYS, id_column="person_id", max_rows=2,
                          aggregations=[QuantilesBySplit("income", (0, 200_000), "0.01", qs=DECILES)], epsilon=1,
                          rng=ChaChaSource(bytes(32)))


def test_deciles_per_group_on_polars_and_pandas_are_the_same_release() -> None:
    on_polars, on_pandas = released(pl.read_csv(EXAMPLE)), released(pd.read_csv(EXAMPLE))
    assert on_polars.value == on_pandas.value and on_polars.record()["parameters"] == on_pandas.record()["parameters"]
    assert isinstance(on_polars.frame, pl.DataFrame) and isinstance(on_pandas.frame, pd.DataFrame)
    assert on_polars.labels == ("region", *(f"income_quantiles_{i}" for i in range(9)))
    for row in on_polars.value:
        assert list(row[1:]) == sorted(row[1:])  # monotone in each cell
    split = on_polars.parameters["income_quantiles"]
    assert split["q"] == list(DECILES) and len(split["rank_error_bounds"]) == 9 and split["depths"] == 4


def test_quantiles_is_a_table_statistic_of_the_one_list_and_of_the_command() -> None:
    entry = STATISTICS["quantiles"]
    assert KINDS["quantiles"] is entry and "quantiles" in STATISTICS.commands and entry.make is QuantilesBySplit
    made = entry.build("income", (0, 200_000), "0.01", None, qs=DECILES)
    assert made == QuantilesBySplit("income", (0, 200_000), "0.01", qs=DECILES)
    with pytest.raises(ValueError, match="three or more levels"):
        entry.build("income", (0, 200_000), None, None, qs=(Fraction(1, 4), Fraction(3, 4)))
    with pytest.raises(ValueError, match="increasing order"):
        entry.build("income", (0, 200_000), None, None, qs=DECILES[::-1])


def test_a_recorded_table_query_of_quantiles_round_trips_and_is_the_python_table() -> None:
    query = Query(("region",), (AggregationQuery("quantiles", "income", (Fraction(0), Fraction(200_000)),
                                                 Fraction(1, 100), qs=DECILES),),
                  epsilon=Fraction(1), keys=tuple((k,) for k in KEYS), id_column="person_id", max_rows=2)
    assert Query.from_json(query.to_json()) == query
    table = query.prepare(EXAMPLE).execute(ChaChaSource(bytes(32)))
    assert table.value == released(pl.read_csv(EXAMPLE)).value


def test_the_table_aggregation_has_one_name_of_its_own() -> None:
    """Issue 42.2: two classes were named ``Quantiles`` (the table's split and the mechanisms' separate
    selections); the table aggregation, never in a release, keeps no alias."""
    assert QuantilesBySplit.__module__ == split_module.__name__ and not hasattr(split_module, "Quantiles")
    assert quantile.Quantiles.__name__ == "Quantiles" and QuantilesBySplit.__name__ != quantile.Quantiles.__name__


def test_more_levels_than_the_declared_bound_are_refused_before_any_bit_is_read() -> None:
    source = ChaChaSource(bytes(32))
    levels = [Fraction(i, MAX_LEVELS + 2) for i in range(1, MAX_LEVELS + 2)]
    with pytest.raises(ValueError, match="MAX_LEVELS"):
        securedp.quantiles([1, 2, 3], levels, bounds=(0, 10), epsilon=1, rng=source)
    assert source.bytes_served == 0
    at_most = securedp.quantiles([1, 2, 3], levels[:MAX_LEVELS], bounds=(0, 10), lattice=1, epsilon=1,
                                 rng=ChaChaSource(bytes(32)))
    assert len(at_most.value) == MAX_LEVELS


def test_the_plan_states_each_levels_rank_error_before_anything_is_drawn() -> None:
    prepared = securedp.prepare_table(pl.read_csv(EXAMPLE), group_by=["region"], keys=KEYS, id_column="person_id",
                                      max_rows=2, epsilon=1,
                                      aggregations=[QuantilesBySplit("income", (0, 200_000), "0.01", qs=DECILES)])
    assert prepared.plan is not None
    (output,) = prepared.plan.outputs
    stated = prepared.execute(ChaChaSource(bytes(32))).parameters["income_quantiles"]["rank_error_bounds"]
    assert output.level_rank_errors == tuple(zip(DECILES, stated, strict=True))
    assert output.rank_error_bound == max(stated)
    each = ", ".join(f"q 0.{i}: {r:,}" for i, r in enumerate(stated, start=1))
    assert f"by the recursive split, each level's rank error at most (rows) {each}" in prepared.plan.lines()[-1]
