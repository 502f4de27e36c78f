"""The recursive split's privacy map, checked exactly on tiny neighbouring instances.

For every pair of neighbouring multisets on a small domain (one person added: one row, or two rows with
``max_contributions = 2``), the joint law of every level's output is enumerated from the definition
(``tests/statistical/_split_law.py``, 256-bit directed rounding) and the largest ratio
``max_y hi(P[y | x]) / lo(P[y | x'])`` over both directions is bounded above; it must not exceed
``e**epsilon``, the charge (:mod:`securedp.mechanisms.quantile_split`: ``D`` depths at ``epsilon / D``, the
parts of a depth disjoint). Not vacuous: the largest loss found exceeds one depth's ``epsilon / D`` (the
depths do compose), and the statistic charges ``epsilon / D`` per depth.
"""

from __future__ import annotations

import itertools
import sys
from fractions import Fraction
from pathlib import Path

import gmpy2
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "statistical"))
from _split_law import split_law
from test_selection_privacy import e_to

from securedp.mechanisms.quantile_split import SplitQuantiles, split_depths
from securedp.mechanisms.records import LatticeColumn
from securedp.privacy.cost import Cost

_CTX = {"precision": 256, "emax": gmpy2.get_emax_max(), "emin": gmpy2.get_emin_min()}
Q = Fraction


def largest_ratio(levels, domain, max_size, eps, fallback, rows=1):
    lo, hi = min(domain), max(domain)
    laws = {}

    def law(data):
        key = tuple(sorted(data))
        if key not in laws:
            laws[key] = split_law(key, levels, lo, hi, eps, m=rows, fallback=fallback)
        return laws[key]

    worst = gmpy2.mpfr(1)
    for size in range(max_size + 1):
        for x in itertools.combinations_with_replacement(domain, size):
            for added in itertools.combinations_with_replacement(domain, rows):
                a, b = law(x), law(x + added)
                assert a.keys() == b.keys()
                with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
                    for y, (a_lo, a_hi) in a.items():
                        b_lo, b_hi = b[y]
                        worst = max(worst, a_hi / b_lo, b_hi / a_lo)
    return worst


@pytest.mark.parametrize("levels, eps, fallback, rows, max_size", [
    ([Q(1, 4), Q(1, 2), Q(3, 4)], Q(1), Q(3, 4), 1, 3),
    ([Q(1, 4), Q(1, 2), Q(3, 4)], Q(2), Q(0), 1, 3),
    ([Q(0), Q(1, 2), Q(1)], Q(1), Q(3, 4), 1, 3),            # the monotone levels
    ([Q(1, 5), Q(2, 5), Q(3, 5), Q(4, 5)], Q(3, 2), Q(1, 2), 1, 2),   # three depths
    ([Q(1, 3), Q(1, 2), Q(2, 3)], Q(1), Q(3, 4), 2, 2),      # two rows per person, possibly in two parts
])
def test_the_split_loses_at_most_its_charge(levels, eps, fallback, rows, max_size):
    worst = largest_ratio(levels, range(4), max_size, eps, fallback, rows)
    assert worst <= e_to(eps)
    depths = split_depths(len(levels))
    assert worst > e_to(eps / depths), "not vacuous: the depths compose"
    column = LatticeColumn.of(bounds=(0, 3), lattice=1, max_contributions=rows)
    assert SplitQuantiles(Cost.of(epsilon=eps), column, tuple(levels), fallback=fallback).share == eps / depths
