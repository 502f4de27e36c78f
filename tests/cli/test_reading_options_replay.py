"""The reading options of every command, their one wording, and their replay (issue 25, items 6 to 8).

6. ``securedp audit replay`` re-derives every release made with ``--analyst-facing``, ``--missing drop``,
   ``--missing impute --fill X`` and ``--schema``: one-column releases, tables, ``bounds``, ``analyze
   --epsilon`` and the bounds a table's ``COLUMN:auto`` chose, from a file holding blank cells, text in a
   number column and a record that does not parse;
7. ``--missing drop|impute --fill`` apply to ``release --column`` and to ``bounds`` (and to the bounds a
   table's ``COLUMN:auto`` chooses); a bad cell is named in one wording on every route, ``column 'income',
   line 34: blank cell``, its line the file's (a quoted line break counts: it is the file's line);
8. ``--sum COLUMN:auto --analyst-facing`` releases, and its bounds release is recorded in the mode it ran in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Command = Callable[[list[str]], tuple[int, str, str]]
"""The ``command`` fixture (tests/conftest.py): exit status, standard output, standard error."""

ROWS = 30
"""Persons 0 .. 29 in lines 2 .. 31, then the odd lines below."""


def write_data(folder: Path, delimiter: str = ",") -> Path:
    """``id,g,income,hours,note``: whole ``hours``, and odd lines: a note that spans lines 32 and 33, a blank
    income (line 34), text in ``income`` (line 35) and a record that does not parse (line 36)."""
    rows = [f"{i},{'ab'[i % 2]},{i * 10},{i % 8},ok" for i in range(ROWS)]
    rows += ['30,a,5,1,"a note\nover two lines"', "31,b,,2,ok", "32,a,HIV+,3,ok", '33,b,7,4,"unclosed']
    path = folder / ("d.csv" if delimiter == "," else "semicolon.csv")
    path.write_text(("id,g,income,hours,note\n" + "\n".join(rows) + "\n").replace(",", delimiter), encoding="utf-8")
    return path


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_data(tmp_path)
    (tmp_path / "seed").write_text("17" * 32, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


COLUMN = ["release", "d.csv", "--column", "income", "--stat", "sum", "--bounds", "0,300"]
TABLE = ["release", "d.csv", "--group-by", "g", "--keys", "a,b", "--id-column", "id", "--count"]
BOUNDS = ["bounds", "d.csv", "--column", "income"]
MODES = {"--analyst-facing": ["--analyst-facing"], "--missing drop": ["--missing", "drop"],
         "--missing impute": ["--missing", "impute", "--fill", "5/2"]}
RELEASES = {
    "column": COLUMN,
    "column --schema": [*COLUMN[:3], "hours", "--stat", "mean", "--bounds", "0,10", "--schema", "hours:int"],
    "table": [*TABLE, "--sum", "income:0,300", "--median", "hours:0,10"],
    "table --schema": [*TABLE, "--mean", "hours:0,10", "--schema", "hours:int,id:int"],
    "table auto": [*TABLE, "--sum", "income:auto", "--auto-epsilon", "1/2"],
    "bounds": BOUNDS,
    "bounds quantiles": [*BOUNDS, "--method", "quantiles"],
    "histogram": [*COLUMN[:3], "income", "--stat", "histogram", "--bins", "0,100,300"],
}
DATA_HOLDER_ONLY = {"analyze": ["analyze", "d.csv", "--id-column", "id", "--group-by", "g", "--analyst-facing"]}
"""Reads no value: only --analyst-facing applies."""


def cases() -> list[tuple[str, str]]:
    return [(name, mode) for name in sorted(RELEASES) for mode in MODES] + [("analyze", "--analyst-facing")]


@pytest.mark.parametrize(("name", "mode"), cases())
def test_replay_reproduces_a_release_made_with_each_reading_option(name: str, mode: str, work: Path,
                                                                   command: Command) -> None:
    if mode != "--analyst-facing":  # the data holder's release refuses a record that does not parse: remove it
        Path("d.csv").write_text(Path("d.csv").read_text(encoding="utf-8").replace('33,b,7,4,"unclosed\n', ""),
                                 encoding="utf-8")
    argv = [*(RELEASES.get(name) or DATA_HOLDER_ONLY[name]), *([] if name == "analyze" else MODES[mode]),
            "--epsilon", "1", "--seed-file", "seed", "--audit-log", "log.jsonl"]
    status, out, err = command(argv)
    assert status == 0 and out, err
    records = [json.loads(line)["record"] for line in Path("log.jsonl").read_text(encoding="utf-8").splitlines()]
    for record in records:  # each release says how it read the data, so that replay reads it alike
        query = record["query"]
        if mode == "--analyst-facing":
            assert query.get("analyst_facing") is True, query
        elif query["statistic"] != "contribution_histogram":
            assert query.get("missing") == mode.split()[1], query
    status, out, err = command(["audit", "replay", "log.jsonl", "--seed-file", "seed", "--data", "d.csv"])
    assert status == 0 and f"all {len(records)} releases reproduced exactly" in out, out + err


BAD_CELLS = {  # what reads the income column, and the line its first unusable cell is on
    "release --column": (COLUMN, "line 34"),
    "release table": ([*TABLE, "--sum", "income:0,300"], "line 34"),
    "release table auto": ([*TABLE, "--sum", "income:auto", "--auto-epsilon", "1"], "line 34"),
    "bounds": (BOUNDS, "line 34"),
    "bounds quantiles": ([*BOUNDS, "--method", "quantiles"], "line 34"),
}


@pytest.mark.parametrize("name", sorted(BAD_CELLS))
def test_a_bad_cell_is_named_in_one_wording_with_its_file_line(name: str, work: Path, command: Command) -> None:
    Path("d.csv").write_text(Path("d.csv").read_text(encoding="utf-8").replace('33,b,7,4,"unclosed\n', ""),
                             encoding="utf-8")
    argv, line = BAD_CELLS[name]
    status, out, err = command([*argv, "--epsilon", "1"])
    assert (status, out) == (1, "") and err == (
        f"securedp: error: column 'income', {line}: blank cell (2 unusable cell(s)); clean the data, or pass "
        "--missing drop or --missing impute with --fill <number>\n")
    for option in MODES.values():  # each option applies: the release is made
        status, out, err = command([*argv, *option, "--epsilon", "1"])
        assert status == 0 and out, (option, err)


@pytest.mark.parametrize("option", [["--missing", "drop"], ["--analyst-facing"]])
def test_auto_bounds_read_the_file_as_the_table_does(option: list[str], work: Path, command: Command) -> None:
    """The bounds of ``COLUMN:auto`` read with the table's ``--delimiter``, ``--schema`` and ``--missing``."""
    write_data(work, ";")
    argv = ["release", "semicolon.csv", "--group-by", "g", "--keys", "a,b", "--id-column", "id", "--delimiter", ";",
            "--sum", "hours:auto", "--auto-epsilon", "1", "--schema", "hours:int", *option, "--epsilon", "1",
            "--seed-file", "seed", "--audit-log", "log.jsonl"]
    if option == ["--missing", "drop"]:
        Path("semicolon.csv").write_text(Path("semicolon.csv").read_text(encoding="utf-8").replace(
            '33;b;7;4;"unclosed\n', ""), encoding="utf-8")
    status, out, err = command(argv)
    assert status == 0 and out.startswith("g,hours_sum"), err
    bounds = json.loads(Path("log.jsonl").read_text(encoding="utf-8").splitlines()[0])["record"]["query"]
    assert bounds["statistic"] == "bounds" and bounds["delimiter"] == ";" and bounds["schema"] == {"hours": "int"}
    status, out, err = command(["audit", "replay", "log.jsonl", "--seed-file", "seed", "--data", "semicolon.csv"])
    assert status == 0 and "all 2 releases reproduced exactly" in out, out + err


def test_auto_bounds_read_standard_input_once(work: Path, command: Command, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    data = Path("d.csv").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    status, out, err = command([*TABLE[:1], "-", *TABLE[2:], "--sum", "hours:auto", "--auto-epsilon", "1",
                                "--analyst-facing", "--epsilon", "1"])
    assert status == 0 and out.startswith("g,count,"), err


def test_sum_auto_analyst_facing_releases_and_replays(work: Path, command: Command) -> None:
    argv = [*TABLE, "--sum", "income:auto", "--auto-epsilon", "1", "--analyst-facing", "--epsilon", "1",
            "--seed-file", "seed", "--audit-log", "log.jsonl"]
    status, out, err = command(argv)
    assert status == 0 and out.startswith("g,count,") and "income_sum" in out.splitlines()[0], err
    assert "bounds   income: [" in err
    bounds, table = (json.loads(line)["record"] for line in Path("log.jsonl").read_text(encoding="utf-8").splitlines())
    assert bounds["query"]["analyst_facing"] is True and table["query"]["analyst_facing"] is True
    status, out, err = command(["audit", "replay", "log.jsonl", "--seed-file", "seed", "--data", "d.csv"])
    assert status == 0 and "all 2 releases reproduced exactly" in out, out + err


def test_the_python_api_names_a_bad_cell_of_a_file_in_the_same_words(work: Path) -> None:
    import securedp
    from securedp.tables import Sum

    Path("d.csv").write_text(Path("d.csv").read_text(encoding="utf-8").replace('33,b,7,4,"unclosed\n', ""),
                             encoding="utf-8")
    calls: dict[str, Callable[[], Any]] = {
        "table": lambda: securedp.prepare_table("d.csv", group_by=["g"], keys=["a", "b"], id_column="id",
                                                aggregations=[Sum("income", (0, 300))], epsilon=1),
        "auto bounds": lambda: securedp.planning.auto_bounds("d.csv", [Sum("income", "auto")], epsilon=1,
                                                             id_column="id", rng=securedp.ChaChaSource(bytes(32))),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError) as error:
            call()
        assert str(error.value) == ("column 'income', line 34: blank cell (2 unusable cell(s)); clean the data, or "
                                    "pass missing='drop' or missing='impute' with fill=<number>"), name


def test_the_python_auto_bounds_take_the_tables_reading_options(work: Path) -> None:
    import securedp
    from securedp.tables import Sum

    Path("d.csv").write_text(Path("d.csv").read_text(encoding="utf-8").replace('33,b,7,4,"unclosed\n', ""),
                             encoding="utf-8")
    every: list[dict[str, Any]] = [{"missing": "drop"}, {"missing": "impute", "fill": 3},
                                   {"missing": "drop", "schema": {"id": "int"}}]
    for options in every:
        chosen, releases = securedp.planning.auto_bounds("d.csv", [Sum("income", "auto")], epsilon=1, id_column="id",
                                                         rng=securedp.ChaChaSource(bytes(32)), **options)
        assert chosen[0].bounds == releases[0].value and releases[0].statistic == "bounds"
