"""A newcomer's first day (issue 43): the exact commands a user types on a file with blank group keys and
values, and the budget file a reviewer's key table is charged to. Each was a dead end."""

from __future__ import annotations

import json
from collections.abc import Callable
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
