"""Permute-and-flip (McKenna & Sheldon 2020), sampled exactly.

**Law.** Visit the candidates in a uniformly random order; flip for each a
coin with probability ``p_i = exp(epsilon * (s_i - s_max) / (2 * sensitivity))``
and return the first candidate whose coin shows heads. The best candidate
has ``p = 1``, so a candidate is always returned.

**Privacy map.** ``epsilon``-DP when every score moves by at most
``sensitivity`` between neighbouring datasets (McKenna & Sheldon 2020,
Theorem 1); its expected score is never worse than the exponential
mechanism's at the same ``epsilon`` (their Theorem 2).

**Not bounded range: priced as any pure release in a rho budget.** Unlike the exponential mechanism,
permute-and-flip is not ``epsilon``-bounded range (Steinke 2024, differentialprivacy.org, "Beyond the
exponential mechanism"; it is report-noisy-max with exponential noise, Ding et al. 2021). Two candidates
scored ``(0, 0)`` and, one person later, ``(1, -1)`` (sensitivity 1): the laws are ``(1/2, 1/2)`` and
``(1 - e**-eps / 2, e**-eps / 2)``, whose privacy loss spans ``epsilon + ln(2 - e**-eps)`` (1.46 at
``epsilon = 1``), and the exact zCDP of that pair exceeds ``epsilon**2 / 8``
(``tests/unit/privacy/test_proven_loss.py``). So a rho budget charges it the bound of every ``epsilon``-DP
release (:func:`~securedp.privacy.conversions.pure_to_zcdp`).

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.samplers import ExpCoins, first_in_random_order
from securedp.ledger.release import PreparedRelease
from securedp.mechanisms.scores import Scores
from securedp.mechanisms.selection import Selection
from securedp.mechanisms.statistic import public_function, release_function


@dataclass(frozen=True)
class PermuteAndFlip(Selection):
    """Permute-and-flip's definition: scores in, all coins flipped, the first head in a random order out."""

    selection = "permute_and_flip"

    @classmethod
    def prepare(cls, scores: Any, *, epsilon: Any, sensitivity: Any, candidates: Any = None,
                data: Any = None) -> PreparedRelease:
        return cls.of_scores(scores, epsilon, sensitivity, candidates, data)

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "candidates": self.size}

    def chooser(self, scores: Scores) -> Callable[[RandomSource], int]:
        gaps, unit = scores.sampler_gaps()
        coins = ExpCoins(gaps, self.epsilon * unit / (2 * self.sensitivity))  # every coin's bounds, once
        return lambda source: first_in_random_order(coins.flip(source), source)


prepare_permute_and_flip = public_function(
    PermuteAndFlip.prepare, "prepare_permute_and_flip",
    """Validate and price a permute-and-flip selection; nothing is drawn until ``.execute(rng)``.

    Arguments as for :func:`~securedp.mechanisms.exponential.prepare_exponential_mechanism`.
    """)
permute_and_flip = release_function(prepare_permute_and_flip, "permute_and_flip",
                                    """Select a candidate by permute-and-flip, exactly; see the module docstring.""")
