"""Clamping bounds chosen privately from one column: a release whose value is the bounds ``(lo, hi)``.

A sum, mean or variance needs public bounds; :func:`private_bounds` spends part of the budget to choose
them from the data. Both methods work on the symmetric power-of-two range ``[-2**E, 2**E]`` with the
lattice step ``2**e`` (``exponents=(e, E)``, default ``(-8, 40)``), read the column exactly (the reader and
lattice screen of every release: values beyond the range clamp to its ends), bound each person to
``max_contributions`` rows with ``ids`` (the salted rule of :mod:`securedp.bounding.contributions`),
and release an exact ``epsilon``:

* ``method="histogram"`` (the default): a **signed magnitude histogram**, as Tumult Analytics'
  ``get_bounds`` (counts of ``|x|`` in bins ``[2**i, 2**(i+1))``) but kept apart by sign: the
  :func:`securedp.prepare_histogram` of the bins ``[-2**(i+1), -2**i)``, ``[-2**e, 0)``, ``[0, 2**e)`` and
  ``[2**i, 2**(i+1))`` for ``e <= i < E`` (the last closed at ``2**E``), with exact discrete Laplace noise of
  scale ``max_contributions / epsilon`` on each. The threshold ``tau`` is the smallest integer with
  ``P(|Z| > tau) <= beta / bins`` (:func:`securedp.privacy.accuracy.laplace_halfwidth`), so with
  probability at least ``1 - beta`` no empty bin's noisy count exceeds it. ``lo`` is the lower edge of the
  lowest bin whose noisy count exceeds ``tau``, ``hi`` the upper edge of the highest (``(-2**e, 2**e)`` if
  none does): with probability at least ``1 - beta`` both lie within the bins the data occupies, so
  ``|lo|`` and ``|hi|`` are at most twice the largest magnitude (or ``2**e``); nonnegative data gets
  ``lo >= 0``.
* ``method="quantiles"``: the exponential-mechanism quantiles at ``quantiles`` (default ``(0.05, 0.95)``,
  ``epsilon / 2`` each) over every point of the lattice (:func:`securedp.prepare_quantiles`; McSherry and
  Talwar 2007, Smith 2011), sorted so that ``lo <= hi``.

**Why the histogram is the default.** Measured by ``benchmarks/bench_bounds.py``: bounds chosen at
``epsilon = 1`` with the default exponents, each scored by the error of a sum released with them at
``epsilon = 1`` (clamping bias plus the 95% noise half-width) over ``sum |x|``; median of 20 seeds:

===========================  =======  ===========================  ===========================
data                         n        histogram (rows clamped)     quantiles 5%, 95% (clamped)
===========================  =======  ===========================  ===========================
lognormal ``exp(N(10, 1))``  1,000    0.042 (0.3%)                 61,934 (bounds +-6e11)
lognormal ``exp(N(10, 1))``  10,000   0.0079 (0.08%)               0.097 (10%)
lognormal ``exp(N(10, 1))``  100,000  0.00095 (0.01%)              0.099 (10%)
normal ``N(0, 1000**2)``     1,000    0.016 (0%)                   2,996,430 (bounds +-6e11)
normal ``N(0, 1000**2)``     10,000   0.0015 (0%)                  0.0024 (10%)
normal ``N(0, 1000**2)``     100,000  0.00015 (0.01%)              0.00015 (10%)
===========================  =======  ===========================  ===========================

On skewed data the quantile bounds cut the upper tail, which holds a large share of the total, so the
sum's bias (about 10% here) dwarfs the noise, whatever ``n``; the histogram's bounds cover the largest
values within a factor 2, and their wider noise shrinks relative to the total as ``n`` grows. On
symmetric data the two meet at large ``n``. With few rows the exponential mechanism over the ``2**49``
points of the default lattice fails outright: the far gaps' volume outweighs the utility of the target
rank (the law's rate per row times the rank, ``(epsilon / 2) (20 / 38) 0.05 n`` for the level ``1/20``, must
well exceed ``ln 2**49``), while the histogram's ``2 (E - e) + 2``
bins cost nothing in resolution. Quantiles remain available (``method="quantiles"``) for large ``n``
and a narrow ``exponents`` range, where they give tighter bounds (a mean's range).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.bounding.contributions import check_max_contributions
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.rational import positive_rational, probability
from securedp.lattice import Lattice
from securedp.ledger.release import Execution, PreparedRelease, Release
from securedp.privacy.accuracy import check_alpha, laplace_halfwidth
from securedp.session.methods import session_method
from securedp.session.session import Session
from securedp.tables.checks import Reading
from securedp.tables.one_column import DATA, column_table, one_cell, request

METHODS = ("histogram", "quantiles")
DEFAULT_EXPONENTS = (-8, 40)


def _exponents(exponents: Any) -> tuple[int, int]:
    try:
        low, high = exponents
    except (TypeError, ValueError):
        raise TypeError("exponents must be a pair (e, E) of integers: the step 2**e and the range 2**E") from None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)) or not low < high:
        raise ValueError(f"exponents must be integers e < E, got {exponents!r}")
    if high - low > 60:
        raise ValueError("exponents: the range 2**E must hold at most 2**60 steps 2**e")
    return low, high


def _signed_edges(low: int, high: int) -> list[Fraction]:
    """``-2**E, ..., -2**(e+1), -2**e, 0, 2**e, 2**(e+1), ..., 2**E``."""
    powers = [Fraction(2) ** i for i in range(low, high + 1)]
    return [*(-p for p in reversed(powers)), Fraction(0), *powers]


@dataclass(frozen=True)
class FinishedRoute:
    """The :class:`~securedp.ledger.release.Route` of a bounds release: the ``inner`` release's execution
    (same cost, same draws, same input) with its release turned into the bounds by ``finish``."""

    inner: PreparedRelease
    finish: Callable[[Release], Release]

    def execution(self, source: RandomSource) -> Execution:
        done = self.inner.executed(source)
        return Execution(self.finish(done.release), done.input_bytes)


def _finish(inner: PreparedRelease, finish: Callable[[Release], Release]) -> PreparedRelease:
    """``inner`` with its release turned into the bounds release (same cost, same draws, same input)."""
    return PreparedRelease("bounds", inner.epsilon, None, FinishedRoute(inner, finish))


def prepare_private_bounds(
    data: Any, *, epsilon: Any, ids: Any = None, max_contributions: Any = 1, method: str = "histogram",
    exponents: Sequence[int] = DEFAULT_EXPONENTS, quantiles: Sequence[Any] = ("0.05", "0.95"), beta: Any = "0.05",
    missing: str = "raise", fill: Any = None,
) -> PreparedRelease:
    """Validate and price the choice of bounds (see the module docstring); nothing is drawn yet.

    The release's ``value`` is ``(lo, hi)``, exact (``int`` or ``Fraction``), ``statistic`` ``"bounds"``,
    and its ``parameters`` hold the method, the exponents and what the bounds were read from (the noisy
    counts and threshold, or the quantile levels).
    """
    table, id_column = column_table(data, ids)
    how = BoundsMethod(method, exponents, quantiles, beta)
    return prepare_column_bounds(table, DATA, how, Reading(id_column=id_column, missing=missing, fill=fill),
                                 epsilon=epsilon, max_contributions=max_contributions)


@dataclass(frozen=True)
class BoundsMethod:
    """How bounds are chosen (see the module docstring): the ``method``, the range ``2**e .. 2**E`` of
    ``exponents``, and the ``quantiles`` levels (method ``"quantiles"``) or the level ``beta`` of the
    histogram's threshold (method ``"histogram"``); checked by :func:`prepare_column_bounds`."""

    method: str = "histogram"
    exponents: Sequence[int] = DEFAULT_EXPONENTS
    quantiles: Sequence[Any] = ("0.05", "0.95")
    beta: Any = "0.05"


def prepare_column_bounds(table: Any, column: str, how: BoundsMethod, reading: Reading, *, epsilon: Any,
                          max_contributions: Any = 1) -> PreparedRelease:
    """:func:`prepare_private_bounds` of the column ``column`` of a table (any kind, or a file: read by the one
    reader when the release reads its data), chosen ``how``, read as ``reading`` says (its person ids, its
    missing-value policy and declared types; ``missing_keys`` and ``memory_budget`` do not apply)."""
    method, quantiles, beta = how.method, how.quantiles, how.beta
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    eps = bounds.parameter(positive_rational(epsilon, "epsilon"), "epsilon")
    low, high = _exponents(how.exponents)
    m = check_max_contributions(max_contributions)
    common = {"method": method, "exponents": [low, high]}
    options = {"epsilon": eps, "rho": None, "max_contributions": m, "missing": reading.missing,
               "fill": reading.fill, "schema": reading.schema}
    if method == "quantiles":
        levels = tuple(probability(q, "quantiles") for q in quantiles)
        if len(levels) != 2 or not levels[0] < levels[1]:
            raise ValueError("quantiles must be two levels q_lo < q_hi")
        cell, aggregations = request("quantiles", column, bounds=(-(Fraction(2) ** high), Fraction(2) ** high),
                                     lattice=Lattice(Fraction(2) ** low), qs=levels)
        inner = one_cell(cell, aggregations, table, reading.id_column, **options)

        def from_quantiles(release: Release) -> Release:
            lo, hi = sorted(release.value)
            return dataclasses.replace(release, value=(lo, hi), statistic="bounds", labels=("lo", "hi"),
                                       parameters={**common, **release.parameters})

        return _finish(inner, from_quantiles)
    edges = _signed_edges(low, high)
    bins = len(edges) - 1
    level = check_alpha(beta)
    tau = laplace_halfwidth(Fraction(m) / eps, level / bins)
    cell, aggregations = request("histogram", column, bins=edges)
    inner = one_cell(cell, aggregations, table, reading.id_column, **options)
    zero = bins // 2  # the index of the edge 0, and of the bin [0, 2**e)

    def from_histogram(release: Release) -> Release:
        above = [i for i, c in enumerate(release.value) if c > tau]
        lo, hi = (edges[min(above)], edges[max(above) + 1]) if above else (edges[zero - 1], edges[zero + 1])
        parameters = {**common, **release.parameters, "beta": level, "threshold": tau, "noisy_counts": release.value}
        return dataclasses.replace(release, value=(_exact(lo), _exact(hi)), statistic="bounds",
                                   labels=("lo", "hi"), parameters=parameters)

    return _finish(inner, from_histogram)


def _exact(q: Fraction) -> int | Fraction:
    return q.numerator if q.denominator == 1 else q


_charged: Callable[..., Release] = session_method(prepare_private_bounds)


def private_bounds(
    data: Any, *, epsilon: Any, ids: Any = None, max_contributions: Any = 1, method: str = "histogram",
    exponents: Sequence[int] = DEFAULT_EXPONENTS, quantiles: Sequence[Any] = ("0.05", "0.95"), beta: Any = "0.05",
    missing: str = "raise", fill: Any = None, session: Session | None = None, rng: RandomSource | None = None,
) -> Release:
    """Choose clamping bounds privately: the release of :func:`prepare_private_bounds`, whose ``value`` is
    ``(lo, hi)``; charged to ``session`` (in its error mode, audited) if given, else drawn from ``rng``."""
    options = {"epsilon": epsilon, "ids": ids, "max_contributions": max_contributions, "method": method,
               "exponents": exponents, "quantiles": quantiles, "beta": beta, "missing": missing, "fill": fill}
    if session is not None:
        if rng is not None:
            raise ValueError("give session= (its source draws) or rng=, not both")
        return _charged(session, data, **options)
    return prepare_private_bounds(data, **options).execute(rng)
