"""Clamping bounds chosen privately from one column: a release whose value is the bounds ``(lo, hi)``.

A sum, mean or variance needs public bounds; :func:`private_bounds` spends part of the budget to choose
them from the data. Both methods work on the symmetric power-of-two range ``[-2**E, 2**E]`` with the
lattice step ``2**e`` (``exponents=(e, E)``, default ``(-8, 40)``), read the column exactly (the reader and
lattice screen of every release: values beyond the range clamp to its ends), bound each person to
``max_contributions`` rows with ``ids`` (the salted rule of :mod:`securedp.mechanisms.contributions`),
and release an exact ``epsilon``:

* ``method="histogram"`` (the default): a **signed magnitude histogram**, as Tumult Analytics'
  ``get_bounds`` (counts of ``|x|`` in bins ``[2**i, 2**(i+1))``), kept apart by sign: the
  :func:`securedp.prepare_histogram` of the bins ``[-2**(i+1), -2**i)``, ``[-2**e, 2**e)``,
  ``[2**i, 2**(i+1))`` for ``e <= i < E``, exact discrete Laplace noise of scale
  ``max_contributions / epsilon`` on each. The threshold ``tau`` is the smallest integer with
  ``P(|Z| > tau) <= beta / bins`` (:func:`securedp.mechanisms.accuracy.laplace_halfwidth`), so with
  probability at least ``1 - beta`` no empty bin's noisy count exceeds it. ``hi`` is the upper edge
  ``2**(i+1)`` of the highest positive bin whose noisy count exceeds ``tau`` (``2**e`` if none), ``lo`` the
  lower edge of the lowest such negative bin (``-2**e`` if none): with probability at least ``1 - beta``
  each bound is at most twice the largest magnitude on its side (or ``2**e``).
* ``method="quantiles"``: the exponential-mechanism quantiles at ``quantiles`` (default ``(0.05, 0.95)``,
  ``epsilon / 2`` each) over every point of the lattice (:func:`securedp.prepare_quantiles`; McSherry and
  Talwar 2007, Smith 2011), sorted so that ``lo <= hi``.

**Why the histogram is the default** (``benchmarks/bench_bounds.py``, ``epsilon = 1``; the error is that of a
sum released with the chosen bounds at ``epsilon = 1``, clamping bias plus the 95% noise half-width, over
the true sum; median of 20 seeds):

=====================================  =====================  ===================
data (n = 100,000)                     histogram              quantiles 5%-95%
=====================================  =====================  ===================
lognormal incomes ``exp(N(10, 1))``    0.0023 (no clamping)   0.0957 (top 5% cut)
normal ``N(0, 1000**2)``               sum error 2.2e-4 of    1.2e-3 of
                                       ``sum |x|``            ``sum |x|``
=====================================  =====================  ===================

On skewed data the quantile bounds cut the upper tail, which holds a large share of the total, so the
sum's bias dwarfs the noise; the histogram's bound covers the largest values within a factor 2 at the
price of a wider noise, which a large ``n`` absorbs. (The quantile bounds are tighter, so they win for a
mean of few rows of symmetric data; ask for them with ``method="quantiles"``.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from securedp.accounting.session import Session, session_method
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import positive_rational, probability
from securedp.lattice import Lattice
from securedp.mechanisms.accuracy import check_alpha, laplace_halfwidth
from securedp.mechanisms.contributions import check_max_contributions
from securedp.mechanisms.histogram import prepare_histogram
from securedp.mechanisms.quantile import prepare_quantiles
from securedp.mechanisms.release import Execution, PreparedRelease, Release

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
    """``-2**E, ..., -2**(e+1), -2**e, 2**e, 2**(e+1), ..., 2**E``."""
    powers = [Fraction(2) ** i for i in range(low, high + 1)]
    return [-p for p in reversed(powers)] + powers


def _finish(inner: PreparedRelease, finish: Callable[[Release], Release]) -> PreparedRelease:
    """``inner`` with its release turned into the bounds release (same cost, same draws, same input)."""

    def execution(source: RandomSource) -> Execution:
        done = inner.executed(source)
        return Execution(finish(done.release), done.input_bytes)

    return PreparedRelease("bounds", inner.epsilon, None, lambda source: execution(source).release,
                           execution=execution)


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
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    eps = positive_rational(epsilon, "epsilon")
    low, high = _exponents(exponents)
    m = check_max_contributions(max_contributions)
    common = {"method": method, "exponents": [low, high]}
    if method == "quantiles":
        levels = [probability(q, "quantiles") for q in quantiles]
        if len(levels) != 2 or not levels[0] < levels[1]:
            raise ValueError("quantiles must be two levels q_lo < q_hi")
        inner = prepare_quantiles(data, levels, bounds=(-(Fraction(2) ** high), Fraction(2) ** high),
                                  epsilon=eps, lattice=Lattice(Fraction(2) ** low), ids=ids, max_contributions=m,
                                  missing=missing, fill=fill)

        def from_quantiles(release: Release) -> Release:
            lo, hi = sorted(release.value)
            return dataclasses.replace(release, value=(lo, hi), statistic="bounds", labels=("lo", "hi"),
                                       parameters={**common, **release.parameters})

        return _finish(inner, from_quantiles)
    edges = _signed_edges(low, high)
    bins = len(edges) - 1
    level = check_alpha(beta)
    tau = laplace_halfwidth(Fraction(m) / eps, level / bins)
    inner = prepare_histogram(data, bins=edges, epsilon=eps, ids=ids, max_contributions=m, missing=missing, fill=fill)
    middle = bins // 2  # the bin [-2**e, 2**e)

    def from_histogram(release: Release) -> Release:
        counts = release.value
        above = [i for i, c in enumerate(counts) if c > tau]
        hi = edges[max([i for i in above if i > middle], default=middle) + 1]
        lo = edges[min([i for i in above if i < middle], default=middle)]
        parameters = {**common, **release.parameters, "beta": level, "threshold": tau, "noisy_counts": counts}
        return dataclasses.replace(release, value=(_exact(lo), _exact(hi)), statistic="bounds",
                                   labels=("lo", "hi"), parameters=parameters)

    return _finish(inner, from_histogram)


def _exact(q: Fraction) -> int | Fraction:
    return q.numerator if q.denominator == 1 else q


_charged: Callable[..., Release] = session_method(prepare_private_bounds)


def private_bounds(data: Any, *, epsilon: Any, ids: Any = None, session: Session | None = None,
                   rng: RandomSource | None = None, **options: Any) -> Release:
    """Choose clamping bounds privately: the release of :func:`prepare_private_bounds`, whose ``value`` is
    ``(lo, hi)``; charged to ``session`` (in its error mode, audited) if given, else drawn from ``rng``.

    ``options``: ``max_contributions``, ``method``, ``exponents``, ``quantiles``, ``beta``, ``missing``, ``fill``.
    """
    if session is not None:
        if rng is not None:
            raise ValueError("give session= (its source draws) or rng=, not both")
        return _charged(session, data, epsilon=epsilon, ids=ids, **options)
    return prepare_private_bounds(data, epsilon=epsilon, ids=ids, **options).execute(rng)
