"""A record whose charge stands reaches the audit even through an interrupt (found by review, 2026-12-02).

A Ctrl-C while the audit append waited for the log's lock (or wrote, or synced) made the append take its
line back and the interrupt propagate: the charge stood in the budget with no record, and the ledger's next
record failed ``verify``. Now the append is tried again with the interrupt held back, and the interrupt is
raised once the record is durable; an interrupt between the draw and the append writes the unreleased record.
"""

from __future__ import annotations

import json
import os
from fractions import Fraction
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import securedp.audit.log as log_module
from securedp import AuditLog, ChaChaSource, Session, verify_log
from securedp.accounting import schema
from securedp.accounting.errors import RecordNotAppended
from securedp.accounting.recording import APPEND_ATTEMPTS, append_record, error_name


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line)["record"] for line in path.read_text(encoding="utf-8").splitlines()]


def _interrupting(times: int, real: Callable[..., Any]) -> Callable[..., Any]:
    calls = {"n": 0}

    def call(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] <= times:
            raise KeyboardInterrupt
        return real(*args)

    return call


@pytest.mark.parametrize("step", ["fsync", "write", "lock"])
def test_an_interrupt_in_the_append_is_raised_once_the_record_is_durable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    session.count([1, 2, 3], epsilon="1/4")
    if step == "lock":
        monkeypatch.setattr(log_module, "lock_file", _interrupting(1, log_module.lock_file))
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
