"""``securedp release`` for grouped tables: files (CSV with or without BOM, Parquet, stdin), outputs, replay."""

from __future__ import annotations

import io
import json
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

from securedp.cli.main import main


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(5)  # test data only
    n = 1500
    frame = pl.DataFrame({
        "person": rng.integers(0, 300, n),
        "region": rng.choice(["north", "south", "east"], n),
        "income": np.round(rng.uniform(0, 200000, n), 2),
        "age": rng.integers(0, 100, n),
    })
    frame.write_parquet(tmp_path / "t.parquet")
    frame.write_csv(tmp_path / "t.csv")
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + frame.write_csv(separator=";").encode())
    (tmp_path / "seed").write_text("22" * 32)
    return tmp_path


BASE = ["--group-by", "region", "--count", "--sum", "income:0,200000:0.01", "--mean", "age:0,120",
        "--id-column", "person", "--max-groups", "3", "--epsilon", "1"]


def run(argv, capsys):
    capsys.readouterr()
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_private_keys_from_parquet_print_an_exact_csv(table, capsys):
    status, out, err = run(["release", str(table / "t.parquet"), *BASE, "--delta", "1e-9"], capsys)
    assert status == 0, err
    frame = pl.read_csv(io.StringIO(out))
    assert frame.columns[:4] == ["region", "count", "count_low", "count_high"]  # the count selects the keys
    assert set(frame["region"]) <= {"north", "south", "east"}
    status, out, err = run(["release", str(table / "t.parquet"), *BASE, "--delta", "1e-9", "--selection", "laplace"],
                           capsys)
    assert status == 0, err
    frame = pl.read_csv(io.StringIO(out))
    assert frame.columns[:4] == ["region", "selection_persons", "selection_persons_low", "selection_persons_high"]


def test_csv_csv_with_bom_and_delimiter_and_stdin_give_the_same_seeded_table(table, capsys, monkeypatch):
    seeded = [*BASE, "--keys", "north,west", "--seed-file", str(table / "seed")]
    outputs = []
    for argv in (["release", str(table / "t.parquet"), *seeded], ["release", str(table / "t.csv"), *seeded],
                 ["release", str(table / "bom.csv"), *seeded, "--delimiter", ";"]):
        status, out, err = run(argv, capsys)
        assert status == 0, err
        outputs.append(out)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO((table / "t.csv").read_bytes())))
    status, out, err = run(["release", "-", *seeded], capsys)
    assert status == 0, err
    outputs.append(out)
    # the seed file yields a fresh substream per release, so values differ; the shape and keys do not
    frames = [pl.read_csv(io.StringIO(o)) for o in outputs]
    assert all(f.columns == frames[0].columns and f["region"].to_list() == ["north", "west"] for f in frames)


def test_json_output_and_replay_reproduce_the_table(table, capsys):
    log = table / "log.jsonl"
    argv = ["release", str(table / "t.parquet"), *BASE, "--delta", "1e-9", "--seed-file", str(table / "seed"),
            "--audit-log", str(log), "--output", str(table / "out.json")]
    status, _, err = run(argv, capsys)
    assert status == 0, err
    text = (table / "out.json").read_text()
    rows = json.loads(text)
    assert rows and {"region", "count", "income_sum", "age_mean_low"} <= set(rows[0])
    # issue 19.6: lattice values as a person writes them (numbers such as 12.5), never "25/2"
    assert "/" not in text and all(isinstance(r["age_mean"], (int, float)) for r in rows)
    record = json.loads(log.read_text().splitlines()[0])["record"]
    exact = {row[0]: row for row in record["value"]}
    for r in rows:  # the JSON number is the exact decimal of the released value
        assert Fraction(str(r["income_sum"])) == Fraction(exact[r["region"]][record["labels"].index("income_sum")])
    status, out, err = run(["audit", "replay", str(log), "--seed-file", str(table / "seed"),
                            "--data", str(table / "t.parquet")], capsys)
    assert status == 0, err + out
    assert "reproduced exactly, input commitment matches" in out
    pl.read_parquet(table / "t.parquet").with_columns(pl.col("income") / 2).write_parquet(table / "half.parquet")
    status, out, err = run(["audit", "replay", str(log), "--seed-file", str(table / "seed"),
                            "--data", str(table / "half.parquet")], capsys)
    assert status == 1 and "DATA DIFFERS" in out


@pytest.mark.parametrize("extra, message", [
    (["--sum", "nope:0,1", "--keys", "north"], "nope"),
    (["--sum", "income:0"], "LO,HI"),
    (["--delta", "1e-9", "--budget-file", "b.json", "--budget", "5"], "delta"),
    (["--keys", "a", "--keys-file", "k.csv"], "not both"),
    (["--stat", "count"], "--group-by"),
    ([], "delta"),  # private keys without --delta
])
def test_bad_table_options_fail_in_one_line_and_spend_nothing(table, capsys, extra, message, monkeypatch):
    monkeypatch.chdir(table)
    status, _out, err = run(["release", str(table / "t.parquet"), *BASE, *extra], capsys)
    assert status == 1 and message in err and err.count("\n") == 1
    assert not (table / "b.json").exists() or json.loads((table / "b.json").read_text())["spent"] == 0


def test_keys_file_with_two_group_columns(table, capsys):
    pl.DataFrame({"region": ["north", "east"], "age": [30, 31]}).write_csv(table / "keys.csv")
    status, out, err = run(["release", str(table / "t.parquet"), "--group-by", "region,age", "--count", "--keys-file",
                            str(table / "keys.csv"), "--epsilon", "1", "--id-column", "person"], capsys)
    assert status == 0, err
    assert pl.read_csv(io.StringIO(out))["region"].to_list() == ["north", "east"]


def test_median_and_quantile_options(table, capsys):
    status, out, err = run(["release", str(table / "t.parquet"), "--group-by", "region", "--keys", "north",
                            "--median", "age:0,120", "--quantile", "income:0.9:0,200000:100", "--id-column",
                            "person", "--epsilon", "1"], capsys)
    assert status == 0, err
    frame = pl.read_csv(io.StringIO(out))
    assert frame.columns == ["region", "age_median", "income_q0.9"]
    assert 0 <= frame["age_median"][0] <= 120 and frame["income_q0.9"][0] % 100 == 0
    status, _, err = run(["release", str(table / "t.parquet"), "--group-by", "region", "--keys", "north",
                          "--quantile", "income:0,200000", "--epsilon", "1"], capsys)
    assert status == 1 and "quantile" in err


def test_keys_are_one_csv_line_and_a_split_key_is_refused(tmp_path, capsys):
    """Issue 19.1: ``--keys "A, B,C"`` split "A, B" at its comma and released noise-only rows for made-up keys."""
    data = tmp_path / "jobs.csv"
    data.write_text("job\n\"Craftsmen, Foremen\"\nSales\nSales\n", encoding="utf-8")
    status, _, err = run(["release", str(data), "--group-by", "job", "--count", "--epsilon", "1",
                          "--keys", "Craftsmen, Foremen,Sales"], capsys)
    assert status == 1 and "' Foremen' begins or ends with a space" in err and "--keys-file" in err
    status, out, err = run(["release", str(data), "--group-by", "job", "--count", "--epsilon", "1000000",
                            "--keys", '"Craftsmen, Foremen",Sales'], capsys)
    assert status == 0, err
    assert out.splitlines()[1:] == ['"Craftsmen, Foremen",1,1,1', "Sales,2,2,2"]
