"""Certified-violation audits shared by the security tests.

A mechanism is epsilon-DP when, for neighbouring inputs x0 and x1 and every
output event E, ``P[E | x0] <= e**epsilon * P[E | x1]`` (and symmetrically).
:func:`certified_violations` looks for an event that breaks this bound *with
statistical certainty*: the lower Clopper–Pearson bound of ``P[E | x0]``
exceeds ``e**epsilon`` times the upper Clopper–Pearson bound of ``P[E | x1]``.

**False-failure rate.** The events are chosen from the data, so a naive
Bonferroni correction over "each distinct observed event" would not hold.
The samples are therefore split: every other sample (a *selection* half)
nominates candidate events, namely those for which the selection half alone
shows a violation at the lenient one-sided level ``NOMINATION_LEVEL`` (few
nominees keep the Bonferroni correction mild); the other half, independent
of the nomination, certifies them. With ``m`` candidates each certification uses one-sided
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

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

NOMINATION_LEVEL = 1e-3


def cp_lower(k, n, level: float) -> np.ndarray:
    """One-sided Clopper–Pearson lower bounds on p from ``k`` successes in ``n``: ``P[p < bound] <= level``."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    return np.where(k == 0, 0.0, stats.beta.ppf(level, np.maximum(k, 1), n - k + 1))


def cp_upper(k, n, level: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper bounds on p from ``k`` successes in ``n``: ``P[p > bound] <= level``."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    return np.where(k == n, 1.0, stats.beta.isf(level, k + 1, np.maximum(n - k, 1)))


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
    events = sorted(set(samples0) | set(samples1), key=repr)
    baseline = np.array([0.0 if log_baseline is None else log_baseline(e) for e in events])
    # allowed[j] bounds P[E | likelier = j] / P[E | other] for each event
    allowed = (np.exp(epsilon + baseline), np.exp(epsilon - baseline))

    def halves(start: int) -> tuple[np.ndarray, np.ndarray, int, int]:
        c0, c1 = Counter(samples0[start::2]), Counter(samples1[start::2])
        k0 = np.array([c0[e] for e in events])
        k1 = np.array([c1[e] for e in events])
        return k0, k1, len(samples0[start::2]), len(samples1[start::2])

    def certified(k: tuple[np.ndarray, np.ndarray], n: tuple[int, int], likelier: int, level: float, rows):
        lower = cp_lower(k[likelier][rows], n[likelier], level)
        upper = cp_upper(k[1 - likelier][rows], n[1 - likelier], level)
        return lower > allowed[likelier][rows] * upper, lower, upper

    sel0, sel1, m0, m1 = halves(0)
    everything = np.arange(len(events))
    nominated = [everything[certified((sel0, sel1), (m0, m1), j, NOMINATION_LEVEL, everything)[0]] for j in (0, 1)]
    tries = sum(len(rows) for rows in nominated)
    if tries == 0:
        return []

    cer0, cer1, n0, n1 = halves(1)
    found = []
    for likelier, rows in enumerate(nominated):
        hit, lower, upper = certified((cer0, cer1), (n0, n1), likelier, alpha / (2 * tries), rows)
        for i in np.flatnonzero(hit):
            r = rows[i]
            found.append(Violation(events[r], likelier, float(lower[i]), float(upper[i]), (int(cer0[r]), int(cer1[r]))))
    return found


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation of ``x`` and ``y`` (ties get average ranks).

    Under independence ``sqrt(n - 1) * rho`` is approximately standard
    normal, so ``|rho| > 0.1`` at ``n = 20,000`` is a 14-sigma event.
    """
    return float(stats.spearmanr(x, y).statistic)


def runtime_classes(runtimes: Sequence[Sequence[int]], every: int = 10, classes: int = 10) -> list[list[int]]:
    """Runtimes (ns) of two or more sides as classes: the deciles of a calibration draw in ``every``.

    One draw in ``every`` of each side (pooled over the sides) sets the ``classes - 1`` edges and is not
    returned; each other draw becomes how many edges lie below it (``0 .. classes - 1``). The edges depend
    on no audited draw, and each class holds about ``1 / classes`` of the mass whatever the machine's
    clock and jitter, where fixed microsecond bins spread a noisy machine's runtimes over hundreds of
    bins and leave too few draws in each to certify a leak.
    """
    calibration = [t for side in runtimes for t in side[::every]]
    edges = np.quantile(calibration, np.arange(1, classes) / classes)
    return [np.searchsorted(edges, [t for i, t in enumerate(side) if i % every], side="right").tolist()
            for side in runtimes]
