"""A Session writing to an AuditLog: records verify, refused releases write nothing, partitions balance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from securedp import AuditLog, BudgetExceeded, ChaChaSource, Session, verify_log


def test_session_records_verify_with_exact_budget_fields(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    session = Session(epsilon=1, rng=ChaChaSource(bytes(32)).substream("session"), audit=AuditLog(path))
    session.count([1, 2, 3], epsilon="1/4")
    session.mean([1, 2, 3], bounds=(0, 10), epsilon="1/4")
    size = path.stat().st_size
    with pytest.raises(BudgetExceeded):
        session.count([1, 2, 3], epsilon="3/4")
    assert path.stat().st_size == size  # a refused release writes nothing
    report = verify_log(path)
    assert report.ok and report.valid == 2
    last = report.entries[-1]["record"]
    assert last["spent"] == "1/2" and last["remaining"] == "1/2"
    assert last["source"]["substream"] == ["session"] and len(last["source"]["seed_commitment"]) == 64


def test_partitions_and_a_rho_session_verify(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    session = Session(epsilon=2, audit=AuditLog(path))
    parts = session.partition([1, 2, 3, 4], by=["a", "b", "a", "b"], parts=["a", "b"], budget="1/2")
    for part in parts.values():
        part.session.count(part.data, epsilon="1/4")
        part.session.count(part.data, epsilon="1/4")
    session.count([1, 2], epsilon="1/2")  # the parent's spent jumped by the unlogged partition charge
    assert verify_log(path).ok
    rho = Session(rho=1, audit=AuditLog(path))
    rho.count([1, 2], rho="1/4")
    rho.count([1, 2], epsilon="1/2")  # charged epsilon**2 / 2 = 1/8
    report = verify_log(path)
    assert report.ok, report.problem
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    assert entries[-1]["record"]["charged"] == "1/8"
