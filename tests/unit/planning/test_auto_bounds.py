"""Issue 18.3: ``bounds="auto"`` in tables and ``--sum COLUMN:auto``: bounds chosen privately, charged, replayed.

* the bounds are a release of their own, charged to the session (one per distinct auto column), and
  the table then states them in its record;
* on skewed data (lognormal incomes) the chosen bounds are near the data's spread: they cover the bulk
  of the values and are far below the default lattice's range;
* ``prepare_table`` alone refuses ``"auto"`` (it cannot charge), naming the function that can;
* the command releases the bounds and the table, and ``audit replay`` reproduces both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import securedp
from securedp import ChaChaSource
from securedp.planning.auto import auto_bounds
from securedp.tables import Count, Mean, Sum

REPO = Path(securedp.__file__).resolve().parent.parent


def incomes(n: int = 4000) -> pl.DataFrame:
    rng = np.random.default_rng(11)  # test data only
    return pl.DataFrame({"p": np.arange(n), "g": rng.choice(["a", "b"], n),
                         "income": np.round(rng.lognormal(10, 1, n)).astype(np.int64)})


def test_auto_bounds_are_charged_releases_and_the_table_states_them() -> None:
    data = incomes()
    session = securedp.Session(epsilon=3, rng=ChaChaSource(bytes(32)))
    aggregations, releases = auto_bounds(data, [Count(), Sum("income", "auto"), Mean("income", "auto")],
                                         epsilon="1/2", id_column="p", session=session)
    assert len(releases) == 1 and session.spent == Fraction(1, 2)  # one column, one release
    lo, hi = releases[0].value
    assert aggregations[1].bounds == aggregations[2].bounds == (lo, hi)
    values = data["income"].to_numpy()
    inside = np.mean((values >= lo) & (values <= hi))
    assert 0 <= lo < hi < 2**24 and inside > 0.95  # near the spread of lognormal(10, 1), far below 2**49
    table = session.table(data, group_by=["g"], keys=["a", "b"], id_column="p", aggregations=aggregations, epsilon=1)
    assert table.parameters["income_sum"]["bounds_units"][1] * table.parameters["income_sum"]["lattice_step"] == hi
    assert session.spent == Fraction(3, 2)


def test_prepare_table_alone_refuses_auto_naming_auto_bounds() -> None:
    with pytest.raises(ValueError, match="auto_bounds"):
        securedp.prepare_table(incomes(), aggregations=[Sum("income", "auto")], epsilon=1)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "securedp", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_command_releases_the_bounds_then_the_table_and_replays_both(tmp_path: Path) -> None:
    incomes(1500).write_csv(tmp_path / "data.csv")
    (tmp_path / "seed").write_bytes(bytes(range(32)))
    args = ["release", "data.csv", "--group-by", "g", "--keys", "a,b", "--count", "--sum", "income:auto",
            "--id-column", "p", "--epsilon", "1", "--auto-epsilon", "1/2", "--seed-file", "seed",
            "--audit-log", "log.jsonl", "--budget-file", "budget.json", "--budget", "5"]
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    records = [json.loads(line)["record"] for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["statistic"] for r in records] == ["bounds", "table"]
    assert json.loads((tmp_path / "budget.json").read_text())["spent"] == "3/2"
    replayed = run("audit", "replay", "log.jsonl", "--seed-file", "seed", "--data", "data.csv", cwd=tmp_path)
    assert replayed.returncode == 0 and "all 2 releases reproduced exactly" in replayed.stdout, replayed.stdout
    missing = run(*[a for a in args if a not in ("--auto-epsilon", "1/2")], cwd=tmp_path)
    assert missing.returncode == 1 and "--auto-epsilon" in missing.stderr
