"""Several quantiles on the command line (issue 42.2): ``--stat quantiles --levels Q1,Q2,...`` and a table's
``--quantiles COLUMN:Q1,Q2,...:LO,HI[:STEP]``, released by the recursive split from three levels on, each level's
rank interval stated, the one-column release the one-cell table to the byte, recorded, verified and replayed; bad
levels refused before anything is read, charged or written."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from securedp import ChaChaSource
from securedp.audit.report_words import UNDESCRIBED
from securedp.cli.example_data import PATH as EXAMPLE
from securedp.cli.main import main
from securedp.hazmat.exact.bounds import MAX_LEVELS
from securedp.mechanisms.selection_price import selection_epsilon
from securedp.privacy.bounded_range_zcdp import bounded_range_zcdp
from securedp.privacy.cost import Cost
from securedp.tables.query import Query

SEED = bytes(range(32))
DECILES = ",".join(f"0.{i}" for i in range(1, 10))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "seed").write_bytes(SEED)
    return tmp_path


def run(work: Path, capsys: pytest.CaptureFixture[str], *args: str, log: str = "a.jsonl") -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(["release", str(EXAMPLE), "--seed-file", str(work / "seed"), "--audit-log", str(work / log), *args])
    out, err = capsys.readouterr()
    return status, out, err


def records(work: Path, log: str = "a.jsonl") -> list[dict]:
    return [json.loads(line)["record"] for line in (work / log).read_text(encoding="utf-8").splitlines()]


def replays(work: Path, capsys: pytest.CaptureFixture[str], log: str) -> str:
    capsys.readouterr()
    assert main(["audit", "verify", str(work / log)]) == 0
    assert main(["audit", "replay", str(work / log), "--seed-file", str(work / "seed"), "--data", str(EXAMPLE)]) == 0
    return capsys.readouterr().out


def test_deciles_of_one_column_are_the_one_cell_table_to_the_byte_and_replay(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = run(work, capsys, "--column", "age", "--stat", "quantiles", "--levels", DECILES, "--bounds", "0,120",
              "--epsilon", "1", "--json")
    table = run(work, capsys, "--quantiles", f"age:{DECILES}:0,120", "--epsilon", "1", "--json", log="b.jsonl")
    assert one[0] == 0 and table[0] == 0, (one, table)
    (column,), (cell,) = records(work), records(work, "b.jsonl")  # each the first release of its seeded log
    assert column["statistic"] == "quantiles" and column["query"]["qs"] == [str(Fraction(i, 10)) for i in range(1, 10)]
    for values in (column["value"], cell["value"][0]):
        assert [Fraction(v) for v in values] == sorted(Fraction(v) for v in values)  # monotone by construction
    same = [Query.from_json(r["query"]).prepare(EXAMPLE).execute(ChaChaSource(SEED)) for r in (column, cell)]
    assert json.dumps(same[0].record()["parameters"]) == json.dumps(same[1].record()["parameters"])  # to the byte:
    assert same[0].value == same[1].value[0]  # the one-column release is the one cell of the same table
    split = column["parameters"]["age_quantiles"]
    assert split["selection"].startswith("recursive split") and split["depths"] == 4
    assert len(split["rank_error_bounds"]) == 9 and split["epsilon_cell"] == "1/4"  # eps / ceil(log2(10)) per depth
    assert cell["query"]["aggregations"] == [{"kind": "quantiles", "column": "age", "bounds": [0, 120],
                                             "qs": column["query"]["qs"]}]
    assert json.loads(one[1])["parameters"] == column["parameters"] and json.loads(table[1])["value"] == cell["value"]
    for log in ("a.jsonl", "b.jsonl"):
        assert "the one release reproduced exactly" in replays(work, capsys, log)
        assert main(["audit", "report", str(work / log), "-o", str(work / "report.html")]) == 0
        assert UNDESCRIBED not in (work / "report.html").read_text(encoding="utf-8")  # depths, rescaled_q ... explained


def test_the_text_output_states_each_levels_rank_interval(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(work, capsys, "--column", "age", "--stat", "quantiles", "--levels", "0.25,0.5,0.75",
                           "--bounds", "0,120", "--step", "1", "--epsilon", "1")
    assert status == 0, err
    (record,) = records(work)
    bounds = record["parameters"]["age_quantiles"]["rank_error_bounds"]
    lines = out.splitlines()
    assert lines[0] == "quantiles of column 'age' by the recursive split (3 levels, 2 depths of epsilon 0.5 each)"
    for level, value, r in zip(("0.25", "0.5", "0.75"), record["value"], bounds, strict=True):
        assert any(line.split()[:2] == [level, str(value)] and f"rank {level} n +/- {r} with probability 0.95" in line
                   for line in lines), (level, out)


def test_one_or_two_levels_stay_separate_selections_with_their_rank_intervals(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(work, capsys, "--column", "age", "--stat", "quantiles", "--levels", "0.25,0.75",
                           "--bounds", "0,120", "--epsilon", "1")
    assert status == 0, err
    (record,) = records(work)
    assert set(record["parameters"]["shares"]) == {"age_q0.25", "age_q0.75"}
    r = record["parameters"]["age_q0.25"]["rank_error_bound"]
    assert f"rank 0.25 n +/- {r} with probability 0.95" in out
    assert "recursive split" not in out


def test_a_table_of_deciles_per_group_replays(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(work, capsys, "--group-by", "region", "--keys", "north,south,east,west", "--count",
                           "--quantiles", f"income:{DECILES}:0,200000:0.01", "--id-column", "person_id",
                           "--max-rows", "2", "--epsilon", "1")
    assert status == 0, err
    header = out.splitlines()[0].split(",")
    assert header == ["region", "count", "count_low", "count_high", *(f"income_quantiles_{i}" for i in range(9))]
    (record,) = records(work)
    assert record["parameters"]["shares"] == {"count": "1/2", "income_quantiles": "1/2"}
    assert "income_quantiles: q = 0.1, 0.2" in err and "rank q n +/- " in err  # each level's rank interval
    assert "the one release reproduced exactly" in replays(work, capsys, "a.jsonl")


TOO_MANY = ",".join(str(Fraction(i, MAX_LEVELS + 2)) for i in range(1, MAX_LEVELS + 2))


@pytest.mark.parametrize("args, words", [
    (("--column", "age", "--stat", "quantiles", "--levels", "0.5,0.1,0.9", "--bounds", "0,120"), "increasing order"),
    (("--column", "age", "--stat", "quantiles", "--levels", "0.1,0.5,0.5,0.9", "--bounds", "0,120"),
     "the level 0.5 is given twice"),
    (("--column", "age", "--stat", "quantiles", "--levels", "0.1,1.5,0.9", "--bounds", "0,120"),
     "--levels: level 2 must lie in [0, 1]"),
    (("--column", "age", "--stat", "quantiles", "--levels", "-0.1,0.5,0.9", "--bounds", "0,120"), "[0, 1]"),
    (("--column", "age", "--stat", "quantiles", "--levels", "0.1,nan,0.9", "--bounds", "0,120"), "--levels"),
    (("--column", "age", "--stat", "quantiles", "--levels", TOO_MANY, "--bounds", "0,120"), "MAX_LEVELS"),
    (("--column", "age", "--stat", "quantiles", "--bounds", "0,120"), "needs --levels"),
    (("--column", "age", "--stat", "quantile", "--q", "0.5", "--levels", "0.1,0.5,0.9", "--bounds", "0,120"),
     "--levels applies to the quantiles statistic only"),
    (("--column", "age", "--stat", "quantiles", "--q", "0.5", "--levels", "0.1,0.5,0.9", "--bounds", "0,120"),
     "--q applies to the quantile statistic only"),
    (("--column", "age", "--stat", "quantiles", "--q", "0.1,0.5,0.9", "--bounds", "0,120"),
     "several quantiles are --stat quantiles --levels Q1,Q2,..."),
    (("--quantiles", "age:0.5,0.1,0.9:0,120"), "increasing order"),
    (("--quantiles", "age:0.1,0.1,0.9:0,120"), "the level 0.1 is given twice"),
    (("--quantiles", "age:0.1,2,0.9:0,120"), "[0, 1]"),
    (("--quantiles", f"age:{TOO_MANY}:0,120"), "MAX_LEVELS"),
    (("--quantiles", "age:0.25,0.75:0,120"), "three or more levels"),
    (("--quantiles", "age::0,120"), "COLUMN:Q1,Q2,...:LO,HI"),
    (("--group-by", "region", "--count", "--levels", "0.1,0.5,0.9"), "--levels applies to one statistic"),
])
def test_bad_levels_are_refused_changing_and_spending_nothing(work: Path, capsys: pytest.CaptureFixture[str],
                                                              args: tuple[str, ...], words: str) -> None:
    budget = ("--budget-file", str(work / "b.json"))
    assert run(work, capsys, "--column", "age", "--stat", "count", "--epsilon", "1/4", *budget, "--budget", "2")[0] == 0
    before = (work / "b.json").read_bytes(), (work / "a.jsonl").read_bytes()
    status, out, err = run(work, capsys, *args, "--epsilon", "1", *budget)
    assert status != 0 and words in err, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("securedp: error: ") and not out
    assert ((work / "b.json").read_bytes(), (work / "a.jsonl").read_bytes()) == before  # nothing charged or logged


def test_the_dry_run_states_each_levels_rank_error_and_draws_nothing(work: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(work, capsys, "--column", "age", "--stat", "quantiles", "--levels", DECILES,
                           "--bounds", "0,120", "--epsilon", "1", "--dry-run")
    assert status == 0, err
    assert sum("accuracy rank_error_q" in line for line in out.splitlines()) == 9
    assert not (work / "a.jsonl").exists()


def test_deciles_priced_in_rho_charge_each_depth_its_share_and_replay(work: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(work, capsys, "--column", "age", "--stat", "quantiles", "--levels", DECILES, "--bounds",
                         "0,120", "--rho", "1/2", "--id-column", "person_id", "--max-contributions", "4")
    assert status == 0, err
    (record,) = records(work)
    split = record["parameters"]["age_quantiles"]
    depth = Fraction(split["epsilon_cell"])
    assert split["depths"] == 4 and depth == selection_epsilon(Cost.of(rho=Fraction(1, 8)))  # rho / 4 per depth
    charged = 4 * bounded_range_zcdp(depth)  # each depth's certified sharp bounded-range zCDP, at most depth**2 / 8
    assert Fraction(split["rho_cells"]) == charged <= Fraction(1, 2) and record["rho"] == "1/2"
    assert "the one release reproduced exactly" in replays(work, capsys, "a.jsonl")
