"""A seeded ``securedp release`` into a work folder's audit log, its records, and the log's replay: the steps
the option tests (``--trim``, ``--fallback``) share. The folder holds ``seed`` (:data:`SEED`) and ``data.csv``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from securedp.cli.main import main

SEED = bytes(range(32))


def release(work: Path, *args: str) -> int:
    """``securedp release data.csv --epsilon 1`` seeded from ``work/seed``, logged to ``work/a.jsonl``."""
    return main(["release", str(work / "data.csv"), "--epsilon", "1", "--seed-file", str(work / "seed"),
                 "--audit-log", str(work / "a.jsonl"), "--json", *args])


def records(work: Path) -> list[dict]:
    """The records of ``work/a.jsonl``, in order."""
    return [json.loads(line)["record"] for line in (work / "a.jsonl").read_text(encoding="utf-8").splitlines()]


def replayed(work: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """What ``securedp audit replay`` of ``work/a.jsonl`` prints (it must succeed)."""
    capsys.readouterr()
    status = main(["audit", "replay", str(work / "a.jsonl"), "--seed-file", str(work / "seed"),
                   "--data", str(work / "data.csv")])
    out = capsys.readouterr().out
    assert status == 0, out
    return out
