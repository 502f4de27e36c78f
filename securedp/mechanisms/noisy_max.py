"""Report noisy max with exact discrete Laplace noise on a public lattice.

**Law.** Each score ``s_i`` is snapped to the public lattice of step
``u = sensitivity / 4096``: ``c_i = round_half_even(s_i / u)``, exactly
(:meth:`~securedp.mechanisms.scores.Scores.snapped`). The release is the
index maximising ``c_i + Z_i``, ties going to the smallest index, with
``Z_i`` i.i.d. discrete Laplace of scale ``b = 2 * 4096 / epsilon`` units
(``4096 / epsilon`` when the scores are declared ``monotonic``), ``P(Z = k)``
proportional to ``exp(-|k| / b)``. The lattice and the noise law depend on
``epsilon`` and ``sensitivity`` only, never on the scores: neighbouring
datasets are compared under the same law, and no score value can make the
release fail (0.1 used the scores' common unit, so a score of ``1e-300``
changed the noise lattice and raised).

**Privacy map.** ``epsilon``-DP when every score moves by at most
``sensitivity`` between neighbouring datasets. Snapping keeps that bound
at exactly ``D = 4096`` units: rounding half to even is monotone and
``round_half_even(x + 4096) = round_half_even(x) + 4096`` because 4096 is
even, so ``|s_i - s'_i| <= sensitivity`` gives ``|c_i - c'_i| <= D`` (and
scores that all move one way still do after snapping). The rest is the
argument of Dwork & Roth (2014, Claim 3.9) on the integers: fix the other
noises and let ``r*`` be the least ``Z_i`` for which ``i`` wins (with the
index tie-break) on ``x``; on a neighbour ``x'``, ``Z_i >= r* + 2D``
(``r* + D`` when monotonic) still wins, because all comparisons, strict or
not, shift by equal integers. The discrete Laplace tail is log-concave, so
``P(Z >= t + s) >= exp(-s / b) P(Z >= t)`` for every integer ``t``, which
gives the factor ``exp(-epsilon)``; the reverse direction is symmetric.
Report-noisy-max with Laplace noise is not known to be ``epsilon``-bounded range (only Gumbel noise
makes it the exponential mechanism; exponential noise makes it permute-and-flip, which is not: see
:mod:`securedp.mechanisms.permute_and_flip`), so a rho budget charges it the bound of every
``epsilon``-DP release (:func:`~securedp.privacy.conversions.pure_to_zcdp`), not ``epsilon**2 / 8``.
Snapping costs utility below ``sensitivity / 8192`` per score, far below
the noise (scale ``2 * sensitivity / epsilon``).

**Algorithm.** ``n`` exact discrete Laplace draws
(:func:`~securedp.hazmat.samplers.discrete_laplace`, value-independent time)
and one vectorised ``argmax``: the running time does not depend on the winner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.samplers.discrete_laplace import discrete_laplace
from securedp.mechanisms.scores import Scores
from securedp.mechanisms.selection import MonotonicSelection
from securedp.mechanisms.statistic import public_function, release_function

_SAFE = 1 << 61
_FAST_SCALE = 1 << 50

STEPS_PER_SENSITIVITY = 4096
"""Lattice steps in one ``sensitivity``: even, so snapping keeps the sensitivity at exactly this many steps."""


@dataclass(frozen=True)
class ReportNoisyMax(MonotonicSelection):
    """Report-noisy-max's definition: scores snapped to the public lattice, noise, argmax (module docstring)."""

    selection = "report_noisy_max"

    @property
    def step(self) -> Fraction:
        """The public lattice step ``sensitivity / STEPS_PER_SENSITIVITY`` the scores are snapped to."""
        return self.sensitivity / STEPS_PER_SENSITIVITY

    @property
    def scale(self) -> Fraction:
        """The discrete Laplace scale, in lattice steps."""
        return Fraction(STEPS_PER_SENSITIVITY if self.monotonic else 2 * STEPS_PER_SENSITIVITY) / self.epsilon

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "monotonic": self.monotonic,
                "candidates": self.size, "noise_scale": self.scale * self.step}

    def chooser(self, scores: Scores) -> Callable[[RandomSource], int]:
        units, scale = scores.snapped(self.step), self.scale
        discrete_laplace(scale, size=0)  # builds the noise plan now: a scale out of range is refused before any charge
        # int64 arithmetic when scores and noise fit: chosen from the public scale and the scores, never from a draw
        # (noise beyond 2**61 at a scale below 2**50 has probability below 2**-2**10; it then takes the exact route).
        widest = max(abs(int(units.max())), abs(int(units.min())))
        fast = units.dtype != object and widest < _SAFE and scale < _FAST_SCALE

        def choose(source: RandomSource) -> int:
            noise = discrete_laplace(scale, size=len(units), rng=source)
            if fast and int(np.abs(noise).max()) < _SAFE:
                return int(np.argmax(units + noise))
            return int(np.argmax(units.astype(object) + noise.astype(object)))

        return choose


prepare_report_noisy_max = public_function(
    ReportNoisyMax.prepare, "prepare_report_noisy_max",
    """Validate and price report-noisy-max; nothing is drawn until ``.execute(rng)``.

    Arguments as for :func:`~securedp.mechanisms.exponential.prepare_exponential_mechanism`.
    """)
report_noisy_max = release_function(prepare_report_noisy_max, "report_noisy_max", """The index (or candidate) with \
the largest score plus exact discrete Laplace noise; see the module docstring.""")
