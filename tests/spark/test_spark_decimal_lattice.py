"""Issue 42.3 (c) on Spark: a ``DecimalType(p, s)`` value column takes step ``10**-s`` by default, as the same
column in memory (Arrow ``decimal128(p, s)``) does, and the two releases are the same bytes."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pyarrow as pa

from securedp import ChaChaSource
from securedp.reading.types import typed_steps
from securedp.tables import Mean, Median, Sum, table

PRICES = [Decimal(v) / 100 for v in (125, 250, 99, 310, 250, 475, 120, 33, 199, 205)]


def test_a_spark_decimal_column_takes_its_scale_and_equals_memory(spark):
    from pyspark.sql.types import DecimalType, StringType, StructField, StructType

    rows = [("a" if i % 2 else "b", p) for i, p in enumerate(PRICES)]
    schema = StructType([StructField("g", StringType()), StructField("price", DecimalType(10, 2))])
    frame = spark.createDataFrame(rows, schema=schema)
    memory = pa.table({"g": [g for g, _ in rows], "price": pa.array(PRICES, type=pa.decimal128(10, 2))})
    assert typed_steps(frame, ["g", "price"]) == typed_steps(memory, ["g", "price"]) == {"price": Fraction(1, 100)}
    query = {"group_by": ["g"], "keys": ["a", "b"], "epsilon": 1,
             "aggregations": [Median("price", (0, 6)), Sum("price", (0, 6)), Mean("price", (0, 6))]}
    on_spark = table(frame, rng=ChaChaSource(bytes(32)), **query)
    in_memory = table(memory, rng=ChaChaSource(bytes(32)), **query)
    assert on_spark.parameters == in_memory.parameters
    assert on_spark.value == in_memory.value
    assert on_spark.parameters["price_median"]["lattice_step"] == Fraction(1, 100)
    assert on_spark.parameters["price_sum"]["lattice_step"] == Fraction(1, 100)
    assert on_spark.parameters["price_mean"]["lattice_step"] == Fraction(1, 2**14)
