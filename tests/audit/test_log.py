"""The audit log: chain, formats, budget arithmetic, corruption of every field, torn tails, concurrency."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from fractions import Fraction
from pathlib import Path

import pytest

from securedp import ChaChaSource
from securedp.audit import AuditLog, AuditLogError, verify_log
from securedp.audit.log import GENESIS, canonical, entry_hash
from securedp.ledger.release import Release

SEED = bytes(range(1, 33))


def make_record(
    i: int = 0, spent: Fraction | None = None, total: Fraction = Fraction(1), epsilon: Fraction = Fraction(1, 10)
) -> dict:
    source = ChaChaSource(SEED).substream(f"release-{i}")
    release = Release(
        value=Fraction(7 + i, 2),
        statistic="mean",
        mechanism="discrete_laplace",
        parameters={"scale": Fraction(4, 3), "bounds": (0, 10), "lattice": "2**-4"},
        epsilon=epsilon,
        rho=None,
        max_contributions=1,
        source=source.describe(),
    )
    record = release.record()
    if spent is not None:
        record.update(spent=spent, remaining=total - spent, total=total)
    return record


def write_log(path: Path, n: int = 4, budget: bool = True) -> AuditLog:
    log = AuditLog(path)
    for i in range(n):
        log.append(make_record(i, Fraction(i + 1, 10) if budget else None))
    return log


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def rewrite(path: Path, entries: list[dict], rehash: bool) -> None:
    """Write ``entries`` back; with ``rehash``, recompute every hash so only the format checks can object."""
    prev = GENESIS
    out = b""
    for entry in entries:
        if rehash:
            entry["prev"] = prev
            entry["hash"] = entry_hash(entry)
            prev = entry["hash"]
        out += canonical(entry) + b"\n"
    path.write_bytes(out)


def test_chain_verifies_and_records_are_exact(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    report = verify_log(path)
    assert report.ok and report.valid == 4
    first, second = lines(path)[:2]
    assert first["prev"] == GENESIS and second["prev"] == first["hash"]
    assert first["record"]["value"] == "7/2" and first["record"]["epsilon"] == "1/10"
    assert first["record"]["parameters"]["scale"] == "4/3"
    source = first["record"]["source"]
    assert source["seed_commitment"] == hashlib.sha256(b"securedp/seed-commitment/v1" + SEED).hexdigest()
    assert source["substream"] == ["release-0"]
    assert SEED.hex() not in path.read_text()
    assert report.head == lines(path)[-1]["hash"]


def test_empty_log_verifies(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"")
    assert verify_log(path).ok


CORRUPTIONS = {
    "format": "securedp-audit/2",
    "seq": 7,
    "time": "yesterday",
    "version": "latest",
    "writer": "nobody",
    "prev": "f" * 64,
    "hash": "0" * 64,
    "record": {"statistic": "mean"},
}


@pytest.mark.parametrize("field", sorted(CORRUPTIONS))
def test_every_entry_field_corrupted_is_caught_at_that_line(tmp_path: Path, field: str) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    entries = lines(path)
    entries[2][field] = CORRUPTIONS[field]
    rewrite(path, entries, rehash=False)
    report = verify_log(path)
    assert not report.ok and report.valid == 2
    assert report.problem.line == 3
    assert report.problem.field in (field, "hash", "prev")


RECORD_CORRUPTIONS = {
    "statistic": ("", "record.statistic"),
    "mechanism": (None, "record.mechanism"),
    "parameters": ([1, 2], "record.parameters"),
    "epsilon": ("0.1", "record.epsilon"),
    "rho": ("1/10", "record.epsilon"),
    "max_contributions": (0, "record.max_contributions"),
    "source": ({"kind": "chacha20", "seed_commitment": "abc", "substream": []}, "record.source.seed_commitment"),
    "spent": ("1/2", "record.total"),
    "remaining": ("-1/10", "record.remaining"),
    "total": (2, "record.total"),
}


@pytest.mark.parametrize("field", sorted(RECORD_CORRUPTIONS))
def test_every_record_field_corrupted_with_a_recomputed_chain_is_caught(tmp_path: Path, field: str) -> None:
    """A forger who recomputes every hash still cannot pass off a malformed record or wrong budget."""
    path = tmp_path / "audit.jsonl"
    write_log(path)
    entries = lines(path)
    value, reported = RECORD_CORRUPTIONS[field]
    entries[2]["record"][field] = value
    rewrite(path, entries, rehash=True)
    report = verify_log(path)
    assert report.problem is not None and report.problem.line == 3, report.problem
    assert report.problem.field == reported


def test_a_seed_in_a_source_description_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    entries = lines(path)
    entries[1]["record"]["source"]["seed"] = bytes(32).hex()
    rewrite(path, entries, rehash=True)
    assert verify_log(path).problem.field == "record.source.seed"


def test_deleted_reordered_and_inserted_lines_break_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    raw = path.read_bytes().splitlines(keepends=True)
    for broken in (raw[:1] + raw[2:], [raw[1], raw[0], *raw[2:]], [*raw[:2], raw[1], *raw[2:]]):
        path.write_bytes(b"".join(broken))
        assert not verify_log(path).ok


@pytest.mark.parametrize("garbage", [b"\xff\xfe{\"x\": 1}\n", b"{not json\n", b"[1, 2]\n"])
def test_a_line_that_is_not_a_json_record_is_reported_at_that_line(tmp_path: Path, garbage: bytes) -> None:
    """Bytes that are not UTF-8, not JSON, or not an object: a precise report, never a crash."""
    path = tmp_path / "audit.jsonl"
    write_log(path)
    raw = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*raw[:2], garbage, *raw[2:]]))
    report = verify_log(path)
    assert not report.ok and report.problem.line == 3


def test_removing_the_end_is_caught_with_a_published_head(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    head = verify_log(path).head
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-1]))
    assert verify_log(path).ok
    assert "expected head" in verify_log(path, expected_head=head).problem.message


@pytest.mark.parametrize("cut", [1, 10, -2])
def test_truncated_mid_record_is_a_torn_tail_and_the_prefix_verifies(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: start + cut] if cut > 0 else data[: len(data) + cut + 1])
    report = verify_log(path)
    assert report.torn_tail and report.valid == 3 and report.problem.line == 4
    assert report.problem.offset == start
    with pytest.raises(AuditLogError, match="torn"):
        AuditLog(path)
    path.write_bytes(data[:start])
    assert verify_log(path).ok


def test_appending_after_a_torn_tail_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = write_log(path, 2)
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(AuditLogError, match="torn"):
        log.append(make_record(3))
    assert verify_log(path).torn_tail


def test_budget_is_checked_per_writer(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    a, b = AuditLog(path), AuditLog(path)
    a.append(make_record(0, Fraction(1, 10)))
    b.append(make_record(1, Fraction(1, 10)))
    a.append(make_record(2, Fraction(2, 10)))
    b.append(make_record(3, Fraction(2, 10)))
    assert verify_log(path).ok
    a.append(make_record(4, Fraction(4, 10)))  # skips a charge: 2/10 + 1/10 != 4/10
    problem = verify_log(path).problem
    assert problem.line == 5 and problem.field == "record.spent"


def test_concurrent_threads_interleave_whole_records(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"

    def work(k: int) -> None:
        log = AuditLog(path)
        for i in range(10):
            log.append(make_record(100 * k + i, Fraction(i + 1, 10)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report = verify_log(path)
    assert report.ok and report.valid == 40


def _process_writer(path: str, k: int) -> None:
    log = AuditLog(path)
    for i in range(15):
        log.append(make_record(100 * k + i, Fraction(i + 1, 10), total=Fraction(2)))


def test_concurrent_processes_interleave_whole_records(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process_writer, args=(str(path), k)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    report = verify_log(path)
    assert report.ok and report.valid == 45
    assert len({e["writer"] for e in report.entries}) == 3


KILLED_WRITER = """
import sys
from fractions import Fraction
sys.path.insert(0, {tests!r})
from test_log import make_record
from securedp.audit import AuditLog
log = AuditLog({path!r})
i = 0
while True:
    log.append(make_record(i, Fraction(i + 1, 1000), total=Fraction(10**6), epsilon=Fraction(1, 1000)))
    i += 1
    if i == 20:
        print("ready", flush=True)
"""


def test_a_writer_killed_at_any_moment_leaves_a_valid_prefix(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    code = KILLED_WRITER.format(tests=str(Path(__file__).parent), path=str(path))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout.readline() == b"ready\n"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    report = verify_log(path)
    assert report.valid >= 20
    assert report.ok or report.torn_tail


@pytest.mark.parametrize("chunk", [3, 64, 1 << 16])
@pytest.mark.parametrize("tail", [b"", b'{"torn'])
def test_lines_backwards_gives_every_complete_line_last_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              chunk: int, tail: bytes) -> None:
    import os

    import securedp.audit.log as log_module

    monkeypatch.setattr(log_module, "_TAIL_READ", chunk)
    lines = [b"x" * (i % 5) + str(i).encode() for i in range(40)]
    path = tmp_path / "f"
    path.write_bytes(b"".join(line + b"\n" for line in lines) + tail)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert list(log_module.lines_backwards(fd)) == lines[::-1]
    finally:
        os.close(fd)


def test_the_records_of_a_writer_skip_other_writers_and_altered_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    mine, other = AuditLog(path, writer="a" * 32), AuditLog(path, writer="b" * 32)
    assert list(mine.records_of("a" * 32)) == []  # no log yet
    mine.append({"n": 1})
    mine.append({"n": 2})
    other.append({"n": 3})
    assert list(mine.records_of("a" * 32)) == [{"n": 2}, {"n": 1}] and list(mine.records_of("b" * 32)) == [{"n": 3}]
    assert list(mine.records_of("c" * 32)) == []
    text = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*text[:1], text[1].replace('"n":2', '"n":9'), *text[2:]]) + "\n", encoding="utf-8")
    assert list(mine.records_of("a" * 32)) == [{"n": 1}]  # the altered line's hash is wrong: not taken
