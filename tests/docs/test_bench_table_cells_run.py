"""The driver-side table benchmark (``benchmarks/bench_table_cells.py``) still runs: it calls
``securedp.tables.cells.release_cells`` directly, so a change of that signature must change the script too
(it had rotted unnoticed: its call passed a cost function where the statistics' definitions now go)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_table_cells  # noqa: E402


def test_it_runs_on_a_thousand_keys(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["bench_table_cells.py", "1000"])
    bench_table_cells.main()
    lines = capsys.readouterr().out.splitlines()
    assert "release_cells" in lines[0] and lines[1].split()[0] == "1000" and len(lines) == 2
