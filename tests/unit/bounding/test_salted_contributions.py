"""The salted contribution rule of the single-column releases (securedp.mechanisms.contributions).

A person with more than ``m = max_contributions`` rows keeps the ``m`` rows whose digests
``SHA-256(hex(salt) || field(person) || field(u))`` are smallest (``u`` the row's lattice units, or
the index of its histogram bin), with a 16-byte salt drawn first from the release's source.
"""

from __future__ import annotations

import csv
import hashlib
import threading
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from _salted_rule import kept_rows
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp
from securedp import ChaChaSource
from securedp.bounding import messages
from securedp.bounding.messages import draw_salt
from securedp.mechanisms.contributions import bound_rows
from securedp.mechanisms.noise import privacy_cost
from securedp.mechanisms.records import LatticeColumn
from securedp.mechanisms.release import encode_input
from securedp.mechanisms.statistic import Pending
from securedp.mechanisms.sum import Sum, SumAggregate

SALT = bytes(range(16))
SEED = bytes([9]) * 32
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)
ROWS = st.lists(st.tuples(st.integers(0, 6), st.integers(-3, 9)), max_size=40)


def kept(rows: list[tuple[int, int]], m: int, salt: bytes = SALT, dtype: type = np.int64) -> list[tuple[int, int]]:
    """The (person, units) rows the library keeps, as a sorted list (rows with equal units are interchangeable)."""
    ids = np.empty(len(rows), dtype=dtype)
    ids[:] = [p for p, _ in rows]
    units = np.array([u for _, u in rows], dtype=np.int64)
    rule = bound_rows(len(rows), ids, m)
    assert rule is not None
    pending = rule.choices(units)
    chosen = pending.kept(salt)
    out = [r for r, s in zip(rows, rule.settled, strict=True) if s]
    out += [(int(p), int(u)) for p, u, k in zip(pending.persons, pending.values, chosen, strict=True) if k]
    return sorted(out)


# --- the message format: one definition, two encoders ---------------------------------------------

def test_digest_known_answer() -> None:
    """``hex(salt) || 2:12, || 3:250,`` for person 12 and 250 units, checked against hashlib (and sha256sum)."""
    text = messages.message_text(SALT, [12, 250])
    assert text == SALT.hex() + "2:12,3:250,"
    expected = "040318ddfb10532dd43f7503c8cf1ac929886290d39c16ab1ea8989200362cc4"
    assert hashlib.sha256(text.encode()).hexdigest() == expected
    assert messages.digest(SALT, [12, 250]).hex() == expected
    assert messages.field_text("é") == "2:é,"  # the length counts UTF-8 bytes


def test_documented_example_from_the_bytes_encoder() -> None:
    from securedp.bounding.digest import EXAMPLE

    assert messages.message_text(EXAMPLE["salt"], [EXAMPLE["person"], *EXAMPLE["key"]]) == EXAMPLE["group_message"]
    assert messages.message_text(EXAMPLE["salt"], [EXAMPLE["person"], *EXAMPLE["key"], EXAMPLE["units"]]) == \
        EXAMPLE["row_message"]


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 2**63 - 1), st.integers(-(2**63), 2**63 - 1)), min_size=1, max_size=20))
def test_bytes_encoder_and_polars_expression_give_identical_digests(rows: list[tuple[int, int]]) -> None:
    pl = pytest.importorskip("polars")
    from securedp.bounding.digest import hex_digests

    frame = pl.DataFrame({"person": [p for p, _ in rows], "units": [u for _, u in rows]},
                         schema={"person": pl.Int64, "units": pl.Int64})
    assert hex_digests(frame, SALT, ["person", "units"]).to_list() == [
        messages.digest(SALT, [p, u]).hex() for p, u in rows]


def test_bad_salt_and_field_types_are_refused() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        messages.message_text(b"short", [1])
    with pytest.raises(TypeError):
        messages.field_text(True)
    with pytest.raises(TypeError):
        messages.field_text(1.5)  # type: ignore[arg-type]


# --- the rule --------------------------------------------------------------------------------------

@SETTINGS
@given(ROWS, st.integers(1, 3))
def test_the_rule_is_the_reference(rows: list[tuple[int, int]], m: int) -> None:
    want = kept_rows(SALT, [p for p, _ in rows], [u for _, u in rows], m)
    assert kept(rows, m) == sorted(rows[i] for i in want)


def test_many_pairs_are_hashed_by_polars_with_the_same_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    """From ``POLARS_FROM`` distinct pairs on, digests come from Polars; the kept entries are the same."""
    pytest.importorskip("polars_hash")
    persons = np.array([i % 97 for i in range(3000)] + [2**62, 2**62, -5, -5, -5], dtype=np.int64)
    values = np.array([(i * 7919) % 211 - 100 for i in range(3000)] + [1, 1, 0, 0, 2], dtype=np.int64)
    by_hashlib = messages.smallest_per_person(SALT, persons, values, 3)
    from securedp.bounding import digest

    calls, original = [], digest.digest_words
    monkeypatch.setattr(digest, "digest_words", lambda *a: calls.append(1) or original(*a))
    monkeypatch.setattr(messages, "POLARS_FROM", 1)
    assert messages.smallest_per_person(SALT, persons, values, 3).tolist() == by_hashlib.tolist()
    assert calls  # the Polars path ran


def test_pairs_sharing_leading_digest_bits_are_ordered_by_the_full_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    persons = np.array([i % 7 for i in range(500)], dtype=np.int64)
    values = np.array([(i * 31) % 23 for i in range(500)], dtype=np.int64)
    expected = messages.smallest_per_person(SALT, persons, values, 4)
    original = messages._digest_words

    def shared_first_word(*args: object) -> np.ndarray:
        words = np.array(original(*args), dtype=np.uint64)  # type: ignore[arg-type]
        # every pair now shares its leading 64 bits; the order is carried by the words after them
        return np.column_stack([np.zeros(len(words), dtype=np.uint64), words[:, :3]])

    monkeypatch.setattr(messages, "_digest_words", shared_first_word)
    assert messages.smallest_per_person(SALT, persons, values, 4).tolist() == expected.tolist()


@SETTINGS
@given(ROWS, st.integers(1, 3))
def test_no_person_exceeds_the_bound_and_persons_within_it_keep_everything(rows: list[tuple[int, int]],
                                                                           m: int) -> None:
    counts = Counter(p for p, _ in rows)
    kept_counts = Counter(p for p, _ in kept(rows, m))
    assert all(kept_counts[p] == min(c, m) for p, c in counts.items())


@SETTINGS
@given(ROWS, ROWS, st.integers(1, 3), st.randoms(use_true_random=False))
def test_one_persons_rows_depend_on_nothing_else(rows: list[tuple[int, int]], others: list[tuple[int, int]], m: int,
                                                 rnd) -> None:
    """Person 0's kept rows are the same whatever the other persons' rows and whatever the row order."""
    mine = [(0, u) for _, u in rows]
    strangers = [(p + 1, u) for p, u in others]
    alone = [r for r in kept(mine, m) if r[0] == 0]
    mixed = mine + strangers
    rnd.shuffle(mixed)
    assert [r for r in kept(mixed, m) if r[0] == 0] == alone


@SETTINGS
@given(ROWS, st.integers(1, 3))
def test_huge_person_ids_follow_the_same_rule(rows: list[tuple[int, int]], m: int) -> None:
    big = [(p + 2**64, u) for p, u in rows]  # past int64: an object array of Python ints
    want = kept_rows(SALT, [p for p, _ in big], [u for _, u in big], m)
    assert kept(big, m, dtype=object) == sorted(big[i] for i in want)


def test_the_same_rows_as_the_table_engine_with_no_keys() -> None:
    """One definition: Sum's pending rows, resolved, equal bound_and_aggregate's with no key columns."""
    pl = pytest.importorskip("polars")
    from securedp.engines.polars.bounding import bound_and_aggregate, bound_and_count_units

    gen = np.random.default_rng(5)  # test data only
    persons = gen.integers(0, 40, 600)
    units = gen.integers(-50, 50, 600)
    frame = pl.DataFrame({"person": persons, "units": units})
    for m in (1, 2, 5):
        column = LatticeColumn.of(bounds=(-50, 50), lattice=1, max_contributions=m, missing="raise", fill=None)
        pending = Sum(privacy_cost(1, None), column).aggregate(units.tolist(), persons.tolist())
        assert isinstance(pending, Pending)
        table = bound_and_aggregate(frame, person="person", units="units", max_groups=1, max_rows=m, salt=SALT)
        assert pending.resolve(SALT) == SumAggregate(table.rows[0], table.total[0])
        counted = bound_and_count_units(frame, person="person", units="units", max_groups=1, max_rows=m, salt=SALT)
        settled, rows = column.units(units.tolist(), persons.tolist())
        assert rows is not None
        ours = Counter(settled.tolist()) + Counter(rows.chosen(SALT).tolist())
        assert ours == Counter(dict(zip(counted.points[0], counted.counts[0], strict=True)))


# --- releases: the salt first, only with ids -------------------------------------------------------

STATISTICS = [
    (securedp.sum, {"bounds": (0, 10), "lattice": 1}),
    (securedp.mean, {"bounds": (0, 10), "lattice": 1}),
    (securedp.variance, {"bounds": (0, 10), "lattice": 1}),
    (securedp.median, {"bounds": (0, 10), "lattice": 1}),
    (securedp.histogram, {"bins": [0, 5, 10]}),
]


@pytest.mark.parametrize("release, options", STATISTICS, ids=lambda x: getattr(x, "__name__", ""))
def test_a_release_with_ids_draws_the_salt_first_and_replays(release, options) -> None:
    data, ids = [1, 9, 3, 7, 5, 2], [4, 4, 4, 5, 5, 6]
    first = release(data, epsilon=1, ids=ids, max_contributions=2, rng=ChaChaSource(SEED), **options)
    again = release(data, epsilon=1, ids=ids, max_contributions=2, rng=ChaChaSource(SEED), **options)
    assert first.value == again.value and first.input_commitment is not None
    salt = draw_salt(ChaChaSource(SEED))
    chosen = kept_rows(salt, ids, data if "bins" not in options else [int(v >= 5) for v in data], 2)
    after_salt = ChaChaSource(SEED)
    after_salt.random_bytes(messages.SALT_BYTES)
    reference = release([data[i] for i in chosen], epsilon=1, max_contributions=2, rng=after_salt, **options)
    assert first.value == reference.value
    # with ids the salt is drawn even when nobody is over the bound: the noise comes after it
    within = release(data, epsilon=1, ids=list(range(6)), max_contributions=2, rng=ChaChaSource(SEED), **options)
    after_salt = ChaChaSource(SEED)
    after_salt.random_bytes(messages.SALT_BYTES)
    assert within.value == release(data, epsilon=1, max_contributions=2, rng=after_salt, **options).value


def test_a_count_draws_no_salt() -> None:
    with_ids = securedp.count([1, 2, 3], ids=[1, 1, 2], epsilon=1, rng=ChaChaSource(SEED))
    assert with_ids.value == securedp.count([1, 2], epsilon=1, rng=ChaChaSource(SEED)).value


def test_each_execution_commits_to_its_own_aggregate() -> None:
    """Executions of one prepared release, even interleaved from threads, never share an aggregate."""
    data, ids = list(range(40)), [i % 4 for i in range(40)]
    prepared = securedp.prepare_sum(data, bounds=(0, 100), lattice=1, epsilon=1, ids=ids, max_contributions=3)
    assert prepared.input_bytes is None  # the aggregate is known only per execution
    sources = [ChaChaSource(SEED).substream(str(i)) for i in range(8)]
    done: dict[int, object] = {}

    def run(i: int) -> None:
        done[i] = prepared.executed(sources[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(8):
        salt = draw_salt(ChaChaSource(SEED).substream(str(i)))
        rows = kept_rows(salt, ids, data, 3)
        expected = encode_input("sum", {"rows": len(rows), "sum_units": sum(data[j] for j in rows)})
        assert done[i].input_bytes() == expected  # type: ignore[attr-defined]


def test_audit_replay_reproduces_an_id_bounded_release(tmp_path: Path) -> None:
    from securedp.audit import AuditLog
    from securedp.audit.query import Query
    from securedp.audit.replay import replay_log
    from securedp.audit.table import read_column

    def write(path: Path, rows: list[tuple[int, int]]) -> Path:
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["x", "id"])
            writer.writerows(rows)
        return path

    rows = [(v, v % 3) for v in range(30)]
    data = write(tmp_path / "d.csv", rows)
    query = Query("sum", "x", Fraction(1, 10), bounds=(Fraction(0), Fraction(100)), max_contributions=2,
                  id_column="id")
    stream = ChaChaSource(SEED).substream("release-0")
    release = query.prepare(read_column(data, query.column, query.id_column)).execute(stream)
    AuditLog(tmp_path / "a.jsonl").append({**release.record(), "query": query.to_json()})
    (result,) = replay_log(tmp_path / "a.jsonl", SEED, data)
    assert result.ok and result.data_matches
    (moved,) = replay_log(tmp_path / "a.jsonl", SEED, write(tmp_path / "e.csv", [*rows, (50, 99)]))
    assert not moved.ok and moved.data_matches is False
