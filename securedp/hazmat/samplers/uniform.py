"""The uniform law on ``{0, 1, ..., n-1}``, sampled exactly.

**Algorithm.** Read ``k = (n - 1).bit_length()`` fair bits as an integer and
reject it while it is ``>= n`` (at most half the time). Exact by symmetry; the
number of rejections is independent of the value finally returned, so the
running time reveals nothing about it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import describe
from securedp.hazmat.exact.rational import to_int
from securedp.hazmat.samplers.params import check_size, count_of, shaped

_INT64_LIMIT = 1 << 63


def uniform_below_one(n: int, source: RandomSource) -> int:
    """One uniform integer in ``[0, n)`` for an int ``n >= 1`` (no argument checks)."""
    k = (n - 1).bit_length()
    while True:
        value = source.randbits(k)
        if value < n:
            return value


def uniform_below_secret(n: int, bits: int, source: RandomSource) -> int:
    """One uniform integer in ``[0, n)`` for a secret ``1 <= n <= 2**bits``, in a time that does not follow ``n``.

    :func:`uniform_below_one` retries with probability ``1 - n / 2**k``: when ``n`` depends on the data
    (a selection's envelope mass), so does its running time. This draw reads ``W = bits + 64`` bits
    ``x``, the same for every ``n`` of the public range, and returns ``floor(x * n / 2**W)`` unless the
    low part ``x * n mod 2**W`` lies in the top ``2**W mod n`` values, where it reads ``x`` afresh
    (Lemire 2019, "Fast random integer generation in an interval", ACM TOMACS 29(1), whose rejected
    values are the bottom ones instead). The accepted ``x * n`` of each value ``r`` are the multiples
    of ``n`` in ``[r 2**W, (r + 1) 2**W - (2**W mod n))``, a span of ``floor(2**W / n)`` times ``n``:
    every value keeps exactly ``floor(2**W / n)`` of the ``x``, so the law is exactly uniform. A retry,
    and even computing ``2**W mod n`` (only when the low part is within ``n`` of the top), has
    probability at most ``n / 2**W <= 2**-64``.
    """
    top = 1 << (bits + 64)
    while True:
        product = source.randbits(bits + 64) * n
        low = product & (top - 1)
        if low < top - n or low < top - top % n:  # the remainder is computed with probability <= 2**-64
            return product >> (bits + 64)


def uniform_below_array(n: int, count: int, source: RandomSource) -> np.ndarray:
    """``count`` uniform integers in ``[0, n)``: int64 when they fit, else Python ints."""
    if n == 1:
        return np.zeros(count, dtype=np.int64)
    if n > _INT64_LIMIT:
        return np.array([uniform_below_one(n, source) for _ in range(count)], dtype=object)
    k = (n - 1).bit_length()
    out = np.empty(count, dtype=np.int64)
    todo = np.arange(count)
    while todo.size:
        words = source.words(todo.size)
        values = words >> np.uint64(64 - k) if k else np.zeros(todo.size, dtype=np.uint64)
        keep = values < np.uint64(n)
        out[todo[keep]] = values[keep].astype(np.int64)
        todo = todo[~keep]
    return out


def uniform_below(n: Any, size: Any = None, *, rng: RandomSource | None = None) -> Any:
    """A uniform integer in ``[0, n)`` for an integer ``n >= 1``, exactly.

    Returns an ``int`` when ``size`` is ``None``; else an ``int64`` array, or
    an object array of Python ints when ``n > 2**63``.
    """
    bound = to_int(n, "n")
    if bound < 1:
        raise ValueError(f"n must be >= 1, got {describe(bound)}")
    m = check_size(size)
    source = resolve_source(rng)
    if m is None:
        return uniform_below_one(bound, source)
    return shaped(uniform_below_array(bound, count_of(m), source), m)
