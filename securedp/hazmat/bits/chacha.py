"""A seeded ChaCha20 keystream: reproducible randomness for tests and audit replay.

**Not for production releases whose seed could leak**: anyone holding the seed
can recompute every noise value drawn from it. Use it to make a test
deterministic, or to let a reviewer replay an audited release.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

from securedp.hazmat.bits.source import RandomSource

_BLOCK = 1 << 16
_NONCE = bytes(16)  # 32-bit block counter 0 followed by a 96-bit nonce of zeros (RFC 8439)
# The 32-bit block counter of RFC 8439 covers 2**32 blocks of 64 bytes.
_MAX_BYTES = (1 << 32) * 64
_SUBSTREAM_TAG = b"securedp/substream/v1"
_COMMIT_TAG = b"securedp/seed-commitment/v1"


class ChaChaSource(RandomSource):
    """The ChaCha20 keystream (RFC 8439) keyed by a 32-byte ``seed``.

    The stream is the keystream with counter 0 and an all-zero nonce, so
    ``ChaChaSource(bytes(32)).random_bytes(64)`` is RFC 8439's test vector
    A.1 #1, and every platform and version produces the same bytes (pinned by
    known-answer tests). One stream serves at most 256 GiB.

    :meth:`substream` derives independent, domain-separated streams:
    ``key = HMAC-SHA256(parent key, "securedp/substream/v1" || label)``.
    """

    def __init__(self, seed: bytes, *, _labels: tuple[str, ...] = (), _root: bytes | None = None) -> None:
        if not isinstance(seed, (bytes, bytearray)):
            raise TypeError(f"seed must be 32 bytes, not {type(seed).__name__}")
        if len(seed) != 32:
            raise ValueError(f"seed must be exactly 32 bytes, got {len(seed)}")
        super().__init__()
        self._key = bytes(seed)
        self._root = self._key if _root is None else _root
        self._labels = _labels
        self._cipher = Cipher(algorithms.ChaCha20(self._key, _NONCE), mode=None).encryptor()
        self._buffer = b""
        self._offset = 0
        self._produced = 0

    def _generate(self, n: int) -> bytes:
        available = len(self._buffer) - self._offset
        if n <= available:
            start = self._offset
            self._offset += n
            return self._buffer[start : self._offset]
        need = n - available
        fresh = max(_BLOCK, need)
        if self._produced + fresh > _MAX_BYTES:
            raise OverflowError("a ChaChaSource stream is exhausted after 256 GiB; use a substream")
        head = self._buffer[self._offset :]
        self._buffer = self._cipher.update(bytes(fresh))
        self._produced += fresh
        self._offset = need
        return head + self._buffer[:need]

    def substream(self, label: str) -> ChaChaSource:
        """An independent stream named ``label``; the same label always gives the same stream."""
        if not isinstance(label, str):
            raise TypeError("label must be a str")
        key = hmac.new(self._key, _SUBSTREAM_TAG + label.encode("utf-8"), hashlib.sha256).digest()
        return ChaChaSource(key, _labels=(*self._labels, label), _root=self._root)

    @property
    def labels(self) -> tuple[str, ...]:
        """The substream labels leading from the root seed to this stream."""
        return self._labels

    @property
    def seed_commitment(self) -> str:
        """SHA-256 commitment to the root seed (hex); reveals nothing about the seed."""
        return seed_commitment(self._root)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "chacha20",
            "reproducible": True,
            "seed_commitment": self.seed_commitment,
            "substream": list(self._labels),
        }

    def __repr__(self) -> str:
        path = "".join(f".substream({label!r})" for label in self._labels)
        return f"ChaChaSource(<seed {self.seed_commitment[:12]}…>){path}"


def seed_commitment(seed: bytes) -> str:
    """The hex SHA-256 of a domain tag and the seed: publishable, binding, hiding."""
    return hashlib.sha256(_COMMIT_TAG + bytes(seed)).hexdigest()
