"""The interface every source of random bits implements.

A :class:`RandomSource` is a stream of independent, uniformly distributed
bytes. Everything random in securedp is derived from it by the exact
samplers; nothing else (not :mod:`random`, not NumPy's generators, not a float)
is ever consulted. Two implementations exist: :class:`~securedp.SystemSource`
(the operating system's CSPRNG, the default) and
:class:`~securedp.ChaChaSource` (a seeded, reproducible ChaCha20 stream for
tests and audit replay).

How bytes become numbers is fixed, so that a seeded stream yields the same
numbers on every platform: a *word* is 8 consecutive bytes read as an
unsigned little-endian integer, and :meth:`RandomSource.randbits` reads
``ceil(k / 8)`` bytes little-endian and keeps the low ``k`` bits.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any

import numpy as np


class DrawWatch:
    """Whether randomness was consumed inside a :func:`watching_draws` scope (``used``).

    Randomness is consumed when a source hands out bytes (:meth:`RandomSource.random_bytes`, through
    which every word, bit and uniform passes) or a value pre-drawn from a source is taken from its
    pools (:func:`securedp.hazmat.samplers.pool.pooled`).
    """

    __slots__ = ("used",)

    def __init__(self) -> None:
        self.used = False


_WATCH: contextvars.ContextVar[DrawWatch | None] = contextvars.ContextVar("securedp_draw_watch", default=None)


@contextlib.contextmanager
def watching_draws() -> Iterator[DrawWatch]:
    """A scope that records whether any randomness was consumed in it, by this thread or task.

    Nested scopes share the outermost watch (a conservative answer: ``used`` may also count
    randomness consumed in the outer scope before the inner one began). This is how a charge knows
    whether it may still be refunded: once the first random bit of a release is read, its charge
    stands (:meth:`securedp.ledger.budget.Budget.charging`).
    """
    current = _WATCH.get()
    if current is not None:
        yield current
        return
    watch = DrawWatch()
    token = _WATCH.set(watch)
    try:
        yield watch
    finally:
        _WATCH.reset(token)


def note_draw() -> None:
    """Record in the current :func:`watching_draws` scope (if any) that randomness was consumed."""
    watch = _WATCH.get()
    if watch is not None:
        watch.used = True


class RandomSource(ABC):
    """A thread-safe stream of uniform random bytes, with a count of bytes served."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._served = 0
        self.pools: Any = {}
        """Values pre-drawn from this source by the samplers (see
        :mod:`securedp.hazmat.samplers.pool`, which installs its bounded
        registry here on first use); emptied whenever the source's
        own buffer must be forgotten (after ``fork()`` for the system source)."""

    @abstractmethod
    def _generate(self, n: int) -> bytes:
        """Return ``n`` fresh bytes. Called with the lock held."""

    def random_bytes(self, n: int) -> bytes:
        """The next ``n`` bytes of the stream."""
        if n < 0:
            raise ValueError("n must be >= 0")
        with self._lock:
            data = self._generate(n)
            self._served += n
        if n:
            note_draw()
        return data

    def words(self, n: int) -> np.ndarray:
        """The next ``n`` 64-bit words, as a NumPy ``uint64`` array."""
        return np.frombuffer(self.random_bytes(8 * n), dtype="<u8").astype(np.uint64, copy=False)

    def word(self) -> int:
        """The next 64-bit word, as a Python int."""
        return int.from_bytes(self.random_bytes(8), "little")

    def randbits(self, k: int) -> int:
        """A uniform integer in ``[0, 2**k)``."""
        if k < 0:
            raise ValueError("k must be >= 0")
        if k == 0:
            return 0
        return int.from_bytes(self.random_bytes((k + 7) // 8), "little") & ((1 << k) - 1)

    @property
    def bytes_served(self) -> int:
        """How many bytes this source has handed out since it was created."""
        return self._served

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """A JSON-ready description for audit records (never secret material)."""
