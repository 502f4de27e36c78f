"""Defect 7 through the command: a blank cell in ``--id-column`` is refused, never numbered as a person.

``read_column`` used to number the id cells in order of first appearance, so every row with an empty
id cell became the same "person": with ``--max-contributions 1`` only the first of them was kept.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import securedp
from securedp.audit.table import DataError, read_column

REPO = Path(securedp.__file__).resolve().parent.parent


@pytest.mark.parametrize("blank", ["", "   ", "\t"], ids=["empty", "spaces", "tab"])
def test_read_column_refuses_a_blank_id_naming_the_column_and_row(tmp_path: Path, blank: str) -> None:
    path = tmp_path / "data.csv"
    path.write_text(f"person,x\n1,3\n{blank},4\n2,5\n{blank},6\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"column 'person' is blank in data row 2 \(2 row\(s\) without"):
        read_column(path, "x", "person")
    assert read_column(path, "x").values == ["3", "4", "5", "6"]  # without ids nothing is refused


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
    assert len(lines) == 1 and "column 'person' is blank in data row 2" in lines[0], result.stderr


def test_distinct_ids_stay_distinct_and_equal_ids_equal(tmp_path: Path) -> None:
    """(Ids used to be numbered by first appearance; they are now coded from their own text.)"""
    from securedp.audit.table import person_code

    path = tmp_path / "data.csv"
    path.write_text("person,x\nann,1\nbob,2\nann,3\n", encoding="utf-8")
    ann, bob = person_code("ann"), person_code("bob")
    assert read_column(path, "x", "person").ids == [ann, bob, ann] and ann != bob


def test_an_added_person_renumbers_no_one(tmp_path: Path) -> None:
    """Ids are coded from their own text: adding a person before others changes no other person's id."""
    from securedp.audit.table import person_code

    path = tmp_path / "a.csv"
    path.write_text("person,x\nbob,1\nann,2\n7,3\n", encoding="utf-8")
    before = read_column(path, "x", "person").ids
    path.write_text("person,x\nzoe,0\nbob,1\nann,2\n7,3\n", encoding="utf-8")
    after = read_column(path, "x", "person").ids
    assert before == after[1:] and after[3] == 7
    assert len({person_code(t) for t in ["1", "01", "ann", "ann ", "Zo\u00eb", "Zoe\u0308"]}) == 6
