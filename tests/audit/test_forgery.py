"""The audit trail against the person it audits: forged, truncated and non-canonical logs must fail to verify.

The class test of issue 8: a forger who can write the log file rewrites every
epsilon from 1/10 to 1/1000, keeps the budget arithmetic consistent, recomputes
every hash and re-signs every line with a key of their own. Against the
reviewer's public key, verification must fail. The unkeyed chain alone is kept
as the control that shows the attack is real (it passes).
"""

from __future__ import annotations

import json
import os
import stat
from fractions import Fraction
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from securedp import ChaChaSource, Session
from securedp.audit import AuditLog, verify_log
from securedp.audit.canonical import MAX_DEPTH, canonical
from securedp.audit.log import GENESIS, entry_hash
from securedp.audit.signing import (
    fingerprint,
    load_public_key,
    load_signing_key,
    make_head,
    public_key_text,
    sign_entry,
    write_head,
    write_key_pair,
)

RELEASES = 6


@pytest.fixture(scope="module")
def reviewer_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def signed_log(path: Path, key: Ed25519PrivateKey | None) -> None:
    """Six counts at epsilon 1/10 from a Session with a budget of 1, signed with ``key`` when given."""
    session = Session(epsilon=1, rng=ChaChaSource(bytes(32)).substream("forgery"),
                      audit=AuditLog(path, signing_key=key))
    for i in range(RELEASES):
        session.count(list(range(10 + i)), epsilon="1/10")


def entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def forge(path: Path, forger: Ed25519PrivateKey | None, signer: str | None = None) -> None:
    """Every epsilon 1/10 -> 1/1000 with consistent budget fields, every hash recomputed, every line re-signed."""
    prev, out = GENESIS, b""
    for i, entry in enumerate(entries(path)):
        record = entry["record"]
        record.update(epsilon="1/1000", charged="1/1000", spent=str(Fraction(i + 1, 1000)),
                      remaining=str(Fraction(1) - Fraction(i + 1, 1000)))
        entry.pop("sig", None)
        entry.pop("signer", None)
        if forger is not None:
            entry["signer"] = signer or fingerprint(forger.public_key())
        entry["prev"] = prev
        entry["hash"] = prev = entry_hash(entry)
        if forger is not None:
            entry["sig"] = sign_entry(forger, entry)
        out += canonical(entry) + b"\n"
    path.write_bytes(out)
    if forger is not None:
        write_head(Path(str(path) + ".head"), make_head(forger, len(entries(path)), prev))


def test_control_an_unkeyed_chain_is_forged_undetectably(tmp_path: Path) -> None:
    """The attack of issue 8 works on an unsigned log: the rewritten chain verifies (only its trust line warns)."""
    path = tmp_path / "audit.jsonl"
    signed_log(path, None)
    forge(path, None)
    report = verify_log(path)
    assert report.ok and report.valid == RELEASES
    assert all(e["record"]["epsilon"] == "1/1000" for e in report.entries)
    assert report.trust == "unsigned: integrity only against accidents, not against the log's writer"


def test_a_genuine_signed_log_verifies_with_the_reviewers_key_and_head(tmp_path: Path, reviewer_key) -> None:
    path = tmp_path / "audit.jsonl"
    signed_log(path, reviewer_key)
    public = reviewer_key.public_key()
    report = verify_log(path, public_key=public, head=Path(str(path) + ".head"))
    assert report.ok and report.valid == RELEASES and report.signed == RELEASES
    assert report.authenticated and report.head_records == RELEASES
    assert (report.trust.startswith("signed: every record verified")
            and f"covers {RELEASES} of {RELEASES}" in report.trust)
    assert verify_log(path, public_key=public_key_text(public)).ok  # the text form reviewers are given
    unchecked = verify_log(path)
    assert unchecked.ok and not unchecked.authenticated and "NOT checked" in unchecked.trust


@pytest.mark.parametrize("how",
                         ["forger's key", "forger's key under the reviewer's fingerprint", "signatures stripped"])
def test_rewriting_every_epsilon_and_re_signing_fails_against_the_reviewers_key(tmp_path: Path, reviewer_key,
                                                                                how) -> None:
    path = tmp_path / "audit.jsonl"
    signed_log(path, reviewer_key)
    forger = Ed25519PrivateKey.generate()
    if how == "signatures stripped":
        forge(path, None)
    else:
        forge(path, forger, signer=fingerprint(reviewer_key.public_key()) if "fingerprint" in how else None)
    assert verify_log(path).ok  # structurally a perfect log: only the key can tell
    report = verify_log(path, public_key=reviewer_key.public_key())
    assert not report.ok and report.problem.line == 1 and not report.authenticated
    assert report.problem.field in ("sig", "signer")
    expected = {"forger's key": "signed by key", "signatures stripped": "unsigned",
                "forger's key under the reviewer's fingerprint": "does not verify"}[how]
    assert expected in report.problem.message
    # the forger's own head does not help either
    head = verify_log(path, public_key=forger.public_key(), head=Path(str(path) + ".head"))
    if how == "forger's key":
        assert head.ok  # consistent under the forger's key: which is why the key must come out of band
    with_head = verify_log(path, public_key=reviewer_key.public_key(), head=Path(str(path) + ".head"))
    assert not with_head.ok


@pytest.mark.parametrize("k", [1, 2, RELEASES])
def test_truncating_the_last_records_fails_against_the_signed_head(tmp_path: Path, reviewer_key, k: int) -> None:
    path = tmp_path / "audit.jsonl"
    signed_log(path, reviewer_key)
    head = Path(str(path) + ".head").read_bytes()
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: len(lines) - k]))
    public = reviewer_key.public_key()
    assert verify_log(path, public_key=public).ok  # every remaining signature is genuine
    report = verify_log(path, public_key=public, head=head)
    assert not report.ok and report.problem.field == "head"
    assert "records removed from the end" in report.problem.message
    # a new head for the truncated log needs the private key
    forged = make_head(Ed25519PrivateKey.generate(), RELEASES - k, verify_log(path).head)
    assert not verify_log(path, public_key=public, head=forged).ok


def test_a_rewritten_log_of_the_same_length_fails_against_the_signed_head(tmp_path: Path, reviewer_key) -> None:
    path = tmp_path / "audit.jsonl"
    signed_log(path, reviewer_key)
    head = Path(str(path) + ".head").read_bytes()
    other = tmp_path / "other.jsonl"
    signed_log(other, reviewer_key)  # a genuine log, but not this one (other times, other nonces)
    report = verify_log(other, public_key=reviewer_key.public_key(), head=head)
    assert not report.ok and "rewritten" in report.problem.message


def test_a_tampered_head_statement_fails(tmp_path: Path, reviewer_key) -> None:
    path = tmp_path / "audit.jsonl"
    signed_log(path, reviewer_key)
    statement = json.loads(Path(str(path) + ".head").read_bytes())
    statement["records"] = 2
    report = verify_log(path, public_key=reviewer_key.public_key(), head=statement)
    assert not report.ok and report.problem.field == "head" and "does not verify" in report.problem.message
    with pytest.raises(ValueError, match="public key"):
        verify_log(path, head=statement)
    for unreadable in (123, tmp_path / "absent.head", b"{\"a\":1}", b"\xff"):
        report = verify_log(path, public_key=reviewer_key.public_key(), head=unreadable)
        assert not report.ok and report.problem.field == "head"


def test_records_after_the_signed_head_are_verified_but_reported_uncovered(tmp_path: Path, reviewer_key) -> None:
    path = tmp_path / "audit.jsonl"
    signed_log(path, reviewer_key)
    old_head = Path(str(path) + ".head").read_bytes()
    AuditLog(path, signing_key=reviewer_key).append(entries(path)[0]["record"] | {"spent": "7/10", "remaining": "3/10"})
    report = verify_log(path, public_key=reviewer_key.public_key(), head=old_head)
    assert report.ok and report.head_records == RELEASES and report.valid == RELEASES + 1
    assert f"covers {RELEASES} of {RELEASES + 1}" in report.trust


# -- keys ------------------------------------------------------------------------------------------

def test_keygen_writes_a_private_file_and_never_overwrites(tmp_path: Path) -> None:
    private, public, text = write_key_pair(tmp_path / "k")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert public.read_text().strip() == text and text.startswith("ed25519:") and len(text) == 52
    key = load_signing_key(private)
    assert public_key_text(key.public_key()) == text
    assert fingerprint(load_public_key(public)) == fingerprint(key.public_key())
    before = private.read_bytes()
    with pytest.raises(FileExistsError, match="never overwritten"):
        write_key_pair(tmp_path / "k")
    assert private.read_bytes() == before
    os.chmod(private, 0o644)
    with pytest.raises(PermissionError, match="readable by others"):
        load_signing_key(private)
    with pytest.raises(ValueError, match="not an Ed25519 public key"):
        load_public_key("ed25519:AAAA")


# -- canonical bytes -------------------------------------------------------------------------------

def one_line_log(path: Path, key: Ed25519PrivateKey | None = None) -> bytes:
    AuditLog(path, signing_key=key, head_file=False).append(
        {**Session(epsilon=1, rng=ChaChaSource(bytes(32))).count([1, 2, 3], epsilon="1/10").record(),
         "spent": "1/10", "remaining": "9/10"}
    )
    return path.read_bytes()


def test_a_duplicate_key_line_fails_although_a_last_wins_parser_accepts_it(tmp_path: Path, reviewer_key) -> None:
    """A fake "record" placed before the real one: json.loads keeps the real (signed) one, other readers the fake."""
    path = tmp_path / "audit.jsonl"
    line = one_line_log(path, reviewer_key)
    fake = json.dumps({"statistic": "count", "epsilon": "1/1000"}, separators=(",", ":")).encode()
    forged = line.replace(b'"prev":', b'"record":' + fake + b',"prev":', 1)
    assert json.loads(forged)["record"] == json.loads(line)["record"]  # what the old verifier saw
    path.write_bytes(forged)
    report = verify_log(path, public_key=reviewer_key.public_key())
    assert not report.ok and "duplicate key 'record'" in report.problem.message


BAD_LINES = {
    "NaN literal": lambda line: line.replace(b'"max_contributions":1', b'"max_contributions":NaN'),
    "Infinity literal": lambda line: line.replace(b'"max_contributions":1', b'"max_contributions":-Infinity'),
    "float literal": lambda line: line.replace(b'"max_contributions":1', b'"max_contributions":1.0'),
    "deep nesting": lambda line: line.replace(b'"labels":null', b'"labels":' + b"[" * 100_000 + b"]" * 100_000),
    "nesting just past the limit": lambda line: line.replace(
        b'"labels":null', b'"labels":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH),
    "non-UTF-8": lambda line: line.replace(b'"count"', b'"c\xffount"'),
    "space after a colon": lambda line: line.replace(b'"seq":0', b'"seq": 0'),
    "keys out of order": lambda line: b'{"version"' + line[1:].replace(b'"version"', b'"zzz"', 1),
    "escaped ASCII": lambda line: line.replace(b'"count"', b'"\\u0063ount"'),
    "huge integer": lambda line: line.replace(b'"seq":0', b'"seq":' + b"9" * 5000),
    "unpaired surrogate": lambda line: line.replace(b'"count"', b'"\\ud800"'),
    "trailing space": lambda line: line + b" ",
    "not an object": lambda line: b"[" + line + b"]",
}


@pytest.mark.parametrize("name", sorted(BAD_LINES))
def test_non_canonical_lines_are_a_problem_never_an_exception(tmp_path: Path, name: str) -> None:
    path = tmp_path / "audit.jsonl"
    line = one_line_log(path).rstrip(b"\n")
    bad = BAD_LINES[name](line)
    assert bad != line
    path.write_bytes(line + b"\n" + bad + b"\n")
    report = verify_log(path)
    assert not report.ok and report.valid == 1 and report.problem.line == 2, report.problem


# -- fuzzing: verify_log never raises --------------------------------------------------------------

def _valid_log(tmp: Path) -> bytes:
    path = tmp / "valid.jsonl"
    if not path.exists():
        session = Session(epsilon=2, rng=ChaChaSource(bytes(32)),
                          audit=AuditLog(path, signing_key=_FUZZ_KEY, head_file=False))
        session.count([1, 2], epsilon="1/4")
        parts = session.partition([1, 2], by=["a", "b"], parts=["a", "b"], budget="1/4")
        parts["a"].session.mean(parts["a"].data, bounds=(0, 4), epsilon="1/8")
        session.histogram(["x", "y"], categories=["x", "y"], epsilon="1/4")
    return path.read_bytes()


_FUZZ_KEY = Ed25519PrivateKey.generate()
_JSONISH = st.sampled_from([b"{", b"}", b"[", b"]", b'"', b"\\", b":", b",", b"NaN", b"1e400", b"-0", b"\xff",
                            b"\xed\xa0\x80", b"\n", b" ", b"null", b'"record"', b"\\ud800", b"9" * 50])


def _check_never_raises(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    for options in ({}, {"public_key": _FUZZ_KEY.public_key()}):
        report = verify_log(path, **options)
        assert report.valid >= 0 and (report.ok or report.problem is not None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(st.one_of(st.binary(max_size=40), _JSONISH), max_size=30).map(b"".join))
def test_fuzz_arbitrary_bytes_never_raise(tmp_path: Path, data: bytes) -> None:
    _check_never_raises(tmp_path / "fuzz.jsonl", data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(
        st.tuples(st.sampled_from(["flip", "insert", "delete", "splice", "duplicate_line"]),
                  st.integers(0, 10**6), st.one_of(st.binary(min_size=1, max_size=8), _JSONISH)),
        min_size=1, max_size=4,
    )
)
def test_fuzz_mutated_valid_logs_never_raise_and_never_verify_when_changed(tmp_path: Path, edits) -> None:
    original = _valid_log(tmp_path)
    data = bytearray(original)
    for kind, where, blob in edits:
        at = where % (len(data) + 1)
        if kind == "flip" and data:
            data[at % len(data)] ^= blob[0] or 1
        elif kind == "insert":
            data[at:at] = blob
        elif kind == "delete":
            del data[at : at + len(blob)]
        elif kind == "splice":
            data[at : at + len(blob)] = blob
        else:
            lines = bytes(data).split(b"\n")
            lines.insert(at % len(lines), lines[(at // 7) % len(lines)])
            data = bytearray(b"\n".join(lines))
    _check_never_raises(tmp_path / "fuzz.jsonl", bytes(data))
    if bytes(data) != original and not original.startswith(bytes(data)):
        report = verify_log(tmp_path / "fuzz.jsonl", public_key=_FUZZ_KEY.public_key())
        # any change other than cutting whole lines off the end is caught against the key
        assert not report.ok or report.valid < original.count(b"\n") or bytes(data).startswith(original)


def test_concurrent_signed_writers_keep_every_signature_and_a_current_head(tmp_path: Path, reviewer_key) -> None:
    import threading

    path = tmp_path / "audit.jsonl"
    record = {**Session(epsilon=1, rng=ChaChaSource(bytes(32))).count([1], epsilon="1/10").record()}

    def work() -> None:
        log = AuditLog(path, signing_key=reviewer_key)
        for _ in range(8):
            log.append(record)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report = verify_log(path, public_key=reviewer_key.public_key(), head=Path(str(path) + ".head"))
    assert report.ok and report.valid == 32 and report.head_records == 32 and report.signed == 32
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary head file left behind
