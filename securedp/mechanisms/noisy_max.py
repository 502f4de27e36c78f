"""Report noisy max with exact discrete Laplace noise.

**Law.** Scores ``s_i`` are written exactly as integers on a common rational
unit ``d`` that also divides ``sensitivity`` (``s_i = c_i * d``,
``sensitivity = D * d``). The release is the index maximising
``c_i + Z_i``, ties going to the smallest index, with ``Z_i`` i.i.d.
discrete Laplace of scale ``b = 2 * D / epsilon`` (``D / epsilon`` when the
scores are declared ``monotonic``), ``P(Z = k)`` proportional to
``exp(-|k| / b)``.

**Privacy map.** ``epsilon``-DP when every score moves by at most
``sensitivity`` between neighbouring datasets. This is the argument of
Dwork & Roth (2014, Claim 3.9) on the integers: fix the other noises and
let ``r*`` be the least ``Z_i`` for which ``i`` wins (with the index
tie-break) on ``x``; on a neighbour ``x'``, ``Z_i >= r* + 2D`` (``r* + D``
when monotonic) still wins, because all comparisons, strict or not, shift
by equal integers. The discrete Laplace tail is log-concave, so
``P(Z >= t + s) >= exp(-s / b) P(Z >= t)`` for every integer ``t``, which
gives the factor ``exp(-epsilon)``; the reverse direction is symmetric.

**Algorithm.** ``n`` exact discrete Laplace draws
(:func:`~securedp.discrete_laplace`, value-independent time) and one
vectorised ``argmax``: the running time does not depend on the winner.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.samplers.discrete_laplace import discrete_laplace
from securedp.mechanisms.release import PreparedRelease, Release, scores_input
from securedp.mechanisms.scores import prepared_selection, selection_inputs

_SAFE = 1 << 61


def prepare_report_noisy_max(
    scores: Any,
    *,
    epsilon: Any,
    sensitivity: Any,
    candidates: Any = None,
    monotonic: bool = False,
    data: Any = None,
) -> PreparedRelease:
    """Validate and price report-noisy-max; nothing is drawn until ``.execute(rng)``.

    Arguments as for :func:`~securedp.mechanisms.exponential.prepare_exponential_mechanism`.
    """
    if not isinstance(monotonic, bool):
        raise TypeError("monotonic must be True or False")
    eps, sens, cands, parsed = selection_inputs(scores, epsilon, sensitivity, candidates, data)
    lattice = parsed.refined(sens)
    units = lattice.units
    shift = (sens / lattice.unit).numerator
    scale = (shift if monotonic else 2 * shift) / eps
    small = units.dtype != object and max(abs(int(units.max())), abs(int(units.min()))) < _SAFE
    parameters = {"epsilon": eps, "sensitivity": sens, "monotonic": monotonic, "candidates": len(parsed),
                  "noise_scale": scale * lattice.unit}

    def choose(source: RandomSource) -> int:
        noise = discrete_laplace(scale, size=len(units), rng=source)
        if small and noise.dtype != object and int(np.abs(noise).max()) < _SAFE:
            return int(np.argmax(units + noise))
        return int(np.argmax(units.astype(object) + noise.astype(object)))

    return prepared_selection("report_noisy_max", eps, cands, parameters, choose).with_input(scores_input(parsed))


def report_noisy_max(
    scores: Any,
    *,
    epsilon: Any,
    sensitivity: Any,
    candidates: Any = None,
    monotonic: bool = False,
    data: Any = None,
    rng: RandomSource | None = None,
) -> Release:
    """The index (or candidate) with the largest score plus exact discrete Laplace noise; see the module docstring."""
    return prepare_report_noisy_max(
        scores, epsilon=epsilon, sensitivity=sensitivity, candidates=candidates, monotonic=monotonic, data=data,
    ).execute(rng)
