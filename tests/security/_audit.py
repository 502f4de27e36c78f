"""Certified-violation audits shared by the security tests.

A mechanism is epsilon-DP when, for neighbouring inputs x0 and x1 and every
output event E, ``P[E | x0] <= e**epsilon * P[E | x1]`` (and symmetrically).
:func:`certified_violations` looks for an event that breaks this bound *with
statistical certainty*: the lower Clopper–Pearson bound of ``P[E | x0]``
exceeds ``e**epsilon`` times the upper Clopper–Pearson bound of ``P[E | x1]``.

**False-failure rate.** The events are chosen from the data, so a naive
Bonferroni correction over "each distinct observed event" would not hold.
The samples are therefore split: every other sample (a *selection* half)
nominates candidate events, namely those whose observed frequency ratio
already exceeds ``e**epsilon``; the other half, independent of the nomination,
certifies them. With ``m`` candidates each certification uses one-sided
bounds at level ``alpha / (2 m)``, so for a mechanism that satisfies the
bound the probability of reporting any violation is at most ``alpha``
(union bound over candidates and the two bounds of each). Interleaving the
split (even / odd positions) rather than cutting the samples in two keeps
both halves equally exposed to slow drifts such as background load.

Counts are binomial when samples are i.i.d.; when each sample has its own
success probability (timings under a varying load), the counts are
Poisson-binomial, whose tails are no heavier than the binomial's of the same
mean (Hoeffding 1956), so the bounds stay conservative.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

from scipy import stats


def cp_lower(k: int, n: int, level: float) -> float:
    """One-sided Clopper–Pearson lower bound on p from ``k`` successes in ``n``: ``P[p < bound] <= level``."""
    if k == 0:
        return 0.0
    return float(stats.beta.ppf(level, k, n - k + 1))


def cp_upper(k: int, n: int, level: float) -> float:
    """One-sided Clopper–Pearson upper bound on p from ``k`` successes in ``n``: ``P[p > bound] <= level``."""
    if k == n:
        return 1.0
    return float(stats.beta.isf(level, k + 1, n - k))


@dataclass(frozen=True)
class Violation:
    """An event certified to be more than ``e**epsilon`` times likelier under one input."""

    event: Hashable
    likelier_under: int  # 0 or 1: the input under which the event is certified likelier
    lower: float  # Clopper–Pearson lower bound of P[event | likelier input]
    upper: float  # Clopper–Pearson upper bound of P[event | other input]
    counts: tuple[int, int]  # certification-half counts under x0 and x1


def certified_violations(
    samples0: Sequence[Hashable],
    samples1: Sequence[Hashable],
    epsilon: float,
    alpha: float = 1e-6,
    *,
    log_baseline: Callable[[Hashable], float] | None = None,
) -> list[Violation]:
    """Events certified to violate ``epsilon``-DP between the releases behind the two samples.

    ``samples0`` and ``samples1`` are the observed output events (values, or
    tuples such as ``(value, runtime_bin)``) of independent runs on x0 and
    x1. The false-failure rate for a mechanism meeting the bound is at most
    ``alpha`` (see the module docstring).

    ``log_baseline(event)``, if given, is the exact ``ln(P[E | x0] / P[E | x1])``
    that the release is entitled to anyway (for instance the value-only
    privacy loss of Gaussian noise, which is unbounded); an event is then
    certified only when its log ratio exceeds the baseline by more than
    ``epsilon``. This audits what a side channel such as running time adds.
    """
    select0, certify0 = samples0[0::2], samples0[1::2]
    select1, certify1 = samples1[0::2], samples1[1::2]
    s0, s1 = Counter(select0), Counter(select1)
    ns0, ns1 = len(select0), len(select1)

    candidates: list[tuple[Hashable, int]] = []
    for event in set(s0) | set(s1):
        b = 0.0 if log_baseline is None else log_baseline(event)
        f0, f1 = s0[event] / ns0, s1[event] / ns1
        if f0 > math.exp(epsilon + b) * f1:
            candidates.append((event, 0))
        if f1 > math.exp(epsilon - b) * f0:
            candidates.append((event, 1))
    if not candidates:
        return []

    c0, c1 = Counter(certify0), Counter(certify1)
    n = (len(certify0), len(certify1))
    level = alpha / (2 * len(candidates))
    found = []
    for event, likelier in candidates:
        b = 0.0 if log_baseline is None else log_baseline(event)
        allowed = math.exp(epsilon + b) if likelier == 0 else math.exp(epsilon - b)
        k = (c0[event], c1[event])
        lower = cp_lower(k[likelier], n[likelier], level)
        upper = cp_upper(k[1 - likelier], n[1 - likelier], level)
        if lower > allowed * upper:
            found.append(Violation(event, likelier, lower, upper, k))
    return found


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation of ``x`` and ``y`` (ties get average ranks).

    Under independence ``sqrt(n - 1) * rho`` is approximately standard
    normal, so ``|rho| > 0.1`` at ``n = 20,000`` is a 14-sigma event.
    """
    return float(stats.spearmanr(x, y).statistic)
