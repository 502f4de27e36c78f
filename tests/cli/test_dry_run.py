"""Issue 18.1: ``securedp release ... --dry-run`` validates, prices and prints the plan; it draws nothing,
charges nothing and writes no audit record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import securedp
from securedp.cli.example_data import PATH as EXAMPLE

REPO = Path(securedp.__file__).resolve().parent.parent


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "securedp", "release", str(EXAMPLE), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


CASES = {
    "median": (["--column", "income", "--stat", "median", "--bounds", "0,400000", "--epsilon", "1"],
               ["rank_error_q1/2 +/-", "rows with probability 0.95"]),
    "sum-rho": (["--column", "hours", "--stat", "sum", "--bounds", "0,80", "--rho", "1/2"],
                ["cost     rho 0.5", "value +/-"]),
    "iqr": (["--column", "age", "--stat", "iqr", "--bounds", "0,120", "--epsilon", "1"],
            ["rank_error_q1/4", "rank_error_q3/4"]),
    "table-private": (["--group-by", "region", "--count", "--mean", "age:0,120", "--iqr", "income:0,400000",
                       "--id-column", "person_id", "--epsilon", "1", "--delta", "1e-6"],
                      ["count: discrete_laplace", "age_mean:", "income_iqr: exponential",
                       "selected by thresholding the released count at", "P(key released | n persons)",
                       "a key needs"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_dry_run_prints_the_plan_and_spends_nothing(tmp_path: Path, case: str) -> None:
    args, fragments = CASES[case]
    budget = ["--budget-file", "budget.json", "--budget", "5", "--budget-delta", "1e-3"]
    first = run(*args, *budget, "--audit-log", "log.jsonl", cwd=tmp_path)  # a real release: the file exists
    assert first.returncode == 0, first.stderr
    before = json.loads((tmp_path / "budget.json").read_text())
    log = (tmp_path / "log.jsonl").read_text()
    result = run(*args, *budget, "--audit-log", "log.jsonl", "--dry-run", "--seed-file", "nowhere", cwd=tmp_path)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "nothing drawn, nothing charged" in result.stdout
    for fragment in fragments:
        assert fragment in result.stdout, result.stdout
    assert json.loads((tmp_path / "budget.json").read_text()) == before
    assert (tmp_path / "log.jsonl").read_text() == log


def test_a_dry_run_still_validates(tmp_path: Path) -> None:
    result = run("--column", "income", "--stat", "median", "--bounds", "5,1", "--epsilon", "1", "--dry-run",
                 cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr and "bounds" in result.stderr
