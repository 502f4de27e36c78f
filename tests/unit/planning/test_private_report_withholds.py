"""Issue 28.5: a private contribution report says what its thresholds hid, marks its estimates, and does not
recommend from a histogram whose counts lie mostly in bins read as 0 (saying why, and about what epsilon
would see them); a recommendation says it gives one aggregation all of the epsilon, and what --max-rows
does to a mean's weights."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import securedp
from securedp.planning import ReportPlan, analyze_contributions
from securedp.planning.profiles import unseen


def histogram(groups: list[int], rows: list[int], cells: int, scales: tuple[int, int, int]) -> securedp.Release:
    return securedp.Release(value=(*groups, *rows, cells), statistic="contribution_histogram",
                            mechanism="discrete_laplace", epsilon=Fraction(1, 10), rho=None, max_contributions=1,
                            parameters={"groups_cap": len(groups), "rows_cap": len(rows), "scales": list(scales)})


def test_what_a_threshold_hid_is_counted_exactly() -> None:
    u = unseen("rows per (person, group)", [900, 40, -7, 30, 0], 50)
    assert (u.bins, u.zeroed, u.threshold) == (5, 4, 50)
    assert u.hidden == 2 * 40 + 4 * 30 and u.kept == 900  # weighted by rows, negative counts clipped at 0
    assert u.typical == Fraction(2 * 40 + 4 * 30, 2 + 4) and not u.mostly
    assert u.needed(Fraction(1, 10)) == Fraction(15, 100)  # 0.1 * 50 / (200 / 6) = 0.15
    assert unseen("x", [150, 90, 80], 100).mostly  # 2 * 90 + 3 * 80 hidden against 150 kept


def test_a_mostly_hidden_histogram_gets_no_recommendation() -> None:
    # 5000 single-row pairs seen; the heavier pairs' bins, each under the threshold (about 2430), hold more rows
    release = histogram([1000, 0, 0, 0], [5000, 1000, 900, 800, 700, 600, 500, 400], 4, (30, 480, 480))
    report = ReportPlan.of().from_histogram(release)
    assert report.recommended is None and report.withheld is not None
    assert "rows per (person, group)" in report.withheld and "7 of 8" in report.withheld
    assert "an epsilon of about" in report.withheld
    rows_part = report.unseen[1]
    assert rows_part.zeroed == 7 and rows_part.mostly and rows_part.kept == 5000
    record = report.record()
    assert record["recommended"] is None and record["withheld"] == report.withheld
    assert record["unseen"][1]["read_as_zero"] == 7 and json.dumps(record)


def test_a_well_seen_histogram_still_recommends() -> None:
    release = histogram([100, 50, 3], [150, 50], 10, (1, 1, 1))
    report = ReportPlan.of(candidates=[(1, 1), (2, 2)]).from_histogram(release)
    assert report.recommended == report.candidates[1] and report.withheld is None


@pytest.fixture
def heavy(tmp_path: Path) -> Path:
    """3,000 persons, most with one row, a few hundred with up to 60 (the rows of a heavy contributor)."""
    rng = np.random.default_rng(3)  # test data only
    rows = np.minimum(rng.zipf(1.7, 3000), 60)
    ids = np.repeat(np.arange(3000), rows)
    path = tmp_path / "heavy.csv"
    pl.DataFrame({"person": ids, "region": rng.choice(["a", "b", "c"], len(ids))}).write_csv(path)
    return path


def test_the_command_says_what_was_hidden_and_withholds(command, heavy: Path, tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.write_bytes(bytes(32))
    status, out, _ = command(["analyze", str(heavy), "--id-column", "person", "--group-by", "region",
                              "--epsilon", "0.1", "--seed-file", str(seed)])
    assert status == 0
    assert "read as 0:" in out and "bins of rows per (person, group)" in out
    table = out[out.index("max_groups"):]
    assert all("~" in line for line in table.splitlines()[1:] if line.strip()[:1].isdigit())  # estimates marked
    assert "no recommendation: most of what the histogram" in out and "recommended:" not in out
    assert "give --release-epsilon the share the count will get" in out


def test_a_recommendation_says_what_max_rows_does_to_a_mean(command, heavy: Path) -> None:
    status, out, _ = command(["analyze", str(heavy), "--id-column", "person", "--group-by", "region"])
    assert status == 0 and "recommended: --max-groups" in out
    recommended = analyze_contributions(heavy, id_column="person", group_by="region").recommended
    assert recommended is not None and recommended.max_rows > 1
    assert f"with --max-rows {recommended.max_rows}, a mean (or any statistic over rows) weights each person" in out
