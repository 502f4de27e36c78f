"""The recursive split's joint output against its exact law (:mod:`_split_law`), by a G-test.

Each case draws ``N`` selections of the split's statistic (:class:`~securedp.mechanisms.quantile_split.
SplitQuantiles`, the draw a table cell runs; one case through ``securedp.quantiles`` itself, with fewer
draws) from a fixed ChaCha seed and tests the joint frequencies of every level's output against the
product law enumerated from the definition (bins expecting fewer than 5 pooled). A correct sampler fails
with probability below ``1e-6`` per case; the seeds are fixed, so each case is deterministic. A control
checks that the test can fail: the same draws against the law of separate selections at ``epsilon / m`` each.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from _selection_laws import quantile_law
from _split_law import split_law
from test_selection_laws import ALPHA, g_test

import securedp
from securedp import ChaChaSource
from securedp.mechanisms.quantile_split import SplitQuantiles
from securedp.mechanisms.records import LatticeColumn
from securedp.privacy.cost import Cost

N = 8000
Q = Fraction
FALLBACK = Q(3, 4)


class Statistic:
    """The split's draw on integer records (lattice step 1), as a table cell runs it."""

    def __init__(self, data, levels, lo, hi, eps, fallback=FALLBACK) -> None:
        column = LatticeColumn.of(bounds=(lo, hi), lattice=1, max_contributions=1)
        points, counts = np.unique(np.asarray(data, dtype=np.int64), return_counts=True)
        self.draw = SplitQuantiles(Cost.of(epsilon=eps), column, tuple(levels), fallback=fallback).cell_points(
            points, counts)

    def execute(self, source):
        return type("Drawn", (), {"value": self.draw(source)})


def joint_frequencies(prepared, outcomes: list[tuple[int, ...]], order: list[int], n: int, seed: int) -> np.ndarray:
    index = {o: i for i, o in enumerate(outcomes)}
    source = ChaChaSource(bytes([seed]) * 32)
    observed = np.zeros(len(outcomes), dtype=np.int64)
    for _ in range(n):
        value = prepared.execute(source).value
        observed[index[tuple(int(value[j]) for j in order)]] += 1  # an outcome outside the law raises
    return observed


CASES = [
    ([1, 2, 2, 5, 6], [Q(1, 4), Q(1, 2), Q(3, 4)], 0, 7, Q(2), Q(3, 4)),
    ([1, 2, 2, 5, 6], [Q(1, 4), Q(1, 2), Q(3, 4)], 0, 7, Q(2), Q(0)),      # no fallback: the plain mechanism
    ([], [Q(1, 10), Q(1, 2), Q(9, 10)], 0, 6, Q(1), Q(3, 4)),              # no records: the fallback points
    ([3, 3, 3, 3, 4], [Q(1, 5), Q(2, 5), Q(3, 5), Q(4, 5)], 0, 5, Q(3), Q(3, 4)),   # ties, four levels
    ([0, 2, 4, 5], [Q(0), Q(1, 2), Q(1)], 0, 5, Q(2), Q(1, 2)),          # the monotone levels 0 and 1
]


@pytest.mark.parametrize("data, levels, lo, hi, eps, fallback", CASES)
def test_split_follows_its_joint_law(data, levels, lo, hi, eps, fallback):
    law = split_law(data, levels, lo, hi, eps, fallback=fallback)
    outcomes = list(law)
    prepared = Statistic(data, levels, lo, hi, eps, fallback)
    observed = joint_frequencies(prepared, outcomes, list(range(len(levels))), N, 60 + len(data))
    assert g_test(observed, list(law.values())) > ALPHA


def test_split_keeps_the_order_of_the_levels_asked():
    levels = [Q(3, 4), Q(1, 4), Q(1, 2)]
    law = split_law([1, 2, 2, 5, 6], levels, 0, 7, Q(2))
    outcomes = list(law)
    prepared = Statistic([1, 2, 2, 5, 6], levels, 0, 7, Q(2))
    observed = joint_frequencies(prepared, outcomes, [1, 2, 0], N, 77)
    assert g_test(observed, list(law.values())) > ALPHA


def test_the_control_fails_against_separate_selections():
    """Not vacuous: the split's draws are told apart from independent selections at ``epsilon / 3`` each."""
    data, levels, lo, hi, eps = [1, 2, 2, 5, 6], [Q(1, 4), Q(1, 2), Q(3, 4)], 0, 7, Q(2)
    marginals = [quantile_law(data, q, lo, hi, eps / 3) for q in levels]
    outcomes = list(split_law(data, levels, lo, hi, eps))
    separate = []
    for o in outcomes:
        lows, highs = 1, 1
        for law, y in zip(marginals, o, strict=True):
            lows, highs = lows * law[y - lo][0], highs * law[y - lo][1]
        separate.append((lows, highs))
    prepared = Statistic(data, levels, lo, hi, eps)
    observed = joint_frequencies(prepared, outcomes, [0, 1, 2], N, 61)
    assert g_test(observed, separate) < ALPHA


def test_quantiles_of_three_levels_follow_the_split_law():
    """The public function's route (the one-cell table): its draws follow the same joint law."""
    data, levels, lo, hi, eps = [1, 3, 3, 4], [Q(1, 4), Q(1, 2), Q(3, 4)], 0, 4, Q(3)
    law = split_law(data, levels, lo, hi, eps)
    prepared = securedp.prepare_quantiles(data, levels, bounds=(lo, hi), lattice=1, epsilon=eps)
    observed = joint_frequencies(prepared, list(law), [0, 1, 2], 3000, 62)
    assert g_test(observed, list(law.values())) > ALPHA
    assert prepared.execute(ChaChaSource(bytes(32))).parameters["data_quantiles"]["selection"].startswith("recursive")
