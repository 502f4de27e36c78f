"""A histogram's categories and a partition's keys compare each cell's own text (a fourth review, 2026-12-03).

A Polars text column whose every cell was integer text was read as those integers, so the declared labels
``"1"`` and ``"2"`` matched no cell: the data holder was refused ("50 unknown cells") and an analyst's histogram
counted nothing, while one added row ``"x"`` kept the column text and every count came back. One person moved
every bin by its whole size. Labels are now text whatever the other cells hold; value columns of integer text
are still read as those integers at once (the numbers each cell reads as on its own).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import securedp
from securedp import ChaChaSource, Session
from securedp.reading.files import read_file

CELLS = ["1", "2", "1", "1", "2"] * 10
CATEGORIES = ["1", "2", "x"]
SEED = bytes(range(32))


def _histogram(column: object, analyst_facing: bool) -> tuple[int, ...]:
    session = Session(epsilon=10, rng=ChaChaSource(SEED), analyst_facing=analyst_facing)
    return tuple(session.histogram(column, categories=CATEGORIES, epsilon=1).value)


@pytest.mark.parametrize("analyst_facing", [False, True])
@pytest.mark.parametrize("kind", ["polars", "pandas", "list", "csv"])
def test_one_added_row_moves_only_its_own_category(kind: str, analyst_facing: bool, tmp_path: Path) -> None:
    def column(cells: list[str]) -> object:
        if kind == "polars":
            return pl.Series("c", cells)
        if kind == "pandas":
            return pl.Series("c", cells).to_pandas()
        if kind == "csv":
            path = tmp_path / f"d{len(cells)}.csv"
            path.write_text("c\n" + "\n".join(cells) + "\n", encoding="utf-8")
            return read_file(path, ["c"]).frame["c"]  # the command's reader: CSV columns are text
        return list(cells)

    alone, added = _histogram(column(CELLS), analyst_facing), _histogram(column([*CELLS, "x"]), analyst_facing)
    assert alone[:2] == added[:2]  # the same noise (one seed), the same true counts of "1" and "2"
    assert alone == _histogram(list(CELLS), analyst_facing)  # every kind: the same bytes as the Python list


def test_a_partition_by_integer_text_keeps_its_keys() -> None:
    for cells in (CELLS, [*CELLS, "x"]):
        session = Session(epsilon=10, rng=ChaChaSource(SEED))
        parts = session.partition(list(range(len(cells))), by=pl.Series(cells), parts=["1", "2"], budget=1,
                                  unknown="drop")
        assert {key: len(part.data) for key, part in parts.items()} == {"1": 30, "2": 20}


def test_a_value_column_of_integer_text_reads_as_its_integers() -> None:
    """The fast path of value columns gives the numbers the cells read as one by one."""
    cells = ["007", "1", "-0", "-007", "000000000000000001", "123456789012345678"]
    polars = securedp.sum(pl.Series(cells), bounds=(-10**18, 10**18), epsilon=1, rng=ChaChaSource(SEED)).value
    listed = securedp.sum(cells, bounds=(-10**18, 10**18), epsilon=1, rng=ChaChaSource(SEED)).value
    assert polars == listed
