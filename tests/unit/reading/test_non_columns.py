"""A text or a set is no column of records: refused by its type, before anything is read or charged.

Since every release became a table, a one-column release took ``securedp.sum("12", ...)`` as the
column of the characters ``"1"`` and ``"2"`` (and ``b"12"`` as the bytes 49 and 50), and a set as a
column in its iteration order (for text, a different order in every process: ids and values could
be paired otherwise by a replay). Both are now refused, as one-column data, as ids and as a column of
a table given as a mapping.
"""

from __future__ import annotations

from typing import Any

import pytest

import securedp
from securedp import ChaChaSource, Session
from securedp.tables import Count, Sum

NON_COLUMNS: dict[str, Any] = {
    "str": "12", "bytes": b"12", "bytearray": bytearray(b"12"), "set": {1.0, 2.0}, "frozenset": frozenset({1.0, 2.0}),
    "dict keys": {1.0: 0, 2.0: 0}.keys(),
}
WORDS = {"str": "a text is one value", "bytes": "a text is one value", "bytearray": "a text is one value",
         "set": "has no order", "frozenset": "has no order", "dict keys": "has no order"}


@pytest.mark.parametrize("kind", sorted(NON_COLUMNS))
@pytest.mark.parametrize("release", ["sum", "count", "median", "mean"])
def test_refused_as_one_column_data(kind: str, release: str) -> None:
    options: dict[str, Any] = {} if release == "count" else {"bounds": (0, 5)}
    with pytest.raises(TypeError, match=WORDS[kind]):
        getattr(securedp, release)(NON_COLUMNS[kind], epsilon=1, rng=ChaChaSource(bytes(32)), **options)


@pytest.mark.parametrize("kind", sorted(NON_COLUMNS))
def test_refused_as_ids(kind: str) -> None:
    with pytest.raises(TypeError, match=f"ids must be a column.*{WORDS[kind]}"):
        securedp.sum([1.0, 2.0], ids=NON_COLUMNS[kind], bounds=(0, 5), epsilon=1, rng=ChaChaSource(bytes(32)))


@pytest.mark.parametrize("kind", sorted(NON_COLUMNS))
@pytest.mark.parametrize("role", ["id", "v"])
def test_refused_as_a_column_of_a_mapping_and_nothing_is_charged(kind: str, role: str) -> None:
    table = {"id": [1, 2], "v": [1.0, 2.0]}
    table[role] = NON_COLUMNS[kind]
    session = Session(epsilon=5, rng=ChaChaSource(bytes(32)))
    with pytest.raises(TypeError, match=f"column '{role}' must be a column.*{WORDS[kind]}"):
        session.table(table, aggregations=[Count(), Sum("v", (0, 5))], id_column="id", epsilon=1)
    assert session.spent == 0


def test_a_list_of_texts_and_a_tuple_are_columns() -> None:
    count = securedp.count(["12", "ab"], epsilon=10**30, rng=ChaChaSource(bytes(32)))
    assert count.value == 2
    total = securedp.sum((1.0, 2.0), ids=("a", "b"), bounds=(0, 5), epsilon=10**30, rng=ChaChaSource(bytes(32)))
    assert total.value == 3
