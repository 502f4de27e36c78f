"""The same seeded table from a pandas DataFrame and from a Spark DataFrame of the same rows.

Any row order and any partitioning: the release is identical, cell for cell (the salt and every noise
value come from the same ChaCha stream; the engine only changes who computes the exact integers).
"""

from __future__ import annotations

import decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from securedp import ChaChaSource
from securedp.tables import IQR, Count, Mean, Median, Persons, Quantile, Sum, Variance, prepare_table


def people(n: int = 1500, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)  # test data only
    frame = pd.DataFrame({
        "pid": rng.integers(0, 200, n),
        "region": rng.choice(["north", "south", "east", "wést"], n),
        "band": rng.integers(0, 3, n),
        "income": np.round(rng.uniform(-50, 1000, n), 3),
        "age": rng.integers(0, 100, n),
    })
    frame.loc[::97, "income"] = np.nan  # unusable records, dropped by the policy below
    frame.loc[::89, "income"] = 0.005   # a tie at half a step of 0.01 (exactly, 0.005 is slightly above it)
    return frame


QUERIES = [
    {"group_by": ["region"], "keys": ["north", "south", "west"], "epsilon": 1,
         "aggregations": [Count(), Persons(), Sum("income", (0, 500), "0.01"), Mean("age", (0, 120)),
                       Variance("age", (0, 120), 1), Median("age", (0, 120)), Quantile("income", (0, 500), q="0.9")]},
    {"group_by": ["region", "band"], "keys": None, "delta": "1e-6", "epsilon": 2,  # the released count selects
         "aggregations": [Count(), Sum("income", (-100, 1000), "0.5")]},
    {"group_by": ["region", "band"], "keys": None, "delta": "1e-6", "epsilon": 2, "selection": "laplace",
         "aggregations": [Persons(), Sum("income", (-100, 1000), "0.5")]},  # a separate selection, when asked
    {"group_by": ["region"], "keys": None, "delta": "1e-6", "epsilon": 2, "selection": "optimal",
         "aggregations": [Mean("income", (0, 100), "0.01")]},
    {"group_by": [], "rho": "1/2", "aggregations": [Count(), Sum("income", (0, 100), "0.01")]},
    {"group_by": ["region"], "keys": None, "delta": "1e-6", "rho": "1/2",  # Gaussian thresholding
         "aggregations": [Count(), Mean("age", (0, 120))]},
    {"group_by": ["region"], "keys": ["north", "south", "west"], "epsilon": 1,  # issue 17's new aggregation
         "aggregations": [Count(), IQR("age", (0, 120)), IQR("income", (0, 500), "0.5")]},
]


@pytest.mark.parametrize("query", range(len(QUERIES)))
def test_identical_tables_from_pandas_and_spark(spark, query):
    data = people()
    options = dict(id_column="pid", max_groups=2, max_rows=3, missing="drop", **QUERIES[query])
    memory = prepare_table(data, **options).execute(ChaChaSource(bytes([query]) * 32))
    shuffled = data.sample(frac=1.0, random_state=query)
    frame = spark.createDataFrame(shuffled).repartition(3 + query)
    distributed = prepare_table(frame, **options).execute(ChaChaSource(bytes([query]) * 32))
    assert distributed.value == memory.value
    assert distributed.labels == memory.labels
    assert distributed.parameters == memory.parameters
    assert exact_rows(distributed.frame.toPandas()) == exact_rows(memory.frame)


def exact_rows(frame: pd.DataFrame) -> list[tuple]:
    """Rows with every number as an exact Fraction (Decimal scales may differ between the two frames)."""
    def exact(v):
        return Fraction(v) if isinstance(v, (int, decimal.Decimal, np.integer)) else v
    return [tuple(exact(v) for v in row) for row in frame.itertuples(index=False)]


def test_spark_refuses_bad_cells_before_anything_is_drawn(spark):
    frame = spark.createDataFrame(pd.DataFrame({"pid": [1, 2], "region": ["a", None], "income": [1.0, 2.0]}))
    with pytest.raises(ValueError, match="region"):
        prepare_table(frame, group_by=["region"], keys=["a"], id_column="pid", epsilon=1)
    frame = spark.createDataFrame(pd.DataFrame({"pid": [1, 2], "region": ["a", "a"], "income": [1.0, None]}))
    with pytest.raises(ValueError, match="income"):
        prepare_table(frame, group_by=["region"], keys=["a"], id_column="pid", epsilon=1,
                      aggregations=[Sum("income", (0, 10))])


def test_a_spark_table_with_no_released_cell_keeps_its_schema(spark):
    rows = pd.DataFrame({"pid": [1, 2, 3], "region": ["a", "a", "b"], "income": [1.0, 2.0, 3.0]})
    options = {"group_by": ["region"], "aggregations": [Count(), Sum("income", (0, 10), "0.5")], "id_column": "pid",
                   "epsilon": 1, "keys": None, "delta": "1e-9"}
    empty = prepare_table(spark.createDataFrame(rows), **options).execute(ChaChaSource(bytes(32)))
    assert empty.value == prepare_table(rows, **options).execute(ChaChaSource(bytes(32))).value == ()
    assert empty.frame.count() == 0
    assert dict(empty.frame.dtypes)["income_sum"] == "decimal(38,1)"


def test_every_value_column_is_bounded_in_one_job_with_the_in_memory_rows(spark, monkeypatch):
    """Issue 20: with no value dropped (``missing="impute"`` or ``"raise"``), the counts and every value
    column come from one bounding job (one :func:`bound_and_aggregate`), the squares only where a variance
    asks; the table is the in-memory one, cell for cell. The checks of ids, keys and values are one job."""
    from securedp.engines.spark import bounding, functions

    data = people()
    options = {"id_column": "pid", "max_groups": 2, "max_rows": 2, "missing": "impute", "fill": 0,
               "group_by": ["region"], "keys": ["north", "south", "west"], "epsilon": 1,
               "aggregations": [Count(), Sum("income", (0, 500), "0.01"), Mean("age", (0, 120)),
                                Variance("age", (0, 120), 1), Sum("band", (0, 2)), Median("age", (0, 120))]}
    memory = prepare_table(data, **options).execute(ChaChaSource(bytes(32)))
    jobs = {"bound": [], "checks": 0}
    bound, checks = bounding.bound_and_aggregate, functions.check_cells

    def counted_bound(*args, **kwargs):
        jobs["bound"].append((list(kwargs["units"]), list(kwargs["squares"])))
        return bound(*args, **kwargs)

    def counted_checks(*args, **kwargs):
        jobs["checks"] += 1
        return checks(*args, **kwargs)

    monkeypatch.setattr(bounding, "bound_and_aggregate", counted_bound)
    monkeypatch.setattr(functions, "check_cells", counted_checks)
    frame = spark.createDataFrame(data.sample(frac=1.0, random_state=7)).repartition(3)
    distributed = prepare_table(frame, **options).execute(ChaChaSource(bytes(32)))
    assert distributed.value == memory.value and distributed.parameters == memory.parameters
    assert jobs["checks"] == 1
    assert len(jobs["bound"]) == 1  # counts, both sums, the mean and the variance: one job
    units, squares = jobs["bound"][0]
    # income; age on the mean's lattice (the bounds' rule); age on step 1 (the variance, with its squares,
    # and the median of the integer column); band
    assert len(units) == 4 and squares.count(True) == 1


def test_a_value_refused_by_the_one_check_job_names_its_column(spark):
    frame = spark.createDataFrame(pd.DataFrame({"pid": [1, 2], "region": ["a", "a"], "age": [3, 4],
                                                "income": [1.0, float("nan")]}))
    with pytest.raises(ValueError, match=r"^column 'income': blank cell \(1 unusable cell\(s\)\)"):
        prepare_table(frame, group_by=["region"], keys=["a"], id_column="pid", epsilon=1,
                      aggregations=[Sum("age", (0, 10)), Sum("income", (0, 10))])


def test_spark_reads_blank_and_undecodable_text_by_the_one_rule(spark):
    """Spark's ``rlike`` of ``UNUSABLE_TEXT`` agrees with Python on every whitespace character, its
    neighbours and a spread of other code points; and a table whose id is one of the odd texts gets the
    in-memory engine's verdict (Spark's ``trim`` used to strip spaces only: ``"\\t"`` was a person)."""
    from pyspark.sql import functions as f

    from securedp.reading.cells import UNUSABLE_TEXT, WHITESPACE, is_unusable_text

    spaces = [c for c in map(chr, range(0x3001)) if c.isspace()]
    near = {chr(o + d) for c in spaces for d in (-1, 0, 1) for o in [ord(c)]}
    texts = sorted(near | {chr(c) for c in range(0x20, 0x110000, 997) if not 0xD800 <= c < 0xE000}
                   | {"", " a", "a\n", "\n\n", "x\ufffd", "\u200b", WHITESPACE.replace("-", "")})
    frame = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "i int, t string")
    rows = frame.select("i", f.col("t").rlike(UNUSABLE_TEXT).alias("bad")).collect()
    assert {r["i"]: r["bad"] for r in rows} == {i: is_unusable_text(t) for i, t in enumerate(texts)}
    for odd in ["\t", "\x1c", "\u3000", "\u200b", "x\ufffd"]:
        data = pd.DataFrame({"pid": ["p1", odd, "p2"], "region": ["a", "a", "a"]})
        verdicts = []
        for table in (data, spark.createDataFrame(data)):
            try:
                prepare_table(table, group_by=["region"], keys=["a"], id_column="pid", epsilon=1)
                verdicts.append("released")
            except ValueError as error:
                verdicts.append(str(error))
        if not is_unusable_text(odd):
            assert verdicts == ["released"] * 2, (odd, verdicts)
        else:  # the same words in both engines (Spark names no row: its rows have no order)
            assert verdicts[0].startswith("column 'pid', row 1: ") and verdicts[1].startswith("column 'pid': ")
            assert verdicts[0].removeprefix("column 'pid', row 1: ") == verdicts[1].removeprefix("column 'pid': ")


def test_spark_and_memory_read_undecodable_ids_alike(spark, tmp_path):
    """A Parquet file whose ids are not UTF-8: Spark decodes them lossily (U+FFFD) and the in-memory
    reader does the same (``securedp.reading.text``): both refuse the data holder naming ``pid`` and
    release the same seeded table in an analyst-facing session."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from securedp import Session
    from securedp.tables import Count

    cells = [b"a\xff", b"b", b"c", b"a\xfe"]
    offsets = np.cumsum([0, *map(len, cells)]).astype(np.int32)
    ids = pa.Array.from_buffers(pa.string(), 4, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(cells))])
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"pid": ids, "g": ["x"] * 4}), path)
    query = {"id_column": "pid", "group_by": ["g"], "keys": ["x"], "aggregations": [Count()]}
    for data in (str(path), spark.read.parquet(str(path))):
        with pytest.raises(ValueError, match="'pid'"):
            prepare_table(data, epsilon=1, **query)
    values = [Session(epsilon=1, rng=ChaChaSource(bytes(32)), analyst_facing=True).table(data, epsilon="1/2",
                                                                                        **query).value
              for data in (str(path), spark.read.parquet(str(path)))]
    assert values[0] == values[1]


@pytest.mark.parametrize("role", ["region", "pid", "income"])
def test_a_column_named_like_an_engine_column_gives_the_in_memory_table(spark, role):
    """Spark's own columns (``_rows``, ``_kept0``, ``_units0`` ...) never meet the caller's: the group columns take
    the engine's names inside it, as in memory (tests/unit/engines/test_column_names.py). Before, a group column
    named ``_pair_digest`` changed the release and six of these names stopped it with Spark's own error."""
    rng = np.random.default_rng(5)  # test data only
    data = pd.DataFrame({"pid": rng.integers(0, 40, 300), "region": rng.choice(["a", "b"], 300),
                         "income": rng.integers(0, 10, 300)})
    for name in ("_units0", "_rows", "_kept0", "_n", "_sum0", "_persons", "_group_rank", "_pair_digest",
                 "_row_digest0"):
        named = {"region": "region", "pid": "pid", "income": "income", role: name}
        options = {"aggregations": [Count(), Persons(), Sum(named["income"], (0, 10)),
                                    Median(named["income"], (0, 10))],
                   "group_by": [named["region"]], "keys": ["a", "b"], "id_column": named["pid"], "epsilon": 5,
                   "max_groups": 1, "max_rows": 2}
        renamed = data.rename(columns={role: name})
        memory = prepare_table(renamed, **options).execute(ChaChaSource(bytes(32)))
        distributed = prepare_table(spark.createDataFrame(renamed), **options).execute(ChaChaSource(bytes(32)))
        assert distributed.value == memory.value, name
