"""A record whose charge stands reaches the audit even through an interrupt (found by review, 2026-12-02).

A Ctrl-C while the audit append waited for the log's lock (or wrote, or synced) made the append take its
line back and the interrupt propagate: the charge stood in the budget with no record, and the ledger's next
record failed ``verify``. Now the append is tried again with the interrupt held back, and the interrupt is
raised once the record is durable; an interrupt between the draw and the append writes the unreleased record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import securedp.audit.log as log_module
from securedp import AuditLog, ChaChaSource, Session, verify_log
from securedp.ledger import audit_record as schema
from securedp.ledger.errors import RecordNotAppended
from securedp.session.recording import APPEND_ATTEMPTS, append_record, error_name


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line)["record"] for line in path.read_text(encoding="utf-8").splitlines()]


def _interrupting(times: int, real: Callable[..., Any], after: int = 0) -> Callable[..., Any]:
    """``real``, interrupted at ``times`` calls after the first ``after``."""
    calls = {"n": 0}

    def call(*args: Any) -> Any:
        calls["n"] += 1
        if after < calls["n"] <= after + times:
            raise KeyboardInterrupt
        return real(*args)

    return call


@pytest.mark.parametrize("step", ["fsync", "write", "lock"])
def test_an_interrupt_in_the_append_is_raised_once_the_record_is_durable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    session.count([1, 2, 3], epsilon="1/4")
    if step == "lock":  # the append's lock: the release's check that the log can take a record locks it first
        monkeypatch.setattr(log_module, "lock_file", _interrupting(1, log_module.lock_file, after=1))
    else:
        monkeypatch.setattr(log_module.os, step, _interrupting(1, getattr(os, step)))
    with pytest.raises(KeyboardInterrupt):
        session.mean([1, 2, 3], bounds=(0, 4), epsilon="1/4")
    monkeypatch.undo()
    assert [r.get("statistic") for r in _records(path)] == ["count", "mean"]  # the release's own record, once
    session.count([1, 2, 3], epsilon="1/4")
    assert verify_log(path).ok and session.spent == sum(Fraction(r["charged"]) for r in _records(path))


def test_an_interrupt_at_every_try_leaves_the_record_in_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    monkeypatch.setattr(log_module.os, "write", _interrupting(APPEND_ATTEMPTS, os.write))
    with pytest.raises(RecordNotAppended) as caught:
        session.count([1, 2, 3], epsilon="1/4")
    assert caught.value.record["statistic"] == "count" and caught.value.release is not None
    assert isinstance(caught.value.__cause__, KeyboardInterrupt) and not path.read_bytes()


def test_an_interrupt_between_the_draw_and_the_append_writes_the_unreleased_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    real = schema.ChargedRelease.of

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(schema.ChargedRelease, "of", interrupted)
    with pytest.raises(KeyboardInterrupt):
        session.count([1, 2, 3], epsilon="1/4")
    monkeypatch.setattr(schema.ChargedRelease, "of", real)
    session.count([1, 2, 3], epsilon="1/4")
    assert [r.get("kind") for r in _records(path)] == ["unreleased", None] and verify_log(path).ok


def test_an_interrupted_partition_record_is_appended_then_the_interrupt_raised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=2, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    monkeypatch.setattr(log_module.os, "fsync", _interrupting(1, os.fsync))
    with pytest.raises(KeyboardInterrupt):
        session.partition([1, 2, 3], by=["a", "b", "a"], parts=["a", "b"], budget="1/2", ids=[1, 2, 3])
    monkeypatch.undo()
    assert [r.get("kind") for r in _records(path)] == ["partition"] and verify_log(path).ok and session.spent == 1 / 2


def test_an_error_that_cannot_help_is_not_tried_again() -> None:
    tries: list[dict[str, Any]] = []

    class Refusing:
        def append(self, record: dict[str, Any]) -> None:
            tries.append(record)
            raise ValueError("no")

    with pytest.raises(RecordNotAppended):
        append_record(Refusing(), None, {"n": 1})
    assert len(tries) == 1


def test_an_error_type_is_named_by_an_identifier() -> None:
    odd = type("Data error", (ValueError,), {})
    assert error_name(odd("x")) == "ValueError" and error_name(KeyboardInterrupt()) == "KeyboardInterrupt"


@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
def test_a_failure_once_the_line_is_durable_does_not_write_it_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]) -> None:
    """Found by review: the sync of a new log's folder (after the line's own fsync) raised, and the append was
    tried again: two records of one charge, and a log that failed ``verify``."""
    path = tmp_path / "log.jsonl"
    real = log_module._fsync_directory

    def fails(folder: Path) -> None:
        raise error("after the line")

    monkeypatch.setattr(log_module, "_fsync_directory", fails)
    session = Session(epsilon=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    if error is KeyboardInterrupt:
        with pytest.raises(KeyboardInterrupt):
            session.count([1, 2, 3], epsilon="1/4")
    else:
        session.count([1, 2, 3], epsilon="1/4")  # the line is durable: a failed folder sync is not the record's
    monkeypatch.setattr(log_module, "_fsync_directory", real)
    assert len(_records(path)) == 1
    session.count([1, 2, 3], epsilon="1/4")
    assert len(_records(path)) == 2 and verify_log(path).ok


def _head_a_folder(tmp_path: Path) -> AuditLog:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    (tmp_path / "log.jsonl.head").mkdir()
    return AuditLog(tmp_path / "log.jsonl", signing_key=Ed25519PrivateKey.generate())


def _torn(tmp_path: Path) -> AuditLog:
    """A log torn after it was opened (opening a torn log is refused already)."""
    path = tmp_path / "log.jsonl"
    log = AuditLog(path)
    Session(epsilon=1, audit=log, rng=ChaChaSource(bytes(32))).count([1, 2], epsilon="1/4")
    path.write_bytes(path.read_bytes()[:-5])
    return log


UNUSABLE = {
    "a folder for its signed head": (_head_a_folder, "is not a file"),
    "in a missing folder": (lambda tmp_path: AuditLog(tmp_path / "missing" / "log.jsonl"), "cannot create"),
    "a torn last line": (_torn, "incomplete"),
}


@pytest.mark.parametrize("call", ["count", "table", "partition", "partition with ids"])
@pytest.mark.parametrize("case", sorted(UNUSABLE))
def test_a_session_refuses_before_any_charge_a_release_its_log_cannot_take(
        tmp_path: Path, case: str, call: str) -> None:
    """The command checked the log before drawing; a Python session charged and drew, then lost the record
    (a fourth review: a charge without a record). Every release and partition now asks the log first."""
    make, message = UNUSABLE[case]
    log = make(tmp_path)
    before = log.path.read_bytes() if log.path.is_file() else None
    session = Session(epsilon=1, audit=log, rng=ChaChaSource(bytes(32)))
    calls = {
        "count": lambda: session.count([1, 2, 3], epsilon="1/4"),
        "table": lambda: session.table({"g": ["a", "b"], "v": [1, 2]}, group_by=["g"], keys=["a", "b"], epsilon="1/4"),
        "partition": lambda: session.partition([1, 2], by=["a", "b"], parts=["a", "b"], budget="1/4"),
        "partition with ids": lambda: session.partition([1, 2], by=["a", "b"], parts=["a", "b"], budget="1/4",
                                                        ids=[7, 8]),
    }
    with pytest.raises(log_module.AuditLogError, match=message):
        calls[call]()
    assert session.spent == 0
    assert (log.path.read_bytes() if log.path.is_file() else None) == before


def test_an_interrupt_once_a_partition_record_is_durable_keeps_its_charge(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A partition without ids draws nothing, so a failed append refunds it; but an interrupt that arrives once
    its record is durable (the folder's sync of a new log) refunded it too, leaving a record without a charge and
    the ledger's next record failing ``verify`` (a fourth review). The charge now stands with its record."""
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    real = log_module._fsync_directory

    def interrupted(folder: Any) -> None:
        real(folder)
        raise KeyboardInterrupt

    monkeypatch.setattr(log_module, "_fsync_directory", interrupted)
    with pytest.raises(KeyboardInterrupt):
        session.partition([1, 2, 3, 4], by=["a", "b", "a", "b"], parts=["a", "b"], budget="1/2")
    monkeypatch.undo()
    assert [r.get("kind") for r in _records(path)] == ["partition"] and session.spent == Fraction(1, 2)
    session.count([1, 2, 3], epsilon="1/4")
    assert verify_log(path).ok and session.spent == Fraction(3, 4)
