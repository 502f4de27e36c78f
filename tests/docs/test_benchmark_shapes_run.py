"""benchmarks/bench_tables_shapes.py still runs every shape (on 20,000 rows): a benchmark that rots
silently reports nothing, or a wrong figure."""

from __future__ import annotations

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
