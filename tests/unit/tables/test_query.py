"""One query type for one route (issue 41): a release of one column is the query of a table with no group column.

Both record shapes written so far (a table's, ``"statistic": "table"``, and one column's, flat) are read by
:meth:`securedp.tables.query.Query.from_json` and written back to the same bytes; the old import paths
(``securedp.audit.query.Query``, ``securedp.audit.table_query.TableQuery``) still build the same queries, with a
deprecation warning.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from securedp import ChaChaSource
from securedp.tables.query import AggregationQuery, Query

COLUMN_RECORDS = [  # the shape every `securedp release --column --stat` record has had
    {"statistic": "count", "column": "x", "epsilon": "1/10", "bounds": None, "q": None, "bins": None,
     "categories": None, "max_contributions": 1, "id_column": None},
    {"statistic": "quantile", "column": "x", "rho": "1/50", "bounds": ["0", "1000"], "q": "9/10", "bins": None,
     "categories": None, "max_contributions": 2, "id_column": "p", "lattice": "1/2", "missing": "drop",
     "analyst_facing": True, "fallback": "1/2"},
    {"statistic": "histogram", "column": "x", "epsilon": "1", "bounds": None, "q": None, "bins": ["0", "5", "10"],
     "categories": None, "max_contributions": 1, "id_column": None, "encoding": "latin-1",
     "schema": {"x": "int"}},
    {"statistic": "trimmed_mean", "column": "x", "epsilon": "1", "bounds": ["0", "10"], "q": None, "bins": None,
     "categories": None, "max_contributions": 1, "id_column": None, "missing": "impute", "fill": "3",
     "trim": "1/5"},
]
TABLE_RECORD = {
    "statistic": "table", "group_by": ["g"],
    "aggregations": [{"kind": "count"}, {"kind": "quantile", "column": "x", "bounds": [0, 10], "q": "1/4",
                                         "fallback": 0}],
    "epsilon": 1, "rho": None, "delta": "1/1000000", "keys": None, "id_column": "p", "max_groups": 2,
    "max_rows": 3, "selection": "laplace", "alpha": "1/20", "missing": "raise", "fill": None,
    "delimiter": ";", "schema": {"x": "int"},
}


@pytest.mark.parametrize("record", COLUMN_RECORDS, ids=lambda r: r["statistic"])
def test_a_column_record_is_read_as_the_one_cell_query_and_written_back_to_the_byte(record: dict) -> None:
    query = Query.from_json(record)
    assert query.one_column and query.group_by == () and len(query.aggregations) == 1
    assert query.statistic == record["statistic"] and query.column == "x"
    assert query.max_contributions == query.max_rows == record["max_contributions"]
    assert json.dumps(query.to_json()) == json.dumps(record)


def test_a_table_record_is_read_and_written_back_to_the_byte() -> None:
    query = Query.from_json(TABLE_RECORD)
    assert not query.one_column and query.statistic == "table"
    assert json.dumps(query.to_json()) == json.dumps(TABLE_RECORD)
    with pytest.raises(AttributeError):
        query.bounds  # noqa: B018 - a table's bounds are its aggregations'


def test_the_column_query_is_the_one_cell_table_of_the_same_query_to_the_byte() -> None:
    data = {"x": [3, 1, 4, 1, 5, 9, 2, 6], "p": [1, 2, 3, 4, 5, 6, 7, 8]}
    column = Query.of_column("sum", "x", Fraction(1), bounds=(Fraction(0), Fraction(10)), id_column="p").check()
    table = Query((), (AggregationQuery("sum", "x", (Fraction(0), Fraction(10))),), epsilon=Fraction(1),
                  id_column="p")
    one = column.prepare(data).execute(ChaChaSource(bytes(32)))
    cell = table.prepare(data).execute(ChaChaSource(bytes(32)))
    assert one.value == cell.value[0][0]
    assert json.dumps(one.record()["parameters"], sort_keys=True) == \
        json.dumps(cell.record()["parameters"], sort_keys=True)


def test_a_column_record_with_an_option_its_statistic_does_not_take_is_refused() -> None:
    with pytest.raises(ValueError, match="--trim applies to the trimmed_mean statistic only"):
        Query.from_json({**COLUMN_RECORDS[0], "trim": "1/5"})
    with pytest.raises(ValueError, match="malformed query"):
        Query.from_json({"statistic": "count", "epsilon": "1"})


def test_the_old_paths_build_the_same_queries_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match="securedp.tables.query"):
        from securedp.audit.query import Query as OldQuery
    with pytest.warns(DeprecationWarning, match="securedp.tables.query.Query"):
        from securedp.audit.table_query import TableQuery
    assert OldQuery("count", "x", Fraction(1, 10)) == Query.from_json(COLUMN_RECORDS[0])
    assert OldQuery.from_json(COLUMN_RECORDS[0]) == Query.from_json(COLUMN_RECORDS[0])
    assert TableQuery is Query
    from securedp.audit.table_query import AggregationQuery as OldAggregation  # the command's parser uses it

    assert OldAggregation is AggregationQuery
