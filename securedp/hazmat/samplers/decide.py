"""Exact comparison of a uniform random number with a real threshold, in fixed time.

Every random decision in securedp reduces to one question: for a uniform real
``U`` in [0, 1) and a threshold ``c`` (a rational or an irrational such as
``exp(-x)``), is ``U < c``? The answer is 1 with probability exactly ``c``.

**Algorithm** (the "fixed-width comparison", cf. the lazy-uniform technique of
Knuth & Yao 1976 and of OpenDP's ``sample_bernoulli_float``). ``U`` is an
infinite string of fair bits, revealed ``width`` bits at a time. Write ``u``
for its first ``width`` bits and ``L = floor(c * 2**width)``,
``H = ceil(c * 2**width)`` (``H - L <= 1``), computed once per threshold with
rigorous interval bounds (:class:`~securedp.hazmat.exact.Real`). Then

* ``u < L``: ``U < (u + 1) / 2**width <= c``, the answer is 1;
* ``u >= H``: ``U >= u / 2**width >= c``, the answer is 0;
* ``u == L`` (only when ``c * 2**width`` is not an integer): undecided. The
  resolver (:func:`resolve_below`) reads 64 more bits of the *same* ``U`` and
  compares again at the higher precision, until decided; it terminates with
  probability 1 and its answer is exactly ``[U < c]``.

The fast path costs one comparison of ``width`` bits whatever the outcome,
which is what makes the running time independent of the value drawn; the
resolver runs with probability ``2**-width`` per comparison (``2**-64`` by
default). Samplers state their total bound on that event per draw.

:func:`below` is the comparison for one uniform, given any integers
``lo <= c * 2**width <= hi`` (a tabulated floor gives ``hi = lo + 1``; bounds
computed on the fly may be one unit wider); :class:`Thresholds` is its
vectorised form over a table of floors. Every sampler uses one or the other.

Thresholds are stored clamped to ``2**width - 1``, so that ``c = 1`` is
representable; a clamped value always lands in the resolver, which answers
exactly. Widths below 64 exist only so that tests can force the resolver to
run often and prove it exact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Real

WORD_BITS = 64
_MASK64 = (1 << 64) - 1


def words_for(width: int) -> int:
    """How many 64-bit words one comparison at ``width`` bits consumes."""
    if not (1 <= width <= WORD_BITS or width == 2 * WORD_BITS):
        raise ValueError("width must be in 1..64 (one word) or 128 (two words)")
    return 1 if width <= 64 else 2


def resolve_below(real: Real, u: int, k: int, source: RandomSource) -> bool:
    """Exactly ``[U < c]`` for the real ``c``, given the first ``k`` bits ``u`` of ``U``."""
    while True:
        low, high = real.floor_ceil(k)
        if u + 1 <= low:
            return True
        if u >= high:
            return False
        u = (u << WORD_BITS) | source.word()
        k += WORD_BITS


def below(u: int, low: int, high: int, real: Callable[[], Real], width: int, source: RandomSource) -> bool:
    """Exactly ``[U < c]``, given the first ``width`` bits ``u`` of ``U`` and integers
    ``low <= c * 2**width <= high``: the one scalar fixed-width comparison every sampler uses.

    ``u < low`` answers 1 and ``u >= high`` answers 0 without reading anything;
    otherwise :func:`resolve_below` decides from ``real()`` (built only then)
    and further bits of the same ``U``. Tabulated thresholds use
    ``high = low + 1``; bounds computed on the fly may be wider.
    """
    if u < low:
        return True
    if u >= high:
        return False
    return resolve_below(real(), u, width, source)


def leading_bits(words: Sequence[int] | np.ndarray, width: int) -> int:
    """The first ``width`` bits of a uniform from its words (one word, or two for ``width == 128``)."""
    if width > WORD_BITS:
        return (int(words[0]) << WORD_BITS) | int(words[1])
    return int(words[0]) >> (WORD_BITS - width)


class Thresholds:
    """A list of thresholds ``c_i`` prepared for vectorised comparison at ``width`` bits.

    ``lows[i]`` must be ``floor(c_i * 2**width)`` and ``real_at(i)`` the exact
    :class:`Real` ``c_i`` (used only by the resolver).
    """

    __slots__ = ("_hi", "_lo", "_pylows", "_shift", "nwords", "real_at", "size", "width")

    def __init__(self, lows: Sequence[int], real_at: Callable[[int], Real], width: int) -> None:
        self.width = width
        self.nwords = words_for(width)
        self.real_at = real_at
        self.size = len(lows)
        top = (1 << width) - 1
        clamped = [min(int(v), top) for v in lows]
        self._pylows = clamped
        self._shift = np.uint64(WORD_BITS - width) if width < WORD_BITS else None
        if self.nwords == 1:
            self._hi = np.array(clamped, dtype=np.uint64)
            self._lo = None
        else:
            self._hi = np.array([v >> 64 for v in clamped], dtype=np.uint64)
            self._lo = np.array([v & _MASK64 for v in clamped], dtype=np.uint64)

    @classmethod
    def of(cls, reals: Sequence[Real], width: int) -> Thresholds:
        """Thresholds for explicitly given reals (each bounded to ``width`` bits)."""
        reals = list(reals)
        return cls([r.floor_ceil(width)[0] for r in reals], reals.__getitem__, width)

    def decide(self, words: np.ndarray, source: RandomSource, index: np.ndarray | None = None,
               real_of: Callable[[int], Real] | None = None) -> np.ndarray:
        """``[U_e < c_{index[e]}]`` for each element ``e``, exactly (the vectorised :func:`below`).

        ``words`` has shape ``(nwords, n)``: row 0 holds the first 64 bits of
        each ``U_e`` (of which the top ``width`` are used when ``width < 64``),
        row 1 the next 64 when ``width == 128``. ``index`` selects a threshold
        per element (default: threshold 0 for all). ``real_of(e)``, when given,
        is the exact threshold of element ``e`` for the resolver (default:
        ``real_at(index[e])``); its tabulated floor must be ``lows[index[e]]``.
        """
        hi = self._hi[0] if index is None else self._hi[index]
        u = words[0]
        if self._shift is not None:
            u = u >> self._shift
        if self._lo is None:  # one word (nwords == 1)
            bits = u < hi
            tie = u == hi
        else:
            lo = self._lo[0] if index is None else self._lo[index]
            v = words[1]
            same = u == hi
            bits = (u < hi) | (same & (v < lo))
            tie = same & (v == lo)
        if tie.any():
            self._resolve_ties(bits, tie, words, index, source, real_of)
        out: np.ndarray = bits
        return out

    def _resolve_ties(self, bits: np.ndarray, tie: np.ndarray, words: np.ndarray, index: np.ndarray | None,
                      source: RandomSource, real_of: Callable[[int], Real] | None) -> None:
        for e in np.flatnonzero(tie):
            u = leading_bits(words[:, e], self.width)
            if real_of is not None:
                bits[e] = resolve_below(real_of(int(e)), u, self.width, source)
            else:
                bits[e] = resolve_below(self.real_at(0 if index is None else int(index[e])), u, self.width, source)

    def decide_one(self, source: RandomSource, i: int = 0) -> bool:
        """One fresh exact decision ``[U < c_i]``, with Python integers (no NumPy overhead)."""
        u = source.word()
        if self.nwords == 2:
            u = (u << WORD_BITS) | source.word()
        elif self.width < WORD_BITS:
            u >>= WORD_BITS - self.width
        low = self._pylows[i]
        return below(u, low, low + 1, lambda: self.real_at(i), self.width, source)

    def draw_words(self, n: int, source: RandomSource) -> np.ndarray:
        """Fresh words for ``n`` comparisons, shaped for :meth:`decide`."""
        return source.words(self.nwords * n).reshape(self.nwords, n)

    def bernoulli(self, n: int, source: RandomSource, index: np.ndarray | None = None) -> np.ndarray:
        """``n`` fresh exact decisions ``[U < c]`` (boolean array)."""
        return self.decide(self.draw_words(n, source), source, index)
