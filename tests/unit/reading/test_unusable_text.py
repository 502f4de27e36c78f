"""Blank and undecodable text: one rule (``securedp.reading.cells.UNUSABLE_TEXT``) in every reader.

Each engine used to trim "whitespace" by its own rule: Python's ``str.strip`` (U+001C..U+001F
included), Polars' ``strip_chars`` (Rust's White_Space, without them) and Spark's ``trim`` (the space
only). An id of ``"\\x1c"`` or ``"\\t"`` was then a person in one engine and refused in another, so
the same data gave a release on one path and an error on the other. The Spark engine applies the
same expression (``tests/spark/test_spark_tables.py`` checks it there).
"""

from __future__ import annotations

import re

import polars as pl
import pytest

from securedp import ChaChaSource, Session
from securedp.reading.cells import UNUSABLE_TEXT, WHITESPACE, is_blank, is_unusable_text
from securedp.tables import Count, prepare_table

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


def test_the_engines_bounding_refuses_an_odd_text_given_to_it_directly() -> None:
    """The bounding step's own guard (callers that skip the reader) reads the same rule."""
    from securedp.engines.polars.bounding import bound_and_aggregate

    for odd in IDS:
        frame = pl.DataFrame({"person": ["a", odd], "key": ["x", "y"]})
        if is_unusable_text(odd):
            with pytest.raises(ValueError, match="'person' has blank values"):
                bound_and_aggregate(frame, person="person", keys=["key"], max_groups=1, max_rows=1, salt=bytes(16))
        else:
            assert bound_and_aggregate(frame, person="person", keys=["key"], max_groups=1, max_rows=1,
                                       salt=bytes(16)).rows == [1, 1]
