"""Issue 28.4: a budget file states what remains (and refuses a hand-edited ``remaining``), ``securedp budget
FILE`` shows it, and a table release says what it spent and what remains, as a one-column release does."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from securedp.cli.budget import BudgetError, BudgetFile
from securedp.cli.example_data import PATH as EXAMPLE

LEDGER = "cd" * 16
TABLE = ["release", str(EXAMPLE), "--group-by", "region", "--count", "--keys", "north,south,east,west",
         "--id-column", "person_id"]


def write(path: Path, **fields: str) -> None:
    state = {"format": "securedp-budget/1", "currency": "epsilon", "total": "1", "spent": "1/4", "ledger": LEDGER}
    path.write_text(json.dumps({**state, **fields}), encoding="utf-8")


def test_a_charge_writes_what_remains(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    write(path)  # a file written before `remaining` existed: read as before
    with BudgetFile(path).charge(Fraction(1, 3)) as state:
        assert state.remaining == Fraction(5, 12)
    assert json.loads(path.read_text())["remaining"] == "5/12"
    with BudgetFile(path).charge(Fraction(1, 12)):  # and the file with it is read back
        pass
    assert json.loads(path.read_text())["remaining"] == "1/3"


@pytest.mark.parametrize("remaining", ["1", "0", "3/4 ", "6/8"])
def test_a_remaining_that_is_not_total_minus_spent_is_refused_and_nothing_is_charged(
        tmp_path: Path, remaining: str) -> None:
    path = tmp_path / "b.json"
    write(path, remaining=remaining)
    before = path.read_bytes()
    with pytest.raises(BudgetError, match="'remaining'"), BudgetFile(path).charge(Fraction(1, 8)):
        pass
    assert path.read_bytes() == before


def test_the_tampered_file_is_named_by_the_command(tmp_path: Path, command, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "b.json", remaining="1")  # spent 1/4 of 1 but claims 1 left
    status, out, err = command(["budget", "b.json"])
    assert status == 1 and out == ""
    assert "'remaining' 1 is not 'total' - 'spent' = 3/4: the file was edited by hand" in err
    status, _, err = command([*TABLE, "--epsilon", "1/8", "--budget-file", "b.json"])
    assert status == 1 and "edited by hand" in err


def test_securedp_budget_shows_a_file_and_its_delta_ledger(tmp_path: Path, command, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "b.json", total="2", spent="47/25", delta_total="1/1000000", delta_spent="0")
    status, out, _ = command(["budget", "b.json"])
    assert status == 0
    assert "b.json: a budget in epsilon" in out and f"ledger {LEDGER}" in out
    assert "  total      2\n  spent      1.88\n  remaining  0.12\n" in out
    assert "  delta      total 0.000001, spent 0, remaining 0.000001" in out
    status, out, _ = command(["budget", "b.json", "--json"])
    assert status == 0 and json.loads(out) == {
        "currency": "epsilon", "total": "2", "spent": "47/25", "remaining": "3/25", "delta_total": "1/1000000",
        "delta_spent": "0", "delta_remaining": "1/1000000", "ledger": LEDGER}
    status, _, err = command(["budget", "missing.json"])
    assert status == 1 and err == "securedp: error: no such budget file: missing.json\n"


def test_a_table_release_says_what_it_spent_and_what_remains(tmp_path: Path, command, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = command([*TABLE, "--epsilon", "1/4", "--budget-file", "b.json", "--budget", "1"])
    assert status == 0 and out.startswith("region,count")  # standard output is the table alone
    assert "  budget   spent 0.25 of 1, remaining 0.75 (epsilon)" in err
    status, out, err = command([*TABLE, "--epsilon", "1/3", "--budget-file", "b.json"])
    assert status == 0 and "spent ≈ 0.583333 (7/12) of 1, remaining ≈ 0.416667 (5/12) (epsilon)" in err
    status, _, err = command([*TABLE, "--epsilon", "1/4"])
    assert status == 0 and "budget" not in err  # no budget file: nothing to state
