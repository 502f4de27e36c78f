"""Tumult Analytics on the query of ``bench_spark.py``: same Parquet rows, same bounds, local[2].

Tumult Analytics 0.21 pins ``pyspark<3.6`` and ``pandas<2`` on Python 3.11, so it cannot share
securedp's environment (pyspark 4.3, pandas 3); run it with its own packages, e.g.::

    /work/venv-peers/bin/pip install --target /tmp/tmlt_env tmlt.analytics
    PYTHONPATH=/tmp/tmlt_env /work/venv-peers/bin/python benchmarks/bench_spark_tumult.py 1000000

It reads ``/tmp/securedp-bench-<rows>.parquet`` (written by ``bench_spark.py``) and releases, over
the public keys ``range(10**4)``, a count, a sum and an average of ``income`` clamped to
[0, 200000], each at epsilon 1/3 (``PureDPBudget(1)`` in all), with ``AddRowsWithID("person")``
and the bounding ``MaxGroupsPerID(3)``, ``MaxRowsPerGroupPerID(5)``. Tumult answers one
aggregation per query (three Spark evaluations, where securedp runs one bounding pass), truncates
by its own hashed rule, and returns the average as a float. Same stages and clock as
``bench_spark.py``: session start (+ read), ``Session.from_dataframe``, and each ``evaluate``
(collected with ``toPandas``).
"""

from __future__ import annotations

import os
import sys
import time

import sympy
from pyspark.sql import SparkSession
from tmlt.analytics import (
    AddRowsWithID,
    KeySet,
    MaxGroupsPerID,
    MaxRowsPerGroupPerID,
    PureDPBudget,
    QueryBuilder,
    Session,
)
from tmlt.core.utils.exact_number import ExactNumber

GROUPS, MAX_GROUPS, MAX_ROWS, WIDTH = 10**4, 3, 5, 200_000


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = int(args[0]) if args else 10**7
    partitions = int(sys.argv[sys.argv.index("--partitions") + 1]) if "--partitions" in sys.argv else 8
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    t = time.perf_counter()
    spark = (SparkSession.builder.master("local[2]").appName("tumult-bench")
             .config("spark.sql.shuffle.partitions", str(partitions)).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.read.parquet(f"/tmp/securedp-bench-{rows}.parquet")
    start = time.perf_counter() - t
    t = time.perf_counter()
    session = Session.from_dataframe(PureDPBudget(1), "t", frame, AddRowsWithID(id_column="person"))
    setup = time.perf_counter() - t
    keys = KeySet.from_dict({"group": list(range(GROUPS))})

    def bounded() -> object:
        return (QueryBuilder("t").enforce(MaxGroupsPerID("group", MAX_GROUPS))
                .enforce(MaxRowsPerGroupPerID("group", MAX_ROWS)).groupby(keys))

    queries = {"count": bounded().count(), "sum": bounded().sum("income", 0, WIDTH),
               "average": bounded().average("income", 0, WIDTH)}
    times = {}
    for name, query in queries.items():
        t = time.perf_counter()
        out = session.evaluate(query, PureDPBudget(ExactNumber(sympy.Rational(1, 3)))).toPandas()
        times[name] = time.perf_counter() - t
        assert len(out) == GROUPS, (name, len(out))
    spark.stop()
    print(f"tumult {rows} rows, shuffle partitions {partitions}: session {start:.2f} s, from_dataframe {setup:.2f} s, "
          + ", ".join(f"{n} {s:.2f} s" for n, s in times.items())
          + f"; prepare+execute (from_dataframe + queries) {setup + sum(times.values()):.2f} s")


if __name__ == "__main__":
    main()
