"""Issue 42.3 (c): a decimal column's declared scale is its default grid. A column whose TYPE is a decimal of scale
``s`` (Arrow ``decimal128``/``decimal256``, Polars ``Decimal``, pandas ``ArrowDtype`` of an Arrow decimal, Spark
``DecimalType``, a Parquet schema) takes step ``10**-s`` when no lattice is given, for sums, quantiles and
interquartile ranges, by every path: one-column releases, tables of every kind, the command reading Parquet, its
plan and dry run; CSV cells and Python ``Decimal`` objects have no declared scale. The scale is schema (public): a
missing or changed cell never changes the lattice.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import securedp
from securedp import ChaChaSource
from securedp.reading.types import typed_step
from securedp.tables import IQR, Mean, Median, Sum

SEED = bytes(32)
CENTS = [Decimal("1.25"), Decimal("2.50"), Decimal("0.99"), Decimal("3.10"), Decimal("2.50")]
HUNDREDTH = Fraction(1, 100)

Command = Callable[[list[str]], tuple[int, str, str]]

COLUMNS: dict[str, tuple[Any, Fraction | None]] = {
    "pyarrow decimal128(10, 2)": (pa.array(CENTS, type=pa.decimal128(10, 2)), HUNDREDTH),
    "pyarrow decimal256(40, 5)": (pa.array(CENTS, type=pa.decimal256(40, 5)), Fraction(1, 10**5)),
    "pyarrow chunked decimal128(10, 2) with null": (pa.chunked_array([[*CENTS, None]], type=pa.decimal128(10, 2)),
                                                    HUNDREDTH),
    "pyarrow decimal128(5, -2)": (pa.array([Decimal("1E+2")], type=pa.decimal128(5, -2)), Fraction(100)),
    "polars Decimal(10, 2) with null": (pl.Series([*CENTS, None], dtype=pl.Decimal(10, 2)), HUNDREDTH),
    "polars Decimal(38, 3)": (pl.Series(CENTS, dtype=pl.Decimal(38, 3)), Fraction(1, 1000)),
    "pandas ArrowDtype decimal128(10, 2)": (pd.Series(CENTS, dtype=pd.ArrowDtype(pa.decimal128(10, 2))), HUNDREDTH),
    "pandas ArrowDtype int64": (pd.Series([1, 2], dtype=pd.ArrowDtype(pa.int64())), Fraction(1)),
    "pandas object of Decimal": (pd.Series(CENTS, dtype=object), None),
    "numpy object of Decimal": (np.array(CENTS, dtype=object), None),
    "list of Decimal": (CENTS, None),
    "polars Float64": (pl.Series([float(c) for c in CENTS]), None),
}


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_the_scale_is_read_from_the_type(name: str) -> None:
    column, step = COLUMNS[name]
    assert typed_step(column) == step


def _median_step(column: Any, **options: Any) -> Fraction:
    release = securedp.median(column, bounds=(0, 6), epsilon=1, missing="drop", rng=ChaChaSource(SEED), **options)
    return Fraction(release.parameters["data_median"]["lattice_step"])


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_a_decimal_column_s_default_lattice_is_its_scale(name: str) -> None:
    column, step = COLUMNS[name]
    expected = step if step is not None else Fraction(1, 2**18)  # else the quantiles' bounds rule on (0, 6)
    assert _median_step(column) == expected
    assert _median_step(column, lattice="1/8") == Fraction(1, 8)  # a given lattice wins


def test_a_negative_scale_is_whole_powers_of_ten() -> None:
    column = pa.array([Decimal("1E+2"), Decimal("3E+2")], type=pa.decimal128(5, -2))
    with pytest.raises(ValueError, match="no point of the lattice of step 100 lies in the bounds"):
        securedp.median(column, bounds=(10, 60), epsilon=1, rng=ChaChaSource(SEED))  # as step 1 on (0.2, 0.7)
    release = securedp.sum(column, bounds=(0, 1000), epsilon=1, rng=ChaChaSource(SEED))
    assert release.parameters["data_sum"]["lattice_step"] == 100


def test_sums_and_iqr_keep_the_grid_means_keep_the_bounds_rule() -> None:
    column = pl.Series(CENTS, dtype=pl.Decimal(10, 2))
    assert securedp.sum(column, bounds=(0, 6), epsilon=1, rng=ChaChaSource(SEED)).parameters["data_sum"][
        "lattice_step"] == HUNDREDTH
    assert securedp.iqr(column, bounds=(0, 6), epsilon=1, rng=ChaChaSource(SEED)).parameters["data_iqr"][
        "lattice_step"] == HUNDREDTH
    mean = securedp.mean(column, bounds=(0, 6), epsilon=1, rng=ChaChaSource(SEED))
    assert mean.parameters["data_mean"]["lattice_step"] == Fraction(1, 2**14)  # the bounds' rule on (0, 6)


def test_bounds_beyond_reach_of_the_scale_keep_the_bounds_rule() -> None:
    """decimal(38, 18) (Spark's type for Python ``Decimal`` values): bounds (0, 10**6) are 10**24 units, beyond
    the ``2**62`` units a table's bounds may span, so the bounds' rule applies; bounds (0, 4) are within it."""
    column = pa.array(CENTS, type=pa.decimal128(38, 18))
    within = securedp.median(column, bounds=(0, 4), epsilon=1, rng=ChaChaSource(SEED))
    assert within.parameters["data_median"]["lattice_step"] == Fraction(1, 10**18)
    wide = securedp.median(column, bounds=(0, 10**6), epsilon=1, rng=ChaChaSource(SEED))
    assert wide.parameters["data_median"]["lattice_step"] == Fraction(1, 2)  # 2**20 to 2**21 steps over 10**6


def test_neighbours_with_one_schema_get_one_lattice() -> None:
    """One row more, or a cell with more digits than the others: the type, not the cells, fixes the lattice."""
    base = pl.Series(CENTS, dtype=pl.Decimal(10, 2))
    for neighbour in (base.append(pl.Series([None], dtype=pl.Decimal(10, 2))),
                      base.append(pl.Series([Decimal("5")], dtype=pl.Decimal(10, 2)))):
        assert _median_step(neighbour) == _median_step(base) == HUNDREDTH


def _prices() -> pl.DataFrame:
    cents = [Decimal(v) / 100 for v in (125, 250, 99, 310, 250, 475, 120, 33)]
    return pl.DataFrame({"g": ["a", "b"] * 4, "price": pl.Series(cents, dtype=pl.Decimal(10, 2))})


@pytest.mark.parametrize("kind", ["polars", "lazy", "pandas", "pyarrow", "parquet"])
def test_tables_take_the_scale_and_equal_the_one_column_release(kind: str, tmp_path: Path) -> None:
    frame = _prices()
    table: Any = {"polars": frame, "lazy": frame.lazy(), "pandas": frame.to_pandas(types_mapper=pd.ArrowDtype),
                  "pyarrow": frame.to_arrow()}.get(kind)
    if kind == "parquet":
        table = tmp_path / "t.parquet"
        frame.write_parquet(table)
    release = securedp.table(table, epsilon=1, rng=ChaChaSource(SEED),
                             aggregations=[Median("price", (0, 6)), Sum("price", (0, 6)), IQR("price", (0, 6)),
                                           Mean("price", (0, 6))])
    steps = {name: p.get("lattice_step") for name, p in release.parameters.items() if isinstance(p, dict)}
    assert steps["price_median"] == steps["price_sum"] == steps["price_iqr"] == HUNDREDTH
    assert steps["price_mean"] == Fraction(1, 2**14)
    one = securedp.median(frame["price"], bounds=(0, 6), epsilon=1, rng=ChaChaSource(SEED))
    cell = securedp.table(table, epsilon=1, rng=ChaChaSource(SEED), aggregations=[Median("price", (0, 6))])
    assert one.value == cell.value["price_median"][()] if isinstance(cell.value, dict) else True
    assert one.parameters["data_median"]["lattice_step"] == cell.parameters["price_median"]["lattice_step"]


def test_quantile_accuracy_on_cents_data_improves() -> None:
    """The 0.9 quantile of 4,000 prices recorded in whole dimes (a skewed shape) at epsilon 1: over 100 seeded
    draws the decimal(10, 2) column (step 1/100: 9 candidates between two recorded dimes) errs less than the same
    values in a float column (the bounds' binary lattice: about 6,500 points per gap, sharing their gap's score).
    Measured: RMSE 0 against 0.0008."""
    rng = np.random.default_rng(7)
    cents = np.round(rng.lognormal(0, 0.6, 4000) * 10).astype(np.int64) * 10
    truth = float(np.quantile(cents / 100, 0.9))
    decimal = pa.array([Decimal(int(c)) / 100 for c in cents], type=pa.decimal128(10, 2))
    errors = {}
    for name, column in (("decimal", decimal), ("float", cents / 100)):
        drawn = [float(securedp.quantile(column, "9/10", bounds=(0, 20), epsilon=1,
                                         rng=ChaChaSource(bytes([r, 1]) * 16)).value) for r in range(100)]
        errors[name] = float(np.sqrt(np.mean((np.array(drawn) - truth) ** 2)))
    assert errors["float"] > 0.0004 and errors["decimal"] < errors["float"] / 2, errors


def test_the_command_reads_a_parquet_decimal_records_the_step_and_replays(tmp_path: Path, command: Command) -> None:
    data, seed, log = tmp_path / "p.parquet", tmp_path / "seed.bin", tmp_path / "log.jsonl"
    _prices().write_parquet(data)
    seed.write_bytes(SEED)
    argv = ["release", str(data), "--column", "price", "--stat", "median", "--bounds", "0,6", "--epsilon", "1"]
    status, out, _ = command([*argv, "--dry-run"])
    assert status == 0 and "0.01" in out, out
    status, out, _ = command([*argv, "--seed-file", str(seed), "--audit-log", str(log)])
    assert status == 0 and "lattice  step 0.01 (from the column's type" in out, out
    record = json.loads(log.read_text().splitlines()[0])["record"]
    assert Fraction(record["parameters"]["price_median"]["lattice_step"]) == HUNDREDTH
    status, out, _ = command(["audit", "replay", str(log), "--seed-file", str(seed), "--data", str(data)])
    assert status == 0 and "reproduced exactly" in out, out
    csv = tmp_path / "p.csv"
    _prices().write_csv(csv)  # CSV cells are text: the bounds' rule, and the hint to give the grid
    status, out, _ = command(["release", str(csv), *argv[2:], "--seed-file", str(seed)])
    assert status == 0 and "lattice  step 0.000003814697265625 (from --bounds" in out and "--step 0.01" in out, out


def test_the_table_command_s_plan_and_release_take_the_parquet_scale(tmp_path: Path, command: Command) -> None:
    data, seed = tmp_path / "p.parquet", tmp_path / "seed.bin"
    _prices().write_parquet(data)
    seed.write_bytes(SEED)
    argv = ["release", str(data), "--group-by", "g", "--keys", "a,b", "--median", "price:0,6", "--epsilon", "1"]
    status, out, _ = command([*argv, "--dry-run"])
    assert status == 0 and "step 0.01" in out, out
    status, out, _ = command([*argv, "--seed-file", str(seed)])
    assert status == 0
    medians = [Fraction(line.split(",")[1]) for line in out.splitlines()[1:] if line.count(",") >= 1]
    assert medians and all((m * 100).denominator == 1 for m in medians), out


def test_a_record_of_the_earlier_default_still_replays(tmp_path: Path, command: Command,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A release of a Parquet decimal column recorded before the scale chose the lattice (bounds' rule, step
    2**-18) names no lattice in its query: replay re-runs it on the step its record states, for one column and a
    table alike; a forger who edits that step fails replay."""
    import securedp.tables.checks as checks
    from securedp.audit.canonical import canonical
    from securedp.audit.log import GENESIS, entry_hash

    data, seed = tmp_path / "p.parquet", tmp_path / "seed.bin"
    _prices().write_parquet(data)
    seed.write_bytes(SEED)
    runs = {"column": ["--column", "price", "--stat", "quantile", "--q", "0.9", "--bounds", "0,6"],
            "table": ["--group-by", "g", "--keys", "a,b", "--quantile", "price:0.9:0,6", "--sum", "price:0,6"]}
    for name, argv in runs.items():
        log = tmp_path / f"{name}.jsonl"
        with monkeypatch.context() as earlier:
            earlier.setattr(checks, "typed_steps", lambda *_: {})  # the earlier default: no declared grid
            status, _, err = command(["release", str(data), *argv, "--epsilon", "1", "--seed-file", str(seed),
                                      "--audit-log", str(log)])
        assert status == 0, err
        entry = json.loads(log.read_text().splitlines()[0])
        steps = [p["lattice_step"] for p in entry["record"]["parameters"].values()
                 if isinstance(p, dict) and "lattice_step" in p]
        assert "1/262144" in steps and set(steps) <= {"1/262144", "1/16384"}  # the quantile's and the sum's rules
        status, out, _ = command(["audit", "replay", str(log), "--seed-file", str(seed), "--data", str(data)])
        assert status == 0 and "reproduced exactly" in out, out
        for cell in entry["record"]["parameters"].values():
            if isinstance(cell, dict) and cell.get("lattice_step") == "1/262144":
                cell["lattice_step"] = "1/100"  # forged: the step this version would choose
        entry["prev"] = GENESIS
        entry["hash"] = entry_hash(entry)
        log.write_bytes(canonical(entry) + b"\n")
        status, out, err = command(["audit", "replay", str(log), "--seed-file", str(seed), "--data", str(data)])
        assert status == 1 and "differs" in out + err, out + err


def test_the_finest_scale_is_within_the_declared_bound_of_a_step() -> None:
    """Arrow's finest decimal, decimal256(76, 76): step 10**-76 (253 bits, within the declared bound of a lattice
    step, ``PARAMETER_BITS``) while the bounds lie within 2**62 of its units; wider bounds keep the bounds' rule."""
    column = pa.array([Decimal("1E-70")], type=pa.decimal256(76, 76))
    within = securedp.sum(column, bounds=(0, "1e-60"), epsilon=1, rng=ChaChaSource(SEED))
    assert within.parameters["data_sum"]["lattice_step"] == Fraction(1, 10**76)
    wide = securedp.sum(column, bounds=(0, "1e-40"), epsilon=1, rng=ChaChaSource(SEED))
    assert wide.parameters["data_sum"]["lattice_step"] == Fraction(1, 2**149)  # 2**16 steps across the bounds


def test_a_histogram_s_bins_fix_its_lattice_whatever_the_scale() -> None:
    column = pa.array(CENTS, type=pa.decimal128(10, 2))
    release = securedp.histogram(column, bins=[0, 1, 2, 6], epsilon=1, rng=ChaChaSource(SEED))
    assert release.parameters["data_histogram"]["lattice_step"] == 1  # the bins' indices, as for any column
    floats = securedp.histogram([float(c) for c in CENTS], bins=[0, 1, 2, 6], epsilon=1, rng=ChaChaSource(SEED))
    assert release.value == floats.value


def test_the_planner_takes_the_grid_as_the_release_does(tmp_path: Path, command: Command) -> None:
    """``--dry-run --target``: the least epsilon meeting a median's rank error is priced on the lattice the release
    takes (the Parquet decimal's step 1/100: 601 candidates, not 2**20), and a CSV file's ``--schema v:int``
    declares step 1 to the planner as it does to the release."""
    from securedp.planning.budget import least_budget

    frame = _prices()
    parquet, csv = tmp_path / "p.parquet", tmp_path / "p.csv"
    frame.write_parquet(parquet)
    frame.with_columns(pl.col("price").cast(pl.Float64)).write_csv(csv)
    argv = ["--group-by", "g", "--keys", "a,b", "--median", "price:0,6", "--epsilon", "4", "--dry-run", "--target",
            "price_median:12"]
    found = {}
    for name, path in (("decimal", parquet), ("float", csv)):
        status, out, _ = command(["release", str(path), *argv])
        assert status == 0, out
        found[name] = next(line for line in out.splitlines() if line.startswith("plan: "))
    query = {"group_by": ["g"], "keys": [("a",), ("b",)], "aggregations": [Median("price", (0, 6))]}
    typed = least_budget({"price_median": 12}, currency="epsilon", grid="0.01", most=4, **query,
                         typed_steps={"price": HUNDREDTH})
    bounds_rule = least_budget({"price_median": 12}, currency="epsilon", grid="0.01", most=4, **query)
    assert typed.amount < bounds_rule.amount
    assert f"is {typed.amount.numerator / typed.amount.denominator:g} " in found["decimal"], found
    assert f"is {float(bounds_rule.amount):g} " in found["float"], found
    whole = tmp_path / "w.csv"
    whole.write_text("g,v\n" + "".join(f"{'ab'[i % 2]},{i}\n" for i in range(8)))
    declared = ["release", str(whole), "--group-by", "g", "--keys", "a,b", "--median", "v:0,6", "--epsilon", "4",
                "--dry-run", "--target", "v_median:12"]
    status, out, _ = command([*declared, "--schema", "v:int"])
    step_1 = least_budget({"v_median": 12}, currency="epsilon", grid="0.01", most=4, group_by=["g"],
                          keys=[("a",), ("b",)], aggregations=[Median("v", (0, 6))], typed_steps={"v": Fraction(1)})
    assert status == 0 and "lattice step 1;" in out and f"is {float(step_1.amount):g} " in out, out
