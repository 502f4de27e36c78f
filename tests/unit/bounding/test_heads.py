"""The SHA-256 heads of the C extension (securedp.bounding.heads) against hashlib, its checks, and the
bounding pass with and without it: the same rows kept."""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_bounding import SALT, engine, frame, reference

from securedp.bounding import heads as heads_module
from securedp.bounding.heads import PARALLEL_FROM, available, heads


def _cpu_has_sha() -> bool:
    cpuinfo = Path("/proc/cpuinfo")
    return cpuinfo.exists() and "sha_ni" in cpuinfo.read_text().split()


needs_extension = pytest.mark.skipif(not available(), reason="the C extension is not built or the CPU lacks SHA-NI")


def expected(prefix: bytes, middles: list[str], middle_of: list[int], tails: list[str],
             tail_of: list[int]) -> list[int]:
    return [int.from_bytes(hashlib.sha256(prefix + middles[a].encode() + tails[b].encode()).digest()[:8], "big")
            for a, b in zip(middle_of, tail_of, strict=True)]


def test_the_extension_is_there_wherever_the_cpu_has_sha_ni() -> None:
    """A build that silently failed would fall back to polars-hash: correct, but this test says so."""
    if platform.machine() not in ("x86_64", "AMD64") or not _cpu_has_sha():
        pytest.skip("no x86 SHA extensions on this CPU")
    assert available()


@needs_extension
def test_every_length_across_the_block_boundaries() -> None:
    middles = ["é" * (n // 2) + "a" * (n % 2) for n in range(260)]  # 0 .. 259 bytes, two-byte characters too
    tails = ["", "x", "z" * 55, "w" * 64]
    middle_of = [i for i in range(len(middles)) for _ in tails]
    tail_of = list(range(len(tails))) * len(middles)
    prefix = SALT.hex().encode()
    got = heads(prefix, pl.Series(middles), np.array(middle_of), pl.Series(tails), np.array(tail_of))
    assert got is not None and got.dtype == np.uint64
    assert got.tolist() == expected(prefix, middles, middle_of, tails, tail_of)
    empty = heads(b"", pl.Series([""]), np.array([0]), pl.Series([""]), np.array([0]))
    assert empty is not None and int(empty[0]) == int.from_bytes(hashlib.sha256(b"").digest()[:8], "big")


@needs_extension
@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=80), st.lists(st.text(max_size=70), min_size=1, max_size=8),
       st.lists(st.text(max_size=70), min_size=1, max_size=8), st.data())
def test_heads_equal_hashlib(prefix: bytes, middles: list[str], tails: list[str], data: st.DataObject) -> None:
    n = data.draw(st.integers(0, 30))
    middle_of = data.draw(st.lists(st.integers(0, len(middles) - 1), min_size=n, max_size=n))
    tail_of = data.draw(st.lists(st.integers(0, len(tails) - 1), min_size=n, max_size=n))
    got = heads(prefix, pl.Series(middles, dtype=pl.String), np.array(middle_of, dtype=np.int64),
                pl.Series(tails, dtype=pl.String), np.array(tail_of, dtype=np.int64))
    assert got is not None and got.tolist() == expected(prefix, middles, middle_of, tails, tail_of)


@needs_extension
def test_sliced_chunked_and_parallel_inputs() -> None:
    """A sliced Series (its Arrow offsets start past 0), a Series of several chunks, and enough
    messages to be split over threads."""
    middles = pl.concat([pl.Series([f"m{i}" for i in range(50)]), pl.Series([f"n{i}" for i in range(70)])],
                        rechunk=False).slice(5)
    tails = pl.Series([f"{i}:t{i}," for i in range(300)]).slice(17, 200)
    n = PARALLEL_FROM + 123
    rng = np.random.default_rng(5)  # test data only
    middle_of, tail_of = rng.integers(0, middles.len(), n), rng.integers(0, tails.len(), n)
    got = heads(b"salt", middles, middle_of, tails, tail_of)
    assert got is not None
    want = expected(b"salt", middles.to_list(), middle_of.tolist(), tails.to_list(), tail_of.tolist())
    assert got.tolist() == want


@needs_extension
@pytest.mark.parametrize(("middle_of", "tail_of", "error"), [
    ([2], [0], IndexError), ([-1], [0], IndexError), ([0], [1], IndexError), ([0, 1], [0], ValueError),
])
def test_an_index_outside_its_table_is_refused(middle_of: list[int], tail_of: list[int], error: type) -> None:
    with pytest.raises(error):
        heads(b"", pl.Series(["a", "b"]), np.array(middle_of), pl.Series(["t"]), np.array(tail_of))


@needs_extension
def test_inconsistent_offsets_are_refused_before_a_byte_is_read() -> None:
    extension = heads_module._EXTENSION
    out = np.zeros(1, dtype=np.uint64)
    one = np.zeros(1, dtype=np.int64)
    for offsets in ([0, 5], [3, 1], [-1, 0], []):  # past the data, decreasing, negative, not even an end
        with pytest.raises(ValueError):
            extension.heads(b"", b"abc", np.array(offsets, dtype=np.int64), one, b"", np.zeros(2, dtype=np.int64),
                            one, out)
    with pytest.raises(ValueError):  # offsets that are not whole int64 values
        extension.heads(b"", b"abc", b"\0" * 12, one, b"", np.zeros(2, dtype=np.int64), one, out)
    with pytest.raises(IndexError):  # a table of no text
        extension.heads(b"", b"abc", np.zeros(1, dtype=np.int64), one, b"", np.zeros(2, dtype=np.int64), one, out)


def test_a_missing_part_is_refused() -> None:
    if not available():
        pytest.skip("the C extension is not built")
    with pytest.raises(ValueError, match="missing"):
        heads(b"", pl.Series(["a", None]), np.array([0]), pl.Series(["t"]), np.array([0]))


def test_bounding_keeps_the_same_rows_without_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    """Group heads and row heads by the CPU, by polars-hash and by hashlib: the same kept rows, the
    documented rule's."""
    import securedp.bounding.digest as digest
    import securedp.engines.polars.smallest as smallest

    rows = [(f"p{i % 7}é", (i * 7) % 11, (i * 31) % 19 - 9) for i in range(700)]
    by_cpu = engine(frame(rows), 2, 3)
    monkeypatch.setattr(smallest, "cpu_heads", lambda *_: None)
    by_plugin = engine(frame(rows), 2, 3)
    monkeypatch.setattr(digest, "_polars_hash", None)
    assert engine(frame(rows), 2, 3) == by_plugin == by_cpu == reference(rows, 2, 3, SALT)


def _run_alone(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter, so that a crash fails this test instead of killing the test run."""
    prelude = ("import numpy as np, threading\nimport polars as pl\n"
               "from securedp.bounding import heads as heads_module\next = heads_module._EXTENSION\n")
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300)


@needs_extension
def test_an_output_sharing_memory_with_an_input_is_refused() -> None:
    """A head written over an index or an offset not read yet became an index or a length: a read out of bounds,
    and a copy of ~2**63 bytes into the message buffer (both crashed the interpreter)."""
    run = _run_alone("""
        n = 1000
        words = np.zeros(n + 1, np.int64)
        offsets = np.array([0, 4, 4], np.int64)
        zeros, two = np.zeros(n, np.int64), np.zeros(2, np.int64)
        for mid_offsets, mid_of, tail_of, out in [
                (np.array([0, 4], np.int64), words[:-1], zeros, words[1:].view(np.uint64)),  # out one index ahead
                (offsets, two, two, offsets[1:].view(np.uint64)),  # out over the offsets
                (np.array([0, 4], np.int64), zeros, zeros, zeros.view(np.uint64))]:  # out is the tail indices
            try:
                ext.heads(b"", b"abcd", mid_offsets, mid_of, b"", np.zeros(2, np.int64), tail_of, out)
            except ValueError:
                continue
            raise SystemExit("accepted")
        print("refused")
    """)
    assert run.returncode == 0 and "refused" in run.stdout, (run.returncode, run.stdout, run.stderr[-2000:])


@needs_extension
@pytest.mark.parametrize("target", ["offsets", "indices", "public"])
def test_inputs_rewritten_during_the_call_never_read_or_write_out_of_bounds(target: str) -> None:
    """The GIL is released while hashing, and the indices and offsets were read again after their checks: another
    thread setting one to 2**40 in between made a read, and a copy into the message buffer, out of bounds (it
    crashed). The call may now fail with RuntimeError; it must not crash. ``public`` goes through heads(), whose
    int64 index arrays are the caller's own (not copied)."""
    run = _run_alone(f"""
        target = {target!r}
        n = 1 << 20
        offsets, mid_of, tail_of = np.array([0, 1], np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
        out = np.empty(n, np.uint64)
        words, where = (offsets, 1) if target == "offsets" else (mid_of, n // 2)
        good = int(words[where])
        stop = False
        def flip():
            while not stop:
                words[where] = 1 << 40
                words[where] = good
        flipper = threading.Thread(target=flip)
        flipper.start()
        try:
            for _ in range(15):
                try:
                    if target == "public":
                        heads_module.heads(b"p", pl.Series(["a"]), mid_of, pl.Series(["b"]), tail_of)
                    else:
                        ext.heads(b"p", b"a" * 16, offsets, mid_of, b"", np.zeros(2, np.int64), tail_of, out)
                except (ValueError, IndexError, RuntimeError):
                    pass
        finally:
            stop = True
            flipper.join()
        print("survived")
    """)
    assert run.returncode == 0 and "survived" in run.stdout, (run.returncode, run.stdout, run.stderr[-2000:])


def _unaligned(values: list[int]) -> memoryview:
    raw = memoryview(bytearray(8 * len(values) + 1))[1:]
    raw[:] = np.array(values, np.int64).tobytes()
    return raw.cast("q")


_GOOD = {"mid": b"ab", "mid_offsets": np.array([0, 1, 2], np.int64), "mid_of": np.zeros(1, np.int64),
         "tail": b"b", "tail_offsets": np.array([0, 1], np.int64), "tail_of": np.zeros(1, np.int64)}


@needs_extension
@pytest.mark.parametrize("name, value", [
    ("mid_of", np.zeros(1, np.float64)),  # 0.0 has the bits of index 0: accepted
    ("out", np.zeros(1, np.float64)),  # a head written as the bits of a float
    ("out", np.zeros(1, np.dtype(">u8"))),  # a head in the wrong byte order
    ("mid_offsets", np.array([0, 0, 1, 0], np.int32)),  # 4-byte offsets, the same bytes as int64 [0, 1]
    ("mid_offsets", _unaligned([0, 1, 2])),  # misaligned 8-byte loads: undefined behaviour in C
    ("out", memoryview(bytearray(9))[1:].cast("Q")),  # a misaligned 8-byte store
], ids=["float64 indices", "float64 out", "big-endian out", "int32 offsets", "unaligned offsets", "unaligned out"])
def test_buffers_of_another_type_are_refused(name: str, value: object) -> None:
    """Only byte lengths were checked: indices and offsets of any type, and heads written as floats or in the wrong
    byte order, or at a misaligned address, were accepted."""
    arguments = {**_GOOD, "out": np.zeros(1, np.uint64), name: value}
    with pytest.raises(ValueError, match="native aligned"):
        heads_module._EXTENSION.heads(b"", *arguments.values())


@needs_extension
def test_float_indices_are_refused() -> None:
    """heads() cast its indices to int64 unsafely: 1.9 was silently message 1."""
    with pytest.raises(TypeError, match="integers"):
        heads(b"", pl.Series(["a", "b"]), np.array([1.9]), pl.Series(["t"]), np.array([0]))


@needs_extension
def test_a_misaligned_index_array_is_still_hashed() -> None:
    """heads() hands the extension aligned copies of misaligned arrays (a view at an odd offset of a byte buffer),
    which the extension itself refuses."""
    middle_of = np.frombuffer(bytearray(8 * 3 + 1), np.int64, count=3, offset=1)
    middle_of[:] = [1, 0, 1]
    got = heads(b"s", pl.Series(["a", "b"]), middle_of, pl.Series(["t"]), np.zeros(3, np.int64))
    assert got is not None and got.tolist() == expected(b"s", ["a", "b"], [1, 0, 1], ["t"], [0, 0, 0])
