"""Defect 7 through the command: a blank cell in ``--id-column`` is refused, never numbered as a person.

The command's reader used to number the id cells in order of first appearance, so every row with an
empty id cell became the same "person": with ``--max-contributions 1`` only the first of them was kept.
Ids are now read by the one rule of ids and keys (:mod:`securedp.reading.keys`): a CSV id is its text.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import securedp
from securedp.engines.frames import read_table
from securedp.reading.files import TableFile

REPO = Path(securedp.__file__).resolve().parent.parent


def ids_of(path: Path) -> list[object]:
    """The person of each row of the file, as every release reads it."""
    return read_table(TableFile(path), "p", "person", []).frame["p"].to_list()


@pytest.mark.parametrize("blank", ["", "   ", "\t"], ids=["empty", "spaces", "tab"])
def test_a_blank_id_is_refused_naming_the_column_and_the_file_line(tmp_path: Path, blank: str) -> None:
    path = tmp_path / "data.csv"
    path.write_text(f"person,x\n1,3\n{blank},4\n2,5\n{blank},6\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"column 'person', line 3: blank id \(2 row\(s\) without"):
        ids_of(path)
    frame = TableFile(path).read(["x"]).frame  # without ids nothing is refused
    assert frame["x"].to_list() == ["3", "4", "5", "6"]


def test_the_command_refuses_a_blank_id_with_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("person,x\n1,3\n,4\n,5\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "securedp", "release", "data.csv", "--column", "x", "--stat", "count",
         "--epsilon", "1", "--id-column", "person"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "column 'person', line 3: blank id" in lines[0], result.stderr


def test_distinct_ids_stay_distinct_and_equal_ids_equal(tmp_path: Path) -> None:
    """(Ids used to be numbered by first appearance; a CSV id is now its own text.)"""
    path = tmp_path / "data.csv"
    path.write_text("person,x\nann,1\nbob,2\nann,3\n", encoding="utf-8")
    assert ids_of(path) == ["ann", "bob", "ann"]


def test_an_added_person_renumbers_no_one(tmp_path: Path) -> None:
    """Ids are read from their own text: adding a person before others changes no other person's id."""
    path = tmp_path / "a.csv"
    path.write_text("person,x\nbob,1\nann,2\n7,3\n", encoding="utf-8")
    before = ids_of(path)
    path.write_text("person,x\nzoe,0\nbob,1\nann,2\n7,3\n", encoding="utf-8")
    after = ids_of(path)
    assert before == after[1:] and after[3] == "7"
    texts = ["1", "01", "ann", "ann ", "Zo\u00eb", "Zoe\u0308"]
    path.write_text("person,x\n" + "".join(f"{t},1\n" for t in texts), encoding="utf-8")
    assert len(set(ids_of(path))) == 6
