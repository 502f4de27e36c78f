"""The sampling methods of NumPy's ``Generator`` that code swapping in :class:`~securedp.SecureGenerator` reaches
for besides noise: ``random``, ``bytes``, ``choice``, ``permutation`` and ``shuffle``, each exact from the source's
CSPRNG bits (mixed into :class:`~securedp.hazmat.generator.SecureGenerator`), and the broadcasting of
array-valued ``scale``, ``low`` and ``high`` (:meth:`Sampling.elementwise`: each element the scalar method's exact
draw).

* ``random``: ``j * 2**-53`` for ``j`` uniform in ``[0, 2**53)``, every value exactly a float64 (NumPy's law for
  its float64 ``random``); another ``dtype`` or ``out`` is refused.
* ``bytes``: the source's bytes themselves.
* ``permutation`` and ``shuffle``: the Fisher-Yates shuffle (Durstenfeld 1964) with exact uniform integers
  (rejection sampling): every order of ``n`` items has probability ``1 / n!``, along axis 0 as NumPy does.
* ``choice``: uniform indices (with replacement), the first ``size`` of a uniform permutation (without), or with
  ``p`` the law ``p / sum(p)`` computed exactly (a float ``p_i`` read at its exact binary value: NumPy asks for
  ``sum(p) == 1`` within a tolerance, here ``p`` is normalised exactly, never approximated); ``p`` with
  ``replace=False`` (whose law NumPy defines by its own successive draws) is refused.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import to_rational
from securedp.hazmat.samplers import check_size, uniform_below

_FLOAT_BITS = 53


def arrays_in(*params: Any) -> bool:
    """Whether any of ``params`` is array-valued (a list, tuple or NumPy array), as NumPy broadcasts it."""
    return any(isinstance(v, (list, tuple, np.ndarray)) for v in params)


class Sampling:
    """NumPy ``Generator``'s sampling methods, exact (see the module docstring)."""

    source: RandomSource

    def elementwise(self, method: Any, size: Any, dtype: Any, checks: dict[str, Any], **params: Any) -> Any:
        """``method`` (a scalar draw) at every element of ``params`` broadcast together, as NumPy broadcasts
        array-valued parameters, into an array of ``size`` (which the parameters' shape must broadcast to) or of
        their shape. Each element is the scalar method's exact draw, in C order; every element is first checked
        by ``checks[name](value, name)``, so a bad one is refused, naming its parameter, before any draw."""
        arrays = {name: np.asarray(value, dtype=object) for name, value in params.items()}
        for name, array in arrays.items():
            for value in array.ravel().tolist():
                checks[name](value, name)
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
        given = check_size(size)
        if given is not None:
            target = (given,) if isinstance(given, int) else tuple(given)
            try:
                fits = np.broadcast_shapes(shape, target) == target
            except ValueError:
                fits = False
            if not fits:
                raise ValueError(f"size {target} cannot hold the parameters' broadcast shape {shape}")
            shape = target
        spread = {name: np.broadcast_to(a, shape) for name, a in arrays.items()}
        out = np.empty(shape, dtype=dtype)
        for index in np.ndindex(shape):
            out[index] = method(**{name: a[index] for name, a in spread.items()})
        return out

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        """Uniform on the ``2**53`` points ``j * 2**-53`` of ``[0, 1)``, exactly (NumPy's float64 law)."""
        if np.dtype(dtype) != np.float64 or out is not None:
            raise ValueError("SecureGenerator.random draws float64 values only, without out= (its law is exactly "
                             "NumPy's float64 one: j * 2**-53, j uniform below 2**53)")
        shape = check_size(size)
        if shape is None:
            return math.ldexp(int(uniform_below(1 << _FLOAT_BITS, rng=self.source)), -_FLOAT_BITS)
        draws = uniform_below(1 << _FLOAT_BITS, shape, rng=self.source)
        return np.ldexp(np.asarray(draws, dtype=np.float64), -_FLOAT_BITS)  # j < 2**53: each exactly a float

    def bytes(self, length: int) -> bytes:
        """``length`` bytes from the source (its CSPRNG stream itself)."""
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 0:
            raise ValueError(f"length must be an integer >= 0, got {length!r}")
        return self.source.random_bytes(int(length))

    def _order(self, n: int) -> list[int]:
        """A uniform permutation of ``range(n)`` (Fisher-Yates, exact uniform integers)."""
        order = list(range(n))
        for i in range(n - 1, 0, -1):
            j = int(uniform_below(i + 1, rng=self.source))
            order[i], order[j] = order[j], order[i]
        return order

    def permutation(self, x: Any, axis: int = 0) -> Any:
        """A uniformly permuted ``arange(x)`` (an integer ``x``), or a permuted copy of ``x`` along axis 0."""
        if axis != 0:
            raise ValueError("SecureGenerator.permutation permutes along axis 0 only")
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            return np.asarray(self._order(int(x)), dtype=np.int64)
        array = np.asarray(x)
        if array.ndim == 0:
            raise ValueError("x must be an integer or an array of at least one dimension")
        return array[self._order(len(array))]

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """Permute the mutable sequence or array ``x`` in place, uniformly, along axis 0."""
        if axis != 0:
            raise ValueError("SecureGenerator.shuffle permutes along axis 0 only")
        items = [x[i].copy() if isinstance(x, np.ndarray) and x.ndim > 1 else x[i] for i in range(len(x))]
        for i, j in enumerate(self._order(len(items))):
            x[i] = items[j]

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0,
               shuffle: bool = True) -> Any:
        """Items of ``a`` (or of ``arange(a)`` for an integer), uniformly or by the exact law ``p / sum(p)``;
        ``shuffle=False`` (without replacement) gives the same uniform subset in the order of ``a``."""
        if axis != 0:
            raise ValueError("SecureGenerator.choice draws along axis 0 only")
        pool = np.arange(int(a)) if isinstance(a, (int, np.integer)) and not isinstance(a, bool) else np.asarray(a)
        n = len(pool) if pool.ndim else 0
        given = check_size(size)
        shape = None if given is None else (given,) if isinstance(given, int) else tuple(given)
        count = 1 if shape is None else math.prod(shape)
        if n == 0:
            raise ValueError("a must be a positive integer or a non-empty sequence")
        if p is not None:
            if not replace:
                raise ValueError("choice with p and replace=False is refused: NumPy defines that law by its own "
                                 "successive draws, which this exact generator does not reproduce")
            index = self._weighted(p, n, count)
        elif replace:
            index = [int(i) for i in np.ravel(uniform_below(n, count, rng=self.source))]
        elif count > n:
            raise ValueError(f"cannot take {count} items from {n} without replacement")
        else:
            index = self._order(n)[:count]  # the first items of a uniform order: a uniform ordered sample
            index = index if shuffle else sorted(index)
        picked = pool[np.asarray(index, dtype=np.int64)]
        if shape is None:
            return picked[0].item() if picked.ndim == 1 and isinstance(picked[0], np.generic) else picked[0]
        return picked.reshape(shape + pool.shape[1:])

    def _weighted(self, p: Any, n: int, count: int) -> list[int]:
        """``count`` indices with ``P(i) = p_i / sum(p)``, exactly: a uniform integer below the common-denominator
        total, located among the integer weights' running sums."""
        weights = [to_rational(q, "p") for q in np.ravel(np.asarray(p, dtype=object))]
        if len(weights) != n:
            raise ValueError(f"p must have one probability per item ({n}), got {len(weights)}")
        if any(w < 0 for w in weights) or not any(weights):
            raise ValueError("p must be >= 0 with a positive sum")
        common = math.lcm(*(Fraction(w).denominator for w in weights))
        running, total = [], 0
        for w in weights:
            total += int(w * common)
            running.append(total)
        return [bisect.bisect_right(running, int(u)) for u in np.ravel(uniform_below(total, count, rng=self.source))]
