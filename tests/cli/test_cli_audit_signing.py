"""``securedp audit keygen|head|verify|replay`` and ``release --signing-key``, in-process: a signed trail end to end."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from securedp.audit.log import canonical, entry_hash
from securedp.cli.example_data import PATH as EXAMPLE
from securedp.cli.main import main

SEED = bytes(range(32))


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "seed").write_bytes(SEED)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def release(capsys, *extra: str) -> tuple[int, str, str]:
    return run(capsys, "release", str(EXAMPLE), "--column", "age", "--stat", "count", "--epsilon", "1/10",
               "--id-column", "person_id", "--seed-file", "seed", "--audit-log", "a.jsonl", *extra)


def test_keygen_release_verify_head_replay(work: Path, capsys) -> None:
    status, out, _ = run(capsys, "audit", "keygen", "--out", "k")
    assert status == 0 and stat.S_IMODE((work / "k").stat().st_mode) == 0o600
    public = (work / "k.pub").read_text().strip()
    assert public in out and public.startswith("ed25519:")
    status, _, err = run(capsys, "audit", "keygen", "--out", "k")
    assert status == 1 and "never overwritten" in err
    for _ in range(3):
        status, out, err = release(capsys, "--signing-key", "k")
        assert status == 0 and "signed by" in out, err
    status, out, _ = run(capsys, "audit", "verify", "a.jsonl")
    assert status == 0 and "NOT checked" in out
    status, out, _ = run(capsys, "audit", "verify", "a.jsonl", "--public-key", "k.pub", "--head", "a.jsonl.head")
    assert status == 0 and "signed: every record verified" in out and "covers 3 of 3" in out
    status, out, _ = run(capsys, "audit", "verify", "a.jsonl", "--public-key", public)
    assert status == 0 and "no signed head checked" in out
    status, out, _ = run(capsys, "audit", "head", "a.jsonl", "--key", "k", "--out", "h.json")
    assert status == 0 and json.loads((work / "h.json").read_text())["records"] == 3
    status, out, err = run(capsys, "audit", "replay", "a.jsonl", "--seed-file", "seed", "--data", str(EXAMPLE),
                           "--public-key", "k.pub", "--head", "h.json")
    assert status == 0 and out.count("input commitment matches the data") == 3, err
    # truncation: signatures still fine, the held head catches it
    lines = (work / "a.jsonl").read_bytes().splitlines(keepends=True)
    (work / "a.jsonl").write_bytes(b"".join(lines[:2]))
    assert run(capsys, "audit", "verify", "a.jsonl", "--public-key", "k.pub")[0] == 0
    status, _, err = run(capsys, "audit", "verify", "a.jsonl", "--public-key", "k.pub", "--head", "h.json")
    assert status == 1 and "records removed from the end" in err and len(err.strip().splitlines()) == 1


def test_a_forged_log_fails_with_the_public_key(work: Path, capsys) -> None:
    run(capsys, "audit", "keygen", "--out", "k")
    run(capsys, "audit", "keygen", "--out", "forger")
    assert release(capsys, "--signing-key", "k")[0] == 0
    entry = json.loads((work / "a.jsonl").read_bytes())
    entry["record"]["epsilon"] = entry["record"]["query"]["epsilon"] = "1/1000"
    entry.pop("sig"), entry.pop("signer")  # stripped: the forger has no key to sign with
    entry["hash"] = entry_hash(entry)
    (work / "a.jsonl").write_bytes(canonical(entry) + b"\n")
    assert run(capsys, "audit", "verify", "a.jsonl")[0] == 0  # the unkeyed checks pass a forged log
    status, _, err = run(capsys, "audit", "verify", "a.jsonl", "--public-key", "k.pub")
    assert status == 1 and "line 1" in err and "'sig'" in err and "unsigned" in err
    status, _, err = run(capsys, "audit", "replay", "a.jsonl", "--seed-file", "seed", "--data", str(EXAMPLE),
                         "--public-key", "k.pub")
    assert status == 1 and "does not verify" in err


def test_signing_options_fail_clearly(work: Path, capsys) -> None:
    status, _, err = run(capsys, "release", str(EXAMPLE), "--column", "age", "--stat", "count", "--epsilon", "1",
                         "--id-column", "person_id", "--signing-key", "k")
    assert status == 1 and "--signing-key needs --audit-log" in err
    status, _, err = release(capsys, "--signing-key", "absent.key")
    assert status == 1 and "absent.key" in err and not (work / "a.jsonl").exists()
    assert release(capsys)[0] == 0
    status, _, err = run(capsys, "audit", "verify", "a.jsonl", "--head", "h.json")
    assert status == 1 and "needs --public-key" in err
    status, _, err = run(capsys, "audit", "verify", "a.jsonl", "--public-key", "ed25519:AAAA")
    assert status == 1 and "not an Ed25519 public key" in err
    status, out, _ = run(capsys, "audit", "verify", "a.jsonl")
    assert status == 0 and "unsigned: integrity only against accidents, not against the log's writer" in out


def test_replay_says_data_differs_when_the_noise_hides_the_change(work: Path, capsys) -> None:
    lines = EXAMPLE.read_text().splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    first = lines[1].rstrip("\n").split(",")
    first[header.index("person_id")] = "999999"  # one more row, a new person: the count gains one
    (work / "more.csv").write_text("".join(lines) + ",".join(first) + "\n")
    assert release(capsys)[0] == 0
    status, out, err = run(capsys, "audit", "replay", "a.jsonl", "--seed-file", "seed", "--data", "more.csv")
    assert status == 1 and "DATA DIFFERS" in out and "data differs" in err
