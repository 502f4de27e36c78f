"""The Spark engine computes the same exact aggregates as the in-memory (Polars) engine.

Same salt, same rows, any row order and any partitioning: the kept rows and hence every per-key
integer are identical. Lattice units of every Spark type follow securedp's exact rule, including the
cases where Spark's own casts round wrongly (0.005 at step 0.01), NaN, infinities, -0.0 and nulls.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

from securedp.engines import spark as spark_engine
from securedp.engines.polars import bounding
from securedp.lattice import Lattice, screen_units

SALT = bytes(range(16))


def rows(seed: int, n: int = 600):
    rng = np.random.default_rng(seed)  # test data only
    persons = rng.integers(0, 40, n)
    return pl.DataFrame({
        "person": persons,
        "region": rng.choice(["north", "south", "east", "wést", "z"], n),
        "band": rng.integers(0, 4, n),
        "u": rng.integers(-5, 6, n) * (1 + (persons % 3 == 0) * 10**9),
    })


def spark_table(spark, frame: pl.DataFrame, partitions: int, seed: int):
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed)
    return spark.createDataFrame(shuffled.to_pandas()).repartition(partitions)


def collect(result, keys: list[str]) -> dict:
    out = {}
    for row in result.collect():
        d = row.asDict()
        key = tuple(d[k] for k in keys)
        out[key] = {k: int(v) for k, v in d.items() if k not in keys}
    return out


def memory(frame: pl.DataFrame, keys, units, k, m, squares):
    agg = bounding.bound_and_aggregate(frame, person="person", keys=keys, units=units, max_groups=k,
                                       max_rows=m, salt=SALT, squares=squares)
    out = {}
    key_rows = list(agg.keys.iter_rows()) if keys else [()]
    assert len(key_rows) == len(agg.rows)
    for i, key in enumerate(key_rows):
        cell = {"_persons": agg.persons[i], "_rows": agg.rows[i]}
        if agg.total is not None:
            cell["_sum0"] = agg.total[i]
        if agg.total_squares is not None:
            cell["_sq0"] = agg.total_squares[i]
        out[tuple(key)] = cell
    return out


def with_squares(cells: dict) -> dict:
    for cell in cells.values():
        if "_hh0" in cell:
            cell["_sq0"] = (cell.pop("_hh0") << 64) + (cell.pop("_hl0") << 33) + cell.pop("_ll0")
    return cells


@pytest.mark.parametrize("keys, units, k, m, squares", [
    (["region"], "u", 2, 3, True),
    (["region", "band"], "u", 1, 1, False),
    (["band"], None, 3, 2, False),
    ([], "u", 1, 4, True),
])
@pytest.mark.parametrize("partitions", [1, 3])
def test_same_aggregates_as_in_memory(spark, keys, units, k, m, squares, partitions):
    frame = rows(partitions + k)
    expected = memory(frame, keys, units, k, m, squares)
    sdf = spark_table(spark, frame, partitions, seed=k + m)
    result = spark_engine.bound_and_aggregate(sdf, person="person", keys=keys, units=[units] if units else [],
                                              max_groups=k, max_rows=m, salt=SALT, squares=squares)
    assert with_squares(collect(result, keys)) == expected


def test_no_person_exceeds_the_bounds_and_other_salts_choose_differently(spark):
    frame = rows(7)
    sdf = spark_table(spark, frame, 2, seed=1)
    a = collect(spark_engine.bound_and_aggregate(sdf, person="person", keys=["region"], units=["u"], max_groups=1,
                                                 max_rows=1, salt=SALT), ["region"])
    b = collect(spark_engine.bound_and_aggregate(sdf, person="person", keys=["region"], units=["u"], max_groups=1,
                                                 max_rows=1, salt=bytes(16)), ["region"])
    assert sum(c["_rows"] for c in a.values()) == frame["person"].n_unique()  # one row per person
    assert all(c["_rows"] == c["_persons"] for c in a.values())
    assert a != b  # the salt decides (a test that could not tell salts apart could not fail)


VALUES = [0.005, 0.015, 2.675, -2.675, 0.125, -0.125, 1e300, -1e300, math.inf, -math.inf, math.nan, -0.0, 0.0,
          5e-324, 123456.785, None]


@pytest.mark.parametrize("step, bounds", [(Fraction(1, 100), (-1000, 1000)), (Fraction(1, 8), (-3, 3)),
                                          (Fraction(3), (-10**6, 10**6)), (Fraction(1, 10**12), (-1, 1))])
def test_lattice_units_of_doubles_strings_and_decimals(spark, step, bounds):
    lo_u, hi_u = Lattice(step).bounds_units(*bounds)
    spec = spark_engine.UnitSpec(step, lo_u, hi_u)
    strings = [None if v is None else repr(v) for v in VALUES] + ["1/3", "abc", " ", "1e-999999", "-12.5"]
    decimals = [decimal.Decimal(repr(v)).quantize(decimal.Decimal("1e-18"))
                if v is not None and math.isfinite(v) and abs(v) < 1e19 else None for v in VALUES]
    frame = spark.createDataFrame(
        [(i, VALUES[i] if i < len(VALUES) else None, strings[i],
          decimals[i] if i < len(decimals) else None) for i in range(len(strings))],
        "i long, d double, s string, m decimal(38,18)",
    )
    for column, column_values in (("d", VALUES), ("s", strings), ("m", decimals)):
        got = [r[0] for r in frame.orderBy("i").select(spark_engine.lattice_units(frame, column, spec)).collect()]
        column_values = list(column_values) + [None] * (len(strings) - len(column_values))
        for value, units in zip(column_values, got, strict=True):
            expected, _kept = screen_units(np.array([value], dtype=object), step, lo_u, hi_u, missing="drop",
                                          refuse_rows=False)
            assert units == (int(expected[0]) if len(expected) else None), (column, value)


@pytest.mark.parametrize("step, bounds", [(Fraction(1, 100), (-1000, 1000)), (Fraction(3), (-10**6, 10**6)),
                                          (Fraction(2, 3), (-7, 7)), (Fraction(10**6, 7), (-10**18, 10**18)),
                                          (Fraction(1, 10**9), (-10**9, 10**9))])
def test_lattice_units_of_integers(spark, step, bounds):
    lo_u, hi_u = Lattice(step).bounds_units(*bounds)
    spec = spark_engine.UnitSpec(step, lo_u, hi_u)
    values = [0, 1, -1, 2, -2, 3, 5, -5, 7, 10**6, -10**6, 2**62, -(2**63), 2**63 - 1, 1000, -1000, 999, None]
    frame = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "i long, x long")
    got = [r[0] for r in frame.orderBy("i").select(spark_engine.lattice_units(frame, "x", spec)).collect()]
    for value, units in zip(values, got, strict=True):
        if value is None:
            assert units is None
        else:
            assert units == int(screen_units([value], step, lo_u, hi_u)[0][0]), value


def test_spark_casts_would_round_wrongly_and_the_engine_does_not(spark):
    """The pitfall this engine avoids: Spark rounds a double's decimal string, not its value."""
    from pyspark.sql import functions as f

    frame = spark.createDataFrame([(0.005,), (2.675,)], "d double")
    naive = [r[0] for r in frame.select(f.bround(f.col("d") * 100, 0).cast("long")).collect()]
    spec = spark_engine.UnitSpec(Fraction(1, 100), -1000, 1000)
    exact = [r[0] for r in frame.select(spark_engine.lattice_units(frame, "d", spec)).collect()]
    assert exact == [1, 267]  # 0.005 is 0.005000000000000000104..., 2.675 is 2.67499999...
    assert naive != exact


def test_ansi_mode_is_required(spark):
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try:
        with pytest.raises(ValueError, match="ansi"):
            spark_engine.check_session(spark.createDataFrame([(1,)], "x long"))
    finally:
        spark.conf.set("spark.sql.ansi.enabled", "true")
