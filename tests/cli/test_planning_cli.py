"""``securedp analyze`` and ``securedp bounds``: exit codes, one-line errors, no traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from securedp.ledger.errors import DATA_REFUSED

Command = Callable[[list[str]], tuple[int, str, str]]
"""The ``command`` fixture (tests/conftest.py): exit status, standard output, standard error."""


@pytest.fixture
def data(tmp_path: Path) -> Path:
    lines = ["person,region,income"]
    for p in range(300):
        for g in range(2):  # exactly 2 groups x 3 rows per person
            lines += [f"{p},r{(p + 5 * g) % 10},{(p * 37 + g) % 1000}.5"] * 3
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path / "d.csv"




def test_exact_analysis_recommends_and_says_not_private(data: Path, command: Command) -> None:
    status, out, err = command(["analyze", str(data), "--id-column", "person", "--group-by", "region"])
    assert status == 0 and err == ""
    assert "not private" in out.splitlines()[0]
    assert "recommended: --max-groups 2 --max-rows 3" in out
    status, out, _ = command(["analyze", str(data), "--id-column", "person", "--group-by", "region", "--column",
                          "income", "--bounds", "0,1000", "--json"])
    report = json.loads(out)
    assert status == 0 and report["private"] is False and report["recommended"] == {"max_groups": 2, "max_rows": 3}
    assert report["rows"] == 1800 and report["groups_per_person"] == {"2": 300}


def test_exact_analysis_refused_analyst_facing(data: Path, command: Command) -> None:
    status, out, err = command(["analyze", str(data), "--id-column", "person", "--group-by", "region",
                            "--analyst-facing"])
    assert status == 1 and out == "" and err.count("\n") == 1 and "give --epsilon" in err


def test_private_analysis_charges_the_budget_file(data: Path, tmp_path: Path,
                                                  command: Command) -> None:
    budget, log = tmp_path / "b.json", tmp_path / "log.jsonl"
    argv = ["analyze", str(data), "--id-column", "person", "--group-by", "region", "--epsilon", "1/4",
            "--budget-file", str(budget), "--budget", "1", "--audit-log", str(log), "--analyst-facing"]
    status, out, err = command(argv)
    assert status == 0 and err == "" and "private: estimates from an epsilon = 0.25 contribution histogram" in out
    assert json.loads(budget.read_text())["spent"] == "1/4"
    assert command(["audit", "verify", str(log)])[0] == 0
    status, _, err = command([*argv[:2], "--id-column", "nobody", *argv[4:]])
    assert status == 1 and err == f"securedp: error: {DATA_REFUSED}\n"


def test_bounds_command(data: Path, tmp_path: Path, command: Command, replayable_labels: None) -> None:
    # Seeded, with replayable labels: --seed-file alone gives each release a fresh OS-entropy label (its substream),
    # so the noise would still differ on every run. An OS-entropy draw made `0 <= lo` fail in CI (lo = -1/8):
    # each of the 49 empty negative bins exceeds the threshold with probability up to beta / 98.
    seed = tmp_path / "seed.bin"
    seed.write_bytes(bytes(range(32)))
    status, out, err = command(["bounds", str(data), "--column", "income", "--epsilon", "1", "--json",
                            "--seed-file", str(seed)])
    record = json.loads(out)
    assert status == 0 and err == "" and record["statistic"] == "bounds" and record["epsilon"] == 1
    lo, hi = (Fraction(v) for v in record["value"])
    assert record["parameters"]["method"] == "histogram" and 0 <= lo < hi and hi >= 512  # the largest is 999.5
    status, out, _ = command(["bounds", str(data), "--column", "income", "--epsilon", "1", "--id-column", "person",
                          "--max-contributions", "6", "--method", "quantiles", "--exponents", "0,12"])
    assert status == 0 and out.startswith("bounds ")
    status, _, err = command(["bounds", str(data), "--column", "nope", "--epsilon", "1"])
    assert status == 1 and err.startswith("securedp: error: ") and err.count("\n") == 1
    status, _, err = command(["bounds", str(data), "--column", "income", "--epsilon", "1", "--exponents", "3"])
    assert status == 1 and "exponents" in err and err.count("\n") == 1


def test_logged_planning_releases_replay(data: Path, tmp_path: Path, command: Command) -> None:
    seed, log = tmp_path / "seed.bin", tmp_path / "log.jsonl"
    seed.write_bytes(bytes(range(32)))
    logged = ["--seed-file", str(seed), "--audit-log", str(log)]
    assert command(["bounds", str(data), "--column", "income", "--epsilon", "1/2", "--id-column", "person",
                "--max-contributions", "6", *logged])[0] == 0
    assert command(["bounds", str(data), "--column", "income", "--epsilon", "1/2", "--method", "quantiles",
                "--exponents", "0,12", "--quantiles", "0.1,0.9", *logged])[0] == 0
    assert command(["analyze", str(data), "--id-column", "person", "--group-by", "region", "--epsilon", "1",
                *logged])[0] == 0
    records = [json.loads(line)["record"] for line in log.read_text().splitlines()]
    assert [r["query"]["statistic"] for r in records] == ["bounds", "bounds", "contribution_histogram"]
    status, out, _ = command(["audit", "replay", str(log), "--seed-file", str(seed), "--data", str(data)])
    assert status == 0 and "all 3 releases reproduced exactly" in out
    data.write_text(data.read_text().replace("\n0,r0,0.5\n", "\n0,r0,999999.5\n", 1))
    status, _, err = command(["audit", "replay", str(log), "--seed-file", str(seed), "--data", str(data)])
    assert status == 1 and "data differs" in err
