"""Input commitments: replay tells "data differs" even when the noise hides the change.

Every seeded release records HMAC-SHA256, under a key derived from its seed,
of the canonical encoding of the exact aggregate its noise step consumes.
Replay recomputes it from the data given; a mismatch is "data differs",
distinct from an output that differs.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import json
import random as stdlib_random  # test data only: shuffling rows
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import securedp
from securedp import ChaChaSource, Session
from securedp.audit import AuditLog, verify_log
from securedp.audit.replay import replay_log
from securedp.ledger.release import COMMITMENT_LABEL, commit_input, encode_input
from securedp.tables.query import Query

SEED = bytes(range(32))


def write_csv(path: Path, values: list) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["x"])
        writer.writerows([v] for v in values)
    return path


def logged_release(log: Path, data: Path, query: Query, label: str = "release-0") -> dict:
    """What ``securedp release --seed-file --audit-log`` does, from Python."""
    stream = ChaChaSource(SEED).substream(label)
    release = query.prepare(data).execute(stream)
    AuditLog(log).append({**release.record(), "query": query.to_json()})
    return release.record()


COUNT = Query.of_column("count", "x", Fraction(1, 10))
SUM = Query.of_column("sum", "x", Fraction(1), bounds=(Fraction(0), Fraction(10)))
MEDIAN = Query.of_column("median", "x", Fraction(1, 10), bounds=(Fraction(0), Fraction(1000)))


def test_unchanged_data_matches(tmp_path: Path) -> None:
    data = write_csv(tmp_path / "d.csv", list(range(100)))
    for i, query in enumerate((COUNT, SUM, MEDIAN)):
        logged_release(tmp_path / "a.jsonl", data, query, f"release-{i}")
    results = replay_log(tmp_path / "a.jsonl", SEED, data)
    assert [r.ok for r in results] == [True] * 3 and all(r.data_matches for r in results)


def test_one_more_row_is_data_differs(tmp_path: Path) -> None:
    """Same seed, 100 vs 101 rows: the commitment differs (and so here does the count)."""
    logged_release(tmp_path / "a.jsonl", write_csv(tmp_path / "d.csv", list(range(100))), COUNT)
    (result,) = replay_log(tmp_path / "a.jsonl", SEED, write_csv(tmp_path / "e.csv", list(range(101))))
    assert not result.ok and result.data_matches is False
    assert result.problem.startswith("data differs") and "value differs" in result.problem


@pytest.mark.parametrize(
    "query, before, after",
    [
        (SUM, [3, 4, 5], [3, 4, 5, 0]),  # a zero row: the same sum, the same noise, the same output
        (MEDIAN, list(range(0, 1000, 10)), [*range(0, 990, 10), 991]),  # the exponential mechanism hides it
    ],
    ids=["sum+zero-row", "median-moved-row"],
)
def test_a_change_the_noise_hides_is_still_data_differs(tmp_path: Path, query: Query, before, after) -> None:
    logged = logged_release(tmp_path / "a.jsonl", write_csv(tmp_path / "d.csv", before), query)
    changed = write_csv(tmp_path / "e.csv", after)
    again = query.prepare(changed).execute(ChaChaSource(SEED).substream("release-0")).record()
    assert again["value"] == logged["value"]  # the output alone cannot tell (the old replay said "reproduced")
    (result,) = replay_log(tmp_path / "a.jsonl", SEED, changed)
    assert not result.ok and result.data_matches is False
    assert result.problem == "data differs: the input commitment does not match this data; " \
                             "the output is reproduced all the same (the noise hides the change)"


def test_an_altered_output_with_the_right_data_is_output_differs(tmp_path: Path) -> None:
    data = write_csv(tmp_path / "d.csv", list(range(100)))
    logged_release(tmp_path / "a.jsonl", data, COUNT)
    lines = (tmp_path / "a.jsonl").read_text().splitlines()
    import json

    from securedp.audit.log import canonical, entry_hash

    entry = json.loads(lines[0])
    entry["record"]["value"] += 1
    entry["hash"] = entry_hash(entry)
    (tmp_path / "a.jsonl").write_bytes(canonical(entry) + b"\n")
    (result,) = replay_log(tmp_path / "a.jsonl", SEED, data)
    assert not result.ok and result.data_matches is True and result.problem.startswith("value differs")


def test_the_commitment_hides_the_input_and_equal_inputs_look_different() -> None:
    """The MAC is keyed by the seed; a fresh nonce per release, so equal inputs in one stream give unrelated MACs."""
    session = Session(epsilon=1, rng=ChaChaSource(SEED).substream("s"))
    a = session.count([1, 2, 3], epsilon="1/4").input_commitment
    b = session.count([4, 5, 6], epsilon="1/4").input_commitment
    assert a is not None and b is not None and a["nonce"] != b["nonce"] and a["mac"] != b["mac"]
    stream = ChaChaSource(SEED).substream("s")
    data = securedp.prepare_count([1, 2, 3], epsilon="1/4").executed(ChaChaSource(SEED).substream("s")).input_bytes()
    assert commit_input(stream, data, bytes.fromhex(a["nonce"])) == a
    assert commit_input(stream, data, bytes.fromhex(b["nonce"])) == b
    wrong = ChaChaSource(bytes(32)).substream("s")
    assert commit_input(wrong, data, bytes.fromhex(a["nonce"])) != a
    # the key is the keystream of a substream: the seed's own stream is not consumed
    key = stream.substream(COMMITMENT_LABEL).random_bytes(32)
    assert hmac.new(key, bytes.fromhex(a["nonce"]) + data, hashlib.sha256).hexdigest() == a["mac"]


def test_seeded_values_are_unchanged_by_the_commitment() -> None:
    """Deriving the commitment key draws nothing from the release's stream."""
    with_commitment = securedp.sum([1, 2, 3], bounds=(0, 5), epsilon=1, rng=ChaChaSource(SEED))
    stream = ChaChaSource(SEED)
    prepared = securedp.prepare_sum([1, 2, 3], bounds=(0, 5), epsilon=1)
    assert prepared.run(stream).value == with_commitment.value
    assert prepared.run(ChaChaSource(SEED)).input_commitment is None


def test_system_source_releases_carry_no_commitment() -> None:
    release = securedp.count([1, 2, 3], epsilon=1)
    assert release.input_commitment is None and "input_commitment" not in release.record()


def test_the_encoding_is_independent_of_row_order_and_of_dtype() -> None:
    values = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5] * 10
    shuffled = values[:]
    stdlib_random.Random(1).shuffle(shuffled)
    for prepare, options in [
        (securedp.prepare_count, {}),
        (securedp.prepare_sum, {"bounds": (0, 10), "lattice": "1/8"}),  # one lattice for every dtype
        (securedp.prepare_mean, {"bounds": (0, 10)}),
        (securedp.prepare_variance, {"bounds": (0, 10)}),
        (securedp.prepare_histogram, {"bins": [0, 5, 10]}),
        (securedp.prepare_median, {"bounds": (0, 10), "lattice": "1/8"}),
    ]:
        encodings = {  # the input of an execution (its salt first: the same seed, the same salt)
            prepare(data, epsilon=1, **options).executed(ChaChaSource(SEED)).input_bytes()  # type: ignore[misc]
            for data in (values, shuffled, np.array(shuffled, dtype=np.int32), np.array(values, dtype=object))
        }
        assert len(encodings) == 1, prepare.__name__
    assert encode_input("x", {"v": [1, 2, 3]}) == encode_input("x", {"v": np.array([1, 2, 3], dtype=np.uint8)})
    assert encode_input("x", {"v": [2**70, 1]}) != encode_input("x", {"v": [1, 2**70]})
    assert encode_input("x", {"v": 1}) != encode_input("x", {"v": Fraction(1)})  # typed: an int is not a rational


def test_selection_scores_are_encoded_by_value_not_by_representation() -> None:
    prepare = securedp.mechanisms.exponential.prepare_exponential_mechanism
    encodings = {
        prepare(scores, epsilon=1, sensitivity=1).input_bytes()
        for scores in ([1, 2.5, 4], [Fraction(1), Fraction(5, 2), 4], ["1", "2.5", "4"], np.array([1, 2.5, 4]))
    }
    assert len(encodings) == 1
    others = [securedp.mechanisms.noisy_max.prepare_report_noisy_max,
              securedp.mechanisms.permute_and_flip.prepare_permute_and_flip]
    assert {p([1, 2.5, 4], epsilon=1, sensitivity=1).input_bytes() for p in others} == encodings
    assert prepare([1, 2.5, 5], epsilon=1, sensitivity=1).input_bytes() not in encodings


def test_verify_checks_the_commitment_form(tmp_path: Path) -> None:
    import json

    from securedp.audit.log import canonical, entry_hash

    data = write_csv(tmp_path / "d.csv", [1, 2])
    logged_release(tmp_path / "a.jsonl", data, COUNT)
    good = json.loads((tmp_path / "a.jsonl").read_text())
    for bad, field in [
        ({"scheme": "md5", "nonce": "00" * 16, "mac": "00" * 32}, "record.input_commitment.scheme"),
        ({**good["record"]["input_commitment"], "nonce": "xyz"}, "record.input_commitment.nonce"),
        ({**good["record"]["input_commitment"], "mac": "00"}, "record.input_commitment.mac"),
        ({"mac": "00" * 32}, "record.input_commitment"),
    ]:
        entry = json.loads(json.dumps(good))
        entry["record"]["input_commitment"] = bad
        entry["hash"] = entry_hash(entry)
        (tmp_path / "b.jsonl").write_bytes(canonical(entry) + b"\n")
        assert verify_log(tmp_path / "b.jsonl").problem.field == field


def test_the_input_encoding_is_pinned() -> None:
    """The bytes of ``securedp/input/v1`` are part of the interface: a logged commitment is checked by
    replaying its release, so an encoding that drifted would report "data differs" on unchanged data.
    Every kind of part: an int, a rational, text, int64, Python ints past 64 bits, uint8, empty."""
    parts = {"count": 7, "rate": Fraction(-3, 8), "label": "mé", "units": np.array([3, -1, 2**40], dtype=np.int64),
             "wide": [2**70, -5, 0], "small": np.array([1, 2], dtype=np.uint8), "empty": []}
    encoded = encode_input("kat", parts)
    assert len(encoded) == 278
    assert hashlib.sha256(encoded).hexdigest() == "8543c6115247cda2a8fcf6700b610cba740f81f925846ba5b60a0b7a65f36ecf"


def test_a_record_rewritten_to_an_earlier_format_says_its_commitment_is_not_checked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by review: rewriting a record's ``format`` to 1 (and the chain after it: an unsigned log) made replay
    skip the input commitment silently, so changed data replayed as "reproduced exactly". The commitment of an
    earlier format cannot be checked (another input encoding), but replay and the report now say so."""
    from securedp.audit.log import GENESIS, canonical, entry_hash
    from securedp.audit.report import render_report
    from securedp.audit.report_model import build_report
    from securedp.cli.main import main

    data = write_csv(tmp_path / "d.csv", list(range(100)))
    logged_release(tmp_path / "a.jsonl", data, MEDIAN)
    entry = json.loads((tmp_path / "a.jsonl").read_text(encoding="utf-8"))
    entry["record"]["format"] = 1
    entry["prev"] = GENESIS
    entry["hash"] = entry_hash(entry)
    (tmp_path / "b.jsonl").write_bytes(canonical(entry) + b"\n")
    changed = write_csv(tmp_path / "e.csv", [*range(99), 98])  # one value far above the median: the output holds
    (result,) = replay_log(tmp_path / "b.jsonl", SEED, changed)
    assert result.ok and result.unchecked_commitment and result.data_matches is None
    (tmp_path / "seed").write_bytes(SEED)
    main(["audit", "replay", str(tmp_path / "b.jsonl"), "--seed-file", str(tmp_path / "seed"), "--data", str(changed)])
    assert "input commitment (of an earlier record format) NOT CHECKED" in capsys.readouterr().out
    page = render_report(build_report(tmp_path / "b.jsonl", seed=SEED, data=changed))
    assert "NOT CHECKED by this version" in page
    (fresh,) = replay_log(tmp_path / "a.jsonl", SEED, data)
    assert not fresh.unchecked_commitment and fresh.data_matches is True


def test_a_record_that_cannot_be_re_run_is_reported_and_the_replay_goes_on(tmp_path: Path) -> None:
    """A (re-hashed) record whose query names an encoding Python has as a codec but not as a text encoding raised
    ``LookupError`` out of the replay: no line was reported, the genuine one before it included (a fourth
    review). Each line gets its verdict."""
    import json

    from securedp.audit.log import GENESIS, canonical, entry_hash

    data = write_csv(tmp_path / "d.csv", list(range(100)))
    for i in range(3):
        logged_release(tmp_path / "a.jsonl", data, SUM, f"release-{i}")
    entries = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    entries[1]["record"]["query"]["encoding"] = "rot13"
    previous, out = GENESIS, b""
    for entry in entries:
        entry["prev"] = previous
        entry["hash"] = previous = entry_hash(entry)
        out += canonical(entry) + b"\n"
    (tmp_path / "a.jsonl").write_bytes(out)
    results = replay_log(tmp_path / "a.jsonl", SEED, data)
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].problem.startswith("cannot re-run the release: LookupError: ")
