"""Permute-and-flip (McKenna & Sheldon 2020), sampled exactly.

**Law.** Visit the candidates in a uniformly random order; flip for each a
coin with probability ``p_i = exp(epsilon * (s_i - s_max) / (2 * sensitivity))``
and return the first candidate whose coin shows heads. The best candidate
has ``p = 1``, so a candidate is always returned.

**Privacy map.** ``epsilon``-DP when every score moves by at most
``sensitivity`` between neighbouring datasets (McKenna & Sheldon 2020,
Theorem 1); its expected score is never worse than the exponential
mechanism's at the same ``epsilon`` (their Theorem 2).

**Algorithm.** All coins are flipped at once (exact fixed-width comparisons
with ``p_i``, :class:`~securedp.hazmat.samplers.ExpCoins`)
and the random order is given by i.i.d. uniform keys, each an infinite bit
string read 64 bits at a time: the output is the candidate with heads and
the smallest key, keys tied on their first 64 bits being extended with
fresh bits until one is smallest. Flipping coins that the sequential
description would never reach does not change the law (they are
independent of everything the output depends on), and the order of i.i.d.
continuous keys is a uniform permutation. Every selection flips all ``n``
coins and draws all ``n`` keys: the running time does not depend on the
candidate returned (ties and the comparison resolver occur with probability
below ``n * 2**-62``).
"""

from __future__ import annotations

from typing import Any

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.samplers import ExpCoins, first_in_random_order
from securedp.mechanisms.release import PreparedRelease, Release, scores_input
from securedp.mechanisms.scores import prepared_selection, selection_inputs


def prepare_permute_and_flip(
    scores: Any, *, epsilon: Any, sensitivity: Any, candidates: Any = None, data: Any = None
) -> PreparedRelease:
    """Validate and price a permute-and-flip selection; nothing is drawn until ``.execute(rng)``.

    Arguments as for :func:`~securedp.mechanisms.exponential.prepare_exponential_mechanism`.
    """
    eps, sens, cands, parsed = selection_inputs(scores, epsilon, sensitivity, candidates, data)
    gaps, unit = parsed.sampler_gaps()
    coins = ExpCoins(gaps, eps * unit / (2 * sens))  # every coin's bounds, once, before anything is drawn
    parameters = {"epsilon": eps, "sensitivity": sens, "candidates": len(parsed)}

    def choose(source: RandomSource) -> int:
        return first_in_random_order(coins.flip(source), source)

    return prepared_selection("permute_and_flip", eps, cands, parameters, choose).with_input(scores_input(parsed))


def permute_and_flip(
    scores: Any,
    *,
    epsilon: Any,
    sensitivity: Any,
    candidates: Any = None,
    data: Any = None,
    rng: RandomSource | None = None,
) -> Release:
    """Select a candidate by permute-and-flip, exactly; see the module docstring."""
    return prepare_permute_and_flip(
        scores, epsilon=epsilon, sensitivity=sensitivity, candidates=candidates, data=data
    ).execute(rng)
