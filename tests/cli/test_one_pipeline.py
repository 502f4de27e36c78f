"""One release pipeline (issue 17): the command charges, draws and records through ``Session._release``.

A table with private keys (``--delta``) is charged to a budget file created with ``--budget-delta``: its
epsilon (or rho) and its delta are both spent and recorded; overspending either is refused before anything
is drawn; a failure after the first random bit keeps both charges, one before it refunds them. The delta
ledger of the file is validated as strictly as its other fields, and old files read as before.
"""

from __future__ import annotations

import ast
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from securedp import ChaChaSource, Session
from securedp.audit.log import AuditLog
from securedp.audit.verify import verify_log
from securedp.cli import commands, pipeline
from securedp.cli.main import main
from securedp.hazmat.bits.source import RandomSource
from securedp.ledger.budget import Budget
from securedp.ledger.budget_file import BudgetError, BudgetFile
from securedp.ledger.errors import BudgetExceeded, IncompatibleCost
from securedp.mechanisms.gaussian_threshold import gaussian_threshold
from securedp.mechanisms.partition_selection import laplace_threshold
from securedp.tables import Count

LEDGER = "cd" * 16
PRIVATE = ["--group-by", "g", "--count", "--id-column", "p", "--epsilon", "1/4", "--delta", "1/1000000"]
CHARGED = laplace_threshold("1/4", "1/1000000").delta_spent
"""The delta PRIVATE charges: what its threshold proves (below the 1/1000000 asked)."""
C = str(CHARGED)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    rows = "\n".join(f"{i},{'ab'[i % 2]},{i % 7}" for i in range(40))
    (tmp_path / "d.csv").write_text("p,g,x\n" + rows + "\n", encoding="utf-8")
    (tmp_path / "seed").write_text("33" * 32, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(["release", "d.csv", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def stored(path: Path = Path("b.json")) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def records(path: Path = Path("log.jsonl")) -> list[dict[str, Any]]:
    return [json.loads(line)["record"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_table_with_private_keys_is_charged_epsilon_and_delta(work: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    create = ["--budget-file", "b.json", "--budget", "1", "--budget-delta", "1/100000", "--audit-log", "log.jsonl",
              "--seed-file", "seed"]
    status, _, err = run(capsys, *PRIVATE, *create)
    assert status == 0, err
    state = stored()
    assert Fraction(1, 10**6) > CHARGED
    assert (state["spent"], state["delta_total"], state["delta_spent"]) == ("1/4", "1/100000", C)
    status, _, err = run(capsys, *PRIVATE, "--budget-file", "b.json", "--audit-log", "log.jsonl", "--seed-file", "seed")
    assert status == 0, err
    assert (stored()["spent"], stored()["delta_spent"]) == ("1/2", str(2 * CHARGED))
    first, second = records()
    assert {k: first[k] for k in ("budget_kind", "total", "spent", "remaining")} == \
        {"budget_kind": "epsilon", "total": 1, "spent": "1/4", "remaining": "3/4"}
    assert (first["delta_charged"], first["delta_spent"], first["delta_remaining"]) == \
        (C, C, str(Fraction(1, 10**5) - CHARGED))
    assert (second["delta_spent"], second["delta_remaining"]) == \
        (str(2 * CHARGED), str(Fraction(1, 10**5) - 2 * CHARGED))
    assert "charged" not in first and "partition" not in first and first["query"]["delta"] == "1/1000000"
    log = [json.loads(line) for line in (work / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {entry["writer"] for entry in log} == {state["ledger"]}  # the budget file's ledger is the writer
    assert verify_log(work / "log.jsonl").ok
    capsys.readouterr()
    assert main(["audit", "replay", "log.jsonl", "--seed-file", "seed", "--data", "d.csv"]) == 0, capsys.readouterr()


def test_a_rho_table_with_private_keys_is_charged_rho_and_delta(work: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*PRIVATE[:-4], "--rho", "1/8", "--delta", "1/1000000"]
    status, _, err = run(capsys, *argv, "--budget-file", "b.json", "--budget", "1", "--budget-delta", "1/100000")
    assert status == 0, err
    assert (stored()["currency"], stored()["spent"], stored()["delta_spent"]) == \
        ("rho", "1/8", str(gaussian_threshold("1/8", "1/1000000").delta_spent))


def test_overspending_delta_is_refused_before_anything_is_drawn(work: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    create = ["--budget-file", "b.json", "--budget", "1", "--budget-delta", "3/2000000"]
    status, _, err = run(capsys, *PRIVATE, *create)
    assert status == 0, err
    before = (work / "b.json").read_bytes()
    # a fresh seeded source has no pre-drawn values: every bit it could give passes through random_bytes
    monkeypatch.setattr(RandomSource, "random_bytes", lambda *_: pytest.fail("a bit was drawn"))
    status, _, err = run(capsys, *PRIVATE, "--budget-file", "b.json", "--audit-log", "log.jsonl", "--seed-file", "seed")
    assert status == 1 and err.count("\n") == 1
    left = Fraction(3, 2 * 10**6) - CHARGED
    assert f"delta exhausted: this release needs delta {C} but only {left} of 3/2000000 remains" in err
    assert (work / "b.json").read_bytes() == before and not (work / "log.jsonl").exists()


def test_an_old_file_without_a_delta_ledger_refuses_private_keys_naming_the_flag(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = {"format": "securedp-budget/1", "total": "1", "spent": "1/4", "ledger": LEDGER}  # no currency either
    (work / "b.json").write_text(json.dumps(old), encoding="utf-8")
    before = (work / "b.json").read_bytes()
    status, _, err = run(capsys, *PRIVATE, "--budget-file", "b.json")
    assert status == 1 and err.count("\n") == 1
    assert f"spends delta {C} (partition selection): b.json has no delta budget" in err
    assert "--budget-delta" in err and (work / "b.json").read_bytes() == before
    status, _, err = run(capsys, "--column", "x", "--stat", "count", "--epsilon", "1/4", "--budget-file", "b.json")
    assert status == 0, err  # read as before: an epsilon budget
    assert stored() == {**old, "spent": "1/2", "remaining": "1/2", "currency": "epsilon"}
    status, _, err = run(capsys, *PRIVATE, "--budget-file", "b.json", "--budget-delta", "1/100000")
    assert status == 1 and "--budget-delta 1/100000 does not match no delta budget recorded in b.json" in err


def test_budget_delta_must_match_and_needs_a_budget_file(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, *PRIVATE, "--budget-delta", "1/100000")
    assert status == 1 and "--budget-delta needs --budget-file" in err
    status, _, err = run(capsys, *PRIVATE, "--budget-file", "b.json", "--budget", "1", "--budget-delta", "1")
    assert status == 1 and "budget delta must be below 1, got 1" in err and not (work / "b.json").exists()
    status, _, err = run(capsys, *PRIVATE, "--budget-file", "b.json", "--budget", "1", "--budget-delta", "1/100000")
    assert status == 0, err
    status, _, err = run(capsys, *PRIVATE, "--budget-file", "b.json", "--budget-delta", "1/10000")
    assert status == 1 and "--budget-delta 1/10000 does not match the total delta 1/100000 recorded in b.json" in err
    status, _, err = run(capsys, "--column", "x", "--stat", "count", "--epsilon", "1/4", "--budget-file", "b.json")
    assert status == 0, err  # a one-column release keeps the delta ledger as it is
    assert (stored()["spent"], stored()["delta_total"], stored()["delta_spent"]) == ("1/2", "1/100000", C)


@pytest.mark.parametrize("private", [False, True])
def test_a_failure_after_the_first_bit_keeps_both_charges(private: bool, work: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: Any) -> None:
        raise RuntimeError("audit down")

    monkeypatch.setattr(AuditLog, "append", boom)
    query = PRIVATE if private else [*PRIVATE[:-2], "--keys", "a,b"]
    assert main(["release", "d.csv", *query, "--budget-file", "b.json", "--budget", "1", "--budget-delta", "1/100000",
                 "--audit-log", "log.jsonl"]) == 1
    assert (stored()["spent"], stored()["delta_spent"]) == ("1/4", C if private else "0")


class NoBits(RandomSource):
    def _generate(self, n: int) -> bytes:
        raise OSError("no entropy")

    def describe(self) -> dict[str, Any]:
        return {"kind": "broken"}


def test_a_failure_before_the_first_bit_refunds_both_charges(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "source", lambda _args: NoBits())
    assert main(["release", "d.csv", *PRIVATE, "--budget-file", "b.json", "--budget", "1", "--budget-delta",
                 "1/100000"]) == 1
    assert not (work / "b.json").exists() or (stored()["spent"], stored()["delta_spent"]) == ("0", "0")


def test_without_a_budget_file_the_record_carries_no_budget_fields(work: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, *PRIVATE, "--json", "--seed-file", "seed")
    assert status == 0, err
    record = json.loads(out)
    assert not {"spent", "remaining", "total", "budget_kind", "charged", "delta_spent"} & set(record)
    assert record["query"]["group_by"] == ["g"]


SOURCES = [Path(commands.__file__).with_name(name) for name in ("commands.py", "table_command.py", "table_output.py",
                                                                "planning.py", "pipeline.py")]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_the_command_has_no_pipeline_of_its_own(path: Path) -> None:
    """Only Session.release charges, draws and records: the command builds the prepared release and calls it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    called = {node.func.attr for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    assert not called & {"execute", "charging", "charge", "refund"}, called
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert not names & {"ChargedRelease", "DeltaFields"}
    text = path.read_text(encoding="utf-8")
    assert ".execute(" not in text and "ChargedRelease.of" not in text


# -- the delta ledger of the file, read strictly --------------------------------------------------------------


def write(path: Path, **fields: object) -> None:
    state: dict[str, object] = {"format": "securedp-budget/1", "currency": "epsilon", "total": "1", "spent": "1/4",
                                "delta_total": "1/1000", "delta_spent": "1/10000", "ledger": LEDGER}
    state.update(fields)
    path.write_text(json.dumps({k: v for k, v in state.items() if v is not None}), encoding="utf-8")


@pytest.mark.parametrize("fields, fragment", [
    ({"delta_spent": None}, "'delta_total' without 'delta_spent'"),
    ({"delta_total": None}, "'delta_spent' without 'delta_total'"),
    ({"delta_total": "1"}, "'delta_total' must be > 0 and < 1, got 1"),
    ({"delta_total": "3/2", "delta_spent": "0"}, "'delta_total' must be > 0 and < 1"),
    ({"delta_total": "0", "delta_spent": "0"}, "'delta_total' must be > 0 and < 1, got 0"),
    ({"delta_total": "-1/1000"}, "'delta_total' must be > 0 and < 1"),
    ({"delta_spent": "-1/10000"}, "'delta_spent' must be >= 0, got -1/10000"),
    ({"delta_spent": "1/100"}, "'delta_spent' 1/100 exceeds 'delta_total' 1/1000"),
    ({"delta_spent": "2/20000"}, "'delta_spent' is not canonical: '2/20000' must be written '1/10000'"),
    ({"delta_total": "0.001"}, "'delta_total' must be an exact rational"),
    ({"delta_total": "1e-3"}, "'delta_total' must be an exact rational"),
    ({"delta_spent": 0}, "'delta_spent' must be an exact rational string"),
    ({"delta_total": 0.001}, "'delta_total' must be an exact rational string"),
    ({"delta_total": "1/1000 "}, "'delta_total' must be an exact rational"),
])
def test_a_malformed_delta_ledger_is_refused_before_anything_is_charged(tmp_path: Path, fields: dict[str, object],
                                                                        fragment: str) -> None:
    path = tmp_path / "b.json"
    write(path, **fields)
    before = path.read_bytes()
    with pytest.raises(BudgetError) as refused, BudgetFile(path).charge(Fraction(1, 8)):
        pass
    message = str(refused.value)
    assert message.startswith(f"{path} is not a valid budget file") and fragment in message, message
    assert "\n" not in message and path.read_bytes() == before


def test_a_valid_delta_ledger_is_charged_exactly_and_written_canonically(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    write(path)
    with BudgetFile(path).charge(Fraction(1, 8), Fraction(1, 10000)) as state:
        assert (state.spent, state.delta_spent) == (Fraction(3, 8), Fraction(1, 5000))
    assert stored(path) == {"format": "securedp-budget/1", "currency": "epsilon", "total": "1", "spent": "3/8",
                            "remaining": "5/8", "delta_total": "1/1000", "delta_spent": "1/5000", "ledger": LEDGER}
    with (
        pytest.raises(BudgetError, match="delta exhausted"),
        BudgetFile(path).charge(Fraction(1, 8), Fraction(1, 1000)),
    ):
        pass
    write(path, delta_total=None, delta_spent=None)
    with (
        pytest.raises(BudgetError, match=r"has no delta budget: .* --budget-delta D"),
        BudgetFile(path).charge(Fraction(1, 8), Fraction(1, 10000)),
    ):
        pass


def test_a_budget_file_pins_its_ledger(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    store = BudgetFile(path, total="1")
    ledger = store.ledger  # a new file: the id it will be created with
    with store.charge(Fraction(1, 8)):
        pass
    assert stored(path)["ledger"] == ledger
    write(path)  # another budget replaces the file
    with pytest.raises(BudgetError, match="now holds another budget"), store.charge(Fraction(1, 8)):
        pass
    assert stored(path)["spent"] == "1/4"


# -- the session over a budget file: the same pipeline from Python --------------------------------------------


def test_a_session_over_a_budget_file_charges_it_with_its_delta(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    store = BudgetFile(path, total="1", delta="1/100000")
    log = AuditLog(tmp_path / "log.jsonl", writer=store.ledger)
    session = Session(budget=Budget("epsilon", store=store), rng=ChaChaSource(bytes(32)), audit=log)
    assert (session.kind, session.total, session.delta, session.delta_spent) == \
        ("epsilon", 1, Fraction(1, 100000), 0)
    frame = pd.DataFrame({"p": list(range(20)), "g": ["a", "b"] * 10})
    session.table(frame, group_by=["g"], id_column="p", epsilon="1/4", delta="1/1000000", aggregations=[Count()])
    session.count([1, 2, 3], epsilon="1/4")
    assert (session.spent, session.delta_spent) == (Fraction(1, 2), CHARGED)
    assert (stored(path)["spent"], stored(path)["delta_spent"]) == ("1/2", C)
    table, count = records(tmp_path / "log.jsonl")
    assert (table["charged"], table["delta_charged"], table["partition"]) == ("1/4", C, None)
    assert "delta_charged" not in count
    assert verify_log(tmp_path / "log.jsonl").ok
    with pytest.raises(BudgetExceeded, match="delta exhausted"):
        session.table(frame, group_by=["g"], id_column="p", epsilon="1/4", delta="1/10000", aggregations=[Count()])
    assert session.spent == Fraction(1, 2)


def test_a_session_budget_is_given_once(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="not both"):
        Session(epsilon=1, budget=Budget("epsilon", 1))
    with pytest.raises(TypeError, match="must be a securedp Budget"):
        Session(budget=1)  # type: ignore[arg-type]
    session = Session(budget=Budget("rho", "1/2", delta="1/1000"))
    assert (session.kind, session.delta) == ("rho", Fraction(1, 1000))
    with pytest.raises(IncompatibleCost, match=r"create the session with Session\(\.\.\., delta=\.\.\.\)"):
        Session(epsilon=1).table(pd.DataFrame({"p": [1], "g": ["a"]}), group_by=["g"], id_column="p", epsilon="1/4",
                                 delta="1/1000000", aggregations=[Count()])
