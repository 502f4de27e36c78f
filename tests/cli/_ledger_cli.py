"""The work folder of the tests that release through a budget file and an audit log: ``d.csv`` (columns ``id``,
``g``, ``v``, 30 rows) and ``seed``, and the folder made the current one."""

from __future__ import annotations

from pathlib import Path

import pytest


def ledger_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Write ``d.csv`` and ``seed`` into ``tmp_path``, make it the current folder, and return it."""
    rows = "".join(f"{i},{'ab'[i % 2]},{i % 9}\n" for i in range(30))
    (tmp_path / "d.csv").write_text("id,g,v\n" + rows, encoding="utf-8")
    (tmp_path / "seed").write_text("42" * 32, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path
