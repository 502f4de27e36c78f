"""The accuracy benchmark (``benchmarks/bench_utility.py``) still runs: securedp's side on securedp's own example
data, with a few runs and no peers (they are not installed here), so the script cannot rot unnoticed."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_utility  # noqa: E402


def test_securedp_side_runs_every_level_and_truth(tmp_path: Path) -> None:
    out = tmp_path / "utility.json"
    bench_utility.main(["--runs", "2", "--datasets", "example", "--no-peers", "--no-selection",
                        "--tasks", "count e=1,mean,median overall", "--json", str(out)])
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["format"] == "securedp-bench-utility/1"
    assert report["versions"]["securedp"]
    seen = {(r["level"], r["truth"], r["task"]) for r in report["results"]}
    assert seen == {(level, truth, task) for level in ("person", "row") for truth in ("bounded", "unbounded")
                    for task in ("count e=1", "mean", "median overall")}
    for r in report["results"]:
        ours = r["entrants"]["securedp"]
        assert math.isfinite(ours["rmse"]) and ours["rmse"] >= 0 and ours["p95"] >= 0
        assert r["verdict"] == "no peer"  # nothing to rank against without the peers
    # the count's noise is discrete Laplace of scale k m / epsilon = 8 at person level: its exact standard deviation
    count = next(r for r in report["results"] if (r["level"], r["truth"], r["task"]) == ("person", "bounded",
                                                                                           "count e=1"))
    assert math.isclose(count["noise_law_sd"]["securedp"], bench_utility.discrete_laplace_sd(8))
    # the median overall ran on 0.1's default lattice (step 1 for these bounds) and at 1000 times the epsilon
    levers = {(r["level"], r["lattice"], r["epsilon_factor"]) for r in report["levers"]}
    assert levers == {(level, lattice, factor) for level in ("person", "row")
                      for lattice, factor in (("1/1", 1), (None, 1000))}
    assert all(r["candidates"] == 150_001 for r in report["levers"] if r["lattice"])
    assert all(r["candidates"] > 2**20 for r in report["results"] if r["task"] == "median overall")


def test_selection_curves_match_the_documented_thresholds() -> None:
    sel = bench_utility.selection({}, reps=1, keys_per_n=0)  # exact curves only, no simulation
    curves = sel["curves"]
    assert curves["securedp laplace"]["n50"] == 30  # threshold 30 at epsilon 1, delta 1e-6, k = 2
    assert curves["securedp optimal"]["n50"] == 27
    assert curves["securedp default table (the released count thresholded)"]["n50"] == 30  # scale 2, as OpenDP's
    assert curves["securedp default table (the released count thresholded)"]["count_noise_scale"] == 2
    assert curves["securedp separate selection, share 1/2 (earlier default)"]["n50"] == 57
    assert (curves["C1: securedp default"]["n50"], curves["C4: securedp default"]["n50"]) == (116, 29)
    assert sel["n50_at_k1"] == {"securedp laplace": 15, "securedp optimal": 14}  # the 15 (and the optimum 14)


def test_prebound_leaves_every_library_nothing_to_bound() -> None:
    raw = bench_utility.DATASETS["example"].load()
    bounded = bench_utility.prebound(raw.assign(value=raw["value"] * 2), 2, 1, (0, 150_000))
    assert bounded.groupby("person")["group"].nunique().max() <= 2
    assert bounded.groupby(["person", "group"]).size().max() <= 1
    assert bounded["value"].between(0, 150_000).all() and bounded["value"].max() == 150_000
