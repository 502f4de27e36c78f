"""A drop-in for the noise methods of NumPy's ``Generator``, with exact, lattice-valued noise.

:class:`SecureGenerator` has ``laplace``, ``normal``, ``integers`` and
``geometric`` with NumPy's signatures and return shapes, so code written
against NumPy's generator switches by changing one line.

**The lattice rule.** A real-valued draw with scale ``s`` (any rational
> 0; a float is taken at its exact binary value) lives on the lattice of
step ``2**(e - RESOLUTION_BITS)`` where ``2**e <= s < 2**(e + 1)``: a power of
two fixed by ``s`` alone, between ``s / 2**13`` and ``s / 2**12``. The draw is

``(round(loc / step) + N) * step``

with ``round`` to nearest, ties to even, computed exactly, and ``N`` integer
noise drawn exactly: discrete Laplace of scale ``s / step`` for
:meth:`~SecureGenerator.laplace`, discrete Gaussian of ``sigma = s / step``
for :meth:`~SecureGenerator.normal`. The value is then converted to a
float, which is exact while ``|round(loc / step) + N| < 2**53`` and is in
any case a fixed function of the lattice value. So the set of possible
outputs is the lattice itself, whatever ``loc`` is: no low-order bit can
reveal ``loc`` (Mironov 2012), because there is no floating-point addition
of noise to ``loc``.

**The privacy cost of snapping.** If ``loc`` depends on the data through a
query of sensitivity ``Delta``, neighbouring ``loc`` values snap to lattice
points at most ``floor(Delta / step) + 1`` steps apart (exactly
``Delta / step`` when every ``loc`` is already on the lattice). Hence
``laplace(loc=f(D), scale=s)`` is ``epsilon``-DP with

``epsilon = (floor(Delta / step) + 1) * step / s <= (Delta + step) / s <= Delta / s + 2**-12``

and ``normal(loc=f(D), scale=s)`` is ``rho``-zCDP with ``rho =
((floor(Delta / step) + 1) * step / s)**2 / 2``. :meth:`SecureGenerator.epsilon_of`
and :meth:`SecureGenerator.rho_of` compute these exactly.

**Scalar calls** (``size=None``, scalar ``loc``) take ``step`` and the unit
scale from a per-scale cache, snap a float ``loc`` with integer arithmetic
on ``loc.as_integer_ratio()`` (an ``int`` by shifts; anything else through
:class:`~fractions.Fraction`), and take the integer noise from the source's
pool of pre-drawn values (:mod:`securedp.hazmat.samplers.pool`). The value
returned is the same exact function of ``loc``, ``scale`` and the noise as
on the array path: the rounding rule, the lattice and the float conversion
are identical, so only the speed differs.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import positive_rational, probability, to_int, to_rational
from securedp.hazmat.generator_sampling import Sampling, arrays_in
from securedp.hazmat.samplers import (
    PlanCache,
    check_size,
    discrete_gaussian,
    discrete_laplace,
    geometric,
    uniform_below,
)

RESOLUTION_BITS = 12
"""The lattice step is between ``scale / 2**(RESOLUTION_BITS + 1)`` and ``scale / 2**RESOLUTION_BITS``."""

_FLOAT_EXACT = 1 << 53
_LOC_SCALE = {"loc": to_rational, "scale": positive_rational}
"""How each element of an array-valued ``loc`` and ``scale`` is checked before anything is drawn."""


def lattice_exponent(scale: Any) -> int:
    """The ``k`` with lattice step ``2**k`` for ``scale``: ``floor(log2(scale)) - RESOLUTION_BITS``, exactly."""
    s = positive_rational(scale, "scale")
    e = s.numerator.bit_length() - s.denominator.bit_length()  # 2**(e-1) < s < 2**(e+1)
    if Fraction(2) ** e > s:
        e -= 1
    return e - RESOLUTION_BITS


def _pow2(k: int) -> Fraction:
    return Fraction(1 << k) if k >= 0 else Fraction(1, 1 << -k)


def _scale_plan(scale: Any) -> tuple[int, Any]:
    """``(k, scale / 2**k)`` for ``scale``: the lattice exponent and the scale in lattice units.

    The units are an ``int`` when integral (the common case: a float scale
    has at most 53 significant bits, so ``scale / 2**k`` is an integer
    whenever ``scale``'s lowest set bit is at least ``2**k``), else a
    :class:`~fractions.Fraction`; either way, exact.
    """
    k = lattice_exponent(scale)
    units = positive_rational(scale, "scale") / _pow2(k)
    return k, units.numerator if units.denominator == 1 else units


_SCALES: PlanCache[tuple[int, Any]] = PlanCache(_scale_plan)
"""Per raw ``scale`` (type and value), its lattice exponent and unit scale, computed once."""


def _snap_float(value: float, k: int) -> int:
    """``round(value / 2**k)``, ties to even, for a finite float, exactly, with integer arithmetic only.

    ``value = num / den`` exactly with ``den`` a power of two
    (``float.as_integer_ratio``); the quotient by ``2**k`` is
    ``num / (den * 2**k)`` or ``(num * 2**-k) / den``, rounded with ``divmod``.
    """
    num, den = value.as_integer_ratio()
    if k < 0:
        num <<= -k
    else:
        den <<= k
    if den == 1:
        return num
    floor, rem = divmod(num, den)
    twice = rem << 1
    if twice > den or (twice == den and floor & 1):
        floor += 1
    return floor


def _snap_int(value: int, k: int) -> int:
    """``round(value / 2**k)``, ties to even, for an int, exactly."""
    if k <= 0:
        return value << -k
    floor = value >> k  # floor division by 2**k, also for negative values
    rem = value - (floor << k)
    half = 1 << (k - 1)
    if rem > half or (rem == half and floor & 1):
        floor += 1
    return floor


def _scalar_to_float(units: int, k: int) -> float:
    """``units * 2**k`` as a float, correctly rounded (exact below 2**53 units).

    The same value as :func:`_to_floats`.
    """
    if -_FLOAT_EXACT < units < _FLOAT_EXACT:
        try:
            return math.ldexp(float(units), k)  # float(units) is exact; scaling by 2**k is correctly rounded
        except OverflowError:  # as numpy.ldexp in the array path: beyond the largest float, infinity
            return math.copysign(math.inf, units)
    return float(units << k) if k >= 0 else units / (1 << -k)  # int -> float and int / int are correctly rounded


def _snap(loc: Any, k: int) -> Any:
    """``round(loc / 2**k)`` to nearest, ties to even, exactly: an int or an object array of ints."""
    if isinstance(loc, (list, tuple, np.ndarray)):
        arr = np.asarray(loc, dtype=object)
        flat = [_snap_one(v, k) for v in arr.ravel()]
        return np.array(flat, dtype=object).reshape(arr.shape)
    return _snap_one(loc, k)


def _snap_one(value: Any, k: int) -> int:
    """``round(value / 2**k)``, ties to even, exactly, for any exact number ``value`` (fast paths for float and int)."""
    cls = type(value)
    if cls is float or cls is np.float64:
        if math.isfinite(value):
            return _snap_float(float(value), k)
    elif cls is int:
        return _snap_int(value, k)
    q = to_rational(value, "loc") / _pow2(k)
    floor, rem = divmod(q.numerator, q.denominator)
    twice = 2 * rem
    if twice > q.denominator or (twice == q.denominator and floor & 1):
        floor += 1
    return floor


def _to_floats(units: Any, k: int) -> Any:
    """``units * 2**k`` as float(s): exact below 2**53 units, correctly rounded beyond."""
    arr = np.asarray(units)
    if arr.size == 0 or max(abs(int(arr.min())), abs(int(arr.max()))) < _FLOAT_EXACT:
        out = np.ldexp(arr.astype(np.int64).astype(np.float64), k)
    else:
        step = _pow2(k)
        out = np.array([float(int(u) * step) for u in arr.ravel()], dtype=np.float64).reshape(arr.shape)
    return float(out) if out.ndim == 0 else out


class SecureGenerator(Sampling):
    """Exact, CSPRNG-driven replacements for the noise methods of NumPy's ``Generator``.

    ``rng`` is the securedp source of randomness (default: the system
    source; a :class:`~securedp.ChaChaSource` for reproducible runs). Unlike
    NumPy, ``scale`` must be > 0 and every parameter is read exactly. ``random``, ``bytes``, ``choice``,
    ``permutation`` and ``shuffle`` are NumPy's too, exact (:mod:`securedp.hazmat.generator_sampling`).
    """

    def __init__(self, rng: RandomSource | None = None) -> None:
        self.source = resolve_source(rng)

    @classmethod
    def from_seed(cls, seed: bytes) -> SecureGenerator:
        """A generator on the reproducible stream ``ChaChaSource(seed)`` (32 bytes): for tests and audit replay."""
        from securedp.hazmat.bits.chacha import ChaChaSource

        return cls(ChaChaSource(seed))

    @staticmethod
    def lattice(scale: Any) -> Fraction:
        """The step ``2**(floor(log2(scale)) - 12)`` of the outputs of ``laplace``/``normal`` at ``scale``."""
        return _pow2(lattice_exponent(scale))

    @staticmethod
    def epsilon_of(sensitivity: Any, scale: Any) -> Fraction:
        """Exact epsilon of ``laplace(loc=f(D), scale)`` for ``f`` of sensitivity ``sensitivity``, snapping included."""
        steps = SecureGenerator._steps(sensitivity, scale)
        return steps * SecureGenerator.lattice(scale) / positive_rational(scale, "scale")

    @staticmethod
    def rho_of(sensitivity: Any, scale: Any) -> Fraction:
        """Exact zCDP rho of ``normal(loc=f(D), scale)`` for ``f`` of sensitivity ``sensitivity``, snapping included."""
        steps = SecureGenerator._steps(sensitivity, scale)
        ratio = steps * SecureGenerator.lattice(scale) / positive_rational(scale, "scale")
        return ratio * ratio / 2

    @staticmethod
    def _steps(sensitivity: Any, scale: Any) -> int:
        """Most lattice steps between the snapped images of two locations ``Delta`` apart.

        Each location moves by at most half a step, so two locations less than
        ``Delta`` apart snap at most ``floor(Delta/step) + 1`` steps apart. When
        ``n = Delta/step`` is an integer, ``n`` is reached, and ``n + 1`` too when
        ``n`` is odd: two half-step ties ``(m + 1/2)`` and ``(m + n + 1/2)`` round
        half to even in opposite directions (an even ``n`` keeps their parity).
        """
        units = positive_rational(sensitivity, "sensitivity") / SecureGenerator.lattice(scale)
        if units.denominator == 1:
            return units.numerator + (units.numerator & 1)
        return units.numerator // units.denominator + 1

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """Laplace noise around ``loc``: ``(round(loc/step) + discrete_laplace(scale/step)) * step``.

        Returns a float when ``size`` is ``None`` and ``loc`` is a scalar,
        else a float64 array of shape ``size`` (or of ``loc``'s shape).
        """
        if arrays_in(scale):
            return self.elementwise(self.laplace, size, np.float64, _LOC_SCALE, loc=loc, scale=scale)
        return self._lattice_noise(loc, scale, size, discrete_laplace)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """Gaussian noise around ``loc``: ``(round(loc/step) + discrete_gaussian(scale/step)) * step``.

        ``scale`` is the standard deviation. Shapes as in :meth:`laplace`.
        """
        if arrays_in(scale):
            return self.elementwise(self.normal, size, np.float64, _LOC_SCALE, loc=loc, scale=scale)
        return self._lattice_noise(loc, scale, size, discrete_gaussian)

    def _lattice_noise(self, loc: Any, scale: Any, size: Any, sampler: Any) -> Any:
        """``(round(loc/step) + sampler(scale/step)) * step`` for a scalar ``scale``: ``sampler`` is
        :func:`~securedp.hazmat.samplers.discrete_laplace` (``scale`` its scale) or
        :func:`~securedp.hazmat.samplers.discrete_gaussian` (``scale`` its standard deviation)."""
        k, units = _SCALES.get(scale)
        if size is None and not isinstance(loc, (list, tuple, np.ndarray)):
            return _scalar_to_float(_snap_one(loc, k) + sampler(units, rng=self.source), k)
        return self._shifted(loc, k, size, lambda n: sampler(units, n, rng=self.source))

    def _shifted(self, loc: Any, k: int, size: Any, draw: Any) -> Any:
        center = _snap(loc, k)
        shape = check_size(size)
        if shape is None:
            if not isinstance(center, np.ndarray):
                return _to_floats(center + draw(None), k)
            shape = center.shape
        return _to_floats(draw(shape).astype(object) + center, k)

    def integers(
        self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64, endpoint: bool = False
    ) -> Any:
        """Uniform integers in ``[low, high)`` (``[low, high]`` with ``endpoint=True``), exactly.

        As in NumPy, ``integers(n)`` means ``[0, n)``. Returns an ``int`` when
        ``size`` is ``None``, else an array of ``dtype``.
        """
        if arrays_in(low, high):
            ends = {"low": low} if high is None else {"low": low, "high": high}
            return self.elementwise(lambda **e: self.integers(**e, dtype=dtype, endpoint=endpoint), size, dtype,
                                    {"low": to_int, "high": to_int}, **ends)
        lo, hi = (0, to_int(low, "low")) if high is None else (to_int(low, "low"), to_int(high, "high"))
        if endpoint:
            hi += 1
        if hi <= lo:
            raise ValueError(f"high must be greater than low (got low={lo}, high={hi}, endpoint={endpoint})")
        info = np.iinfo(dtype)
        if lo < info.min or hi - 1 > info.max:
            raise ValueError(f"[{lo}, {hi}) does not fit in {np.dtype(dtype).name}")
        shape = check_size(size)
        if shape is None:
            return lo + uniform_below(hi - lo, rng=self.source)
        return (uniform_below(hi - lo, shape, rng=self.source).astype(object) + lo).astype(dtype)

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Any:
        """The exponential law discretised on the lattice of ``scale``: ``G * step``, exactly.

        ``step = lattice(scale)`` and ``G`` is geometric with
        ``P(G = g) = (1 - q) q**g``, ``q = exp(-step / scale)``: the law of
        ``step * floor(E / step)`` for ``E`` exponential with mean ``scale``
        (memorylessness), so its tail is the exponential tail at every
        lattice point. Shapes and float output as in :meth:`laplace`.
        """
        if arrays_in(scale):
            return self.elementwise(self.exponential, size, np.float64, _LOC_SCALE, scale=scale)
        k, units_scale = _SCALES.get(scale)
        shape = check_size(size)
        if shape is None:
            return _scalar_to_float(int(geometric(units_scale, rng=self.source)), k)
        return _to_floats(geometric(units_scale, shape, rng=self.source).astype(object), k)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
        """Uniform on the lattice points of ``[low, high)``, exactly, returned as floats.

        The lattice has step ``2**(floor(log2(high - low)) - 52)``, so ``[low,
        high)`` holds between ``2**52`` and ``2**53`` equally likely points
        ``j * step`` (NumPy's resolution). Each point is returned as its
        float, correctly rounded: exact while ``|j| < 2**53``; when ``low`` or
        ``high`` is far from zero compared with the width, rounding can merge
        points and can return ``high`` itself.
        """
        if arrays_in(low, high):
            return self.elementwise(self.uniform, size, np.float64, {"low": to_rational, "high": to_rational},
                                    low=low, high=high)
        lo, hi = to_rational(low, "low"), to_rational(high, "high")
        if hi <= lo:
            raise ValueError("high must be greater than low")
        k = lattice_exponent(hi - lo) + RESOLUTION_BITS - 52
        step = _pow2(k)
        first = -((-lo) // step)  # ceil(lo / step)
        count = -((-hi) // step) - first  # points j * step with lo <= j * step < hi
        shape = check_size(size)
        if shape is None:
            return _scalar_to_float(first + int(uniform_below(count, rng=self.source)), k)
        return _to_floats(uniform_below(count, shape, rng=self.source).astype(object) + first, k)

    def geometric(self, p: Any, size: Any = None) -> Any:
        """The number of Bernoulli(``p``) trials up to and including the first success (support 1, 2, ...).

        NumPy's convention; equal to ``1 + securedp.hazmat.samplers.geometric(p=p)``. ``p`` is
        a rational in (0, 1], read exactly.
        """
        prob = probability(p, "p")
        shape = check_size(size)
        draws = geometric(p=prob, size=shape, rng=self.source)
        return 1 + draws

    def __repr__(self) -> str:
        return f"SecureGenerator({self.source!r})"
