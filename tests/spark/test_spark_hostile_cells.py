"""Spark and memory read hostile ids, keys and values alike (issue 25, item 4 of the tests).

For each table below (one hostile cell among ordinary ones), the same pandas rows as an in-memory table and as
a Spark DataFrame give:

* for the data holder, the same error in the same words (Spark names no row: a Spark table's rows have no
  order to name one by; a type refused by its schema is named in each system's words), or the same table;
* in an analyst-facing session, the same seeded table, cell for cell (the unusable row dropped on both), or
  the same refusal.

And a histogram on Spark is refused before anything is read, in both modes, saying so.
"""

from __future__ import annotations

import decimal
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest

from securedp import ChaChaSource, Session
from securedp.tables import Count, Sum

BASE = {"pid": [1, 2, 3, 4], "g": ["a", "b", "a", "b"], "v": [1.5, 2.0, 7.25, 3.0]}


def table(column: str, cell: Any, dtype: Any = None, **others: list[Any]) -> pd.DataFrame:
    """The base rows plus a fifth person whose ``column`` cell is ``cell`` (the column of ``dtype``)."""
    rows = {name: [*cells, {"pid": 5, "g": "a", "v": 4.0}[name]] for name, cells in BASE.items()}
    rows.update(others)
    rows[column] = [*rows[column][:-1], cell]
    frame = pd.DataFrame(rows)
    if dtype is not None:
        frame[column] = pd.Series(rows[column], dtype=dtype)
    return frame


HOSTILE: dict[str, tuple[pd.DataFrame, dict[str, Any]]] = {
    "negative integer id": (table("pid", -1), {}),
    "float id 2.5": (table("pid", 2.5), {}),
    "float id NaN": (table("pid", float("nan")), {}),
    "float id inf": (table("pid", float("inf")), {}),
    "float id 2**53": (table("pid", float(2**53)), {}),
    "float ids, integral": (table("pid", 6.0), {}),
    "decimal id 2.5": (table("pid", decimal.Decimal("2.5"), object, pid=[decimal.Decimal(i) for i in range(1, 6)]),
                       {}),
    "blank text id": (table("pid", "\t", pid=["p1", "p2", "p3", "p4", "p5"]), {}),
    "undecodable text id": (table("pid", "x\ufffd", pid=["p1", "p2", "p3", "p4", "p5"]), {}),
    "missing text id": (table("pid", None, pid=["p1", "p2", "p3", "p4", "p5"]), {}),
    "declared int id": (table("pid", "x", pid=["1", "02", "3", "+4", "5"]), {"schema": {"pid": "int"}}),
    "declared int ids, integral": (table("pid", "05", pid=["1", "02", "3", "+4", "5"]), {"schema": {"pid": "int"}}),
    "boolean id column": (table("pid", True, pid=[True, False, True, False, True]), {}),
    "blank key": (table("g", " "), {}),
    "missing key": (table("g", None), {}),
    "negative integer key": (table("g", -1, g=[1, 2, 1, 2, 1]), {"keys": [1, 2, -1]}),
    "float key 1.5": (table("g", 1.5, g=[1.0, 2.0, 1.0, 2.0, 1.0]), {"keys": [1, 2]}),
    "NaN value": (table("v", float("nan")), {}),
    "text value": (table("v", "HIV+", v=["1.5", "2", "7.25", "3", "4"]), {}),
    "blank text value": (table("v", "  ", v=["1.5", "2", "7.25", "3", "4"]), {}),
    "declared int value 2.5": (table("v", 2.5, v=[1.0, 2.0, 7.0, 3.0, 4.0]), {"schema": {"v": "int"}}),
    "boolean value column": (table("v", True, v=[True, False, True, False, True]), {}),
}


def released(data: Any, analyst_facing: bool, options: dict[str, Any]) -> tuple[Any, ...]:
    query = {"group_by": ["g"], "keys": options.get("keys", ["a", "b"]), "id_column": "pid",
             "aggregations": [Count(), Sum("v", (0, 10), "0.25")], "epsilon": 1,
             **{k: v for k, v in options.items() if k != "keys"}}
    try:
        return ("released", Session(epsilon=10, rng=ChaChaSource(bytes(32)),
                                    analyst_facing=analyst_facing).table(data, **query).value)
    except Exception as error:
        return (type(error).__name__, str(error))


def placeless(seen: tuple[Any, ...]) -> tuple[Any, ...]:
    """The in-memory outcome with its row's place removed, and a refused type's name left out."""
    if seen[0] == "released":
        return seen
    return (seen[0], re.sub(r"has type \S+:", "has type T:", re.sub(r", row \d+:", ":", seen[1])))


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("analyst_facing", [False, True], ids=["data holder", "analyst-facing"])
def test_spark_reads_a_hostile_cell_as_memory_does(spark, name: str, analyst_facing: bool) -> None:
    frame, options = HOSTILE[name]
    memory = released(frame, analyst_facing, options)
    distributed = released(spark.createDataFrame(frame).repartition(2), analyst_facing, options)
    assert placeless(distributed) == placeless(memory), (name, memory, distributed)


def test_spark_names_the_hostile_cell_in_the_memory_words(spark) -> None:
    """The words themselves (not only their agreement): the column, what the cell holds, how many."""
    frame, _ = HOSTILE["negative integer id"]
    seen = released(spark.createDataFrame(frame), False, {})
    assert seen == ("ValueError", "column 'pid': negative id -1 (pandas.factorize codes a missing id as -1; a person "
                                  "id is an integer >= 0 or text) (1 row(s) without a usable id); fill in or remove "
                                  "those rows")
    frame, _ = HOSTILE["text value"]
    seen = released(spark.createDataFrame(frame), False, {})
    assert seen == ("ValueError", "column 'v': not a number ('HIV+') (1 unusable cell(s)); clean the data, or pass "
                                  "missing='drop' or missing='impute' with fill=<number>")


@pytest.mark.parametrize("analyst_facing", [False, True])
def test_a_histogram_on_spark_is_refused_before_anything_is_read(spark, analyst_facing: bool) -> None:
    from securedp.tables.spec import Histogram

    frame = spark.createDataFrame(pd.DataFrame(BASE))
    session = Session(epsilon=10, rng=ChaChaSource(bytes(32)), analyst_facing=analyst_facing)
    with pytest.raises(ValueError, match="the Spark engine computes no histogram"):
        session.table(frame, group_by=["g"], keys=["a", "b"], id_column="pid",
                      aggregations=[Histogram("v", bins=[0, 5, 10])], epsilon=1)
    assert session.spent == 0
    memory = Session(epsilon=10, rng=ChaChaSource(bytes(32)), analyst_facing=analyst_facing).table(
        pd.DataFrame(BASE), group_by=["g"], keys=["a", "b"], id_column="pid",
        aggregations=[Histogram("v", bins=[0, 5, 10])], epsilon=1)
    assert len(memory.value) == 2  # the in-memory engine computes it


def test_the_hostile_tables_differ_from_the_base_only_in_the_hostile_cell() -> None:
    """A check of the table above (no Spark): each hostile table has five rows, the fifth holding the cell."""
    for name, (frame, _) in HOSTILE.items():
        assert len(frame) == 5, name
        assert not np.array_equal(frame.iloc[:4].to_numpy(), frame.iloc[1:].to_numpy()), name
