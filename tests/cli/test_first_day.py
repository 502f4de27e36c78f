"""A newcomer's first day (issue 43): the exact commands a user types on a file with blank group keys and
values, and the budget file a reviewer's key table is charged to. Each was a dead end."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from securedp import analyze_contributions

Command = Callable[[list[str]], tuple[int, str, str]]
"""The ``command`` fixture (tests/conftest.py): exit status, standard output, standard error."""


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """300 persons in 10 cities, two rows each; every 25th row has a blank city, every 30th a blank income."""
    lines = ["person,city,income"]
    for row in range(600):
        city = "" if row % 25 == 0 else f"c{row % 10}"
        income = "" if row % 30 == 0 else str(1000 + row * 7)
        lines.append(f"{row // 2},{city},{income}")
    (tmp_path / "people.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path / "people.csv"


def test_analyze_refuses_a_blank_key_in_the_commands_words(data: Path, command: Command) -> None:
    status, out, err = command(["analyze", str(data), "--id-column", "person", "--group-by", "city"])
    assert status == 1 and out == "" and err.count("\n") == 1
    assert "blank group key" in err and "--missing-keys drop" in err and "missing_keys=" not in err


def test_analyze_drops_blank_keys_as_asked(data: Path, command: Command) -> None:
    status, out, err = command(["analyze", str(data), "--id-column", "person", "--group-by", "city",
                                "--missing-keys", "drop", "--json"])
    assert status == 0 and err == ""
    assert json.loads(out)["rows"] == 600 - 24


def test_private_analyze_drops_blank_keys_and_replays(data: Path, tmp_path: Path, command: Command) -> None:
    seed, log = tmp_path / "seed", tmp_path / "log.jsonl"
    seed.write_bytes(bytes(range(32)))
    status, out, err = command(["analyze", str(data), "--id-column", "person", "--group-by", "city",
                                "--missing-keys", "drop", "--epsilon", "1", "--seed-file", str(seed),
                                "--audit-log", str(log)])
    assert status == 0 and err == "", err
    status, out, err = command(["audit", "replay", str(log), "--seed-file", str(seed), "--data", str(data)])
    assert status == 0 and "DIFFERS" not in out, out


def test_analyze_contributions_takes_missing_keys(data: Path) -> None:
    with pytest.raises(ValueError, match="missing_keys='drop'"):
        analyze_contributions(str(data), id_column="person", group_by="city")
    report = analyze_contributions(str(data), id_column="person", group_by="city", missing_keys="drop")
    assert report.rows == 600 - 24
    private = analyze_contributions(str(data), id_column="person", group_by="city", missing_keys="drop",
                                    epsilon=1, rng=None)
    assert private.release is not None and private.release.parameters["missing_keys"] == "drop"
    with pytest.raises(ValueError, match="missing_keys must be 'raise' or 'drop'"):
        analyze_contributions(str(data), id_column="person", group_by="city", missing_keys="skip")


PRIVATE_TABLE = ["--group-by", "city", "--count", "--id-column", "person", "--max-rows", "2", "--epsilon", "1/2",
                 "--delta", "1e-6", "--missing-keys", "drop"]


def test_bounds_creates_a_budget_file_with_a_delta_ledger_a_key_table_is_charged_to(
        data: Path, tmp_path: Path, command: Command) -> None:
    budget = str(tmp_path / "b.json")
    status, _, err = command(["bounds", str(data), "--column", "income", "--epsilon", "1/4", "--missing", "drop",
                              "--id-column", "person", "--max-contributions", "2", "--budget-file", budget,
                              "--budget", "2", "--budget-delta", "1e-5"])
    assert status == 0 and err == "", err
    stored = json.loads(Path(budget).read_text())
    assert (stored["total"], stored["spent"], stored["delta_total"], stored["delta_spent"]) == ("2", "1/4",
                                                                                              "1/100000", "0")
    status, _, err = command(["release", str(data), *PRIVATE_TABLE, "--budget-file", budget])
    assert status == 0, err
    # the ledger is charged the delta the integer threshold proves (issue 42): some, at most the delta asked
    assert 0 < Fraction(json.loads(Path(budget).read_text())["delta_spent"]) <= Fraction(1, 10**6)


def test_private_analyze_creates_a_budget_file_with_a_delta_ledger(data: Path, tmp_path: Path,
                                                                   command: Command) -> None:
    budget = str(tmp_path / "b.json")
    status, _, err = command(["analyze", str(data), "--id-column", "person", "--group-by", "city", "--missing-keys",
                              "drop", "--epsilon", "1/4", "--budget-file", budget, "--budget", "1",
                              "--budget-delta", "1e-6"])
    assert status == 0 and err == "", err
    assert json.loads(Path(budget).read_text())["delta_total"] == "1/1000000"


def test_budget_create_makes_a_file_on_purpose_and_never_replaces_one(data: Path, tmp_path: Path,
                                                                      command: Command) -> None:
    budget = str(tmp_path / "b.json")
    status, out, err = command(["budget", "create", budget, "--epsilon", "1", "--delta", "1e-6"])
    assert status == 0 and err == "" and "remaining  1" in out, err
    stored = json.loads(Path(budget).read_text())
    assert (stored["currency"], stored["total"], stored["spent"], stored["delta_total"]) == ("epsilon", "1", "0",
                                                                                             "1/1000000")
    status, out, _ = command(["budget", budget])  # shown as before
    assert status == 0 and "delta      total 0.000001" in out
    status, _, err = command(["release", str(data), *PRIVATE_TABLE, "--budget-file", budget])
    assert status == 0, err
    before = Path(budget).read_bytes()
    status, out, err = command(["budget", "create", budget, "--epsilon", "5", "--delta", "1e-3"])
    assert status == 1 and out == "" and "already exists" in err and Path(budget).read_bytes() == before
    status, _, err = command(["budget", "create", str(tmp_path / "z.json"), "--rho", "1/2"])
    assert status == 0 and json.loads((tmp_path / "z.json").read_text())["currency"] == "rho"
    for bad in (["--epsilon", "0"], ["--epsilon", "1", "--delta", "1"], ["--delta", "1e-6"],
                ["--epsilon", "1", "--rho", "1"]):
        status, _, err = command(["budget", "create", str(tmp_path / "n.json"), *bad])
        assert status in (1, 2) and not (tmp_path / "n.json").exists(), bad
    status, _, err = command(["budget", budget, "--epsilon", "1"])
    assert status == 2 and "budget create" in err


def test_a_file_without_a_delta_ledger_names_the_way_to_make_one(data: Path, tmp_path: Path,
                                                                 command: Command) -> None:
    budget = str(tmp_path / "b.json")
    assert command(["budget", "create", budget, "--epsilon", "1"])[0] == 0
    status, _, err = command(["release", str(data), *PRIVATE_TABLE, "--budget-file", budget])
    assert status == 1 and "securedp budget create" in err


def test_a_python_sessions_seeded_releases_are_labelled_not_replayable_never_differs(
        tmp_path: Path, command: Command, monkeypatch: pytest.MonkeyPatch) -> None:
    import pandas as pd

    from securedp import AuditLog, ChaChaSource, Session
    from securedp.cli.example_data import PATH
    from securedp.tables import Count, Mean

    monkeypatch.chdir(tmp_path)
    Path("seed.bin").write_bytes(bytes(range(32)))
    Path("data.csv").write_bytes(Path(PATH).read_bytes())
    visits = pd.read_csv("data.csv")
    session = Session(epsilon=2, rng=ChaChaSource(bytes(range(32))).substream("t"), audit=AuditLog("s.jsonl"))
    session.table(visits, group_by=["region"], keys=["north", "south", "east", "west"],
                  aggregations=[Count(), Mean("income", (0, 150000))], id_column="person_id", max_rows=2, epsilon=1)
    session.count([1, 2, 3], epsilon="1/4")
    assert command(["release", "data.csv", "--column", "age", "--stat", "mean", "--bounds", "18,90", "--epsilon",
                    "1/4", "--id-column", "person_id", "--seed-file", "seed.bin", "--audit-log", "cli.jsonl"])[0] == 0
    status, out, err = command(["audit", "replay", "s.jsonl", "--seed-file", "seed.bin", "--data", "data.csv"])
    assert "DIFFERS" not in out and out.count("NOT REPLAYABLE (made by the Python API from data in memory") == 2
    assert status == 1 and "2 not replayable, nothing differs" in err and "not written by" not in err
    status, out, err = command(["audit", "report", "s.jsonl", "--seed-file", "seed.bin", "--data", "data.csv",
                                "-o", "r.html"])
    page = Path("r.html").read_text(encoding="utf-8")
    assert "2 not replayable" in out and 'class="headline odd"' in page and 'class="headline bad"' not in page
    assert "no input commitment" not in page and "its input commitment is not checked" in page
    status, out, _ = command(["audit", "replay", "cli.jsonl", "--seed-file", "seed.bin", "--data", "data.csv"])
    assert status == 0 and "reproduced exactly, input commitment matches the data" in out


def test_a_private_key_table_states_its_threshold_level_and_cost(data: Path, tmp_path: Path,
                                                                command: Command) -> None:
    out_file = tmp_path / "t.csv"
    for output in ([], ["--output", str(out_file)]):
        status, out, err = command(["release", str(data), *PRIVATE_TABLE, *output])
        assert status == 0
        released = len(out.splitlines()) - 1 if not output else len(out_file.read_text().splitlines()) - 1
        assert f"keys     private: {released} released; each reached the threshold " in err
        assert "in its noisy count (selection: count)" in err and "intervals at level 0.95" in err
        assert "how many were is not shown (that count is not private)" in err
        assert "cost epsilon 0.5, delta 0.000001" in err


def test_dry_run_plans_auto_bounds_with_their_own_cost(data: Path, tmp_path: Path, command: Command) -> None:
    budget = tmp_path / "b.json"
    argv = ["release", str(data), "--group-by", "city", "--count", "--mean", "income:auto", "--id-column", "person",
            "--max-rows", "2", "--epsilon", "1", "--delta", "1e-6", "--missing-keys", "drop", "--missing", "drop",
            "--auto-epsilon", "1/4", "--budget-file", str(budget), "--budget", "2", "--dry-run"]
    status, out, err = command(argv)
    assert status == 0 and err == "", err
    assert out.startswith("table: dry run, nothing drawn, nothing charged")
    assert "bounds   income: chosen privately before the table" in out and "whole run costs epsilon 1.25" in out
    assert "count: discrete_laplace" in out and "income_mean: its accuracy depends on the bounds chosen" in out
    assert not budget.exists()  # nothing charged, nothing created
    status, _, err = command([a for a in argv if a not in ("--auto-epsilon", "1/4")])
    assert status == 1 and "--auto-epsilon" in err
