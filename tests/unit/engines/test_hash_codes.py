"""The C extension numbering a text column's keyed hashes (``securedp.engines.polars._hash_codes``): its codes
against a reference, its refusals, its presence wherever a C compiler is, and the join that replaces it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import textwrap

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp.engines.polars.pair_codes as pair_codes
from securedp.engines.polars.pair_codes import _joined_codes, dense_codes

needs_extension = pytest.mark.skipif(pair_codes._EXTENSION is None, reason="the C extension is not built")


def _compiler() -> bool:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc) is not None


def test_the_extension_is_there_wherever_a_compiler_is() -> None:
    """A build that silently failed would fall back to the join: correct, slower, and this test says so."""
    if not _compiler():
        pytest.skip("no C compiler: the extension is optional")
    assert pair_codes._EXTENSION is not None


def assert_dense_codes_of(hashes: np.ndarray, codes: np.ndarray, first: np.ndarray) -> None:
    """Equal hashes have equal codes and distinct hashes distinct codes; codes are ``0 .. d - 1``, ``d`` the number
    of distinct hashes; ``first[c]`` is a row holding code ``c``."""
    distinct = np.unique(hashes)
    assert codes.dtype == np.int64 and first.dtype == np.int64 and first.size == distinct.size
    if hashes.size:
        assert codes.min() == 0 and codes.max() == distinct.size - 1
    assert np.array_equal(codes[first], np.arange(distinct.size))
    assert np.array_equal(hashes[first][codes], hashes)  # each code stands for one hash
    assert np.unique(hashes[first]).size == distinct.size  # and each hash for one code


def assert_in_order_of_first_appearance(hashes: np.ndarray, first: np.ndarray) -> None:
    """The extension's codes follow the rows: code ``c`` is the ``c``-th distinct hash met, ``first[c]`` its first row
    (so rows sorted by person give sorted codes)."""
    _, first_rows = np.unique(hashes, return_index=True)
    assert np.array_equal(first, np.sort(first_rows))


HASHES = st.lists(st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 40),  # repeats
                            st.integers(2**64 - 2**20, 2**64 - 1)),  # one partition (top bits all ones)
                  max_size=300)


@needs_extension
@settings(max_examples=300, deadline=None)
@given(HASHES)
def test_codes_are_dense_and_exact(values: list[int]) -> None:
    hashes = np.array(values, dtype=np.uint64)
    coded = dense_codes(hashes)
    assert coded is not None
    assert_dense_codes_of(hashes, *coded)
    assert_in_order_of_first_appearance(hashes, coded[1])


@needs_extension
@pytest.mark.parametrize("hashes", [np.zeros(0, np.uint64), np.full(100_000, 7, np.uint64),
                                    np.arange(2**64 - 100_000, 2**64, dtype=np.uint64),  # one partition, all distinct
                                    np.random.default_rng(5).integers(0, 2**64 - 1, 300_000, dtype=np.uint64,
                                                                      endpoint=True) % np.uint64(2**60 + 3)])
def test_unfavourable_shapes(hashes: np.ndarray) -> None:
    coded = dense_codes(hashes)
    assert coded is not None
    assert_dense_codes_of(hashes, *coded)
    assert_in_order_of_first_appearance(hashes, coded[1])


def test_the_join_gives_the_same_partition() -> None:
    """The join that stands in where the extension is not built numbers the same classes of rows."""
    hashes = np.random.default_rng(9).integers(0, 1000, 50_000).astype(np.uint64)
    positions, first = _joined_codes(pl.DataFrame({"_hash": hashes}).lazy(), hashes.size)
    assert_dense_codes_of(hashes, positions, first)


@needs_extension
def test_lengths_and_buffers_are_checked() -> None:
    ext = pair_codes._EXTENSION
    hashes = np.arange(10, dtype=np.uint64)
    with pytest.raises(ValueError, match="one uint64 hash"):
        ext.codes(hashes, np.empty(9, np.int64), np.empty(10, np.int64))
    with pytest.raises(ValueError, match="one uint64 hash"):
        ext.codes(hashes, np.empty(10, np.int64), np.empty(11, np.int64))
    with pytest.raises(ValueError, match="one uint64 hash"):
        ext.codes(b"123", bytearray(3), bytearray(3))
    with pytest.raises(TypeError):
        ext.codes(hashes, bytes(80), np.empty(10, np.int64))  # a read-only output
    assert ext.codes(hashes, np.empty(10, np.int64), np.empty(10, np.int64)) == 10


def _reference(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes by first appearance and the first row of each code, by NumPy."""
    _, first_rows, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    order = np.argsort(first_rows, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse.reshape(-1)].astype(np.int64), np.sort(first_rows).astype(np.int64)


_TOP = np.uint64(2**64 - 1)
_SHAPES = {
    "extremes": np.array([0, _TOP, 0, _TOP, _TOP, 0], dtype=np.uint64),
    "all equal to 2**64 - 1": np.full(50_000, _TOP, dtype=np.uint64),
    "each partition's bounds": np.array([b << 56 | x for b in (0, 1, 127, 128, 254, 255) for x in (0, 1, 2**56 - 1)]
                                        * 3, dtype=np.uint64)[np.random.default_rng(2).permutation(54)],
    "one per partition, descending": (np.arange(256, dtype=np.uint64) << np.uint64(56))[::-1].copy(),
    "powers of two, twice": np.array([1 << k for k in range(64)] * 2, dtype=np.uint64),
    "shared low bits, repeated": np.random.default_rng(4).integers(1, 3000, 20_000).astype(np.uint64) << np.uint64(32),
}


@needs_extension
@pytest.mark.parametrize("name", list(_SHAPES))
def test_codes_equal_numpys_first_appearance_numbering(name: str) -> None:
    hashes = _SHAPES[name]
    coded = dense_codes(hashes)
    assert coded is not None
    codes, first = _reference(hashes)
    assert np.array_equal(coded[0], codes) and np.array_equal(coded[1], first)


@needs_extension
def test_keys_sharing_their_low_bits_are_numbered_in_linear_time() -> None:
    """The table's slot must depend on every bit of a key: 100,000 distinct keys of one partition whose low 32 bits
    are all equal took 3.6 s when the slot came from the product's low bits (one home slot, quadratic probing),
    against 4 ms for random keys. A complexity check, not a speed target: the keys must cost at most 20 times
    what as many random keys of one partition cost on the same machine, plus 0.2 s (best of 3 each)."""
    import time

    def best(hashes: np.ndarray) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            coded = dense_codes(hashes)
            times.append(time.perf_counter() - start)
            assert coded is not None and np.array_equal(coded[0], np.arange(hashes.size))
        return min(times)

    shared = np.arange(1, 100_001, dtype=np.uint64) << np.uint64(32)
    random = np.unique(np.random.default_rng(8).integers(1, 2**56, 100_500, dtype=np.uint64))[:100_000]
    random = random[np.random.default_rng(9).permutation(random.size)]
    adversarial, baseline = best(shared), best(random)
    assert adversarial < 20 * baseline + 0.2, f"{adversarial:.3f} s against {baseline:.4f} s for random keys"


def _run_alone(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter, so that a crash fails this test instead of killing the test run."""
    prelude = "import numpy as np, threading, time\nfrom securedp.engines.polars import _hash_codes as ext\n"
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120)


@needs_extension
def test_outputs_sharing_memory_are_refused() -> None:
    """The codes are read back as indices of the rows' buffer: were they the same memory, a write out of bounds
    (one buffer for both crashed the interpreter)."""
    run = _run_alone("""
        h = np.arange(1000, dtype=np.uint64) % np.uint64(10)
        buf = np.empty(1001, np.int64)
        for out, first in [(buf[:1000], buf[:1000]), (buf[1:], buf[:-1])]:
            try:
                ext.codes(h, out, first)
            except ValueError:
                continue
            raise SystemExit("accepted")
        print("refused")
    """)
    assert run.returncode == 0 and "refused" in run.stdout, (run.returncode, run.stdout, run.stderr[-2000:])


@needs_extension
def test_hashes_changed_during_the_call_never_write_out_of_bounds() -> None:
    """The GIL is released during the pass, so another thread can rewrite the hashes between the count of each
    partition and the scatter into it: the call may fail, never write past its buffers (it crashed: every row
    counted in partition 0, then scattered into partition 255)."""
    run = _run_alone("""
        n = 5_000_000
        h = np.zeros(n, np.uint64)
        out, first = np.empty(n, np.int64), np.empty(n, np.int64)
        def flip():
            time.sleep(0.004)
            h[:] = np.uint64(0xff << 56)
        for _ in range(3):
            h[:] = 0
            flipper = threading.Thread(target=flip)
            flipper.start()
            try:
                ext.codes(h, out, first)
            except RuntimeError:
                pass
            flipper.join()
        print("survived")
    """)
    assert run.returncode == 0 and "survived" in run.stdout, (run.returncode, run.stdout, run.stderr[-2000:])


@needs_extension
@pytest.mark.parametrize("hashes, out, first", [
    (np.arange(10, dtype=np.uint64), np.empty(10, np.float64), np.empty(10, np.int64)),  # float codes
    (np.arange(10, dtype=np.uint64), np.empty(10, np.int64), np.empty(10, np.uint64)),  # unsigned rows
    (np.arange(20, dtype=np.int32), np.empty(10, np.int64), np.empty(10, np.int64)),  # 4-byte hashes, same bytes
    (np.arange(10, dtype=np.uint64), np.empty(10, np.dtype(">i8")), np.empty(10, np.int64)),  # foreign byte order
    (memoryview(bytearray(81))[1:].cast("Q"), np.empty(10, np.int64), np.empty(10, np.int64)),  # unaligned
], ids=["float64 out", "uint64 first", "int32 hashes", "big-endian out", "unaligned hashes"])
def test_buffers_of_another_type_are_refused(hashes: object, out: object, first: object) -> None:
    """Only the byte lengths were checked: codes written as the bits of floats, or in the wrong byte order, and
    misaligned 8-byte loads (undefined behaviour in C), were all accepted."""
    with pytest.raises(ValueError, match="one uint64 hash"):
        pair_codes._EXTENSION.codes(hashes, out, first)


@needs_extension
def test_a_misaligned_array_is_still_numbered() -> None:
    """dense_codes hands the extension an aligned copy of a misaligned array (a view at an odd offset of a byte
    buffer), which the extension itself refuses."""
    values = np.random.default_rng(6).integers(0, 50, 1000).astype(np.uint64)
    raw = bytearray(values.nbytes + 1)
    misaligned = np.frombuffer(raw, np.uint64, count=values.size, offset=1)
    misaligned[:] = values
    coded = dense_codes(misaligned)
    assert coded is not None
    codes, first = _reference(values)
    assert np.array_equal(coded[0], codes) and np.array_equal(coded[1], first)
