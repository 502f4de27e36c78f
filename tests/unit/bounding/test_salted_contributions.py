"""The salted contribution rule of the releases of one column (the one-cell table of the column).

A person with more than ``m = max_contributions`` rows keeps the ``m`` rows whose digests
``SHA-256(hex(salt) || field(person) || field(u))`` are smallest (``u`` the row's lattice units, or
the index of its histogram bin), with a 16-byte salt drawn first from the release's source. The
in-memory engine keeps them (:mod:`securedp.engines.polars.bounding`, with no key column); the
reference is the rule written again with hashlib (``tests/unit/_salted_rule.py``).
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
from securedp.bounding import per_person as choice
from securedp.bounding.messages import draw_salt

SALT = bytes(range(16))
SEED = bytes([9]) * 32
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)
ROWS = st.lists(st.tuples(st.integers(0, 6), st.integers(-3, 9)), max_size=40)


def kept(rows: list[tuple[int, int]], m: int, salt: bytes = SALT, text: bool = False) -> Counter[int]:
    """The multiset of the units the in-memory engine keeps of ``rows`` ``(person, units)`` (no key column)."""
    import polars as pl

    from securedp.engines.polars.bounding import bound_and_count_units

    persons = [str(p) if text else p for p, _ in rows]
    frame = pl.DataFrame({"person": persons, "units": [u for _, u in rows]},
                         schema={"person": pl.String if text else pl.Int64, "units": pl.Int64})
    counted = bound_and_count_units(frame, person="person", units="units", max_groups=1, max_rows=m, salt=salt)
    return Counter(dict(zip(counted.points[0], counted.counts[0], strict=True))) if counted.points else Counter()


def reference(rows: list[tuple[int, int]], m: int, salt: bytes = SALT) -> Counter[int]:
    """The multiset of the units the rule keeps, by the reference."""
    chosen = kept_rows(salt, [p for p, _ in rows], [u for _, u in rows], m)
    return Counter(rows[i][1] for i in chosen)


def per_person(rows: list[tuple[int, int]]) -> dict[int, list[tuple[int, int]]]:
    out: dict[int, list[tuple[int, int]]] = {}
    for row in rows:
        out.setdefault(row[0], []).append(row)
    return out


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
    assert kept(rows, m) == reference(rows, m)
    for mine in per_person(rows).values():  # and person by person: the rule of each person's own rows
        assert kept(mine, m) == reference(mine, m)


def test_many_pairs_are_hashed_by_polars_with_the_same_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    """From ``POLARS_FROM`` distinct pairs on, digests come from Polars; the kept entries are the same."""
    pytest.importorskip("polars_hash")
    persons = np.array([i % 97 for i in range(3000)] + [2**62, 2**62, -5, -5, -5], dtype=np.int64)
    values = np.array([(i * 7919) % 211 - 100 for i in range(3000)] + [1, 1, 0, 0, 2], dtype=np.int64)
    by_hashlib = choice.smallest_per_person(SALT, persons, values, 3)
    from securedp.bounding import digest

    calls, original = [], digest.digest_words
    monkeypatch.setattr(digest, "digest_words", lambda *a: calls.append(1) or original(*a))
    monkeypatch.setattr(choice, "POLARS_FROM", 1)
    assert choice.smallest_per_person(SALT, persons, values, 3).tolist() == by_hashlib.tolist()
    assert calls  # the Polars path ran


def test_pairs_sharing_leading_digest_bits_are_ordered_by_the_full_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    persons = np.array([i % 7 for i in range(500)], dtype=np.int64)
    values = np.array([(i * 31) % 23 for i in range(500)], dtype=np.int64)
    expected = choice.smallest_per_person(SALT, persons, values, 4)
    original = choice._digest_words

    def shared_first_word(*args: object) -> np.ndarray:
        words = np.array(original(*args), dtype=np.uint64)  # type: ignore[arg-type]
        # every pair now shares its leading 64 bits; the order is carried by the words after them
        return np.column_stack([np.zeros(len(words), dtype=np.uint64), words[:, :3]])

    monkeypatch.setattr(choice, "_digest_words", shared_first_word)
    assert choice.smallest_per_person(SALT, persons, values, 4).tolist() == expected.tolist()


@SETTINGS
@given(ROWS, st.integers(1, 3))
def test_no_person_exceeds_the_bound_and_persons_within_it_keep_everything(rows: list[tuple[int, int]],
                                                                           m: int) -> None:
    for mine in per_person(rows).values():
        assert sum(kept(mine, m).values()) == min(len(mine), m)
        if len(mine) <= m:
            assert kept(mine, m) == Counter(u for _, u in mine)


@SETTINGS
@given(ROWS, ROWS, st.integers(1, 3), st.randoms(use_true_random=False))
def test_one_persons_rows_depend_on_nothing_else(rows: list[tuple[int, int]], others: list[tuple[int, int]], m: int,
                                                 rnd) -> None:
    """Person 0's kept rows are the same whatever the other persons' rows and whatever the row order: the kept
    multiset of everyone is the sum of each person's own."""
    mine = [(0, u) for _, u in rows]
    strangers = [(p + 1, u) for p, u in others]
    mixed = mine + strangers
    rnd.shuffle(mixed)
    assert kept(mixed, m) == kept(mine, m) + sum((kept(p, m) for p in per_person(strangers).values()), Counter())


@SETTINGS
@given(ROWS, st.integers(1, 3))
def test_huge_person_ids_follow_the_same_rule(rows: list[tuple[int, int]], m: int) -> None:
    big = [(p + 2**64, u) for p, u in rows]  # past int64: a person is the canonical text of their id
    assert kept(big, m, text=True) == reference(big, m)


# --- releases: the salt first, only with ids -------------------------------------------------------

STATISTICS = [
    (securedp.sum, {"bounds": (0, 10), "lattice": 1}),
    (securedp.mean, {"bounds": (0, 10), "lattice": 1}),
    (securedp.variance, {"bounds": (0, 10), "lattice": 1}),
    (securedp.median, {"bounds": (0, 10), "lattice": 1}),
    (securedp.histogram, {"bins": [0, 5, 10]}),
]


@pytest.mark.parametrize("release, options", STATISTICS, ids=lambda x: getattr(x, "__name__", ""))
def test_a_release_with_ids_keeps_the_rows_of_the_rule_and_replays(release, options) -> None:
    data, ids = [1, 9, 3, 7, 5, 2], [4, 4, 4, 5, 5, 6]
    first = release(data, epsilon=1, ids=ids, max_contributions=2, rng=ChaChaSource(SEED), **options)
    again = release(data, epsilon=1, ids=ids, max_contributions=2, rng=ChaChaSource(SEED), **options)
    assert first.value == again.value and first.input_commitment is not None
    salt = draw_salt(ChaChaSource(SEED))  # every release draws its salt first, then its noise
    chosen = kept_rows(salt, ids, data if "bins" not in options else [int(v >= 5) for v in data], 2)
    kept_only = release([data[i] for i in chosen], epsilon=1, max_contributions=2, rng=ChaChaSource(SEED), **options)
    assert first.value == kept_only.value


def test_a_count_counts_min_rows_m_of_each_person() -> None:
    with_ids = securedp.count([1, 2, 3], ids=[1, 1, 2], epsilon=1, rng=ChaChaSource(SEED))
    assert with_ids.value == securedp.count([1, 2], epsilon=1, rng=ChaChaSource(SEED)).value


def test_each_execution_commits_to_its_own_aggregate() -> None:
    """Executions of one prepared release, even interleaved from threads, never share an aggregate: each
    commits to the rows its own salt keeps, as the same execution run alone does."""
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
    inputs = set()
    for i in range(8):
        alone = prepared.executed(ChaChaSource(SEED).substream(str(i)))
        assert done[i].input_bytes() == alone.input_bytes()  # type: ignore[attr-defined]
        assert done[i].release == alone.release  # type: ignore[attr-defined]
        inputs.add(alone.input_bytes())
    assert len(inputs) > 1  # the salts choose different rows: the commitments differ


def test_audit_replay_reproduces_an_id_bounded_release(tmp_path: Path) -> None:
    from securedp.audit import AuditLog
    from securedp.audit.replay import replay_log
    from securedp.tables.query import Query

    def write(path: Path, rows: list[tuple[int, int]]) -> Path:
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["x", "id"])
            writer.writerows(rows)
        return path

    rows = [(v, v % 3) for v in range(30)]
    data = write(tmp_path / "d.csv", rows)
    query = Query.of_column("sum", "x", Fraction(1, 10), bounds=(Fraction(0), Fraction(100)), max_contributions=2,
                  id_column="id")
    stream = ChaChaSource(SEED).substream("release-0")
    release = query.prepare(data).execute(stream)
    AuditLog(tmp_path / "a.jsonl").append({**release.record(), "query": query.to_json()})
    (result,) = replay_log(tmp_path / "a.jsonl", SEED, data)
    assert result.ok and result.data_matches
    (moved,) = replay_log(tmp_path / "a.jsonl", SEED, write(tmp_path / "e.csv", [*rows, (50, 99)]))
    assert not moved.ok and moved.data_matches is False
