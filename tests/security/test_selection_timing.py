"""Timing audit of the selections: the running time must not reveal which candidate won.

Each audit times many selections (``time.perf_counter_ns``, garbage collector
off) on one fixed input whose winners are spread over candidates with very
different weights (different envelope slots, near and far from the best).
The runtimes, binned at 1 µs, are split by winner, and the certified-violation
audit of :mod:`_audit` looks for a runtime bin certified to be more than
``e**0.25`` times likelier for one winner than for another (false-failure rate
<= 1e-6; background load hits all winners alike, because the winner of each
run is drawn independently of the load). Spearman's rank correlation between
runtime and winner must also stay below 0.1 (about 14 null standard
deviations at 20,000 draws).

The control is a textbook sequential sampler (walk the cumulative weights
until the uniform is passed), whose time grows with the winner's position:
the same audit must catch it.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from _audit import certified_violations, rank_correlation, runtime_classes

import securedp
from securedp import ChaChaSource

N = 20000
SCORES = [0, -1, -2, -4, -8, -1, 0, -3]


def timed(select: Callable[[], int], n: int) -> tuple[list[int], list[int]]:
    winners, times = [], []
    gc.disable()
    try:
        for _ in range(n):
            start = time.perf_counter_ns()
            w = select()
            times.append(time.perf_counter_ns() - start)
            winners.append(w)
    finally:
        gc.enable()
    return winners, times


def leaks(winners: list[int], times: list[int]) -> bool:
    classes = runtime_classes([times])[0]  # deciles of an unaudited calibration tenth
    audited = [w for i, w in enumerate(winners) if i % 10]
    counts = np.bincount(winners)
    a, b = np.argsort(counts)[-2:]  # the two most frequent winners
    sample_a = [c for w, c in zip(audited, classes, strict=True) if w == a]
    sample_b = [c for w, c in zip(audited, classes, strict=True) if w == b]
    certified = certified_violations(sample_a, sample_b, 0.25)
    return bool(certified) or abs(rank_correlation(winners, times)) > 0.1


def sequential_control(source: ChaChaSource) -> int:
    weights = [Fraction(2) ** s for s in SCORES for _ in range(40)]  # 40 copies of each candidate, in order
    u = Fraction(source.randbits(64), 2**64) * sum(weights)
    acc = Fraction(0)
    for i, w in enumerate(weights):
        acc += w
        if u < acc:
            return i // 40
    return len(SCORES) - 1


def test_exponential_mechanism_time_does_not_reveal_the_winner():
    prepared = securedp.prepare_exponential_mechanism(SCORES * 500, epsilon=2, sensitivity=1)
    source = ChaChaSource(bytes([60]) * 32)
    winners, times = timed(lambda: prepared.execute(source).value % len(SCORES), N)
    assert not leaks(winners, times)


def test_median_time_does_not_reveal_the_point():
    data = [3, 3, 10, 40, 41, 90]
    prepared = securedp.prepare_median(data, bounds=(0, 99), epsilon="0.5")
    source = ChaChaSource(bytes([61]) * 32)
    winners, times = timed(lambda: int(prepared.execute(source).value) // 25, N)
    assert not leaks(winners, times)


def test_permute_and_flip_time_does_not_reveal_the_winner():
    prepared = securedp.prepare_permute_and_flip(SCORES * 50, epsilon=2, sensitivity=1)
    source = ChaChaSource(bytes([62]) * 32)
    winners, times = timed(lambda: prepared.execute(source).value % len(SCORES), N // 2)
    assert not leaks(winners, times)


def test_the_audit_catches_a_sequential_sampler():
    source = ChaChaSource(bytes([63]) * 32)
    winners, times = timed(lambda: sequential_control(source), N // 4)
    assert leaks(winners, times)


def test_exponent_groups_time_does_not_reveal_the_winner():
    """Distinct rational scores (exponent groups): each round locates its proposal and bounds it afresh."""
    scores = [Fraction(s) + Fraction(k, 1000003) for k in range(400) for s in SCORES]
    prepared = securedp.prepare_exponential_mechanism(scores, epsilon=2, sensitivity=1)
    source = ChaChaSource(bytes([64]) * 32)
    winners, times = timed(lambda: prepared.execute(source).value % len(SCORES), N)
    assert not leaks(winners, times)


def test_report_noisy_max_time_does_not_reveal_the_winner():
    """Batch discrete Laplace noise and one argmax: the same work whatever wins (audited like the others)."""
    prepared = securedp.prepare_report_noisy_max(SCORES * 500, epsilon=2, sensitivity=1)
    source = ChaChaSource(bytes([62]) * 32)
    winners, times = timed(lambda: prepared.execute(source).value % len(SCORES), N)
    assert not leaks(winners, times)
