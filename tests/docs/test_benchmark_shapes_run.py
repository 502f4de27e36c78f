"""The table benchmarks still run (on 20,000 rows): a benchmark that rots silently reports nothing,
or a wrong figure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_tables_shapes  # noqa: E402


@pytest.mark.parametrize("shape", bench_tables_shapes.SHAPES)
def test_every_shape_runs_on_a_small_table(shape: str) -> None:
    timings = bench_tables_shapes.run(shape, 20_000)
    assert set(timings) == {"prepare", "execute", "peak_mib"}
    assert timings["prepare"] >= 0 and timings["execute"] > 0


@pytest.mark.parametrize("case", ["bounding polars", "table polars public", "table pandas private"])
def test_bench_tables_times_the_engine_in_each_kind_of_case(case: str) -> None:
    """``bound+agg`` must time the engine's bounding (it read 0 once the engine stopped calling the
    function the script wrapped). Each case in its own process, as the script runs them."""
    child = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_tables.py"), "20000", "--case", case],
                           capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    result = json.loads(child.stdout.strip().splitlines()[-1])
    assert result["engine"][0] > 0 and result["sha256"][0] > 0, result
