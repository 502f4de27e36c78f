"""An append to the audit log that raises has appended nothing, so trying it again never writes a record twice.

Found by review: ``AuditLog.append`` wrote the line, then ``fsync`` or the signed head failed, and the session,
trying again, left two or three copies of the record; an honest log then failed ``verify`` (its ``spent`` chain).
Now the append cuts the file back to where the record began (and restores the head) before it raises; a log whose
head path cannot take a head is refused before anything is drawn.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import securedp.audit.log as log_module
from securedp import AuditLog, ChaChaSource, Session, verify_log
from securedp.audit.log import AuditLogError
from securedp.ledger.errors import RecordNotAppended


def _failing(times: int, real: Callable[..., Any]) -> Callable[..., Any]:
    """``real``, raising EIO on its first ``times`` calls."""
    calls = {"n": 0}

    def call(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] <= times:
            raise OSError(errno.EIO, "Input/output error")
        return real(*args)

    return call


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


@pytest.mark.parametrize("failures, appended", [(1, True), (2, True), (99, False)])
def test_a_failing_fsync_leaves_one_record_or_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: int,
                                                  appended: bool) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    session.count([1, 2, 3], epsilon="1/4")  # one record before
    monkeypatch.setattr(log_module.os, "fsync", _failing(failures, os.fsync))
    if appended:
        session.count([1, 2, 3], epsilon="1/4")
    else:
        with pytest.raises(RecordNotAppended):
            session.count([1, 2, 3], epsilon="1/4")
    monkeypatch.undo()
    assert session.spent == Fraction(1, 2)
    assert _lines(path) == (2 if appended else 1)
    if appended:
        assert verify_log(path).ok


def test_a_head_that_cannot_be_written_takes_the_record_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, key = tmp_path / "log.jsonl", Ed25519PrivateKey.generate()
    audit = AuditLog(path, signing_key=key)
    session = Session(epsilon=1, audit=audit, rng=ChaChaSource(bytes(32)))
    session.count([1, 2, 3], epsilon="1/4")
    head = audit.head_path.read_bytes()
    monkeypatch.setattr(log_module, "write_head", _failing(99, log_module.write_head))
    with pytest.raises(RecordNotAppended):
        session.count([1, 2, 3], epsilon="1/4")
    monkeypatch.undo()
    assert _lines(path) == 1 and audit.head_path.read_bytes() == head  # nothing of the failed append is left
    assert verify_log(path, public_key=key.public_key(), head=audit.head_path).ok
    session.count([1, 2, 3], epsilon="1/4")  # and the log goes on
    assert _lines(path) == 2


def test_a_head_path_that_is_no_file_refuses_before_anything_is_drawn(tmp_path: Path) -> None:
    path, key = tmp_path / "log.jsonl", Ed25519PrivateKey.generate()
    audit = AuditLog(path, signing_key=key)
    audit.head_path.mkdir()
    with pytest.raises(AuditLogError, match="not a file"):
        audit.check_appendable()


def test_a_partition_with_ids_keeps_its_charge_and_says_its_record_is_not_appended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=1, audit=AuditLog(path), rng=ChaChaSource(bytes(32)))
    monkeypatch.setattr(log_module.os, "fsync", _failing(99, os.fsync))
    with pytest.raises(RecordNotAppended):  # the salt was drawn: the charge stands
        session.partition([1, 2, 3], by=["a", "b", "a"], parts=["a", "b"], budget="1/2", ids=[1, 2, 3])
    assert session.spent == Fraction(1, 2) and _lines(path) == 0
    with pytest.raises(OSError):  # nothing drawn: refunded, and nothing appended
        session.partition([1, 2, 3], by=["a", "b", "a"], parts=["a", "b"], budget="1/4")
    assert session.spent == Fraction(1, 2) and _lines(path) == 0
