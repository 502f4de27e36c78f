"""The operating system's CSPRNG, buffered: the default source of randomness."""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

from securedp.hazmat.bits.source import RandomSource

_BLOCK = 1 << 16
_LIVE: weakref.WeakSet[SystemSource] = weakref.WeakSet()


class SystemSource(RandomSource):
    """Bytes from ``os.urandom``, read in blocks of 64 KiB.

    * **Buffered**: a small request is served from the buffer, so a fair bit
      does not cost a system call; a request larger than the block goes to
      the kernel directly.
    * **Thread-safe**: the buffer is guarded by a lock.
    * **Fork-safe**: after ``os.fork()`` the child discards every buffered
      byte and every pool of pre-drawn values inherited from the parent
      (``os.register_at_fork``), so parent and child never share randomness.
    * **Not reproducible**, by design: use :class:`~securedp.ChaChaSource`
      when a stream must be replayed.
    """

    def __init__(self) -> None:
        super().__init__()
        self._buffer = b""
        self._offset = 0
        _LIVE.add(self)

    def _generate(self, n: int) -> bytes:
        available = len(self._buffer) - self._offset
        if n <= available:
            start = self._offset
            self._offset += n
            return self._buffer[start : self._offset]
        if n > _BLOCK:
            return os.urandom(n)
        head = self._buffer[self._offset :]
        self._buffer = os.urandom(_BLOCK)
        self._offset = n - len(head)
        return head + self._buffer[: self._offset]

    def _forget(self) -> None:
        self._buffer = b""
        self._offset = 0
        self.pools.clear()
        # A lock held by another thread at fork time would never be released
        # in the child: give the child a fresh one.
        self._lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        return {"kind": "system", "reproducible": False}

    def __repr__(self) -> str:
        return "SystemSource()"


def _after_fork_in_child() -> None:
    for source in list(_LIVE):
        source._forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
