"""The record a budget file keeps with its charge until the release's own record is durable (issue 40, part B).

Unit rules of :meth:`Budget.charging` over a :class:`BudgetFile`: the pending record is written with the charge
and removed once the release is recorded; a refund removes it with the charge; a failure after the draw leaves
it for the next charge, which settles it (appending it only when the log lacks the charge's record); a session
that cannot settle it is refused before anything is charged; a hand-edited pending record is refused.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import securedp.ledger.release as release_module
from securedp import AuditLog, ChaChaSource, Session, verify_log
from securedp.ledger.audit_record import OUTCOME_LOST
from securedp.ledger.budget import Budget
from securedp.ledger.budget_file import BudgetError, BudgetFile, read_budget
from securedp.ledger.errors import RecordNotAppended, RecordPending


def session(tmp_path: Path, audit: Any = "log") -> Session:
    log = None if audit is None else AuditLog(tmp_path / "log.jsonl") if audit == "log" else audit
    return Session(budget=Budget("epsilon", store=BudgetFile(tmp_path / "b.json", 10)), audit=log,
                   rng=ChaChaSource(b"\x07" * 32))


def records(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line)["record"] for line in (tmp_path / "log.jsonl").read_text(encoding="utf-8").splitlines()]


def test_a_recorded_release_leaves_no_pending_record(tmp_path: Path) -> None:
    session(tmp_path).count([1, 2, 3], epsilon=1)
    state = read_budget(tmp_path / "b.json")
    assert state.spent == 1 and state.pending is None
    assert "pending" not in json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))


def test_the_charge_and_its_pending_record_are_one_write_before_the_draw(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    execute = release_module.PreparedRelease.execute

    def spying(prepared: Any, rng: Any) -> Any:
        seen.append(read_budget(tmp_path / "b.json"))  # what a kill here would leave
        return execute(prepared, rng)

    monkeypatch.setattr(release_module.PreparedRelease, "execute", spying)
    session(tmp_path).count([1, 2, 3], epsilon=Fraction(1, 3))
    (before,) = seen
    assert before.spent == Fraction(1, 3) and before.pending is not None
    record = before.pending.record
    assert record["kind"] == "unreleased" and record["error"] == OUTCOME_LOST and record["statistic"] == "count"
    assert record["spent"] == "1/3" and record["charged"] == "1/3"


def test_a_refund_takes_the_pending_record_with_the_charge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(prepared: Any, rng: Any) -> Any:
        raise ZeroDivisionError("before any bit")

    monkeypatch.setattr(release_module.PreparedRelease, "execute", boom)
    with pytest.raises(ZeroDivisionError):
        session(tmp_path).count([1, 2, 3], epsilon=1)
    state = read_budget(tmp_path / "b.json")
    assert state.spent == 0 and state.pending is None and not (tmp_path / "log.jsonl").exists()


def _interrupted_after_the_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt("stopped")

    monkeypatch.setattr(release_module, "commit_input", boom)  # computed after the draw of a seeded release


def test_a_failure_after_the_draw_is_recorded_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:
        _interrupted_after_the_draw(patch)
        with pytest.raises(KeyboardInterrupt):
            session(tmp_path).count([1, 2, 3], epsilon=1)
    assert read_budget(tmp_path / "b.json").pending is not None  # left for the next charge to settle
    session(tmp_path).count([1, 2, 3], epsilon=1)
    assert [r.get("error") for r in records(tmp_path)] == ["KeyboardInterrupt", None]  # not appended twice
    assert verify_log(tmp_path / "log.jsonl").ok and read_budget(tmp_path / "b.json").pending is None


def test_a_failed_append_is_settled_by_the_next_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session(tmp_path).count([1, 2, 3], epsilon=1)
    with monkeypatch.context() as patch:
        def full(*args: Any, **kwargs: Any) -> Any:
            raise OSError(28, "no space left on device")

        patch.setattr(AuditLog, "append", full)
        with pytest.raises(RecordNotAppended) as failed:
            session(tmp_path).count([1, 2, 3], epsilon=1)
    assert read_budget(tmp_path / "b.json").pending.record == failed.value.record  # type: ignore[union-attr]
    session(tmp_path).count([1, 2, 3], epsilon=1)
    logged = records(tmp_path)
    assert [r["spent"] for r in logged] == [1, 2, 3] and logged[1] == failed.value.record  # the record itself
    assert verify_log(tmp_path / "log.jsonl").ok


def test_a_partition_charged_to_a_budget_file_is_settled_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:
        def full(*args: Any, **kwargs: Any) -> Any:
            raise OSError(28, "no space left on device")

        patch.setattr(AuditLog, "append", full)
        with pytest.raises(RecordNotAppended):
            session(tmp_path).partition([1, 2, 1], by=[1, 2, 1], parts=[1, 2], budget=1, ids=[1, 2, 3])
    session(tmp_path).count([1, 2, 3], epsilon=1)
    assert records(tmp_path)[0]["kind"] == "partition"  # the partition's own record, kept with its charge
    assert verify_log(tmp_path / "log.jsonl").ok and read_budget(tmp_path / "b.json").spent == 2


@pytest.mark.parametrize("audit", [None, []], ids=["no audit", "a list"])
def test_a_session_that_cannot_settle_a_pending_record_is_refused(tmp_path: Path, audit: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:
        _interrupted_after_the_draw(patch)
        with pytest.raises(KeyboardInterrupt):
            session(tmp_path).count([1, 2, 3], epsilon=1)
    before = (tmp_path / "b.json").read_bytes()
    with pytest.raises(RecordPending, match="release with that audit log first"):
        session(tmp_path, audit).count([1, 2, 3], epsilon=1)
    assert (tmp_path / "b.json").read_bytes() == before


@pytest.mark.parametrize("edit", ["spent", "total", "writer", "error", "extra"])
def test_a_hand_edited_pending_record_is_refused(tmp_path: Path, edit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:
        _interrupted_after_the_draw(patch)
        with pytest.raises(KeyboardInterrupt):
            session(tmp_path).count([1, 2, 3], epsilon=1)
    data = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    pending = data["pending"]
    if edit == "spent":
        pending["record"]["spent"], pending["record"]["remaining"] = 2, 8
    elif edit == "total":
        pending["record"]["remaining"] = 10
    elif edit == "writer":
        pending["writer"] = "X" * 32
    elif edit == "error":
        pending["record"]["error"] = "not an identifier"
    else:
        pending["note"] = "hello"
    (tmp_path / "b.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BudgetError, match="pending"):
        read_budget(tmp_path / "b.json")
