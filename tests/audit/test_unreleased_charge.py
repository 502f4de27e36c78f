"""A release that fails after its first random bit keeps its charge, and the charge gets a record of its own.

Found by review: an interrupt (or any error) inside the execution once the noise was drawn left the
charge standing with no record, so the ledger's *next* record failed ``verify`` on its ``spent`` chain
(or, on a fresh log, the lost charge went unseen). Now such a failure appends a ``"kind": "unreleased"``
record (statistic, exact cost, the exception's type, the budget just after the charge) before it
propagates; a failure before any bit is read is refunded and writes nothing.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import securedp.ledger.release as release_module
from securedp import AuditLog, ChaChaSource, Session, verify_log
from securedp.audit.replay import replay_log
from securedp.audit.report import render_report
from securedp.audit.report_model import build_report
from securedp.ledger.audit_record import UnreleasedRecord, parse_record
from securedp.ledger.release_record import SchemaError


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line)["record"] for line in path.read_text(encoding="utf-8").splitlines()]


def _interrupting(monkeypatch: pytest.MonkeyPatch, error: type[BaseException] = KeyboardInterrupt) -> None:
    """The input commitment (computed after the draw of a seeded release) raises ``error``."""
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise error("stopped")

    monkeypatch.setattr(release_module, "commit_input", boom)


@pytest.mark.parametrize("error", [KeyboardInterrupt, MemoryError, ValueError])
def test_a_failure_after_the_draw_is_charged_and_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          error: type[BaseException]) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    session.count([1, 2, 3], epsilon="1/4")
    _interrupting(monkeypatch, error)
    with pytest.raises(error):
        session.mean([1, 2, 3], bounds=(0, 4), epsilon="1/8")
    monkeypatch.undo()
    session.count([1, 2, 3], epsilon="1/4")
    assert session.spent == Fraction(5, 8)
    records = _records(path)
    assert [r.get("kind") for r in records] == [None, "unreleased", None]
    unreleased = records[1]
    assert unreleased["statistic"] == "mean" and unreleased["error"] == error.__name__
    assert (unreleased["epsilon"], unreleased["charged"], unreleased["spent"]) == ("1/8", "1/8", "3/8")
    assert "value" not in unreleased
    report = verify_log(path)
    assert report.ok, report.problem


def test_a_failure_before_the_draw_is_refunded_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    with pytest.raises(ValueError):
        session.sum([1, 2, 3], bounds=(4, 0), epsilon="1/4")
    assert session.spent == 0 and not path.exists()


def test_an_unreleased_charge_on_a_rho_budget_states_the_converted_charge(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(rho=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    _interrupting(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        session.count([1, 2, 3], epsilon="1/2")  # a pure release on a rho budget: charged epsilon**2 / 2
    monkeypatch.undo()
    (record,) = _records(path)
    assert (record["epsilon"], record["charged"], record["budget_kind"]) == ("1/2", "1/8", "rho")
    assert verify_log(path).ok


def test_a_forged_unreleased_charge_fails_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    _interrupting(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        session.count([1, 2, 3], epsilon="1/4")
    monkeypatch.undo()
    session.count([1, 2, 3], epsilon="1/4")
    # a charge that does not match its cost, however the chain is mended, is refused by the ledger check
    (first, second) = _records(path)
    forged = {**first, "charged": "1/8", "spent": "1/8", "remaining": "7/8"}
    fresh = tmp_path / "forged.jsonl"
    writer = AuditLog(fresh)
    writer.append(forged)
    writer.append(second)
    report = verify_log(fresh)
    assert not report.ok and report.problem is not None and "charged" in report.problem.field


@pytest.mark.parametrize("change, field", [
    ({"charged": None}, "charged"), ({"error": "not a name!"}, "error"), ({"epsilon": None}, "epsilon"),
    ({"rho": "1/4"}, "epsilon"), ({"epsilon": "-1/4"}, "epsilon"), ({"delta": "2"}, "delta"),
    ({"query": [1]}, "query"), ({"statistic": ""}, "statistic"),
])
def test_the_unreleased_schema_refuses_a_malformed_record(change: dict[str, Any], field: str) -> None:
    good = UnreleasedRecord.from_json({"kind": "unreleased", "statistic": "count", "epsilon": "1/4", "rho": None,
                                       "error": "KeyboardInterrupt", "budget_kind": "epsilon", "charged": "1/4",
                                       "spent": "1/4", "remaining": "3/4", "partition": None}).to_json()
    assert parse_record(good).to_json() == good
    bad = {k: v for k, v in {**good, **change}.items() if v is not None or k not in ("charged",)}
    with pytest.raises(SchemaError) as raised:
        parse_record(bad)
    assert raised.value.field == field


def test_replay_and_report_state_the_unreleased_charge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from securedp.cli.main import main

    (tmp_path / "d.csv").write_text("v\n" + "".join(f"{i % 7}\n" for i in range(40)), encoding="utf-8")
    (tmp_path / "seed").write_text("42" * 32, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    argv = ["release", "d.csv", "--column", "v", "--stat", "mean", "--bounds", "0,10", "--epsilon", "1/2",
            "--budget-file", "b.json", "--budget", "2", "--audit-log", "log.jsonl", "--seed-file", "seed"]
    assert main(argv) == 0
    with pytest.MonkeyPatch.context() as patch:
        _interrupting(patch, ValueError)
        assert main(argv) != 0
    assert main(argv) == 0
    records = _records(tmp_path / "log.jsonl")
    assert [r.get("kind") for r in records] == [None, "unreleased", None]
    assert records[1]["charged"] == "1/2" and records[1]["total"] == 2 and records[1]["query"] == records[0]["query"]
    assert json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["spent"] == "3/2"
    assert verify_log(tmp_path / "log.jsonl").ok
    replayed = replay_log(tmp_path / "log.jsonl", bytes.fromhex("42" * 32), tmp_path / "d.csv")
    assert [(r.ok, r.skipped) for r in replayed] == [(True, False), (True, True), (True, False)]
    report = build_report(tmp_path / "log.jsonl", seed=bytes.fromhex("42" * 32), data=tmp_path / "d.csv")
    assert report.ok and report.entries[1].kind == "unreleased mean"
    assert report.entries[1].charge.amount == Fraction(1, 2)
    page = render_report(report)
    assert "Charge with nothing released" in page and "a charge with nothing released" in page


def test_a_partition_that_fails_after_its_salt_is_charged_and_recorded(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import securedp.session.session as session_module

    path = tmp_path / "log.jsonl"
    session = Session(epsilon=2, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    real = session_module.draw_salt

    def drawn_then_interrupted(rng: Any) -> Any:
        real(rng)
        raise KeyboardInterrupt

    monkeypatch.setattr(session_module, "draw_salt", drawn_then_interrupted)
    data, ids, by = [1, 2, 3, 4], [1, 1, 2, 3], ["a", "b", "a", "b"]
    with pytest.raises(KeyboardInterrupt):
        session.partition(data, by=by, parts=["a", "b"], budget="1/2", ids=ids, max_partitions=2)
    monkeypatch.undo()
    assert session.spent == 1
    (record,) = _records(path)
    assert (record["kind"], record["statistic"], record["charged"], record["error"]) == (
        "unreleased", "partition", 1, "KeyboardInterrupt")
    parts = session.partition(data, by=by, parts=["a", "b"], budget="1/2", ids=ids, max_partitions=2)
    parts["a"].session.count(parts["a"].data, epsilon="1/2", ids=parts["a"].ids)
    assert verify_log(path).ok
