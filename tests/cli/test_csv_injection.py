"""CSV output never hands a spreadsheet a formula (issue 16, item 15).

Released keys are data (private keys) or the analyst's (public keys). Written verbatim to CSV, a key
such as ``=HYPERLINK("http://evil","x")`` becomes a live formula when the file is opened in a
spreadsheet. As OWASP's CSV-injection guidance says, every text cell (and column name) that begins
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is written with a leading ``'``; numbers,
and text that is a plain number (``-3``, ``-1/3``), are written as they are.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import polars as pl
import pytest

from securedp.cli.main import main
from securedp.cli.table_output import neutralised

FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1:A9)", "\tcmd", "\rcmd"]
PLAIN = ["north", "-3", "-1.5", "-1/3", "a=b", " =x"]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    rows = [(i, key) for i, key in enumerate([*FORMULAS, *PLAIN] * 30)]
    pl.DataFrame(rows, schema=["person", "key"], orient="row").write_csv(tmp_path / "d.csv")
    pl.DataFrame({"key": [*FORMULAS, *PLAIN]}).write_csv(tmp_path / "keys.csv")
    return tmp_path / "d.csv"


def cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def first_column(rows: list[list[str]]) -> list[str]:
    return [row[0] for row in rows[1:]]


@pytest.mark.parametrize("where", ["stdout", "file"])
@pytest.mark.parametrize("keys", ["private", "public"])
def test_released_keys_that_start_a_formula_are_written_as_text(data: Path, tmp_path: Path, where: str, keys: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["release", str(data), "--group-by", "key", "--count", "--id-column", "person", "--epsilon", "10"]
    argv += ["--delta", "1e-6"] if keys == "private" else ["--keys-file", str(data.with_name("keys.csv"))]
    out_file = tmp_path / "out.csv"
    if where == "file":
        argv += ["--output", str(out_file)]
    assert main(argv) == 0
    text = capsys.readouterr().out if where == "stdout" else out_file.read_bytes().decode("utf-8")
    written = first_column(cells(text))
    assert set(written) == {"'" + key for key in FORMULAS} | set(PLAIN)
    counts = [int(row[1]) for row in cells(text)[1:]]  # noisy counts stay numbers, negative or not
    assert len(counts) == len(written)


def test_numbers_are_left_alone_and_column_names_are_neutralised() -> None:
    frame = pl.DataFrame({"=cmd": ["=1+2", "-5", "x"], "n": [-1, 2, -3]})
    out = neutralised(frame)
    assert out.columns == ["'=cmd", "n"]
    assert out["'=cmd"].to_list() == ["'=1+2", "-5", "x"] and out["n"].to_list() == [-1, 2, -3]
    assert out.schema["n"] == pl.Int64
