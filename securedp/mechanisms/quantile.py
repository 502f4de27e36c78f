"""Median and quantiles by the exponential mechanism over a whole lattice range, exactly.

**Candidates.** Every point of the lattice inside the public ``bounds``
(snapped inward): ``y = k * step`` for ``lo_u <= k <= hi_u``. Nothing about the
candidate set depends on the data. The lattice is ``lattice=`` (a
:class:`~securedp.lattice.Lattice` or a step) or by default step 1 for
integer bounds at least 100 apart, the coarsest power of two giving 100
steps for narrower integer bounds, and
:meth:`~securedp.lattice.Lattice.for_bounds` otherwise.
Records are screened, clamped and rounded onto the lattice first
(:mod:`securedp.lattice`); ``max_contributions`` and ``ids`` bound each
person's rows as everywhere in securedp.

**Utility.** For ``n`` clamped records ``x`` and ``q = a / b`` in [0, 1]
(an exact rational, ``b > 0``), ``u(y) = -|#{i : x_i < y} - q * n|``.
Adding or removing one row changes ``#{x_i < y}`` by 0 or 1 and ``q * n`` by
``q``, in the same direction, so ``u`` moves by at most ``max(q, 1 - q) <= 1``;
a person with ``m = max_contributions`` rows moves it by at most ``m``: the
sensitivity is ``m``.

**Law and privacy map.** ``P(y)`` is proportional to
``exp(epsilon * u(y) / (2 * m))``: the exponential mechanism (McSherry &
Talwar 2007), ``epsilon``-DP. Points strictly between consecutive sorted
records share a utility, so, as in Smith (2011), the release picks the gap
``j`` (the points with ``x_(j) < y <= x_(j+1)``, rank ``j``) with probability
proportional to ``(number of lattice points in it) * exp(-epsilon *
|b j - a n| / (2 m b))`` and then a uniform point inside it, both exactly in
one draw of :class:`~securedp.hazmat.samplers.categorical.ExpCategorical`.
Gaps far from the target rank share one far slot whose weights are bounded
in closed form, so they keep their exact non-zero probability without being
evaluated.

**Several quantiles.** :func:`quantiles` releases each ``q`` with
``epsilon / len(qs)`` (basic composition: the total is ``epsilon``-DP),
sorting the data once.

**Timing.** Clamping, sorting and the gap arithmetic are full vectorised
passes whose time depends on ``n`` only through its size; the selection's
time does not depend on the point selected (see the sampler).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import positive_rational, probability
from securedp.hazmat.samplers.categorical import ExpCategorical
from securedp.lattice import Lattice
from securedp.mechanisms.contributions import check_max_contributions
from securedp.mechanisms.records import LatticeRecords, exact_value, lattice_records, parse_bounds, resolve_lattice
from securedp.mechanisms.release import PreparedRelease, Release, canonical_input

_SAFE = 1 << 62


QUANTILE_RESOLUTION = 100
"""Integer bounds get step 1 only when they hold at least this many steps (see :func:`_default_lattice`)."""


def _default_lattice(lattice: Any, bounds: Any) -> Any:
    """The candidate lattice when none is given, from the public bounds alone.

    Integer bounds at least ``QUANTILE_RESOLUTION`` apart: step 1 (integer
    data keeps integer answers: ages in ``(0, 120)``). Narrower integer
    bounds: the coarsest power of two giving at least ``QUANTILE_RESOLUTION``
    steps (``(0, 1)`` has step ``2**-7``; 0.1 answered 0 or 1 there). Other
    bounds: :meth:`~securedp.lattice.Lattice.for_bounds`, as for sums and means.
    """
    if lattice is not None:
        return lattice
    lo, hi = parse_bounds(bounds)
    if lo < hi and lo.denominator == 1 and hi.denominator == 1:
        fine = Lattice.for_bounds(lo, hi, resolution=QUANTILE_RESOLUTION)
        return fine if fine.step < 1 else Lattice(1)
    return resolve_lattice(None, lo, hi)


class _Gaps:
    """Sorted records cut into the ``n + 1`` gaps of the lattice range ``[lo_u, hi_u]``."""

    def __init__(self, rec: LatticeRecords) -> None:
        units = rec.units
        self.n = units.size
        wide = units.dtype == object or rec.hi_u - rec.lo_u >= _SAFE or max(abs(rec.lo_u), abs(rec.hi_u)) >= _SAFE
        dtype = object if wide else np.int64
        xs = np.sort(units.astype(dtype, copy=False))
        edges = np.concatenate((np.array([rec.lo_u - 1], dtype=dtype), xs, np.array([rec.hi_u], dtype=dtype)))
        self.counts = np.diff(edges)  # points y with x_(j) < y <= x_(j+1), clipped to the range
        self.starts = edges[:-1] + 1
        self.ranks = np.arange(self.n + 1, dtype=np.int64)

    def plan(self, q: Fraction, epsilon: Fraction, sensitivity: int) -> ExpCategorical:
        a, b = q.numerator, q.denominator
        if b * (self.n + 1) < _SAFE:
            gaps = np.abs(b * self.ranks - a * self.n)
        else:
            gaps = np.array([abs(b * j - a * self.n) for j in range(self.n + 1)], dtype=object)
        return ExpCategorical(gaps, epsilon / (2 * sensitivity * b), self.counts)

    def point(self, plan: ExpCategorical, source: RandomSource) -> int:
        j, offset = plan.draw(source)
        return int(self.starts[j]) + offset


def _records(data: Any, bounds: Any, lattice: Any, ids: Any, max_contributions: Any, missing: str,
             fill: Any) -> tuple[int, LatticeRecords]:
    m = check_max_contributions(max_contributions)
    lat = _default_lattice(lattice, bounds)
    return m, lattice_records(data, bounds=bounds, lattice=lat, ids=ids, max_contributions=m, missing=missing, fill=fill)


def _check_qs(qs: Any) -> list[Fraction]:
    if isinstance(qs, (str, bytes)) or not hasattr(qs, "__iter__"):
        raise TypeError("qs must be a sequence of quantile levels in [0, 1]")
    levels = [probability(q, f"qs[{i}]") for i, q in enumerate(qs)]
    if not levels:
        raise ValueError("qs must not be empty")
    return levels


def prepare_quantiles(
    data: Any,
    qs: Sequence[Any],
    *,
    bounds: Any = None,
    epsilon: Any,
    max_contributions: Any = 1,
    ids: Any = None,
    lattice: Any = None,
    missing: str = "raise",
    fill: Any = None,
    statistic: str = "quantiles",
) -> PreparedRelease:
    """Validate and price the release of several quantiles (``epsilon / len(qs)`` each); nothing is drawn yet."""
    eps = positive_rational(epsilon, "epsilon")
    levels = _check_qs(qs)
    m, rec = _records(data, bounds, lattice, ids, max_contributions, missing, fill)
    gaps = _Gaps(rec)
    share = eps / len(levels)
    plans = [gaps.plan(q, share, m) for q in levels]
    parameters = {**rec.parameters(), "qs": tuple(levels), "epsilon_each": share, "sensitivity": m,
                  "utility": "-|#{x < y} - q n|"}

    def run(source: RandomSource) -> Release:
        values = tuple(exact_value(rec.lattice.value(gaps.point(p, source))) for p in plans)
        single = statistic != "quantiles"
        return Release(
            value=values[0] if single else values,
            statistic=statistic,
            mechanism="exponential",
            parameters={**parameters, "q": levels[0]} if single else parameters,
            epsilon=eps,
            rho=None,
            max_contributions=m,
            labels=None if single else tuple(levels),
            source=source.describe(),
        )

    return PreparedRelease(statistic, eps, None, run, canonical_input("quantiles", sorted_units=lambda: np.sort(rec.units)))


def prepare_quantile(data: Any, q: Any, *, bounds: Any = None, epsilon: Any, max_contributions: Any = 1,
                     ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None) -> PreparedRelease:
    """Validate and price one quantile ``q`` (a rational in [0, 1]); nothing is drawn yet."""
    level = probability(q, "q")
    return prepare_quantiles(data, [level], bounds=bounds, epsilon=epsilon, max_contributions=max_contributions,
                             ids=ids, lattice=lattice, missing=missing, fill=fill, statistic="quantile")


def prepare_median(data: Any, *, bounds: Any = None, epsilon: Any, max_contributions: Any = 1, ids: Any = None,
                   lattice: Any = None, missing: str = "raise", fill: Any = None) -> PreparedRelease:
    """Validate and price the median (the quantile 1/2); nothing is drawn yet."""
    return prepare_quantiles(data, [Fraction(1, 2)], bounds=bounds, epsilon=epsilon,
                             max_contributions=max_contributions, ids=ids, lattice=lattice, missing=missing,
                             fill=fill, statistic="median")


def quantiles(data: Any, qs: Sequence[Any], *, bounds: Any = None, epsilon: Any, max_contributions: Any = 1,
              ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None,
              rng: RandomSource | None = None) -> Release:
    """Several quantiles, each an exact lattice value (a tuple, in the order of ``qs``); see the module docstring."""
    return prepare_quantiles(data, qs, bounds=bounds, epsilon=epsilon, max_contributions=max_contributions, ids=ids,
                             lattice=lattice, missing=missing, fill=fill).execute(rng)


def quantile(data: Any, q: Any, *, bounds: Any = None, epsilon: Any, max_contributions: Any = 1, ids: Any = None,
             lattice: Any = None, missing: str = "raise", fill: Any = None,
             rng: RandomSource | None = None) -> Release:
    """The ``q``-quantile as an exact lattice value (``int`` or ``Fraction``); see the module docstring."""
    return prepare_quantile(data, q, bounds=bounds, epsilon=epsilon, max_contributions=max_contributions, ids=ids,
                            lattice=lattice, missing=missing, fill=fill).execute(rng)


def median(data: Any, *, bounds: Any = None, epsilon: Any, max_contributions: Any = 1, ids: Any = None,
           lattice: Any = None, missing: str = "raise", fill: Any = None,
           rng: RandomSource | None = None) -> Release:
    """The median as an exact lattice value (``int`` or ``Fraction``); see the module docstring."""
    return prepare_median(data, bounds=bounds, epsilon=epsilon, max_contributions=max_contributions, ids=ids,
                          lattice=lattice, missing=missing, fill=fill).execute(rng)
