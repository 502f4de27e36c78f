"""Per-person bounding of grouped tables: the documented digest, a reference model, and its properties.

The reference model below re-implements the documented rule in plain Python
(its own encoding, hashlib, sorting by digest bytes) and the engine must match
it exactly. Bounding is per person, so aggregates are additive over persons:
``agg(A + B) = agg(A) + agg(B)`` for disjoint sets of persons, which is how
the tests show that one person's choice never depends on another's rows.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from securedp import ChaChaSource
from securedp.bounding.digest import EXAMPLE, draw_salt, hashlib_digests, hex_digests, message, polars_hash_digests
from securedp.engines.polars.bounding import bound_and_aggregate, bound_and_aggregate_columns

SALT = hashlib.sha256(b"bounding-tests").digest()[:16]
Table = dict[tuple, list[int]]  # key -> [rows, persons, total, total_squares]


def field(value: object) -> str:
    text = str(value)
    return f"{len(text.encode())}:{text},"


def reference(rows: list[tuple], k: int, m: int, salt: bytes) -> Table:
    """The documented rule, row by row: (person, key, units) triples; a tuple key has one field per column."""
    def digest(*values: object) -> bytes:
        return hashlib.sha256((salt.hex() + "".join(field(v) for v in values)).encode()).digest()

    by_person: dict[object, dict[object, list[int]]] = defaultdict(lambda: defaultdict(list))
    for person, key, units in rows:
        by_person[person][key].append(units)
    out: Table = {}
    for person, groups in by_person.items():
        for key in sorted(groups, key=lambda g: digest(person, *(g if isinstance(g, tuple) else (g,))))[:k]:
            fields = key if isinstance(key, tuple) else (key,)
            kept = sorted(groups[key], key=lambda u: digest(person, *fields, u))[:m]
            cell = out.setdefault(fields, [0, 0, 0, 0])
            cell[0] += len(kept)
            cell[1] += 1
            cell[2] += sum(kept)
            cell[3] += sum(u * u for u in kept)
    return out


def engine(data: object, k: int, m: int, salt: bytes = SALT) -> Table:
    agg = bound_and_aggregate(data, person="person", keys=["key"], units="units", max_groups=k, max_rows=m,
                              salt=salt, squares=True)
    assert agg.total is not None and agg.total_squares is not None
    cells = zip(agg.keys.iter_rows(), agg.rows, agg.persons, agg.total, agg.total_squares, strict=True)
    return {key: [r, p, t, s] for key, r, p, t, s in cells}


def frame(rows: list[tuple]) -> pl.DataFrame:
    person, key, units = zip(*rows, strict=True) if rows else ((), (), ())
    return pl.DataFrame({"person": list(person), "key": list(key), "units": list(units)},
                        schema={"person": pl.String, "key": pl.Int64, "units": pl.Int64})


def add(a: Table, b: Table) -> Table:
    out = {key: list(v) for key, v in a.items()}
    for key, v in b.items():
        out[key] = [x + y for x, y in zip(out.get(key, [0, 0, 0, 0]), v, strict=True)]
    return out


UNITS = st.sampled_from([-(2**63), -(2**62) - 3, -7, -1, 0, 1, 2, 5, 2**32, 2**62 + 1, 2**63 - 1])
ROW = st.tuples(st.sampled_from(["ann", "bob", "cé", "d 4", "-1"]), st.integers(-2, 4), UNITS)
TABLES = st.lists(ROW, min_size=1, max_size=40)
LIMITS = st.tuples(st.integers(1, 3), st.integers(1, 3))


def test_documented_example_digest() -> None:
    salt, person, (key,), units = EXAMPLE["salt"], EXAMPLE["person"], EXAMPLE["key"], EXAMPLE["units"]
    one = pl.DataFrame({"p": [person], "k": [key], "u": [units]})
    texts = [pl.col("p"), pl.col("k").cast(pl.String), pl.col("u").cast(pl.String)]
    assert one.select(message(salt, texts[:2])).item() == EXAMPLE["group_message"]
    assert one.select(message(salt, texts)).item() == EXAMPLE["row_message"]
    expected = "27bed1af108d46fefcb98ebb866c3ac599f0bb1fcd1404240fce32af887b970b"  # hashlib, by hand
    assert hashlib.sha256(EXAMPLE["row_message"].encode()).hexdigest() == expected
    assert hex_digests(one, salt, ["p", "k", "u"]).to_list() == [expected]


def test_hashlib_and_polars_hash_give_identical_digests() -> None:
    pytest.importorskip("polars_hash")
    rows = frame([(f"p{i}é", i * 7 - 50, -(i**5)) for i in range(1001)])
    text = message(SALT, [pl.col("person"), pl.col("key").cast(pl.String), pl.col("units").cast(pl.String)])
    assert polars_hash_digests(rows, text).to_list() == hashlib_digests(rows.select(text).to_series()).to_list()


@settings(max_examples=150, deadline=None)
@given(TABLES, LIMITS)
def test_engine_matches_the_reference_rule(rows: list[tuple], limits: tuple[int, int]) -> None:
    k, m = limits
    ours = engine(frame(rows), k, m)
    assert ours == reference(rows, k, m, SALT)
    persons = {p for p, _, _ in rows}
    assert sum(cell[1] for cell in ours.values()) <= k * len(persons)  # at most k groups per person
    assert all(cell[0] <= m * cell[1] for cell in ours.values())  # at most m rows per person and group


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["ann", "bob", "cé"]), st.integers(-1, 2), UNITS, st.integers(-3, 3)),
                min_size=1, max_size=40), LIMITS)
def test_one_pass_over_several_columns_keeps_each_columns_own_rows(rows: list[tuple], limits: tuple[int, int]) -> None:
    """Several units columns of the same rows in one pass: each column's cells are the rule's for that
    column alone (its own row digests), with or without the sums of squares."""
    k, m = limits
    data = pl.DataFrame({"person": [r[0] for r in rows], "key": [r[1] for r in rows], "u": [r[2] for r in rows],
                         "v": [r[3] for r in rows]}, schema={"person": pl.String, "key": pl.Int64, "u": pl.Int64,
                                                              "v": pl.Int64})
    both = bound_and_aggregate_columns(data, person="person", keys=["key"], units=["u", "v"], max_groups=k,
                                       max_rows=m, salt=SALT, squares=[True, False])
    for agg, column, squares in zip(both, ["u", "v"], [True, False], strict=True):
        alone = bound_and_aggregate(data, person="person", keys=["key"], units=column, max_groups=k, max_rows=m,
                                    salt=SALT, squares=squares)
        assert agg.keys.equals(alone.keys)
        assert (agg.rows, agg.persons, agg.total, agg.total_squares) == (alone.rows, alone.persons, alone.total,
                                                                          alone.total_squares)
        expected = reference([(p, key, r[2] if column == "u" else r[3]) for r in rows for p, key in [r[:2]]], k, m,
                             SALT)
        cells = zip(agg.keys.iter_rows(), agg.rows, agg.persons, agg.total or [], strict=True)
        assert {key: [r, n, t] for key, r, n, t in cells} == {key: v[:3] for key, v in expected.items()}
        assert (agg.total_squares is None) == (not squares)


@pytest.mark.parametrize("heads_by", ["cpu", "polars-hash"])
def test_equal_digest_heads_fall_back_to_the_full_digest(monkeypatch: pytest.MonkeyPatch, heads_by: str) -> None:
    """When two candidates of one person share their first 64 bits, the full digest decides (the heads
    made equal on the path that computes them: the CPU extension, or polars-hash without it)."""
    import numpy as np

    import securedp.engines.polars.smallest as smallest

    def zeros(frame: pl.DataFrame, *_: object) -> pl.Series:
        return pl.Series("_head", [0] * frame.height, dtype=pl.UInt64)

    def cpu_zeros(_prefix: bytes, _middles: pl.Series, middle_of: np.ndarray, *_: object) -> np.ndarray:
        return np.zeros(len(middle_of), dtype=np.uint64)

    # keys of one person, rows of one (person, key)
    monkeypatch.setattr(smallest, "cpu_heads", cpu_zeros if heads_by == "cpu" else lambda *_: None)
    monkeypatch.setattr(smallest, "message_heads", zeros)
    rows = [(f"p{i % 3}", (i * 5) % 7, (i * 31) % 13 - 6) for i in range(90)]
    assert engine(frame(rows), 2, 2) == reference(rows, 2, 2, SALT)
    ints = [(i % 3 - 2**62, (i * 5) % 7, (i * 31) % 13 - 6) for i in range(90)]
    assert engine(int_frame(ints), 2, 2) == reference(ints, 2, 2, SALT)


def int_frame(rows: list[tuple], person: pl.DataType = pl.Int64, key: pl.DataType = pl.Int64) -> pl.DataFrame:
    person_, key_, units = zip(*rows, strict=True) if rows else ((), (), ())
    return pl.DataFrame({"person": list(person_), "key": list(key_), "units": list(units)},
                        schema={"person": person, "key": key, "units": pl.Int64})


WIDE = st.sampled_from([-(2**63), -(2**62) - 1, -(2**31), -1, 0, 1, 2, 3, 2**31 - 1, 2**31, 2**62, 2**63 - 1])
NARROW = st.integers(-3, 5)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.one_of(NARROW, WIDE), st.one_of(NARROW, WIDE), UNITS), min_size=1, max_size=40), LIMITS)
def test_integer_ids_and_keys_match_the_reference(rows: list[tuple], limits: tuple[int, int]) -> None:
    """Integer persons and keys are coded by subtraction when their span is small and by rank when it
    is not (:mod:`securedp.engines.polars.pair_codes`); the kept rows are the documented rule's either way."""
    assert engine(int_frame(rows), *limits) == reference(rows, *limits, SALT)


def test_unsigned_ids_above_two_to_the_63() -> None:
    rows = [(2**64 - 1 - (i % 4), i % 5, i) for i in range(40)] + [(0, 1, 7)]
    assert engine(int_frame(rows, person=pl.UInt64, key=pl.UInt8), 2, 1) == reference(rows, 2, 1, SALT)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["ann", "bob", "cé", "eve"]), st.one_of(NARROW, WIDE),
                          st.sampled_from(["x", "y", "zé", "ab"]), st.integers(-3, 3)), min_size=1, max_size=40),
       LIMITS, st.booleans(), st.booleans(), st.booleans(), st.randoms(use_true_random=False))
def test_two_key_columns_match_the_reference(rows: list[tuple], limits: tuple[int, int], by_tuple: bool,
                                             colliding: bool, known: bool, rnd) -> None:
    """Keys of several columns, coded by mixed radix, or (``by_tuple``: as when the radix would not fit
    in 63 bits) by the rank of the distinct key tuples. Text ids and keys are coded by a keyed hash
    checked against the texts; ``colliding`` forces distinct texts to share a hash (a text's hash is its
    length in bytes), so those columns are coded by rank instead; ``known`` gives the public keys (the
    keys present, another one and their order shuffled), so the text key column is coded by its position
    among them. Kept rows and key order are the rule's."""
    import securedp.engines.polars.pair_codes as pair_codes

    data = pl.DataFrame({"person": [r[0] for r in rows], "k1": [r[1] for r in rows], "k2": [r[2] for r in rows],
                         "units": [r[3] for r in rows]}, schema={"person": pl.String, "k1": pl.Int64,
                                                                "k2": pl.String, "units": pl.Int64})
    k, m = limits
    with pytest.MonkeyPatch.context() as patch:
        if by_tuple:
            patch.setattr(pair_codes, "_RADIX_LIMIT", 2)
        if colliding:
            patch.setattr(pair_codes, "keyed_hash", lambda column, seed: column.str.len_bytes().cast(pl.UInt64))
        public = [*sorted({(r[1], r[2]) for r in rows}), (10**9, "never")]
        rnd.shuffle(public)
        known_keys = pl.DataFrame(public, schema={"k1": pl.Int64, "k2": pl.String}, orient="row") if known else None
        agg = bound_and_aggregate(data, person="person", keys=["k1", "k2"], units="units", max_groups=k,
                                  max_rows=m, salt=SALT, squares=True, known_keys=known_keys)
    assert agg.total is not None and agg.total_squares is not None
    ours = {key: [r, p, t, q] for key, r, p, t, q in zip(agg.keys.iter_rows(), agg.rows, agg.persons, agg.total,
                                                          agg.total_squares, strict=True)}
    assert list(ours) == sorted(ours)
    assert ours == reference([(p, (k1, k2), u) for p, k1, k2, u in rows], k, m, SALT)


@pytest.fixture(params=["extension", "join"])
def numbering(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each hashed-codes test on both paths: the C extension's numbering (skipped where it is not built) and the
    Polars join that stands in for it."""
    import securedp.engines.polars.pair_codes as pair_codes

    if request.param == "join":
        monkeypatch.setattr(pair_codes, "_EXTENSION", None)
    elif pair_codes._EXTENSION is None:
        pytest.skip("the C extension is not built")
    return str(request.param)


def test_hashed_text_codes_decode_to_their_texts_or_are_refused(numbering: str) -> None:
    """The checked hash codes of a text column: each code decodes to its row's text, one code per
    distinct text; a hash shared by distinct texts gives no codes (the caller ranks instead)."""
    from securedp.engines.polars.pair_codes import _hashed_codes

    texts = pl.Series("t", ["b", "a", "b", "ab", "cé", "a", "ab"] * 3)
    codes, values = _hashed_codes(texts, 12345) or (None, None)
    assert codes is not None and values is not None
    assert values.gather(codes).to_list() == texts.to_list()
    assert sorted(values.to_list()) == ["a", "ab", "b", "cé"]
    many = pl.Series("t", [f"person-{(i * 7919) % 50_000}" for i in range(200_000)])  # one numbering at scale
    coded = _hashed_codes(many, 99)
    assert coded is not None and coded[1].gather(coded[0]).equals(many) and len(coded[1]) == 50_000
    import securedp.engines.polars.pair_codes as pair_codes
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pair_codes, "keyed_hash", lambda column, seed: column.str.len_bytes().cast(pl.UInt64))
        assert _hashed_codes(texts, 12345) is None


@pytest.mark.parametrize("where", [0, 150_000, 299_999])
def test_one_shared_hash_anywhere_in_a_long_column_is_found(where: int, numbering: str) -> None:
    """The check runs in morsels on Polars' streaming engine: a single row whose text shares its hash
    with another text, at the start, the middle or the very end of 300,000 rows, still refuses the codes."""
    import securedp.engines.polars.pair_codes as pair_codes
    from securedp.engines.polars.pair_codes import _hashed_codes

    texts = [f"person-{i % 40_000}" for i in range(300_000)]
    texts[where] = "late"
    column = pl.Series("t", texts)

    def colliding(column: pl.Expr, seed: int) -> pl.Expr:  # "late" takes the hash of "person-7"
        return pl.when(column == "late").then(pl.lit("person-7").hash(seed)).otherwise(column.hash(seed))

    assert _hashed_codes(column, 5) is not None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pair_codes, "keyed_hash", colliding)
        assert _hashed_codes(column, 5) is None


@settings(max_examples=100, deadline=None)
@given(TABLES, TABLES, LIMITS, st.randoms(use_true_random=False))
def test_one_person_never_depends_on_others(mine: list[tuple], others: list[tuple], limits: tuple[int, int],
                                            rnd) -> None:
    k, m = limits
    mine = [("me", key, u) for _, key, u in mine]
    alone = engine(frame(mine), k, m)
    together = mine + others
    rnd.shuffle(together)
    assert engine(frame(together), k, m) == add(alone, engine(frame(others), k, m))


@settings(max_examples=50, deadline=None)
@given(TABLES, LIMITS, st.randoms(use_true_random=False))
def test_row_order_does_not_matter(rows: list[tuple], limits: tuple[int, int], rnd) -> None:
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    assert engine(frame(shuffled), *limits) == engine(frame(rows), *limits)


def test_same_result_from_pandas_polars_pyarrow_and_lazy() -> None:
    rows = [(f"p{i % 7}", i % 5, (i * 7919) % 101 - 50) for i in range(200)]
    polars_frame = frame(rows)
    expected = engine(polars_frame, 2, 3)
    assert expected == reference(rows, 2, 3, SALT)
    for data in (polars_frame.to_pandas(), polars_frame.to_arrow(), polars_frame.lazy(),
                 pd.DataFrame({"person": pd.Categorical([r[0] for r in rows]), "key": [r[1] for r in rows],
                               "units": [r[2] for r in rows]})):
        assert engine(data, 2, 3) == expected


def test_salt_comes_from_the_source_and_replays() -> None:
    a, b = draw_salt(ChaChaSource(bytes(32))), draw_salt(ChaChaSource(bytes(32)))
    assert a == b and len(a) == 16
    rows = [(f"p{i % 3}", i % 6, i) for i in range(60)]
    assert engine(frame(rows), 1, 2, a) == engine(frame(rows), 1, 2, b) == reference(rows, 1, 2, a)


def test_no_group_by_and_no_units() -> None:
    rows = [(f"p{i % 4}", i % 3, i) for i in range(30)]
    agg = bound_and_aggregate(frame(rows), person="person", max_groups=1, max_rows=2, salt=SALT)
    assert agg.keys.width == 0 and agg.rows == [8] and agg.persons == [4] and agg.total is None
    agg = bound_and_aggregate(frame(rows), person="person", keys=["key"], max_groups=5, max_rows=1, salt=SALT)
    assert agg.rows == agg.persons and sum(agg.persons) == 12


@pytest.mark.parametrize(
    "data, error, match",
    [
        (pl.DataFrame({"person": ["a", None], "key": [1, 2], "units": [1, 2]}), ValueError, "'person' has missing"),
        (pl.DataFrame({"person": ["a", "b"], "key": [1.5, 2.0], "units": [1, 2]}), TypeError, "'key'"),
        (pl.DataFrame({"person": ["a", "b"], "key": [True, False], "units": [1, 2]}), TypeError, "'key'"),
        (pl.DataFrame({"person": ["a", "b"], "key": [1, 2], "units": [1.0, 2.0]}), TypeError, "'units'"),
        (pl.DataFrame({"person": ["a", "b"], "key": [1, 2], "units": [1, None]}), ValueError, "'units' has missing"),
        (pl.DataFrame({"person": ["a", "b"], "units": [1, 2]}), ValueError, "'key' is not in the table"),
        ([("a", 1, 2)], TypeError, "polars, pandas or pyarrow"),
    ],
)
def test_bad_tables_are_refused(data: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        engine(data, 1, 1)


@pytest.mark.parametrize("k, m, error", [(0, 1, ValueError), (1, 0, ValueError), (True, 1, TypeError),
                                         (1, "1.5", ValueError)])
def test_bad_limits_are_refused(k: object, m: object, error: type) -> None:
    with pytest.raises(error):
        bound_and_aggregate(frame([("a", 1, 1)]), person="person", keys=["key"], units="units",
                            max_groups=k, max_rows=m, salt=SALT)


def test_pyarrow_table_input() -> None:
    table = pa.table({"person": [1, 1, 2], "key": ["x", "y", "x"], "units": [3, 4, 5]})
    agg = bound_and_aggregate(table, person="person", keys=["key"], units="units", max_groups=1, max_rows=1,
                              salt=SALT)
    assert sum(agg.persons) == 2 and agg.keys.schema["key"] == pl.String


def test_without_polars_hash_hashlib_keeps_the_same_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the optional plugin (and without the CPU extension) every digest (group heads, row heads,
    full digests) comes from hashlib."""
    import securedp.bounding.digest as digest
    import securedp.engines.polars.smallest as smallest

    rows = [(i % 5, (i * 7) % 9, (i * 31) % 17 - 8) for i in range(300)]
    with_plugin = engine(int_frame(rows), 2, 2)
    monkeypatch.setattr(smallest, "cpu_heads", lambda *_: None)
    monkeypatch.setattr(digest, "_polars_hash", None)
    assert engine(int_frame(rows), 2, 2) == with_plugin == reference(rows, 2, 2, SALT)


def test_equal_rows_tie_without_the_full_digests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows of one (person, key) with equal units have one message: their tie is broken by position
    (every aggregate is the same whichever is kept), and no full digest is computed for it."""
    import securedp.engines.polars.smallest as smallest

    def refused(*_: object) -> pl.Series:
        raise AssertionError("equal messages must not need the full digests")

    monkeypatch.setattr(smallest, "message_digests", refused)
    rows = [(f"p{i % 4}", i % 2, (i // 8) % 3) for i in range(96)]  # 12 rows per pair, 3 distinct units
    assert engine(frame(rows), 2, 5) == reference(rows, 2, 5, SALT)
