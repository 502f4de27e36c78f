"""Issue 19.6: integer data stay integers. The declared type of a column (never its cells) chooses the default lattice.

An integer-typed column without a lattice takes step 1 for sums, quantiles and interquartile ranges, in
one-column releases and tables alike; means and variances keep the bounds' rule (a mean of whole
numbers is a fraction); CSV cells are text, so the command takes ``--step`` (``COLUMN:LO,HI:STEP`` in a
table). Two neighbouring tables with one schema get one lattice: a missing cell does not change the type.
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
from securedp.reading.types import typed_step, typed_steps
from securedp.tables import IQR, Mean, Median, Sum, Variance

SEED = bytes(32)
VALUES = [40, 38, 45, 40, 37, 41]

TYPED = {
    "numpy int64": (np.array(VALUES, dtype=np.int64), True),
    "numpy uint16": (np.array(VALUES, dtype=np.uint16), True),
    "numpy float64": (np.array(VALUES, dtype=np.float64), False),
    "numpy bool": (np.array([True, False]), False),
    "numpy object": (np.array(VALUES, dtype=object), False),
    "pandas int64": (pd.Series(VALUES), True),
    "pandas Int64 with NA": (pd.Series([*VALUES, None], dtype="Int64"), True),
    "pandas Float64": (pd.Series(VALUES, dtype="Float64"), False),
    "pandas boolean": (pd.Series([True, None], dtype="boolean"), False),
    "pandas text": (pd.Series([str(v) for v in VALUES]), False),
    "polars Int64 with null": (pl.Series([*VALUES, None]), True),
    "polars UInt8": (pl.Series(VALUES, dtype=pl.UInt8), True),
    "polars Float64": (pl.Series(VALUES, dtype=pl.Float64), False),
    "polars String": (pl.Series([str(v) for v in VALUES]), False),
    "pyarrow int32": (pa.array(VALUES, type=pa.int32()), True),
    "pyarrow chunked int64": (pa.chunked_array([VALUES]), True),
    "pyarrow float64": (pa.array(VALUES, type=pa.float64()), False),
    "list of ints": (VALUES, False),
}

Command = Callable[[list[str]], tuple[int, str, str]]
"""The ``command`` fixture (tests/conftest.py): exit status, standard output, standard error."""


@pytest.mark.parametrize("name", sorted(TYPED))
def test_the_type_is_read_from_the_schema(name: str) -> None:
    column, integer = TYPED[name]
    assert typed_step(column) == (1 if integer else None)


@pytest.mark.parametrize("name", sorted(TYPED))
def test_a_sum_of_an_integer_column_is_whole(name: str) -> None:
    column, integer = TYPED[name]
    if name.endswith(("bool", "boolean", "text", "String")):
        return  # not numbers to the lattice screen
    release = securedp.sum(column, bounds=(0, 80), epsilon=1, missing="drop", rng=ChaChaSource(SEED))
    step = release.parameters["data_sum"]["lattice_step"]
    assert step == (1 if integer else Fraction(1, 1024))
    assert (Fraction(release.value).denominator == 1) or not integer


def test_a_missing_cell_does_not_change_the_lattice() -> None:
    """Neighbours: the same schema, one row more (a missing value): one lattice, so the output's lattice
    cannot tell them apart."""
    for column in (pd.Series(VALUES, dtype="Int64"), pl.Series(VALUES)):
        with_missing = pd.concat([column, pd.Series([None], dtype="Int64")]) if isinstance(column, pd.Series) \
            else column.append(pl.Series([None], dtype=pl.Int64))
        steps = {securedp.prepare_sum(c, bounds=(0, 80), epsilon=1, missing="drop").execute(ChaChaSource(SEED))
                 .parameters["data_sum"]["lattice_step"] for c in (column, with_missing)}
        assert steps == {1}


def test_quantiles_are_whole_and_means_keep_the_bounds_lattice() -> None:
    column = pl.Series(VALUES)
    median = securedp.median(column, bounds=(0, 20), epsilon=1, rng=ChaChaSource(SEED))
    assert median.parameters["data_median"]["lattice_step"] == 1 and isinstance(median.value, int)
    iqr = securedp.iqr(column, bounds=(0, 20), epsilon=1, rng=ChaChaSource(SEED))
    assert iqr.parameters["data_iqr"]["lattice_step"] == 1
    mean = securedp.mean(pl.Series([0, 1, 1]), bounds=(0, 1), epsilon=10**12, rng=ChaChaSource(SEED))
    assert (mean.parameters["data_mean"]["lattice_step"] == Fraction(1, 65536)
            and mean.value == Fraction(43691, 65536))  # ~2/3
    variance = securedp.variance(column, bounds=(0, 80), epsilon=1, rng=ChaChaSource(SEED))
    assert variance.parameters["data_variance"]["lattice_step"] == Fraction(1, 1024)


def test_a_given_lattice_wins_and_wide_bounds_keep_the_bounds_rule() -> None:
    column = np.array(VALUES)
    assert securedp.sum(column, bounds=(0, 80), epsilon=1, lattice="1/4",
                        rng=ChaChaSource(SEED)).parameters["data_sum"]["lattice_step"] == Fraction(1, 4)
    wide = securedp.sum(column, bounds=(0, 2**63), epsilon=1, rng=ChaChaSource(SEED))
    assert wide.parameters["data_sum"]["lattice_step"] == 2**47  # the bounds' rule: 2**16 steps across [0, 2**63]


def test_tables_take_the_type_of_each_column() -> None:
    frame = pl.DataFrame({"g": [1, 2] * 3, "hours": VALUES, "pay": [float(v) for v in VALUES]})
    release = securedp.table(frame, group_by=["g"], keys=[1, 2], epsilon=1, rng=ChaChaSource(SEED),
                             aggregations=[Sum("hours", (0, 80)), Median("hours", (0, 80)), IQR("hours", (0, 80)),
                                           Mean("hours", (0, 80)), Variance("hours", (0, 80)), Sum("pay", (0, 80))])
    steps = {name: p.get("lattice_step") for name, p in release.parameters.items() if isinstance(p, dict)}
    assert steps["hours_sum"] == steps["hours_median"] == steps["hours_iqr"] == 1
    assert steps["hours_mean"] == steps["hours_variance"] == steps["pay_sum"] == Fraction(1, 1024)
    assert all(Fraction(v).denominator == 1 for v in release.frame["hours_sum"].to_list())


@pytest.mark.parametrize("kind", ["polars", "lazy", "pandas", "pandas arrow", "pyarrow", "parquet", "csv"])
def test_typed_columns_of_every_table_kind(kind: str, tmp_path: Path) -> None:
    """Integer columns declare step 1, decimal columns of scale 2 step 1/100 (issue 42.3); a pandas column of
    Python ``Decimal`` objects (NumPy-backed pandas) declares no scale, nor does any CSV cell."""
    cents = pl.Series([Decimal(v) / 100 for v in VALUES], dtype=pl.Decimal(10, 2))
    frame = pl.DataFrame({"i": VALUES, "f": [float(v) for v in VALUES], "s": [str(v) for v in VALUES], "d": cents})
    table: Any = {"polars": frame, "lazy": frame.lazy(), "pandas": frame.to_pandas(),
                  "pandas arrow": frame.to_pandas(types_mapper=pd.ArrowDtype), "pyarrow": frame.to_arrow()}.get(kind)
    if kind == "parquet":
        table = tmp_path / "t.parquet"
        frame.write_parquet(table)
    elif kind == "csv":
        table = tmp_path / "t.csv"
        frame.write_csv(table)
    expected = {} if kind == "csv" else {"i": 1} if kind == "pandas" else {"i": 1, "d": Fraction(1, 100)}
    assert typed_steps(table, ["i", "f", "s", "d", "absent"]) == expected  # CSV cells are text
    assert typed_steps(table, ["i", "d"], {"i": "number", "d": "number"}) == {}  # a declared type replaces its own




def test_the_command_takes_a_step_records_it_and_replays(tmp_path: Path, command: Command) -> None:
    data, seed, log = tmp_path / "h.csv", tmp_path / "seed.bin", tmp_path / "log.jsonl"
    data.write_text("hours\n" + "\n".join(map(str, VALUES)) + "\n")
    seed.write_bytes(SEED)
    argv = ["release", str(data), "--column", "hours", "--stat", "sum", "--bounds", "0,80", "--epsilon", "1",
            "--seed-file", str(seed)]
    status, out, _ = command([*argv, "--step", "1", "--audit-log", str(log)])
    assert status == 0 and "lattice  step 1 (--step)" in out
    value = out.splitlines()[1].split()[-1]
    assert value.lstrip("-").isdigit()  # a whole number of hours
    record = json.loads(log.read_text().splitlines()[0])["record"]
    assert record["query"]["lattice"] == "1"
    status, out, _ = command(["audit", "replay", str(log), "--seed-file", str(seed), "--data", str(data)])
    assert status == 0 and "reproduced exactly" in out
    status, out, _ = command(argv)  # CSV cells are text: without --step, the bounds' rule, and a hint
    assert status == 0 and "--step 1 keeps whole numbers whole" in out
    status, _, err = command(["release", str(data), "--column", "hours", "--stat", "count", "--epsilon", "1",
                          "--step", "1"])
    assert status == 1 and "--step applies to the statistics with --bounds" in err and err.count("\n") == 1



@pytest.mark.parametrize("forged", ["1/1024", "2", "1/3"])
def test_a_forger_who_edits_only_the_lattice_fails_replay(tmp_path: Path, command: Command, forged: str) -> None:
    """The record's ``lattice`` is part of what replay recomputes: a forger who changes only that field
    (``--step 1`` to another step) and re-chains the hashes of an unsigned log passes ``verify`` (the
    control: an unsigned chain protects against accidents only) but not ``replay``, whose value then
    differs; with a signed log the edit fails ``verify`` as any edit does (tests/audit/test_forgery.py)."""
    from securedp.audit.canonical import canonical
    from securedp.audit.log import GENESIS, entry_hash

    data, seed, log = tmp_path / "h.csv", tmp_path / "seed.bin", tmp_path / "log.jsonl"
    data.write_text("hours\n" + "\n".join(map(str, VALUES)) + "\n")
    seed.write_bytes(SEED)
    status, _, _ = command(["release", str(data), "--column", "hours", "--stat", "sum", "--bounds", "0,80",
                            "--epsilon", "1", "--seed-file", str(seed), "--step", "1", "--audit-log", str(log)])
    assert status == 0
    entry = json.loads(log.read_text().splitlines()[0])
    entry["record"]["query"]["lattice"] = forged
    entry["prev"] = GENESIS
    entry["hash"] = entry_hash(entry)
    log.write_bytes(canonical(entry) + b"\n")
    status, out, _ = command(["audit", "verify", str(log)])
    assert status == 0, out  # the control: the re-chained, unsigned log is consistent
    status, out, err = command(["audit", "replay", str(log), "--seed-file", str(seed), "--data", str(data)])
    assert status == 1 and "differs" in out + err, out + err

def test_a_parquet_table_keeps_integer_sums_whole(tmp_path: Path, command: Command) -> None:
    path, seed = tmp_path / "t.parquet", tmp_path / "seed.bin"
    pl.DataFrame({"g": ["a", "b"] * 3, "hours": VALUES}).write_parquet(path)
    seed.write_bytes(SEED)
    status, out, _ = command(["release", str(path), "--group-by", "g", "--keys", "a,b", "--sum", "hours:0,80",
                          "--epsilon", "1", "--seed-file", str(seed)])
    assert status == 0
    sums = [line.split(",")[1] for line in out.splitlines()[1:]]
    assert len(sums) == 2 and all(s.lstrip("-").isdigit() for s in sums)
