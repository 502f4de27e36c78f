"""benchmarks/bench_samplers.py --json and benchmarks/plot_benchmarks.py: the JSON, the figure, the docs reference."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import plot_benchmarks  # noqa: E402


def results(tmp_path: Path) -> Path:
    doc = {
        "format": "securedp-bench-samplers/1", "securedp": "0", "python": "3", "quick": True, "runs": 3,
        "samplers": [
            {"sampler": "discrete_laplace", "param_name": "scale", "param": 10, "scalar": 9e5, "batch": 4e6},
            {"sampler": "discrete_gaussian", "param_name": "sigma", "param": 10, "scalar": 5e5, "batch": 1.5e6},
        ],
        "generator_laplace_scale_1": {"scalar": 4e5, "batch": 3e6},
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    return path


def test_results_are_read_per_group(tmp_path: Path) -> None:
    ours = plot_benchmarks.load_results(results(tmp_path))
    assert sorted(ours["securedp per call"].values()) == [4e5, 5e5, 9e5]
    assert sorted(ours["securedp batch"].values()) == [1.5e6, 3e6, 4e6]


def test_a_file_of_another_format_or_missing_a_group_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="not a bench_samplers"):
        plot_benchmarks.load_results(tmp_path / "x.json")
    doc = json.loads(results(tmp_path).read_text())
    del doc["generator_laplace_scale_1"]
    (tmp_path / "y.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="no result for Laplace"):
        plot_benchmarks.load_results(tmp_path / "y.json")


def test_the_figure_is_drawn(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "img" / "b.png"
    assert plot_benchmarks.main([str(results(tmp_path)), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000


@pytest.mark.slow
def test_bench_samplers_json_flag_writes_the_numbers_and_keeps_the_table(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    run = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_samplers.py"), "--quick", "--json", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "sampler" in run.stdout and "scalar/s" in run.stdout and "Targets" in run.stdout
    assert str(out) not in run.stdout  # the table output is unchanged
    ours = plot_benchmarks.load_results(out)
    assert all(v > 0 for series in ours.values() for v in series.values())


def test_the_docs_show_the_generated_figure() -> None:
    assert "](img/benchmarks.png)" in (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert (REPO / "docs" / "img" / "benchmarks.png").read_bytes()[:4] == b"\x89PNG"


def test_without_matplotlib_the_script_skips_gracefully(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    out = tmp_path / "b.png"
    assert plot_benchmarks.main([str(results(tmp_path)), "--out", str(out)]) == 0
    assert not out.exists() and "matplotlib is not installed" in capsys.readouterr().err
