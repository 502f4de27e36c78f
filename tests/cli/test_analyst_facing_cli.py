"""``securedp release --analyst-facing``: every error is one line, no traceback, naming no value.

Every option is checked before the data file is read, and its errors stay specific; any failure
after that, other than the budget file's, the audit log's or the command's own, is the one line of
``DataRefused``. The same command without the flag is the leaky control: it names the value.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from securedp.ledger.errors import DATA_REFUSED

REFUSED = f"securedp: error: {DATA_REFUSED}\n"
UNIT_WARNING = ("securedp: warning: no --id-column, so every row counts as a different person, but column 'person' "
                "looks like a person id: pass --id-column person if a person can have several rows\n")

Command = Callable[[list[str]], tuple[int, str, str]]
"""The ``command`` fixture (tests/conftest.py): exit status, standard output, standard error."""


@pytest.fixture
def data(tmp_path: Path) -> Path:
    (tmp_path / "d.csv").write_text("person,g,v,w,b\n1,10,5,1.5,true\n2,20,HIV+,2,false\n3,10,7,2.5,true\n",
                                    encoding="utf-8")
    return tmp_path / "d.csv"




FAILING_ON_DATA = {  # each fails on the data (a column the file lacks; CSV cells are text, read by exact rules)
    "no-such-column": ["--group-by", "nope", "--count", "--keys", "1", "--epsilon", "1"],
}


@pytest.mark.parametrize("case", sorted(FAILING_ON_DATA))
def test_a_failure_after_the_data_is_read_is_one_fixed_line(data: Path, case: str,
                                                            command: Command) -> None:
    status, out, err = command(["release", str(data), *FAILING_ON_DATA[case], "--analyst-facing"])
    assert (status, out, err) == (1, "", REFUSED)
    status, _, err = command(["release", str(data), *FAILING_ON_DATA[case]])  # the data holder's mode
    assert status == 1 and err != REFUSED and err.count("\n") == 1


def test_csv_ids_and_keys_are_their_text(data: Path, command: Command) -> None:
    """Issue 16.8: no CSV type is inferred (one row could flip it): a key is its text, in both modes alike."""
    argv = ["release", str(data), "--group-by", "w", "--count", "--keys", "1.5,2,true", "--id-column", "b",
            "--epsilon", "1000"]
    for mode in ([], ["--analyst-facing"]):
        status, out, err = command([*argv, *mode])
        assert status == 0 and err == "" and [line.split(",")[0] for line in out.splitlines()[1:]] == [
            "1.5", "2", "true"]


def test_unusable_values_are_dropped_instead_of_named(data: Path, command: Command) -> None:
    argv = ["release", str(data), "--column", "v", "--stat", "sum", "--bounds", "0,10", "--epsilon", "1"]
    status, _, err = command(argv)
    assert status == 1 and "not a number ('HIV+')" in err  # the leaky control
    status, out, err = command([*argv, "--analyst-facing"])
    assert status == 0 and err == UNIT_WARNING and "sum of column 'v'" in out  # the column names only: public
    table = ["release", str(data), "--group-by", "g", "--keys", "10,20", "--sum", "v:0,10", "--epsilon", "1"]
    status, out, err = command([*table, "--analyst-facing"])
    assert status == 0 and out.splitlines()[0] == "g,v_sum,v_sum_low,v_sum_high"
    assert [line.split(",")[0] for line in out.splitlines()[1:]] == ["10", "20"]  # item 14: --keys on ints


@pytest.mark.parametrize(("options", "message"), [
    (["--column", "v", "--stat", "sum", "--bounds", "10,0", "--epsilon", "1"], "bounds are reversed"),
    (["--column", "v", "--stat", "sum", "--bounds", "0,10", "--epsilon", "-1"], "--epsilon"),
    (["--group-by", "g", "--count", "--epsilon", "1"], "private keys need --delta"),  # issue 19.4: flags
    (["--group-by", "g", "--sum", "v:10,0", "--keys", "10", "--epsilon", "1"], "reversed"),
    (["--group-by", "g", "--sum", "v:0,9", "--keys", "10", "--epsilon", "1", "--missing", "impute"], "fill"),
    (["--group-by", "g", "--count", "--keys", "10", "--epsilon", "1", "--budget", "1"], "--budget needs"),
])
def test_public_argument_errors_stay_specific(data: Path, options: list[str], message: str,
                                              command: Command) -> None:
    status, out, err = command(["release", str(data), *options, "--analyst-facing"])
    assert status == 1 and out == "" and message in err and err.count("\n") == 1 and err != REFUSED


def test_the_budget_file_reports_as_usual(data: Path, tmp_path: Path, command: Command) -> None:
    argv = ["release", str(data), "--group-by", "g", "--count", "--keys", "10", "--epsilon", "1", "--analyst-facing",
            "--budget-file", str(tmp_path / "b.json"), "--budget", "1"]
    assert command(argv)[0] == 0
    status, _, err = command(argv)
    assert status == 1 and "budget" in err and err != REFUSED
