"""Issue 40 C: the release-level (output, time) audit of every selection on every shape, each with a control.

The 37 timing audits before issue 40 tested chosen shapes, and missed the exponential mechanism's time
following its scores (1,000 tied candidates at epsilon 1 against one score moved by the sensitivity:
the sampler's proposal retried in 2 % against 40 % of the draws). This audit is generated: every
selection :func:`_selection_matrix.selections` finds in the code (each :class:`Selection` subclass, the
quantile with and without its fallback point, each partition-selection rule) on every shape of its
input kind (scores all tied, one moved up or down, a large or small top group, far entries, integer
and float; records tied, spread, few, windowed, float; per-key counts small, at the threshold, certain,
mixed). A new selection or shape is audited without a change here.

**The audit of a cell.** Three streams are timed, interleaved in one random order (so a load that comes and goes
hits them alike), garbage collector off, ``perf_counter_ns`` around the public release call with a
:class:`~securedp.SystemSource` (production's: no input commitment): the release on ``x0``, on ``x1``, and the
control (releases of its own on ``x0`` and on ``x1``, in turn, plus ``LEAK_IQRS`` interquartile ranges of the
cell's own runtime, measured just before, at least 2 us and a quarter of its median, of extra work on every
draw; so each input's data runs as often as the other's: a control on ``x1`` alone trained the processor's
caches and branch predictors on ``x1``, which then ran 60-80 ns faster in 6 us, certified in the fastest integer
cells). Each stream takes about ``BUDGET_NS / 3`` of draws (between ``DRAWS`` bounds). Runtimes become ten
classes (the deciles of an unaudited calibration tenth, :func:`_audit.runtime_classes`). The runtime class alone
(a post-processing of the release, so it must pass on its own), and given each of the (at most three) output
classes most frequent on both sides, must show no event certified to be more than ``e**1`` times likelier on one
side (:func:`_audit.certified_violations`: false-failure rate below ``1e-6 / 4`` per test, so below ``1e-6`` per
observable and cell and below ``2 * 84 * 1e-6 < 1.7e-4`` for the whole matrix, under any load that hits the
interleaved streams alike). The random bytes each release reads (counted exactly, no clock) take the same audit:
issue 40's sampler is caught there on any machine (:func:`test_the_matrix_catches_issue_40s_sampler`). The
control must be caught by the runtime audit: it shows the audit resolves a leak of that size in that cell on
this machine, now.

**What a pass does not rule out.** Float scores (and integer gaps in exponent groups) propose from a tight
envelope since issue 40, whose second round has probability below ``2**-16`` per draw whatever the scores
(:mod:`securedp.hazmat.samplers.categorical`); integer slots, below ``2**-60``. Events that rare are beyond what
12,000 draws a stream resolve: the audit sees the ``2**-e`` envelope these cells had (its rounds followed the
scores: on "all tied, one up" four or more in 0.55 % of the draws against 4.3 %, certified in the bytes read in
some runs), not a difference of ``2**-16``. Until the float cells' windows were computed in fixed-width integers
(:mod:`securedp.hazmat.exact.exp_window`), a quiet machine certified their runtime beyond the rounds (x1 about
60 ns faster in 18 us: an MPFR ``exp`` of the exact gap); that was an expected failure here, and is no more.
"""

from __future__ import annotations

import gc
import random
import time
from collections import Counter
from typing import Any

import numpy as np
import pytest
from _audit import certified_violations, runtime_classes
from _selection_matrix import PARTITION_PLANS, SCORE_SHAPES, Cell, partition_rules, selections

import securedp.hazmat.samplers.categorical as categorical
from securedp import SystemSource
from securedp.hazmat.samplers.uniform import uniform_below_one

EPSILON = 1.0
"""What time may add to the output: ``e**1`` (every selection here runs at epsilon 1 or its like)."""
BUDGET_NS = 12 * 10**8
"""Time spent drawing per cell, about (the draws per stream follow the cell's runtime, within the limits below)."""
DRAWS = (2000, 12000)
"""Least and most draws per stream (three streams a cell)."""
LEAK_IQRS = 2.0
"""The control's extra work on every draw, in interquartile ranges of the cell's runtime (at least 2 us and a
quarter of its median: a load that rises after the warm-up widens the spread the leak must stand out of)."""
OUTPUT_CLASSES = 3
"""Output classes audited per cell: the most frequent on both sides."""
CELLS = selections()


def _spin(ns: int) -> None:
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def _timed(cell: Cell, seed: int) -> tuple[list[list[tuple[Any, int, int]]], int]:
    """The three streams' ``(output class, runtime ns, bytes read)``, and the control's leak in ns.

    Four releases are prepared: on ``x0``, on ``x1``, and the control's own on each; the control draws from its two
    in turn, so each input's data runs as often as the other's (:func:`test_each_input_is_run_as_often_as_the_other`).
    """
    source = SystemSource()
    releases = [cell.prepare(cell.shape.x0), cell.prepare(cell.shape.x1),
                cell.prepare(cell.shape.x0), cell.prepare(cell.shape.x1)]
    warm = []
    for k in range(200):  # warm-up, and the runtime's spread on this machine now
        start = time.perf_counter_ns()
        releases[k % 4](source)
        warm.append(time.perf_counter_ns() - start)
    q1, median, q3 = np.percentile(warm[50:], [25, 50, 75])
    leak_ns = max(2000, int(LEAK_IQRS * (q3 - q1)), int(median) // 4)
    draws = min(max(int(BUDGET_NS / (3 * median)), DRAWS[0]), DRAWS[1]) // 2 * 2
    order = [0, 1] * draws + [2, 3] * (draws // 2)  # 2 and 3: the control, on x0's data and on x1's
    random.Random(seed).shuffle(order)  # test scheduling only, not a sampling path
    streams: list[list[tuple[Any, int, int]]] = [[], [], []]
    gc.disable()
    try:
        for k in order:
            release = releases[k]
            served = source.bytes_served
            start = time.perf_counter_ns()
            value = release(source)
            if k >= 2:
                _spin(leak_ns)
            elapsed = time.perf_counter_ns() - start
            streams[min(k, 2)].append((cell.shape.output_class(value), elapsed, source.bytes_served - served))
    finally:
        gc.enable()
    return streams, leak_ns


def _violations(a: list[tuple[Any, int, int]], b: list[tuple[Any, int, int]], observable: str) -> int:
    """Certified violations of the runtime class (``observable = "time"``) or of the bytes read, given the output."""
    if observable == "time":
        classes = runtime_classes([[t for _, t, _ in a], [t for _, t, _ in b]])
        sides = [[(out, c) for (out, _, _), c in zip([d for i, d in enumerate(side) if i % 10], side_classes,
                                                      strict=True)]
                 for side, side_classes in zip((a, b), classes, strict=True)]
    else:  # bytes in multiples of the least a draw of x0's calibration tenth read, capped at 4: a tail of retries
        least = min(n for _, _, n in a[::10])  # is one event, as likely as all its parts
        sides = [[(out, min(n // max(least, 1), 4)) for out, _, n in side] for side in (a, b)]
    counts = [Counter(out for out, _ in side) for side in sides]
    common = sorted(set(counts[0]) & set(counts[1]), key=lambda o: -min(counts[0][o], counts[1][o]))
    alpha = 1e-6 / (OUTPUT_CLASSES + 1)
    # the observable alone (a post-processing of the release, so it must pass on its own, with every draw),
    # then given each of the most frequent common outputs
    found = len(certified_violations([c for _, c in sides[0]], [c for _, c in sides[1]], EPSILON, alpha=alpha))
    for out in common[:OUTPUT_CLASSES]:
        given = [[c for o, c in side if o == out] for side in sides]
        found += len(certified_violations(given[0], given[1], EPSILON, alpha=alpha))
    return found


def test_every_partition_rule_has_a_plan_in_the_audit() -> None:
    assert partition_rules() == set(PARTITION_PLANS)


def test_the_matrix_covers_every_selection_and_shape() -> None:
    names = {cell.selection for cell in CELLS}
    assert {"exponential", "report_noisy_max", "permute_and_flip", "quantile (permute-and-flip), no fallback",
            "quantile (permute-and-flip), fallback", "quantile (exponential), no fallback",
            "quantile (exponential), fallback"} <= names
    assert len({cell.name for cell in CELLS}) == len(CELLS)


@pytest.mark.parametrize("cell", CELLS, ids=[cell.name for cell in CELLS])
def test_time_and_bytes_read_tell_nothing_and_the_control_is_caught(cell: Cell) -> None:
    streams, leak_ns = _timed(cell, seed=sum(map(ord, cell.name)))
    x0, x1, control = streams
    found = {"bytes": _violations(x0, x1, "bytes"), "time": _violations(x0, x1, "time"),
             "control": _violations(x0, control, "time")}
    print(f"{cell.name}: {len(x0)} draws a stream, control leak {leak_ns} ns, certified {found}")  # the power, with -s
    assert found["bytes"] == 0, "the bytes read follow the data"
    if found["time"]:  # confirmed on fresh draws: a leak of the code shows again, a machine's hiccup does not (CI saw
        again = _timed(cell, seed=sum(map(ord, cell.name)) + 1)[0]  # two int cells certified once, never twice)
        found["time again"] = _violations(again[0], again[1], "time")
        print(f"{cell.name}: confirmed {found}")
    assert found["control"] > 0, f"the control's leak of {leak_ns} ns went unseen"
    assert not found.get("time again"), "the running time follows the data (twice, on fresh draws)"


def test_each_input_is_run_as_often_as_the_other() -> None:
    """The audit runs x0's and x1's data equally often, the control included: a control that reused x1's prepared
    release ran x1 twice as often as x0, and the processor's caches and branch predictors, trained on x1, made it
    60-80 ns faster out of 6 us (x1 faster in every run, whichever data it held), which the runtime audit certified
    in the exponential mechanism's integer cells (issue 40: blamed on an earlier test's state, which it was not)."""
    runs: Counter[str] = Counter()

    def prepare(x: Any) -> Any:
        label = "x0" if x is cell.shape.x0 else "x1"

        def release(source: Any) -> int:
            runs[label] += 1
            return 0
        return release

    cell = Cell("counting", SCORE_SHAPES[0], prepare)
    _timed(cell, seed=1)
    assert runs["x0"] == runs["x1"]


def _retrying_uniform(n: int, bits: int, source: Any) -> int:
    """Issue 40's proposal: ``bit_length(n)``-bit integers rejected while ``>= n`` (retries follow ``n``)."""
    return uniform_below_one(n, source)


def test_the_matrix_catches_issue_40s_sampler(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control of the finding itself: the sampler of 0.2 re-installed, issue 40's cell sees its bytes differ."""
    monkeypatch.setattr(categorical, "uniform_below_secret", _retrying_uniform)
    cell = next(cell for cell in CELLS if cell.name == "exponential | issue 40: 1,000 tied, one up, int")
    x0, x1, _ = _timed(cell, seed=40)[0]
    print(f"issue 40's sampler: certified on time {_violations(x0, x1, 'time')}")  # not asserted: the load decides
    assert _violations(x0, x1, "bytes") > 0
