"""A Session writing to an AuditLog: records verify, refused releases write nothing, partitions balance exactly."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest

from securedp import AuditLog, BudgetExceeded, ChaChaSource, Session, verify_log
from securedp.audit.log import GENESIS, canonical, entry_hash
from securedp.audit.replay import replay_log
from securedp.ledger.errors import RecordNotAppended
from securedp.session.recording import APPEND_ATTEMPTS


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
    session.count([1, 2], epsilon="1/2")  # spent: 1/2 (the partition, logged) + 1/2
    assert verify_log(path).ok
    rho = Session(rho=1, audit=AuditLog(path))
    rho.count([1, 2], rho="1/4")
    rho.count([1, 2], epsilon="1/2")  # charged epsilon**2 / 2 = 1/8
    report = verify_log(path)
    assert report.ok, report.problem
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    assert entries[-1]["record"]["charged"] == "1/8"


def entries_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def rewrite(path: Path, entries: list[dict]) -> None:
    """Write ``entries`` back renumbered, with every hash recomputed: only the record checks can object."""
    prev, out = GENESIS, b""
    for seq, entry in enumerate(entries):
        entry["seq"] = seq
        entry["prev"] = prev
        entry["hash"] = prev = entry_hash(entry)
        out += canonical(entry) + b"\n"
    path.write_bytes(out)


def partitioned_log(path: Path) -> None:
    """A parent release, two partitions (one nested, one reusing the same keys), releases in every part."""
    session = Session(epsilon=4, rng=ChaChaSource(bytes(32)).substream("s"), audit=AuditLog(path))
    session.count([1, 2, 3], epsilon="1/4")
    parts = session.partition([1, 2, 3, 4], by=["a", "b", "a", "b"], parts=["a", "b"], budget="1/2", max_partitions=2)
    again = session.partition([5, 6], by=["a", "b"], parts=["a", "b"], budget="1/4")  # same keys, new ledgers
    nested = parts["a"].session.partition(parts["a"].data, by=[0, 1], parts=[0, 1], budget="1/8")
    for part in (*parts.values(), *again.values(), *nested.values()):
        part.session.count(part.data, epsilon="1/16")
    parts["b"].session.count(parts["b"].data, epsilon="1/16")
    session.count([1, 2, 3], epsilon="1/4")  # 1/4 + 1 + 1/4 + 1/4 = 7/4


def test_a_partition_writes_an_exact_record_and_the_parent_ledger_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    partitioned_log(path)
    report = verify_log(path)
    assert report.ok, report.problem
    records = [e["record"] for e in report.entries]
    partitions = [r for r in records if r.get("kind") == "partition"]
    assert len(partitions) == 3
    first = partitions[0]
    assert first["charged"] == 1 and first["budget"] == "1/2" and first["max_partitions"] == 2
    assert first["parts"] == ["a", "b"] and first["spent"] == "5/4" and first["remaining"] == "11/4"
    assert first["partition"] is None and first["budget_kind"] == "epsilon"
    assert partitions[2]["partition"] == ["a"] and partitions[2]["partition_id"] == first["opens"]
    parent = [r for r in records if r.get("partition") is None]
    spent = [Fraction(r["spent"]) for r in parent]
    charges = [Fraction(r.get("charged") or r["epsilon"]) for r in parent]
    assert all(after == before + c for (before, after), c in zip(itertools.pairwise(spent), charges[1:], strict=True))
    assert spent[-1] == Fraction(7, 4)
    assert len({r["opens"] for r in partitions}) == 3


def test_replay_skips_and_reports_partition_records(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    session = Session(epsilon=1, audit=AuditLog(path))
    session.partition([1, 2], by=["a", "b"], parts=["a", "b"], budget="1/2")
    (result,) = replay_log(path, bytes(32), tmp_path / "unused.csv")
    assert result.skipped and result.ok and result.statistic == "partition" and result.line == 1


@pytest.mark.parametrize(
    "tamper, field",
    [
        (lambda r: r.update(charged="1/2"), "record.charged"),  # no longer budget * max_partitions
        (lambda r: r.update(charged="1/2", budget="1/4"), "record.spent"),  # consistent, but the parent's spent jumps
        (lambda r: r.update(spent="3/2", remaining="5/2"), "record.spent"),
        (lambda r: r.update(max_partitions=1, charged="1/2", spent="3/4", remaining="13/4"), "record.spent"),
        (lambda r: r.update(parts=["a", "a"]), "record.parts"),
        (lambda r: r.update(opens="xyz"), "record.opens"),
        (lambda r: r.pop("budget"), "record.budget"),
        (lambda r: r.update(kind="merge"), "record.kind"),
    ],
)
def test_a_tampered_partition_record_is_caught_even_with_a_recomputed_chain(tmp_path: Path, tamper, field: str) -> None:
    path = tmp_path / "audit.jsonl"
    partitioned_log(path)
    entries = entries_of(path)
    line = next(i for i, e in enumerate(entries) if e["record"].get("kind") == "partition")
    tamper(entries[line]["record"])
    rewrite(path, entries)
    problem = verify_log(path).problem
    assert problem is not None and problem.field == field, problem
    assert problem.line in (line + 1, line + 2, line + 3, len(entries))  # at the record, or where the ledger breaks


def test_dropping_a_partition_record_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    partitioned_log(path)
    entries = entries_of(path)
    line = next(i for i, e in enumerate(entries) if e["record"].get("kind") == "partition")
    rewrite(path, entries[:line] + entries[line + 1 :])
    problem = verify_log(path).problem
    assert problem is not None and problem.field in ("record.spent", "record.partition_id"), problem


def test_a_sub_session_overspending_its_declared_budget_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    partitioned_log(path)
    entries = entries_of(path)
    child = next(i for i, e in enumerate(entries) if e["record"].get("partition") == ["b"])
    record = entries[child]["record"]
    record.update(remaining="1", spent=record["spent"])  # claims a bigger total than the partition declared
    rewrite(path, entries)
    problem = verify_log(path).problem
    assert problem is not None and problem.line == child + 1 and problem.field == "record.remaining", problem


def test_a_tampered_charge_to_a_rho_budget_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    rho = Session(rho=1, audit=AuditLog(path))
    rho.count([1, 2], epsilon="1/2")  # charged epsilon**2 / 2 = 1/8
    rho.count([1, 2], rho="1/4")
    assert verify_log(path).ok
    entries = entries_of(path)
    entries[0]["record"].update(charged="1/16", spent="1/16", remaining="15/16")
    entries[1]["record"].update(spent="5/16", remaining="11/16")
    rewrite(path, entries)
    problem = verify_log(path).problem
    assert problem is not None and problem.line == 1 and problem.field == "record.charged", problem


def test_a_failing_audit_refunds_the_partition_charge() -> None:
    class Broken:
        def append(self, record: dict) -> None:
            raise OSError("disk full")

    session = Session(epsilon=1, audit=Broken())
    with pytest.raises(OSError, match="disk full"):
        session.partition([1, 2], by=["a", "b"], parts=["a", "b"], budget="1/2")
    assert session.spent == 0


def test_threads_sharing_an_audited_session_write_a_log_that_verifies(tmp_path: Path) -> None:
    """Each ledger's records reach the log in the order of its charges, whichever thread draws faster."""
    import threading

    path = tmp_path / "audit.jsonl"
    session = Session(epsilon=100, audit=AuditLog(path))

    def work() -> None:
        for _ in range(15):
            session.mean(list(range(200)), bounds=(0, 300), epsilon="1/10")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report = verify_log(path)
    assert report.ok and report.valid == 60, report.problem
    assert session.spent == 6 and report.entries[-1]["record"]["spent"] == 6


def test_a_failing_audit_keeps_the_charge_of_a_drawn_release() -> None:
    """The charge stands (its noise was drawn); the error carries the release and its record, so neither is lost."""
    attempts: list[dict] = []

    class Broken:
        def append(self, record: dict) -> None:
            attempts.append(record)
            raise OSError("disk full")

    session = Session(epsilon=1, audit=Broken())
    with pytest.raises(RecordNotAppended, match="disk full") as caught:
        session.count([1, 2], epsilon="1/4")
    assert session.spent == Fraction(1, 4)
    assert len(attempts) == APPEND_ATTEMPTS and all(a == caught.value.record for a in attempts)
    assert caught.value.record["value"] == caught.value.release.value  # type: ignore[attr-defined]
    assert isinstance(caught.value.__cause__, OSError)


def test_an_audit_that_fails_once_still_gets_the_record() -> None:
    kept: list[dict] = []

    class Flaky:
        def append(self, record: dict) -> None:
            if not kept:
                kept.append({})
                raise OSError("interrupted")
            kept.append(record)

    session = Session(epsilon=1, audit=Flaky())
    release = session.count([1, 2], epsilon="1/4")
    assert kept[1]["value"] == release.value and session.spent == Fraction(1, 4)
