"""The C extension numbering a text column's keyed hashes (``securedp.engines.polars._hash_codes``): its codes
against a reference, its refusals, its presence wherever a C compiler is, and the join that replaces it."""

from __future__ import annotations

import shutil
import sysconfig

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
