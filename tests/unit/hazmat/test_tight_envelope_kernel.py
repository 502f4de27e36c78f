"""The tight envelope's C kernel (``securedp.hazmat.samplers._tight_envelope``): the arrays of the NumPy passes it
replaces, bit for bit, on adversarial entries (subnormal, huge, overflowing, tied, on and beside the ``2**-16``
boundaries of the counts' table, every exponent dtype); the same plans and seeded selections with and without it; its
refusals; its presence wherever a C compiler is."""

from __future__ import annotations

import shutil
import sysconfig
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp
import securedp.hazmat.samplers.envelope as envelope
from securedp import ChaChaSource
from securedp.hazmat.samplers.categorical import ExpCategorical
from securedp.hazmat.samplers.envelope import (
    BLOCK,
    FRACTION_BITS,
    FloatGaps,
    envelope_exponents,
    exponent_dtype,
    int64_fill,
    tight_count_table,
)
from securedp.hazmat.samplers.tally import Tally

KERNEL = envelope.KERNEL
needs_kernel = pytest.mark.skipif(KERNEL is None, reason="the C kernel is not built")


def test_the_kernel_is_there_wherever_a_compiler_is() -> None:
    """A build that silently failed would fall back to the NumPy passes: the same arrays, slower; this test says so."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip("no C compiler: the kernel is optional")
    assert KERNEL is not None


def numpy_block(d: np.ndarray, factor: float, ceiling: float, groups: int) -> tuple[np.ndarray, ...]:
    """What the kernel computes, by the NumPy operations of :func:`envelope_exponents` and a plain sum per group."""
    with np.errstate(over="ignore", under="ignore"):
        y = np.minimum(d * factor, ceiling)
    fixed = y.astype(np.int64)
    exponents = fixed >> FRACTION_BITS
    counts = tight_count_table()[fixed & ((1 << FRACTION_BITS) - 1)]
    sums = np.array([int(counts[exponents == g].astype(np.int64).sum()) for g in range(groups)], dtype=np.int64)
    return exponents, counts, sums


def kernel_block(d: np.ndarray, factor: float, ceiling: float, groups: int, dtype: type = np.uint8):
    assert KERNEL is not None
    exponents, counts = np.empty(len(d), dtype=dtype), np.empty(len(d), dtype=np.int32)
    sums = np.full(groups, -1, dtype=np.int64)
    KERNEL.tight_block(d, factor, ceiling, tight_count_table(), exponents, counts, sums)
    return exponents, counts, sums


def adversarial_entries() -> np.ndarray:
    """Zeros, subnormals, the smallest normals, huge and maximal doubles, and values on, just below and just above
    multiples of ``2**-16`` and of 1 (after the factor 2**16 below, integers and their neighbours)."""
    grid = np.arange(0, 129 * 2**16 + 3, 997, dtype=np.float64) / 2**16
    near = np.concatenate([grid, np.nextafter(grid, 0), np.nextafter(grid, np.inf)])
    special = np.array([0.0, 5e-324, 2.2250738585072014e-308, np.nextafter(2.2250738585072014e-308, 0), 1e-300,
                        2.0**-16, np.nextafter(2.0**-16, 0), 128.99998474121094, 129.0, 1e300, 1.7976931348623157e308])
    return np.concatenate([near, special, np.zeros(50), np.full(50, 3.5)])


@needs_kernel
@pytest.mark.parametrize("factor", [2.0**16, 2.0**16 * 0.7213475204444817, 2.0**-1000, 2.0**1000, 1.0, 3.0**-20])
@pytest.mark.parametrize("cap", [128, 300, 70_000])
def test_the_kernel_gives_the_numpy_arrays_on_adversarial_entries(factor: float, cap: int) -> None:
    d = adversarial_entries()
    ceiling = (cap + 1 - 2.0**-16) * 2**16
    expected = numpy_block(d, factor, ceiling, cap + 1)
    got = kernel_block(d, factor, ceiling, cap + 1, exponent_dtype(cap))
    for a, b in zip(got, expected, strict=True):
        assert np.array_equal(a.astype(np.int64), b.astype(np.int64))


@needs_kernel
@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1.7976931348623157e308, allow_subnormal=True), min_size=1, max_size=300),
       st.floats(2.0**-1074, 2.0**1000, allow_subnormal=True), st.sampled_from([128, 192, 256]))
def test_the_kernel_gives_the_numpy_arrays_on_any_entries(entries: list[float], factor: float, cap: int) -> None:
    d = np.array(entries, dtype=np.float64)
    ceiling = (cap + 1 - 2.0**-16) * 2**16
    expected = numpy_block(d, factor, ceiling, cap + 1)
    got = kernel_block(d, factor, ceiling, cap + 1, exponent_dtype(cap))
    for a, b in zip(got, expected, strict=True):
        assert np.array_equal(a.astype(np.int64), b.astype(np.int64))


SCORES = {
    "distinct floats": np.linspace(0.0, 1000.0, 2 * BLOCK + 17),
    "tied": np.zeros(BLOCK + 5),
    "one up": np.concatenate([np.zeros(BLOCK), [1.0]]),
    "subnormal spread": np.random.default_rng(3).standard_normal(5000) * 1e-320,
    "huge": np.random.default_rng(4).standard_normal(5000) * 1e300,
    "sixteenth steps": -(np.arange(40_000) * 2.0**-16),
}
RATES = [Fraction(1), Fraction(1, 2**1030), Fraction(2**1010), Fraction(7, 3)]


def plan_arrays(values: np.ndarray, rate: Fraction) -> tuple[object, ...]:
    plan = ExpCategorical(FloatGaps(values), rate)
    blocks = None if plan._per_block is None else [np.asarray(b).astype(np.int64).tolist() for b in plan._per_block]
    return plan.slot_of.tobytes(), np.asarray(plan.counts).tobytes(), plan.ends, blocks


def without_kernel(monkeypatch: pytest.MonkeyPatch, fn, *args):
    with monkeypatch.context() as m:
        m.setattr(envelope, "KERNEL", None)
        return fn(*args)


@needs_kernel
@pytest.mark.parametrize("shape", SCORES)
@pytest.mark.parametrize("rate", RATES)
def test_plans_are_the_same_with_and_without_the_kernel(shape: str, rate: Fraction,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Exponents, tight counts, the groups' masses and each block's counts per group (float gaps, every path of
    the envelope: ``c`` normal, below and above the normal range)."""
    values = SCORES[shape]
    assert plan_arrays(values, rate) == without_kernel(monkeypatch, plan_arrays, values, rate)


@needs_kernel
@pytest.mark.parametrize("cap", [128, 300, 70_000])
def test_int64_gaps_and_every_exponent_dtype_are_the_same_with_and_without_the_kernel(
        cap: int, monkeypatch: pytest.MonkeyPatch) -> None:
    gaps = np.arange(3 * BLOCK, dtype=np.int64) * 7919 % 10**9

    def arrays() -> tuple[bytes, bytes, list[int], int]:
        counts, tally = np.empty(len(gaps), dtype=np.int32), Tally(cap + 1, weighted=True)
        exponents = envelope_exponents(int64_fill(gaps), len(gaps), Fraction(1, 10**4), cap, counts, tally)
        return exponents.tobytes(), counts.tobytes(), tally.counts(), len(tally.per_block or [])

    assert arrays() == without_kernel(monkeypatch, arrays)


@needs_kernel
@pytest.mark.parametrize("shape", ["distinct floats", "one up", "huge"])
def test_seeded_selections_are_the_same_with_and_without_the_kernel(shape: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    values = SCORES[shape]

    def winners() -> list[int]:
        rng = ChaChaSource(bytes([7]) * 32)
        return [securedp.exponential_mechanism(values, epsilon=1, sensitivity=1, rng=rng).value for _ in range(20)]

    assert winners() == without_kernel(monkeypatch, winners)


@needs_kernel
def test_the_kernel_refuses_what_it_cannot_index_safely() -> None:
    assert KERNEL is not None
    table, n = tight_count_table(), 8
    d, e, c, s = np.ones(n), np.empty(n, np.uint8), np.empty(n, np.int32), np.empty(129, np.int64)
    ceiling = 129 * 2.0**16 - 1
    KERNEL.tight_block(d, 2.0**16, ceiling, table, e, c, s)  # the valid call
    bad_calls = {
        "float32 entries": (d.astype(np.float32), 2.0**16, ceiling, table, e, c, s),
        "int64 table": (d, 2.0**16, ceiling, table.astype(np.int64), e, c, s),
        "short table": (d, 2.0**16, ceiling, table[:100], e, c, s),
        "signed exponents": (d, 2.0**16, ceiling, table, e.view(np.int8), c, s),
        "short exponents": (d, 2.0**16, ceiling, table, e[:4], c, s),
        "int64 counts": (d, 2.0**16, ceiling, table, e, c.astype(np.int64), s),
        "float sums": (d, 2.0**16, ceiling, table, e, c, s.astype(np.float64)),
        "too many groups for uint8": (d, 2.0**16, 300 * 2.0**16, table, e, c, np.empty(300, np.int64)),
        "ceiling beyond the groups": (d, 2.0**16, 129 * 2.0**16, table, e, c, s),
        "negative ceiling": (d, 2.0**16, -1.0, table, e, c, s),
        "NaN ceiling": (d, 2.0**16, float("nan"), table, e, c, s),
        "negative entry": (-d, 2.0**16, ceiling, table, e, c, s),
        "NaN entry": (np.full(n, np.nan), 2.0**16, ceiling, table, e, c, s),
        "outputs sharing memory": (d, 2.0**16, 4 * 2.0**16 - 1, table, e, c, c.view(np.int64)),  # 4 groups
        "entries sharing an output": (d, 2.0**16, ceiling, table, d.view(np.uint8)[:n], c, s),
    }
    for name, args in bad_calls.items():
        with pytest.raises((ValueError, TypeError)):
            KERNEL.tight_block(*args)
            pytest.fail(name)
    with pytest.raises(TypeError):
        KERNEL.tight_block(d[::2], 2.0**16, ceiling, table, e[:4], c[:4], s)  # not contiguous
