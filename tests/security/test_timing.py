"""Timing side channel (Jin et al., S&P 2022): the time a draw takes must not reveal its value.

On the default path a draw's running time must not depend on the value
drawn, except on events of probability <= 2**-60 per draw. Each audit times
interleaved draws of a release ``x + noise`` for ``x0`` and ``x1 = x0 +
sensitivity`` with ``time.perf_counter_ns`` and the garbage collector off,
puts each runtime in one of ten classes (the deciles of a calibration tenth of
the draws, pooled over both inputs and not audited: :func:`_audit.runtime_classes`) and then

* runs the certified-violation audit (:mod:`_audit`) on the events
  ``(released value, runtime class)`` at ``epsilon = 1``; and
* computes Spearman's rank correlation between runtime and ``|noise|``.

Both criteria are robust to background load. Load slows some draws at random
moments; the order of x0 and x1 inside each pair is a fresh random coin, so a
slow moment hits either input alike, and no load pattern can be correlated
with noise values that are drawn independently of it. Load can only blur the
channel, so it weakens the negative control, never the sampler under test.

A plain Canonne–Kamath–Steinke (CKS) sampler (arXiv 2004.00010, Algorithms
1–3) is kept here as the negative control: it is exact, but its loops run
about ``|noise| / scale`` times, and each audit must catch it.

The batch path (``discrete_laplace(10, size=1000)``) is audited by the rank
correlation of a batch's runtime with the sum and with the maximum of its
|values|; its negative control is a vectorised sampler that runs one round
of coin flips per unit of the largest value.

**False-failure rates.** The certified audit fails a correct sampler with
probability <= 1e-6 per call (Bonferroni over the candidate events, see
:mod:`_audit`). Under independence ``sqrt(n - 1) * rho`` is about standard
normal: the per-draw bound 0.1 with 2 x 25,000 draws is 22 standard
deviations, the batch bound 0.2 with 1,000 batches 6.3 (p < 1e-9 each).
The controls measured rho ≈ 0.55 (CKS Laplace), 0.27 (CKS Gaussian,
sigma = 10) and 0.75 (naive vectorised batch, against the maximum).
"""

from __future__ import annotations

import gc
import os
import secrets
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from _audit import certified_violations, rank_correlation, runtime_classes

from securedp.hazmat import samplers

EPSILON = 1.0
ALPHA = 1e-6
RHO_BOUND = 0.1  # per-draw |rho(runtime, |noise|)| allowed for our samplers
CONTROL_RHO = 0.3  # the CKS control must exceed this
PAIRS = 25_000  # timed (x0, x1) pairs for our samplers
CONTROL_PAIRS = 10_000  # for the (slower) CKS controls


# --- negative control: plain CKS samplers (pure Python ints, one `secrets` call per uniform) ---


def cks_bernoulli(num: int, den: int) -> bool:
    """Bernoulli(num / den)."""
    return secrets.randbelow(den) < num


def cks_bernoulli_exp(num: int, den: int) -> bool:
    """Bernoulli(exp(-num / den)) for num / den >= 0, by CKS Algorithm 1 (loops in gamma)."""
    while num > den:  # gamma > 1: one Bernoulli(exp(-1)) per unit of gamma
        if not cks_bernoulli_exp(1, 1):
            return False
        num -= den
    k = 1
    while cks_bernoulli(num, den * k):  # gamma in [0, 1]: K = first k with Bernoulli(gamma / k) = 0
        k += 1
    return k % 2 == 1


def cks_discrete_laplace(t: int) -> int:
    """P(k) proportional to exp(-|k| / t), by CKS Algorithm 2 (with s = 1)."""
    while True:
        u = secrets.randbelow(t)
        if not cks_bernoulli_exp(u, t):
            continue
        v = 0
        while cks_bernoulli_exp(1, 1):
            v += 1
        y = u + t * v
        negative = cks_bernoulli(1, 2)
        if negative and y == 0:
            continue
        return -y if negative else y


def cks_discrete_gaussian(sigma: int) -> int:
    """P(k) proportional to exp(-k**2 / (2 sigma**2)), by CKS Algorithm 3 (integer sigma)."""
    t = sigma + 1
    variance = sigma * sigma
    while True:
        y = cks_discrete_laplace(t)
        # gamma = (|y| - sigma**2 / t)**2 / (2 sigma**2) = (|y| t - sigma**2)**2 / (2 sigma**2 t**2)
        if cks_bernoulli_exp((abs(y) * t - variance) ** 2, 2 * variance * t * t):
            return y


# --- the timing harness ---


def timed_releases(draw: Callable[[], int], x0: int, x1: int, pairs: int):
    """Time ``pairs`` draws of the noise for each input, interleaved in random order.

    Returns the audited events ``(x + noise, runtime class)`` for x0 and for x1
    (:func:`_audit.runtime_classes`: one draw in ten only sets the classes), and, over all draws, the
    runtimes (ns) and the noise values.
    """
    order = np.unpackbits(np.frombuffer(os.urandom((pairs + 7) // 8), dtype=np.uint8))[:pairs].tolist()
    drawn: tuple[list, list] = ([], [])
    runtimes: list[int] = []
    noises: list[int] = []
    clock = time.perf_counter_ns
    for _ in range(2048):  # warm up: plan, pools, caches
        draw()
    gc.disable()
    try:
        for first in order:
            for which in (first, 1 - first):
                start = clock()
                noise = draw()
                elapsed = clock() - start
                drawn[which].append((noise, elapsed))
                runtimes.append(elapsed)
                noises.append(noise)
    finally:
        gc.enable()
    classes = runtime_classes([[t for _, t in side] for side in drawn])
    events = [[((x0, x1)[which] + noise, c) for (noise, _), c in
               zip([pair for i, pair in enumerate(side) if i % 10], side_classes, strict=True)]
              for which, (side, side_classes) in enumerate(zip(drawn, classes, strict=True))]
    return events[0], events[1], runtimes, noises


def audit(draw, sensitivity: int, pairs: int, log_baseline=None):
    """Certified violations of epsilon = 1 on (value, runtime class), and rho(runtime, |noise|)."""
    events0, events1, runtimes, noises = timed_releases(draw, 0, sensitivity, pairs)
    violations = certified_violations(events0, events1, EPSILON, ALPHA, log_baseline=log_baseline)
    rho = rank_correlation(runtimes, [abs(v) for v in noises])
    return violations, rho


def gaussian_value_loss(sigma: int, sensitivity: int):
    """``ln(P[r | x0 = 0] / P[r | x1 = sensitivity])`` of a release ``r`` with discrete Gaussian noise.

    The discrete Gaussian is not epsilon-DP for any epsilon: its value-only
    privacy loss ``((r - Δ)**2 - r**2) / (2 sigma**2)`` is unbounded. The
    timing audit therefore certifies only what the runtime adds to it.
    """

    def loss(event) -> float:
        r = event[0]
        return ((r - sensitivity) ** 2 - r**2) / (2 * sigma**2)

    return loss


LAPLACE_CASES = [pytest.param(1, id="scale1-sens1"), pytest.param(10, id="scale10-sens10")]
GAUSSIAN_CASES = [pytest.param(1, 1, id="sigma1-sens1"), pytest.param(10, 10, id="sigma10-sens10")]
# At scale 10 each value is rarer and one more CKS loop costs ~4 µs against a spread of ~10 µs, so
# certifying the CKS Laplace takes more pairs there.
LAPLACE_CONTROL_CASES = [
    pytest.param(1, CONTROL_PAIRS, id="scale1-sens1"),
    pytest.param(10, 6 * CONTROL_PAIRS, id="scale10-sens10"),
]
# The CKS Gaussian's timing leak points the same way as its value-only privacy loss (a small |noise| is
# both likelier and faster), so certifying the *excess* takes more pairs still.
GAUSSIAN_CONTROL_PAIRS = 80_000


@pytest.mark.slow
@pytest.mark.parametrize("sensitivity", LAPLACE_CASES)
def test_discrete_laplace_time_reveals_nothing(sensitivity):
    """Scalar ``samplers.discrete_laplace(Δ / ε)`` (default source, pooled) passes both audits."""
    scale = Fraction(sensitivity) / Fraction(EPSILON)
    violations, rho = audit(lambda: samplers.discrete_laplace(scale), sensitivity, PAIRS)
    assert violations == []
    assert abs(rho) < RHO_BOUND


@pytest.mark.slow
@pytest.mark.parametrize("sensitivity,pairs", LAPLACE_CONTROL_CASES)
def test_cks_discrete_laplace_control_is_caught(sensitivity, pairs):
    """The plain CKS Laplace leaks |noise| through time, and both audits see it."""
    violations, rho = audit(lambda: cks_discrete_laplace(sensitivity), sensitivity, pairs)
    assert violations, "the certified audit missed the CKS timing leak"
    assert rho > CONTROL_RHO


@pytest.mark.slow
@pytest.mark.parametrize("sigma,sensitivity", GAUSSIAN_CASES)
def test_discrete_gaussian_time_reveals_nothing(sigma, sensitivity):
    """Scalar ``samplers.discrete_gaussian(sigma)`` adds no privacy loss through time."""
    loss = gaussian_value_loss(sigma, sensitivity)
    violations, rho = audit(lambda: samplers.discrete_gaussian(sigma), sensitivity, PAIRS, loss)
    assert violations == []
    assert abs(rho) < RHO_BOUND


@pytest.mark.slow
def test_cks_discrete_gaussian_control_fails_certified_audit():
    """At sigma = 1 the plain CKS Gaussian's runtime adds a certified privacy loss beyond its values'."""
    violations, _ = audit(lambda: cks_discrete_gaussian(1), 1, GAUSSIAN_CONTROL_PAIRS, gaussian_value_loss(1, 1))
    assert violations, "the certified audit missed the CKS timing leak"


@pytest.mark.slow
def test_cks_discrete_gaussian_control_fails_rank_correlation():
    """At sigma = 10 the plain CKS Gaussian's runtime tracks |noise| (rho ≈ 0.27), twice our bound.

    Rejected rounds add value-independent time, so its rho is lower than
    the Laplace's; at sigma = 1 most of the mass sits on |noise| <= 1, which
    cost the same, and rho is only ≈ 0.11.
    """
    _, rho = audit(lambda: cks_discrete_gaussian(10), 10, CONTROL_PAIRS, gaussian_value_loss(10, 10))
    assert rho > 2 * RHO_BOUND


# --- the batch path ---

BATCH = 1000
BATCHES = 1000
BATCH_RHO_BOUND = 0.2


def batch_timings(draw_batch: Callable[[], np.ndarray]):
    """Runtime (ns), sum |value| and max |value| of ``BATCHES`` timed batches."""
    clock = time.perf_counter_ns
    for _ in range(5):
        draw_batch()
    runtimes, sums, maxima = [], [], []
    gc.disable()
    try:
        for _ in range(BATCHES):
            start = clock()
            values = draw_batch()
            runtimes.append(clock() - start)
            magnitudes = np.abs(values)
            sums.append(int(magnitudes.sum()))
            maxima.append(int(magnitudes.max()))
    finally:
        gc.enable()
    return runtimes, sums, maxima


def naive_vector_geometric(scale: int, n: int) -> np.ndarray:
    """Negative control for the batch path: ``n`` geometric magnitudes by rounds of vectorised coin flips.

    Each round flips Bernoulli(exp(-1/scale)) for the entries still running
    and stops them on a failure, so a batch takes as many rounds as its
    largest value. (The float threshold makes the law approximate; only its
    timing matters here.)
    """
    threshold = np.uint64(int(np.exp(-1 / scale) * 2.0**64))
    magnitudes = np.zeros(n, dtype=np.int64)
    running = np.arange(n)
    while running.size:
        go_on = np.frombuffer(os.urandom(8 * running.size), dtype=np.uint64) < threshold
        running = running[go_on]
        magnitudes[running] += 1
    return magnitudes


@pytest.mark.slow
def test_batch_time_does_not_track_values():
    """The time of ``discrete_laplace(10, size=1000)`` correlates with neither sum nor max of |values|."""
    runtimes, sums, maxima = batch_timings(lambda: samplers.discrete_laplace(10, size=BATCH))
    assert abs(rank_correlation(runtimes, sums)) < BATCH_RHO_BOUND
    assert abs(rank_correlation(runtimes, maxima)) < BATCH_RHO_BOUND


@pytest.mark.slow
def test_naive_vectorised_batch_control_is_caught():
    """A batch whose rounds run until its largest value is reached: the same test catches it (rho ≈ 0.75)."""
    runtimes, _, maxima = batch_timings(lambda: naive_vector_geometric(10, BATCH))
    assert rank_correlation(runtimes, maxima) > BATCH_RHO_BOUND
