"""Issue 16.11: the optimal partition-selection rule takes the same time whatever the counts.

The rule used to draw one Bernoulli call per distinct uncertain count and none when ``p(n) = 1``, so
neighbours with the same output took 22.5 vs 7.7 µs. The audit times the selection on neighbouring count
vectors (one person added to a key whose count is certain either way), interleaved and in random order,
garbage collector off; for the most frequent common output the runtimes, in ten classes (the deciles of
an unaudited calibration tenth of the draws, :func:`_audit.runtime_classes`), must show no event certified
to be more than ``e**1`` times likelier on one side (false-failure rate below 1e-6). The control is the old
rule (a Bernoulli call per distinct uncertain count, none when ``p = 1``): the same audit catches it. Both take 20,000
draws a side (4,000 until 2026-12-02: on a machine 2.7 times slower than the quiet one, whose runtimes spread more, the
control certified 2-7 violations alone and 0 once in CI, after the other timing audits; the draws cost 1 s for the rule
and 6 s for the control there).
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _audit import certified_violations, runtime_classes

from securedp import ChaChaSource
from securedp.hazmat.samplers import bernoulli
from securedp.mechanisms.partition_selection import optimal_selection

PLAN = optimal_selection(1, "1e-9", 1)
CERTAIN = len(PLAN.probabilities)  # p(n) = 1 from here on; p(CERTAIN - 1) is within 1e-9 of 1
# Neighbours: one person added to the third key, which is then certain. The output is almost always the
# same (the first two keys almost never kept, the third almost always); the old rule made one Bernoulli call
# fewer on the second side.
COUNTS = [np.array([3, 7, CERTAIN - 1], dtype=np.int64), np.array([3, 7, CERTAIN], dtype=np.int64)]


def old_rule(persons: np.ndarray, source: ChaChaSource) -> np.ndarray:
    keep = persons >= len(PLAN.probabilities)
    for value in np.unique(persons[~keep]):
        p = PLAN.probabilities[int(value)]
        if p > 0:
            where = np.flatnonzero(persons == value)
            keep[where] = bernoulli(p, size=len(where), rng=source).astype(bool)
    return keep


def _violations(select: Callable[[np.ndarray, ChaChaSource], np.ndarray], n: int = 20000) -> int:
    source = ChaChaSource(bytes(32))
    drawn: tuple[list[tuple[bytes, int]], list[tuple[bytes, int]]] = ([], [])
    order = [0, 1] * n
    random.Random(11).shuffle(order)  # test scheduling only, not a sampling path
    select(COUNTS[0], source)
    gc.disable()
    try:
        for side in order:
            start = time.perf_counter_ns()
            keep = select(COUNTS[side], source)
            drawn[side].append((keep.tobytes(), time.perf_counter_ns() - start))
    finally:
        gc.enable()
    classes = runtime_classes([[t for _, t in side] for side in drawn])
    out: tuple[dict[Any, list[int]], dict[Any, list[int]]] = ({}, {})
    for by_output, side, side_classes in zip(out, drawn, classes, strict=True):
        audited = [output for i, (output, _) in enumerate(side) if i % 10]
        for output, c in zip(audited, side_classes, strict=True):
            by_output.setdefault(output, []).append(c)
    common = max(set(out[0]) & set(out[1]), key=lambda v: min(len(out[0][v]), len(out[1][v])))
    return len(certified_violations(out[0][common], out[1][common], 1.0))


def test_the_optimal_rule_takes_the_same_time_for_the_same_output() -> None:
    assert _violations(PLAN.select) == 0


def test_control_the_old_rule_is_caught() -> None:
    assert _violations(old_rule) > 0
