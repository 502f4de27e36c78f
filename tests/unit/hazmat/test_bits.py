"""Random sources: ChaCha20 known answers, stream semantics, and the system source's guarantees."""

from __future__ import annotations

import importlib
import os
import re
import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from securedp import ChaChaSource, SystemSource
from securedp.hazmat import samplers
from securedp.hazmat.bits import default_source, resolve_source, seed_commitment

system_module = importlib.import_module("securedp.hazmat.bits.system")
chacha_module = importlib.import_module("securedp.hazmat.bits.chacha")

SETTINGS = settings(max_examples=25, deadline=None, database=None)


# --- known answers ------------------------------------------------------------------------------------


def test_chacha_matches_rfc8439_test_vector_a1_1() -> None:
    """RFC 8439, A.1 test vector #1: all-zero key and nonce, block counter 0."""
    expected = (
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
        "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
    )
    assert ChaChaSource(bytes(32)).random_bytes(64).hex() == expected


# securedp's own known answers. CHANGING ANY OF THESE IS A BREAKING CHANGE: an audited release is
# replayed from its seed, and the replay must reproduce the same noise on every platform and
# version. Update them only on purpose, with a changelog entry.
KAT_SEED = bytes(range(32))
KAT_WORDS = [0x6A19C5D97D2BFD39, 0x494ADCB87703BD8D, 0xCC6ADEBC6FD8358A, 0x9224EAD84C7DCCB2]
KAT_AUDIT_SUBSTREAM = "c5f28684524c44cd"
KAT_COMMITMENT = "86892427c248a439a77c6cf9ee746a7555efc251c558dfe9ac29368fc5865df3"
KAT_LAPLACE_10 = [-19, -1, 6, -7, 7, 2, -7, -38, -49, -8]
KAT_SAMPLERS = {
    "discrete_gaussian(3)": (lambda r: samplers.discrete_gaussian(3, size=8, rng=r), [-1, 1, 0, -4, -3, -5, 0, -3]),
    "geometric(p='1/3')": (lambda r: samplers.geometric(p="1/3", size=8, rng=r), [0, 3, 1, 0, 6, 5, 3, 0]),
    "uniform_below(1000)": (lambda r: samplers.uniform_below(1000, size=8, rng=r),
                            [576, 162, 107, 796, 565, 221, 114, 537]),
    "uniform_below(2**70 + 3)": (lambda r: samplers.uniform_below(2**70 + 3, size=3, rng=r),
                                 [1037620387042797573969, 444303949737827453656, 621940895727639215699]),
    "discrete_gaussian(variance=2)": (lambda r: samplers.discrete_gaussian(variance=2, size=8, rng=r),
                                      [-1, 0, 0, -2, 1, 0, 0, 2]),
    "bernoulli('1/3')": (lambda r: samplers.bernoulli("1/3", size=8, rng=r), [0, 1, 1, 0, 0, 1, 1, 0]),
    "bernoulli_exp(1)": (lambda r: samplers.bernoulli_exp(1, size=8, rng=r), [0, 1, 1, 0, 0, 1, 1, 0]),
}


def test_securedp_known_answers() -> None:
    rng = ChaChaSource(KAT_SEED)
    assert rng.words(4).tolist() == KAT_WORDS
    assert ChaChaSource(KAT_SEED).substream("audit").random_bytes(8).hex() == KAT_AUDIT_SUBSTREAM
    assert ChaChaSource(KAT_SEED).seed_commitment == KAT_COMMITMENT == seed_commitment(KAT_SEED)
    assert samplers.discrete_laplace(10, size=10, rng=ChaChaSource(bytes(32))).tolist() == KAT_LAPLACE_10


@pytest.mark.parametrize("name", sorted(KAT_SAMPLERS))
def test_sampler_known_answers(name: str) -> None:
    draw, expected = KAT_SAMPLERS[name]
    assert draw(ChaChaSource(bytes(32))).tolist() == expected


def test_words_and_bits_are_little_endian() -> None:
    """The byte-to-number convention is part of the replay contract."""
    data = ChaChaSource(KAT_SEED).random_bytes(16)
    rng = ChaChaSource(KAT_SEED)
    assert rng.word() == int.from_bytes(data[:8], "little")
    assert rng.randbits(12) == int.from_bytes(data[8:10], "little") & 0xFFF


# --- stream semantics ---------------------------------------------------------------------------------


def test_reads_concatenate_into_one_stream() -> None:
    a, b = ChaChaSource(KAT_SEED), ChaChaSource(KAT_SEED)
    assert a.random_bytes(3) + a.random_bytes(5) == b.random_bytes(8)


@SETTINGS
@given(chunks=st.lists(st.integers(0, 70_000), min_size=1, max_size=6))
def test_any_split_of_reads_gives_the_same_stream(chunks: list[int]) -> None:
    """Including reads that straddle or exceed the 64 KiB keystream block."""
    rng = ChaChaSource(KAT_SEED)
    joined = b"".join(rng.random_bytes(n) for n in chunks)
    assert joined == ChaChaSource(KAT_SEED).random_bytes(sum(chunks))
    assert rng.bytes_served == sum(chunks)


def test_substreams_are_deterministic_independent_and_labelled() -> None:
    root = ChaChaSource(KAT_SEED)
    audit = root.substream("audit")
    again = ChaChaSource(KAT_SEED).substream("audit")
    other = root.substream("audit2")
    nested = root.substream("audit").substream("x")
    streams = [s.random_bytes(32) for s in (audit, other, nested, ChaChaSource(KAT_SEED))]
    assert again.random_bytes(32) == streams[0]
    assert len(set(streams)) == len(streams)
    assert nested.labels == ("audit", "x")
    # Deriving a substream does not advance the parent, and commitments name the root seed.
    assert root.random_bytes(8) == ChaChaSource(KAT_SEED).random_bytes(8)
    assert nested.seed_commitment == root.seed_commitment
    assert nested.describe()["substream"] == ["audit", "x"]
    with pytest.raises(TypeError, match="label"):
        root.substream(b"audit")  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [bytes(31), bytes(33), b""], ids=len)
def test_seed_must_be_32_bytes(seed: bytes) -> None:
    with pytest.raises(ValueError, match="seed"):
        ChaChaSource(seed)


@pytest.mark.parametrize("seed", ["0" * 32, 0, None, list(range(32)), memoryview(bytes(32))],
                         ids=lambda v: re.sub(r" at 0x[0-9a-fA-F]+", "", repr(v)))
def test_seed_must_be_bytes(seed: Any) -> None:
    with pytest.raises(TypeError, match="seed"):
        ChaChaSource(seed)


def test_seed_may_be_a_bytearray() -> None:
    assert ChaChaSource(bytearray(32)).random_bytes(8) == ChaChaSource(bytes(32)).random_bytes(8)


def test_negative_reads_are_refused() -> None:
    with pytest.raises(ValueError):
        ChaChaSource(KAT_SEED).random_bytes(-1)
    with pytest.raises(ValueError):
        ChaChaSource(KAT_SEED).randbits(-1)


def test_stream_refuses_to_wrap_its_block_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past 2**32 blocks RFC 8439's counter would wrap and repeat the keystream."""
    monkeypatch.setattr(chacha_module, "_MAX_BYTES", 3 * chacha_module._BLOCK)
    rng = ChaChaSource(KAT_SEED)
    rng.random_bytes(3 * chacha_module._BLOCK)
    with pytest.raises(OverflowError):
        rng.random_bytes(1)


def test_chacha_is_thread_safe_and_loses_no_bytes() -> None:
    """Concurrent 8-byte reads hand out exactly the words of the sequential stream, each once."""
    threads, reads = 8, 2000
    rng = ChaChaSource(KAT_SEED)
    seen: list[list[bytes]] = [[] for _ in range(threads)]

    def work(i: int) -> None:
        for _ in range(reads):
            seen[i].append(rng.random_bytes(8))

    _run_threads(work, threads)
    reference = ChaChaSource(KAT_SEED).random_bytes(8 * threads * reads)
    expected = sorted(reference[i : i + 8] for i in range(0, len(reference), 8))
    assert sorted(chunk for chunks in seen for chunk in chunks) == expected
    assert rng.bytes_served == 8 * threads * reads


# --- the system source ---------------------------------------------------------------------------


def _run_threads(work: Any, count: int) -> None:
    errors: list[BaseException] = []

    def guarded(i: int) -> None:
        try:
            work(i)
        except BaseException as exc:
            errors.append(exc)

    pool = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not errors, errors


def test_system_source_counts_bytes_served() -> None:
    rng = SystemSource()
    rng.random_bytes(5)
    rng.words(3)
    rng.randbits(9)
    rng.random_bytes(0)
    assert rng.bytes_served == 5 + 24 + 2
    assert rng.describe() == {"kind": "system", "reproducible": False}


def test_system_source_is_thread_safe() -> None:
    """Many threads, small and block-straddling reads: no error, exact count, no byte served twice."""
    threads, reads = 8, 500
    rng = SystemSource()
    seen: list[list[bytes]] = [[] for _ in range(threads)]

    def work(i: int) -> None:
        for j in range(reads):
            seen[i].append(rng.random_bytes(16 if j % 50 else 5000))

    _run_threads(work, threads)
    total = sum(len(c) for chunks in seen for c in chunks)
    assert rng.bytes_served == total == threads * reads * 16 + threads * (reads // 50) * (5000 - 16)
    sixteens = [c for chunks in seen for c in chunks if len(c) == 16]
    assert len(set(sixteens)) == len(sixteens)  # a repeat has probability 2**-110 unless bytes are reused


def test_system_source_reads_in_blocks_and_sends_large_requests_to_the_kernel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    requests: list[int] = []
    real_urandom = os.urandom

    def counting(n: int) -> bytes:
        requests.append(n)
        return real_urandom(n)

    monkeypatch.setattr(system_module.os, "urandom", counting)
    block = system_module._BLOCK
    rng = SystemSource()
    for _ in range(1000):
        rng.random_bytes(8)
    assert requests == [block]  # 1000 small reads, one system call
    big = rng.random_bytes(3 * block)
    assert len(big) == 3 * block and requests == [block, 3 * block]
    rng.random_bytes(8)  # the buffer was left alone by the large read
    assert requests == [block, 3 * block]
    rng.random_bytes(block)  # exactly one block: straddles the buffer, refills once
    assert requests == [block, 3 * block, block]


def test_resolve_source_defaults_to_one_process_wide_system_source() -> None:
    assert isinstance(resolve_source(None), SystemSource)
    assert resolve_source(None) is resolve_source(None) is default_source()
    chacha = ChaChaSource(KAT_SEED)
    assert resolve_source(chacha) is chacha
    before = default_source().bytes_served
    samplers.discrete_laplace(10, size=10)
    assert default_source().bytes_served > before


@pytest.mark.parametrize("bad", [np.random.default_rng(0), os.urandom, 0, "rng"],
                         ids=lambda v: re.sub(r" at 0x[0-9a-fA-F]+", "", repr(v)))
def test_resolve_source_refuses_other_types(bad: Any) -> None:
    with pytest.raises(TypeError, match="rng"):
        resolve_source(bad)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_gives_the_child_fresh_bytes_and_empty_pools() -> None:
    """Without the at-fork hook the child would serve the parent's buffered bytes and pooled noise."""
    rng = SystemSource()
    rng.random_bytes(8)  # fill the buffer
    samplers.discrete_laplace(10, rng=rng)  # fill a pool
    samplers.discrete_laplace(10)  # and one of the default source
    assert rng.pools and default_source().pools
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report its next bytes and whether the pools were emptied, then leave at once
        try:
            os.close(read_end)
            report = rng.random_bytes(32) + bytes([not rng.pools, not default_source().pools])
            os.write(write_end, report)
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = pipe.read()
    os.waitpid(pid, 0)
    assert len(report) == 34
    child_bytes, pools_emptied = report[:32], report[32:]
    assert child_bytes != rng.random_bytes(32)
    assert pools_emptied == b"\x01\x01"
    assert rng.pools  # the parent keeps its own
