"""The ``securedp`` command end to end, through a subprocess: every success and every error path."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import securedp
from securedp.cli.example_data import PATH as EXAMPLE
from securedp.cli.example_data import generate

REPO = Path(securedp.__file__).resolve().parent.parent
SEED = bytes(range(32))


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "securedp", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def assert_one_line_error(result: subprocess.CompletedProcess, status: int, *fragments: str) -> None:
    assert result.returncode == status, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("securedp: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "seed").write_bytes(SEED)
    (tmp_path / "data.csv").write_text("id,x,city\n1,3,a\n1,4,b\n2,10,a\n3,-2,c\n4,2.5,b\n", encoding="utf-8")
    return tmp_path


def release(work: Path, *extra: str) -> subprocess.CompletedProcess:
    return run("release", str(EXAMPLE), *extra, cwd=work)


def test_the_shipped_example_dataset_is_the_deterministic_one() -> None:
    assert EXAMPLE.read_text(encoding="utf-8") == generate()


def test_release_prints_a_readable_result(work: Path) -> None:
    result = release(work, "--column", "age", "--stat", "mean", "--bounds", "18,90", "--epsilon", "0.5")
    assert result.returncode == 0, result.stderr
    assert "mean of column 'age'" in result.stdout and "epsilon 0.5" in result.stdout


@pytest.mark.parametrize(
    "stat, extra",
    [
        ("count", []),
        ("sum", ["--bounds", "0,80"]),
        ("mean", ["--bounds", "0,80"]),
        ("variance", ["--bounds", "0,80"]),
        ("histogram", ["--bins", "0,20,40,60,80"]),
    ],
)
def test_every_statistic_as_json(work: Path, stat: str, extra: list[str]) -> None:
    result = release(work, "--column", "hours", "--stat", stat, "--epsilon", "1/3", "--json", *extra)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["statistic"] == stat and record["epsilon"] == "1/3"
    assert record["query"]["column"] == "hours"


@pytest.mark.parametrize("stat, extra", [("median", []), ("quantile", ["--q", "0.9"])])
def test_quantiles_priced_in_rho_are_released_and_replayed(work: Path, stat: str, extra: list[str]) -> None:
    """Issue 17: a quantile in rho was refused here ("pure-DP only") while a table released it."""
    args = ("--column", "income", "--stat", stat, "--bounds", "0,400000", "--rho", "1/2", "--seed-file", "seed",
            "--audit-log", "a.jsonl", *extra)
    result = release(work, *args)
    assert result.returncode == 0, result.stderr
    record = json.loads((work / "a.jsonl").read_text().splitlines()[0])["record"]
    cell = record["parameters"][next(iter(record["parameters"]["shares"]))]  # the one cell's record
    from securedp.mechanisms.selection_price import selection_epsilon
    from securedp.privacy.cost import Cost

    assert record["rho"] == "1/2" and record["epsilon"] is None
    assert Fraction(cell["epsilon_cell"]) == selection_epsilon(Cost.of(rho=Fraction(1, 2))) > 2  # the sharp bound
    replayed = run("audit", "replay", "a.jsonl", "--seed-file", "seed", "--data", str(EXAMPLE), cwd=work)
    assert replayed.returncode == 0 and "reproduced exactly" in replayed.stdout


@pytest.mark.parametrize(
    "args, status, fragments",
    [
        (("--epsilon", "1", "--rho", "1"), 2, ("not allowed with",)),
        ((), 2, ("--epsilon", "--rho")),
        (("--rho", "0"), 1, ("--rho", "must be > 0")),
        (("--rho=-1/2",), 1, ("--rho", "must be > 0")),
        (("--rho", "abc"), 1, ("--rho",)),
        (("--rho", "inf"), 1, ("--rho",)),
    ],
)
def test_rho_argument_errors(work: Path, args: tuple[str, ...], status: int, fragments: tuple[str, ...]) -> None:
    assert_one_line_error(release(work, "--column", "age", "--stat", "count", *args), status, *fragments)


def test_a_rho_budget_file_counts_rho_and_refuses_epsilon(work: Path) -> None:
    args = ("--column", "age", "--stat", "mean", "--bounds", "18,90", "--budget-file", "b.json",
            "--audit-log", "a.jsonl")
    first = release(work, *args, "--rho", "1/4", "--budget", "1/2", "--seed-file", "seed")
    assert first.returncode == 0, first.stderr
    assert "spent 0.25 of 0.5, remaining 0.25 (rho)" in first.stdout
    state = json.loads((work / "b.json").read_text())
    assert state["currency"] == "rho" and state["total"] == "1/2" and state["spent"] == "1/4"
    log_before = (work / "a.jsonl").read_bytes()
    mismatch = release(work, *args, "--epsilon", "1/8")
    assert_one_line_error(mismatch, 1, "b.json counts rho", "priced in epsilon", "--rho")
    assert_one_line_error(release(work, *args, "--epsilon", "1/8", "--budget", "1/2"), 1, "counts rho")
    assert_one_line_error(release(work, *args, "--rho", "1/8", "--budget", "1"), 1, "does not match the total rho 1/2")
    assert_one_line_error(release(work, *args, "--rho", "1/2"), 1,
                          "budget exhausted", "needs rho 1/2", "1/4 of 1/2 remains")
    assert json.loads((work / "b.json").read_text())["spent"] == "1/4"
    assert (work / "a.jsonl").read_bytes() == log_before  # refusals write nothing
    assert release(work, *args, "--rho", "1/4", "--seed-file", "seed").returncode == 0  # exactly the rest
    record = json.loads((work / "a.jsonl").read_text().splitlines()[-1])["record"]
    assert record["budget_kind"] == "rho" and record["spent"] == "1/2" and record["remaining"] == 0
    verified = run("audit", "verify", "a.jsonl", cwd=work)
    assert verified.returncode == 0 and "OK, 2 records" in verified.stdout, verified.stderr
    replayed = run("audit", "replay", "a.jsonl", "--seed-file", "seed", "--data", str(EXAMPLE), cwd=work)
    assert replayed.returncode == 0 and "all 2 releases reproduced exactly" in replayed.stdout, replayed.stderr


def test_an_epsilon_budget_file_refuses_rho(work: Path) -> None:
    args = ("--column", "age", "--stat", "count", "--budget-file", "b.json")
    assert release(work, *args, "--epsilon", "1/2", "--budget", "1").returncode == 0
    assert json.loads((work / "b.json").read_text())["currency"] == "epsilon"
    assert_one_line_error(release(work, *args, "--rho", "1/8"), 1,
                          "b.json counts epsilon", "priced in rho", "--epsilon")


def test_a_budget_file_without_currency_counts_epsilon(work: Path) -> None:
    (work / "b.json").write_text(json.dumps({"format": "securedp-budget/1", "total": "1", "spent": "0",
                                             "ledger": "ab" * 16}))
    args = ("--column", "age", "--stat", "count", "--budget-file", "b.json")
    assert_one_line_error(release(work, *args, "--rho", "1/8"), 1, "counts epsilon")
    assert release(work, *args, "--epsilon", "1/8").returncode == 0
    (work / "c.json").write_text(json.dumps({"format": "securedp-budget/1", "currency": "delta", "total": "1",
                                             "spent": "0", "ledger": "ab" * 16}))
    assert_one_line_error(release(work, "--column", "age", "--stat", "count", "--budget-file", "c.json", "--rho", "1"),
                          1, "not a valid budget file")


@pytest.mark.slow
def test_verify_and_replay_a_log_mixing_epsilon_and_rho_releases(work: Path) -> None:
    for args in (
        ("--column", "age", "--stat", "mean", "--bounds", "18,90", "--rho", "1/8"),
        ("--column", "region", "--stat", "histogram", "--categories", "north,south,east,west", "--rho", "1/4"),
        ("--column", "hours", "--stat", "variance", "--bounds", "0,80", "--epsilon", "1/4"),
        ("--column", "income", "--stat", "median", "--bounds", "0,400000", "--epsilon", "1/4"),
        ("--column", "hours", "--stat", "sum", "--bounds", "0,80", "--rho", "2", "--id-column", "person_id"),
    ):
        result = release(work, *args, "--seed-file", "seed", "--audit-log", "a.jsonl")
        assert result.returncode == 0, result.stderr
    verified = run("audit", "verify", "a.jsonl", cwd=work)
    assert verified.returncode == 0 and "OK, 5 records" in verified.stdout
    replayed = run("audit", "replay", "a.jsonl", "--seed-file", "seed", "--data", str(EXAMPLE), cwd=work)
    assert replayed.returncode == 0 and "all 5 releases reproduced exactly" in replayed.stdout, replayed.stdout
    # a rho release whose value is altered is caught by replay, and whose rho is altered by the chain
    lines = (work / "a.jsonl").read_text().splitlines(keepends=True)
    assert '"rho":"1/8"' in lines[0]
    (work / "b.jsonl").write_text(lines[0].replace('"rho":"1/8"', '"rho":"1/9"', 1))
    assert_one_line_error(run("audit", "verify", "b.jsonl", cwd=work), 1, "line 1", "'hash'")


def test_replay_of_a_rho_release_with_a_wrong_seed_or_altered_data_fails(work: Path) -> None:
    args = ("--column", "age", "--stat", "sum", "--bounds", "0,100", "--rho", "1", "--seed-file", "seed",
            "--audit-log", "a.jsonl")
    assert release(work, *args).returncode == 0
    (work / "other").write_text(bytes(range(1, 33)).hex())
    assert_one_line_error(
        run("audit", "replay", "a.jsonl", "--seed-file", "other", "--data", str(EXAMPLE), cwd=work), 1, "wrong seed"
    )
    lines = EXAMPLE.read_text().splitlines(keepends=True)
    cells = lines[1].split(",")
    cells[1] = str(int(cells[1]) + 1)
    (work / "altered.csv").write_text("".join([lines[0], ",".join(cells), *lines[2:]]))
    result = run("audit", "replay", "a.jsonl", "--seed-file", "seed", "--data", "altered.csv", cwd=work)
    assert_one_line_error(result, 1, "line 1", "value differs")


def test_label_bins_point_to_categories(work: Path) -> None:
    result = run("release", "data.csv", "--column", "city", "--stat", "histogram", "--bins", "a,b,c", "--epsilon", "1",
                 cwd=work)
    assert_one_line_error(result, 1, "--bins", "--categories")
    ok = run("release", "data.csv", "--column", "city", "--stat", "histogram", "--categories", "a,b,c",
             "--epsilon", "1", cwd=work)
    assert ok.returncode == 0 and "a" in ok.stdout, ok.stderr


# -- negative option values, and how values are printed ---------------------------------------------


@pytest.mark.parametrize(
    "bounds, expected",
    [
        (("--bounds", "-5,-1"), ["-5", "-1"]),
        (("--bounds", "-1e30,1e30"), [str(-10**30), str(10**30)]),
        (("--bounds=-1,1",), ["-1", "1"]),
        (("--bounds", "-.5,0.5"), ["-1/2", "1/2"]),
        (("--bou", "-2,-1/3"), ["-2", "-1/3"]),
    ],
)
def test_negative_bounds_need_no_equals_sign(work: Path, bounds: tuple[str, ...], expected: list[str]) -> None:
    result = release(work, "--column", "age", "--stat", "sum", "--epsilon", "1", "--id-column", "person_id", "--json",
                     *bounds)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["query"]["bounds"] == expected


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("--stat", "quantile", "--bounds", "0,100", "--q", "-0.5"), "q must lie in [0, 1], got -1/2"),
        (("--stat", "count", "--epsilon", "-1/2"), "--epsilon must be > 0"),
        (("--stat", "sum", "--bounds", "-inf,1"), "--bounds"),
        (("--stat", "sum", "--bounds", "-1,-5"), "reversed"),
    ],
)
def test_negative_values_reach_the_value_checks(work: Path, args: tuple[str, ...], fragment: str) -> None:
    extra = () if "--epsilon" in args else ("--epsilon", "1")
    assert_one_line_error(release(work, "--column", "age", *args, *extra), 1, fragment)


def test_only_values_of_valued_options_are_attached() -> None:
    from securedp.cli.main import attach_negative_values, build_parser

    parser = build_parser()
    assert attach_negative_values(["release", "d.csv", "--bounds", "-5,-1", "--json", "-x"], parser) == [
        "release", "d.csv", "--bounds=-5,-1", "--json", "-x"]
    assert attach_negative_values(["release", "--json", "-5.csv"], parser) == ["release", "--json", "-5.csv"]
    assert attach_negative_values(["release", "--js", "-5"], parser) == ["release", "--js", "-5"]  # --json: no value
    assert attach_negative_values(["release", "--", "--bounds", "-5"], parser) == ["release", "--", "--bounds", "-5"]
    assert attach_negative_values(["release", "--bounds", "--epsilon", "1"], parser) == [
        "release", "--bounds", "--epsilon", "1"]


def test_histogram_bins_and_values_print_as_a_person_writes_them(work: Path) -> None:
    result = release(work, "--column", "hours", "--stat", "histogram", "--bins", "0,0.5,20,40,80", "--epsilon", "1",
                     "--id-column", "person_id")
    assert result.returncode == 0, result.stderr
    assert "Fraction" not in result.stdout
    rows = [line.split() for line in result.stdout.splitlines()[1:5]]
    assert [" ".join(row[:2]) for row in rows] == ["[0, 0.5)", "[0.5, 20)", "[20, 40)", "[40, 80]"]
    assert all(re.fullmatch(r"-?\d+", row[2]) for row in rows)
    as_json = json.loads(release(work, "--column", "hours", "--stat", "histogram", "--bins", "0,0.5,20,40,80",
                                 "--epsilon", "1", "--json").stdout)
    assert as_json["labels"] == [[0, "1/2"], ["1/2", 20], [20, 40], [40, 80]]  # JSON stays exact: "num/den"


def test_values_print_exactly(work: Path) -> None:
    lines = release(work, "--column", "hours", "--stat", "sum", "--bounds", "0,0.25",
                    "--epsilon", "1").stdout.splitlines()
    value = lines[1].split()[1]
    if value == "≈":  # a lattice value of more than 15 significant digits: rounded for reading, and said so
        # 6 significant digits, trailing zeros dropped: about one release in 1,000 (a noisy sum near 300 whose
        # rounding ends in .000) prints a whole number, "≈ 300", which the pattern once refused at random
        assert re.fullmatch(r"  value    ≈ -?\d+(\.\d{1,5})?", lines[1]), lines[1]
        assert "--json prints every value exactly" in lines[2]
    else:
        assert re.fullmatch(r"-?\d+(\.\d*[1-9])?", value), value  # a decimal lattice value: exact decimal
    mean = release(work, "--column", "age", "--stat", "mean", "--bounds", "18,90", "--epsilon", "1",
                   "--id-column", "person_id").stdout.splitlines()[1]
    match = re.fullmatch(r"  value    (?:≈ (\S+)(?:  \(exactly (-?\d+/\d+)\))?|(-?\d+(?:\.\d+)?))", mean)
    assert match, mean
    if match.group(2):
        assert abs(Fraction(match.group(2)) - Fraction(match.group(1))) < Fraction(1, 10**3)
    quantile = release(work, "--column", "age", "--stat", "quantile", "--q", "0.25", "--bounds", "18,90",
                       "--epsilon", "1").stdout
    assert "at q = 0.25" in quantile


def test_without_an_id_column_the_privacy_unit_is_said_to_be_one_row(work: Path) -> None:
    """Issue 19.3: say "privacy unit: one row" plainly, and warn when a column is named like a person id."""
    for argv in (["--column", "age", "--stat", "count"], ["--group-by", "region", "--count", "--keys", "north"]):
        result = run("release", str(EXAMPLE), *argv, "--epsilon", "1", "--output", "t.csv", cwd=work) if \
            "--group-by" in argv else run("release", str(EXAMPLE), *argv, "--epsilon", "1", cwd=work)
        assert result.returncode == 0, result.stderr
        assert "privacy unit: one row" in result.stdout + result.stderr
        assert "per person at most" not in result.stdout + result.stderr
        assert "column 'person_id' looks like a person id: pass --id-column person_id" in result.stderr
        bounded = run("release", str(EXAMPLE), *argv, "--epsilon", "1", "--id-column", "person_id",
                      *(["--output", "t.csv"] if "--group-by" in argv else []), cwd=work)
        assert bounded.returncode == 0 and "looks like a person id" not in bounded.stderr
        assert "privacy unit: the person of column 'person_id'" in bounded.stdout + bounded.stderr


@pytest.mark.parametrize(("argv", "flag", "instead"), [
    (["--group-by", "region", "--count", "--keys", "north", "--max-contributions", "4"], "--max-contributions",
     "--max-groups/--max-rows"),
    (["--group-by", "region", "--count", "--keys", "north", "--bounds", "0,1"], "--bounds", "--sum COLUMN:LO,HI"),
    (["--column", "age", "--stat", "mean", "--bounds", "0,100", "--output", "x.csv"], "--output", "drop the option"),
    (["--column", "age", "--stat", "count", "--max-rows", "3"], "--max-rows", "--max-contributions"),
    (["--column", "age", "--stat", "count", "--keys", "a"], "--keys", "release a table"),
])
def test_an_option_of_the_other_mode_is_refused_naming_what_applies(work: Path, argv: list[str], flag: str,
                                                                    instead: str) -> None:
    """Issue 19.2: options for the other mode used to be ignored (a table ran with max_rows 1; no file written)."""
    result = run("release", str(EXAMPLE), *argv, "--epsilon", "1", cwd=work)
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"securedp: error: {flag} applies to") and instead in result.stderr
    assert not (work / "x.csv").exists()


@pytest.mark.parametrize(("csv", "argv", "words", "python"), [
    ("x\n1\n", ["--column", "x", "--stat", "count", "--bounds", "0,1"], "--bounds does not apply to --stat count",
     "unexpected keyword"),
    ("g,x\na,1\n", ["--group-by", "g", "--count"], "need --delta", "delta="),
    ("x\n1\nabc\n", ["--column", "x", "--stat", "sum", "--bounds", "0,5"],
     "--missing drop or --missing impute with --fill", "missing='drop'"),
    ("x\nb\n", ["--column", "x", "--stat", "histogram", "--categories", "a"], "--analyst-facing", "unknown='drop'"),
])
def test_errors_speak_the_commands_flags(work: Path, csv: str, argv: list[str], words: str, python: str) -> None:
    """Issue 19.4: every error names flags, not the library's keyword arguments, in one line."""
    (work / "d.csv").write_text(csv, encoding="utf-8")
    result = run("release", "d.csv", *argv, "--epsilon", "1", cwd=work)
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert words in result.stderr and python not in result.stderr
