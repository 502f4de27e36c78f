"""Float-sum sensitivity audit (Casacuberta et al., CCS 2022).

Neighbouring datasets built to maximise float rounding error, reorderings,
int64 overflow and NaN/inf: the exact lattice sum must change by at most the
claimed sensitivity (exactly, in units), must not depend on order, and bad
records must fail before anything is drawn or charged.
"""

import itertools
from fractions import Fraction

import numpy as np
import pytest

import securedp
from securedp.lattice import Lattice, exact_sum


def lattice_sum(data, bounds, step):
    lat = Lattice(step)
    lo_u, hi_u = lat.bounds_units(*bounds)
    u = lat.clamp_units(data, *bounds)
    return exact_sum(u, max(abs(lo_u), abs(hi_u))), max(abs(lo_u), abs(hi_u), 1)


ADVERSARIAL = [
    [1e16, 1.0, -1e16, 1.0] * 4,
    [2.0**53, 1.0, 1.0, -(2.0**53)],
    [0.1] * 10 + [1e15, -1e15],
    [1e308, 1e308, -1e308, 5e-324, float("inf"), float("-inf")],
]


@pytest.mark.parametrize("data", ADVERSARIAL)
@pytest.mark.parametrize("step", [Fraction(1, 2**20), Fraction(1, 1000), Fraction(1)])
def test_neighbours_change_at_most_sensitivity_and_order_never_matters(data, step):
    bounds = (Fraction(-10**15), Fraction(10**15))
    total, sens = lattice_sum(data, bounds, step)
    for i in range(len(data)):
        without = data[:i] + data[i + 1 :]
        assert abs(total - lattice_sum(without, bounds, step)[0]) <= sens
        assert abs(total - lattice_sum(np.array(without), bounds, step)[0]) <= sens
    rng = np.random.default_rng(3)  # permutations of test data only
    for _ in range(5):
        perm = list(rng.permutation(np.array(data, dtype=float)))
        assert lattice_sum(perm, bounds, step)[0] == total
    if sens >= 2**62:  # a release's lattice units stay within +-2**62 (every engine sums them exactly): refused
        with pytest.raises(ValueError, match=r"2\*\*62 lattice units"):
            securedp.sum(data, bounds=bounds, lattice=step, epsilon=1)
        return
    rel = securedp.sum(data, bounds=bounds, lattice=step, epsilon=1, rng=securedp.ChaChaSource(b"\1" * 32))
    assert rel.parameters["data_sum"]["noise"][0]["cell_sensitivity_units"] == sens


def test_int64_worst_case_cannot_overflow():
    top = 2**62
    data = np.array([top] * 8 + [-3], dtype=np.int64)
    total, _ = lattice_sum(data, (-top, top), 1)
    assert total == 8 * top - 3
    assert lattice_sum(list(reversed(data.tolist())), (-top, top), 1)[0] == total
    huge = [2**80] * 3 + [1]
    assert lattice_sum(huge, (-(2**70), 2**70), 1)[0] == 3 * 2**70 + 1


@pytest.mark.parametrize("bad", [float("nan"), np.nan, None])
def test_nan_fails_before_draw_or_charge(bad):
    src = securedp.ChaChaSource(b"\2" * 32)
    s = securedp.Session(epsilon=1, rng=src)
    for data in ([1.0, bad], np.array([1.0, bad], dtype=float if bad is not None else object)):
        with pytest.raises(ValueError):
            s.sum(data, bounds=(0, 1), epsilon="0.5")
    assert src.bytes_served == 0 and s.spent == 0


def test_same_multiset_any_order_identical_release_input():
    data = [0.1, 0.2, 0.3, 1e-17, 7.0, -2.5]
    sums = {lattice_sum(list(p), (-5, 5), Fraction(1, 1000))[0] for p in itertools.permutations(data)}
    assert len(sums) == 1
