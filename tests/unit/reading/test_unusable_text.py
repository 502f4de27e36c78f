"""Blank and undecodable text: one rule (``securedp.reading.cells.UNUSABLE_TEXT``) in every reader.

Text that is not valid Unicode (Arrow cells whose bytes are not UTF-8, which Polars took as they
were and a Parquet file made Polars refuse whole; Python strings with a lone surrogate, which were
a person in one-column releases and a ``UnicodeEncodeError`` in tables) is read as its lossy
decoding (``securedp.reading.text``), so the same rule refuses it everywhere.

Each engine used to trim "whitespace" by its own rule: Python's ``str.strip`` (U+001C..U+001F
included), Polars' ``strip_chars`` (Rust's White_Space, without them) and Spark's ``trim`` (the space
only). An id of ``"\\x1c"`` or ``"\\t"`` was then a person in one engine and refused in another, so
the same data gave a release on one path and an error on the other. The Spark engine applies the
same expression (``tests/spark/test_spark_tables.py`` checks it there).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import securedp
from securedp import ChaChaSource, Session
from securedp.reading.cells import UNUSABLE_TEXT, WHITESPACE, is_blank, is_unusable_text
from securedp.reading.text import arrow_text, python_text
from securedp.tables import Count, Sum, prepare_table

EVERY_CHARACTER = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]  # no lone surrogates
EDGES = ["", " a", "a ", "a\n", "\n\n", "\ufffd", "x\ufffd", "\u200b", "\ufeff", " \t\r\n\x0b\x0c\x1c\x1f\u3000"]


def test_whitespace_is_exactly_pythons_isspace() -> None:
    pattern = re.compile(f"[{WHITESPACE}]")
    assert [c for c in EVERY_CHARACTER if pattern.fullmatch(c)] == [c for c in EVERY_CHARACTER if c.isspace()]


def test_polars_reads_the_rule_as_python_does_for_every_character() -> None:
    texts = EVERY_CHARACTER + EDGES + [c * 2 for c in WHITESPACE if c != "-"] + ["a" + c for c in "\t\u3000\x1c"]
    ours = pl.Series(texts, dtype=pl.String).str.contains(UNUSABLE_TEXT).to_list()
    assert ours == [is_unusable_text(t) for t in texts]
    assert [is_unusable_text(t) for t in texts] == [is_blank(t) or "\ufffd" in t for t in texts]


# Each id read by every path: a release of its own (Python), and a table (Polars); same verdict.
IDS = ["\x1c", "\x1f", "\t", "\u3000", "\u2028", "\x85", " \xa0 ", "\u200b", "\ufeff", "a\u3000", "x\ufffd"]


@pytest.mark.parametrize("odd", IDS, ids=[repr(i) for i in IDS])
def test_every_path_gives_an_odd_id_the_same_verdict(odd: str) -> None:
    ids = ["p1", odd, "p2"]
    refused = is_unusable_text(odd)
    session = Session(epsilon=1, rng=ChaChaSource(bytes(32)))
    one_column_refused = False
    try:
        session.count([1, 2, 3], ids=ids, epsilon="1/2")
    except ValueError:
        one_column_refused = True
    frame = pl.DataFrame({"pid": ids, "g": ["a", "a", "a"]})
    table_refused = False
    try:
        prepare_table(frame, id_column="pid", group_by=["g"], keys=["a"], epsilon=1, aggregations=[Count()])
    except ValueError as error:
        assert "pid" in str(error)
        table_refused = True
    keyed = pl.DataFrame({"pid": ["p1", "p2", "p3"], "g": ["a", odd, "a"]})
    key_refused = False
    try:
        prepare_table(keyed, id_column="pid", group_by=["g"], keys=None, delta="1e-6", epsilon=1,
                      aggregations=[Count()])
    except ValueError as error:
        assert "'g'" in str(error)
        key_refused = True
    assert one_column_refused == table_refused == key_refused == refused


# Text that is not valid Unicode: Arrow cells whose bytes are not UTF-8, Python strings with a lone surrogate.


def invalid_utf8(cells: list[bytes]) -> pa.Array:
    """An Arrow ``string`` array holding exactly these bytes (Arrow does not check them when built so)."""
    offsets = np.cumsum([0, *map(len, cells)]).astype(np.int32)
    return pa.Array.from_buffers(pa.string(), len(cells), [None, pa.py_buffer(offsets.tobytes()),
                                                           pa.py_buffer(b"".join(cells))])


IDS_BYTES = [b"a\xff", b"b", b"c", b"a\xfe"]  # two ids that a lossy decoder would merge, and two good ones


def undecodable_tables(tmp_path: Path) -> dict[str, Any]:
    arrow = pa.table({"pid": invalid_utf8(IDS_BYTES), "g": pa.array(["x"] * 4), "v": pa.array([1, 2, 3, 4])})
    parquet = tmp_path / "t.parquet"
    pq.write_table(arrow, parquet)
    surrogate = pd.DataFrame({"pid": pd.Series(["a\udcff", "b", "c", "a\udcfe"], dtype=object), "g": ["x"] * 4,
                              "v": [1, 2, 3, 4]})  # pandas 3's own text dtype refuses surrogates: an object column
    encoded = pa.table({"pid": pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()),
                                                              invalid_utf8(IDS_BYTES)),
                        "g": pa.array(["x"] * 4), "v": pa.array([1, 2, 3, 4])})
    return {"pyarrow": arrow, "parquet": parquet, "pandas": surrogate, "pyarrow dictionary": encoded}


@pytest.mark.parametrize("kind", ["pyarrow", "parquet", "pandas", "pyarrow dictionary"])
def test_undecodable_ids_are_unusable_in_every_table_input(tmp_path: Path, kind: str) -> None:
    """The data holder is refused naming the column (never a decoder's exception); an analyst-facing
    session releases the table of the usable rows, exactly as if the undecodable rows were absent."""
    data = undecodable_tables(tmp_path)[kind]
    query = {"id_column": "pid", "group_by": ["g"], "keys": ["x"], "aggregations": [Count(), Sum("v", (0, 4))]}
    with pytest.raises(ValueError, match="'pid'"):
        prepare_table(data, epsilon=1, **query)
    guarded = Session(epsilon=1, rng=ChaChaSource(bytes(32)), analyst_facing=True)
    released = guarded.table(data, epsilon="1/2", **query)
    usable = pl.DataFrame({"pid": ["b", "c"], "g": ["x", "x"], "v": [2, 3]})
    alone = Session(epsilon=1, rng=ChaChaSource(bytes(32)), analyst_facing=True).table(usable, epsilon="1/2", **query)
    assert released.value == alone.value


@pytest.mark.parametrize("ids", [["a\udcff", "b", "c", "a\udcfe"], invalid_utf8(IDS_BYTES),
                                 pa.chunked_array([invalid_utf8(IDS_BYTES)])], ids=["surrogates", "array", "chunked"])
def test_undecodable_ids_of_a_one_column_release_are_blank(ids: Any) -> None:
    session = Session(epsilon=1, rng=ChaChaSource(bytes(32)))
    with pytest.raises(ValueError, match=r"column 'ids', row 0: (blank id|id .* holds bytes that are not valid text)"):
        session.count([1, 2, 3, 4], ids=ids, epsilon="1/2")
    assert session.spent == 0
    guarded = Session(epsilon=1, rng=ChaChaSource(bytes(32)), analyst_facing=True)
    alone = Session(epsilon=1, rng=ChaChaSource(bytes(32)), analyst_facing=True)
    assert guarded.count([1, 2, 3, 4], ids=ids, epsilon="1/2").value == alone.count([2, 3], ids=["b", "c"],
                                                                                     epsilon="1/2").value


def test_undecodable_values_are_unusable_records() -> None:
    values = invalid_utf8([b"1", b"2\xff", b"3"])
    with pytest.raises(ValueError, match="unusable"):
        securedp.sum(values, bounds=(0, 5), epsilon=1, rng=ChaChaSource(bytes(32)))
    dropped = securedp.sum(values, bounds=(0, 5), epsilon=1, rng=ChaChaSource(bytes(32)), missing="drop")
    assert dropped.value == securedp.sum([1, 3], bounds=(0, 5), epsilon=1, rng=ChaChaSource(bytes(32))).value


def test_valid_arrow_text_is_returned_unchanged() -> None:
    column = pa.array(["a", None, "cé"])
    assert arrow_text(column) is column
    assert arrow_text(invalid_utf8([b"ok", b"\xc3("])).to_pylist() == ["ok", "\ufffd("]
    assert python_text("a\udcffb") == "a\ufffdb" and python_text("plain") == "plain"


def test_a_parquet_file_names_the_column_whose_text_is_not_utf8(tmp_path: Path) -> None:
    """The refusal names the invalid column, not the first text column read (``g`` is valid here)."""
    from securedp.reading.files import read_file

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"g": pa.array(["x"] * 4), "pid": invalid_utf8(IDS_BYTES)}), path)
    with pytest.raises(ValueError, match="column 'pid' holds text that is not valid UTF-8"):
        read_file(path, ["g", "pid"])
    assert read_file(path, ["g"]).frame["g"].to_list() == ["x"] * 4  # a valid column alone is read as it is


def test_verdicts_of_a_long_column_stay_on_their_rows() -> None:
    """The verdict on each text runs in morsels on Polars' streaming engine: over 300,000 rows, with
    unusable texts at the first, a middle, a morsel-edge and the last row and nulls among them, every
    verdict lands on its own row."""
    from securedp.reading.keys import key_column

    n = 300_000
    texts: list[str | None] = [f"p{i}" for i in range(n)]
    bad = {0: "", 1: " ", 65_535: "\ufffd", 65_536: None, 131_072: "\t", 150_001: "x\ufffd", n - 1: "  "}
    for row, text in bad.items():
        texts[row] = text
    read = key_column(pl.Series("id", texts, dtype=pl.String), "id", "id")
    assert read.unusable.dtype == pl.Boolean and read.unusable.len() == n
    assert set(np.flatnonzero(read.unusable.to_numpy()).tolist()) == set(bad)
    kept = read.values.to_list()
    assert all(kept[i] is None for i in bad)
    assert all(kept[i] == f"p{i}" for i in (2, 65_534, 65_537, 131_071, 131_073, n - 2))
