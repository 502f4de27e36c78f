"""Issue 28.6: what reaches the user is in the user's words: the function they called, the column that holds
lists, one clean line for a missing file (no ``[Errno 2]``, no ``(os error 2)``), a quiet exit under
``| head``, numbers a person can read (exact in ``--json``), plurals."""

from __future__ import annotations

import json
import os
import re
from fractions import Fraction
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import securedp
from securedp.cli.example_data import PATH as EXAMPLE
from securedp.hazmat.exact.rational import display_rational


def test_a_wrong_keyword_names_the_function_the_user_called() -> None:
    with pytest.raises(TypeError) as error:
        securedp.count([1, 2], epsilon=1, delta="1e-9")
    assert str(error.value).startswith("securedp.count() got an unexpected keyword argument 'delta'")
    assert "securedp.table(..., delta=)" in str(error.value) and "prepare_count" not in str(error.value)
    with pytest.raises(TypeError, match=r"^securedp.mean\(\) got an unexpected keyword argument 'bound'; "
                                        r"did you mean bounds=\?$"):
        securedp.mean([1, 2], epsilon=1, bound=(0, 3))
    with pytest.raises(TypeError, match=r"^Session.count\(\) got an unexpected keyword argument 'epsilom'; "
                                        r"did you mean epsilon=\?$"):
        securedp.Session(epsilon=1).count([1], epsilom=1)
    with pytest.raises(TypeError, match=r"^securedp.count\(\) missing a required argument: 'data'$"):
        securedp.count(epsilon=1)


@pytest.fixture
def nested(tmp_path: Path) -> Path:
    path = tmp_path / "nested.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3], "l": [[1, 2], [3], [4]], "s": [{"x": 1}, {"x": 2}, {"x": 3}],
                             "g": ["a", "a", "b"]}), path)
    return path


@pytest.mark.parametrize(("argv", "said"), [
    (["--sum", "l:0,10"], "column 'l' holds lists, not numbers"),
    (["--column", "l", "--stat", "mean", "--bounds", "0,10"], "column 'l' holds lists, not numbers"),
    (["--median", "s:0,10"], "column 's' holds structs (mappings), not numbers"),
])
def test_a_nested_parquet_column_is_named_without_python_advice(command, nested: Path, argv: list[str],
                                                                said: str) -> None:
    status, _, err = command(["release", str(nested), *argv, "--epsilon", "1"])
    assert status == 1 and said in err
    assert "df[" not in err and "arr[" not in err and "non-numeric" not in err


def test_in_python_a_list_of_rows_still_gets_the_python_advice() -> None:
    with pytest.raises(ValueError, match=r"^data holds lists, not numbers .*pass a single column instead"):
        securedp.sum([[1, 2], [3, 4]], bounds=(0, 10), epsilon=1)


def test_analyze_of_a_file_with_a_header_and_blank_lines_reads_them_as_blank_cells(command, tmp_path: Path) -> None:
    path = tmp_path / "blank.csv"
    path.write_text("person,group\n\n\n", encoding="utf-8")
    status, _, err = command(["analyze", str(path), "--id-column", "person", "--group-by", "group"])
    assert status == 1 and "internal error" not in err and "blank group key" in err


@pytest.mark.parametrize("argv", [
    ["release", str(EXAMPLE), "--column", "age", "--stat", "count", "--epsilon", "1", "--seed-file", "no-seed"],
    ["audit", "verify", "no-log.jsonl"],
    ["audit", "replay", "no-log.jsonl", "--seed-file", "no-seed", "--data", str(EXAMPLE)],
    ["release", str(EXAMPLE), "--column", "age", "--stat", "count", "--epsilon", "1", "--budget-file",
     "no-folder/b.json", "--budget", "1"],
    ["release", ".", "--count", "--epsilon", "1"],
])
def test_a_missing_file_is_one_clean_line(command, tmp_path: Path, monkeypatch, argv: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    status, _, err = command(argv)
    assert status == 1 and err.count("\n") == 1 and err.startswith("securedp: error: ")
    assert "Errno" not in err and "os error" not in err and "internal error" not in err
    assert re.search(r"no-seed|no-log|no-folder|folder", err)


def test_a_polars_missing_file_error_loses_its_os_error_number() -> None:
    from securedp.cli.main import _one_line

    assert _one_line(FileNotFoundError("No such file or directory (os error 2): x.parquet")) == \
        "No such file or directory: x.parquet"
    assert _one_line(FileNotFoundError(2, "No such file or directory", "seed")) == "seed: no such file or directory"


def test_a_closed_output_exits_quietly(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``securedp demo | head -1``: the reader goes away; the command writes nothing more, as a Unix tool
    killed by SIGPIPE (status 141)."""
    from securedp.cli.main import main

    read_end, write_end = os.pipe()
    os.close(read_end)

    class Closed:
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self) -> int:
            return write_end

    monkeypatch.setattr("sys.stdout", Closed())
    try:
        assert main(["demo"]) == 141
    finally:
        os.close(write_end)
    assert capsys.readouterr().err == ""


def test_a_huge_epsilon_prints_in_scientific_form_and_exactly_in_json(command) -> None:
    argv = ["release", str(EXAMPLE), "--column", "age", "--stat", "count", "--epsilon", "1e400",
            "--id-column", "person_id", "--max-contributions", "4"]
    status, out, _ = command(argv)
    assert status == 0 and "epsilon 1e+400" in out and not re.search(r"\d{30}", out)
    status, out, _ = command([*argv, "--json"])
    assert status == 0 and Fraction(str(json.loads(out)["epsilon"])) == 10**400


def test_numbers_for_reading() -> None:
    assert display_rational(Fraction(47, 25), fraction=True) == "1.88 (47/25)"
    assert display_rational(Fraction(47, 25)) == "1.88"
    assert display_rational(Fraction(1, 3)) == "≈ 0.333333 (1/3)"
    assert display_rational(Fraction(10**400)) == "1e+400" and display_rational(Fraction(1, 10)) == "0.1"


def test_a_planned_epsilon_prints_as_a_decimal_and_its_fraction(command) -> None:
    status, out, _ = command(["release", str(EXAMPLE), "--group-by", "region", "--count", "--keys",
                              "north,south,east,west", "--id-column", "person_id", "--max-rows", "4", "--epsilon", "5",
                              "--dry-run", "--target", "count:37"])
    assert status == 0
    found = re.search(r"meeting every target is (\S+) \((\d+)/(\d+)\)", out)
    assert found and float(found.group(1)) == int(found.group(2)) / int(found.group(3)), out


def test_verify_says_1_record(command, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, _, _ = command(["release", str(EXAMPLE), "--column", "age", "--stat", "count", "--epsilon", "1",
                            "--audit-log", "log.jsonl"])
    assert status == 0
    status, out, _ = command(["audit", "verify", "log.jsonl"])
    assert status == 0 and "OK, 1 record, chain intact" in out


def test_the_demo_rounds_long_values_for_reading(command) -> None:
    status, out, _ = command(["demo"])
    assert status == 0 and not re.search(r"\d{16}", out.replace(".", ""))
    assert "epsilon 0.1" in out and "spent 0.9 of 1" in out


@pytest.mark.parametrize("argv", [["--column", "age", "--stat", "count"], ["--group-by", "region", "--count",
                                                                            "--keys", "north"]])
def test_a_header_only_file_is_said_to_hold_no_row_for_the_data_holder(command, tmp_path: Path, monkeypatch,
                                                                      argv: list[str]) -> None:
    """Issue 28.7: a header-only CSV released silently; the data holder is told (on standard error), an
    analyst-facing release is not (the note depends on the data)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.csv").write_text("age,region\n", encoding="utf-8")
    status, _, err = command(["release", "empty.csv", *argv, "--epsilon", "1"])
    assert status == 0 and "securedp: note: 0 rows read from empty.csv" in err
    status, _, err = command(["release", "empty.csv", *argv, "--epsilon", "1", "--analyst-facing"])
    assert status == 0 and "0 rows" not in err
    (tmp_path / "full.csv").write_text("age,region\n30,north\n", encoding="utf-8")
    status, _, err = command(["release", "full.csv", *argv, "--epsilon", "1"])
    assert status == 0 and "0 rows" not in err
