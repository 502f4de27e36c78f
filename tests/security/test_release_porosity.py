"""Porosity / precision audit (Mironov 2012; Haney et al. 2022) of the lattice releases.

Releases are run many times at ``x0`` and ``x1 = x0 + sensitivity`` and at
``x0`` and ``x0 + one lattice step``. Every output must lie on the public
output lattice (no low-order-bit event), and no output may be certified as
possible under one input only: for each observed value ``v`` the
Clopper-Pearson lower bound of ``P[v | x_i]`` must not exceed ``e**eps``
times the upper bound of ``P[v | x_j]`` (Bonferroni over the values tried,
overall alpha 1e-6 so a correct mechanism fails with probability < 1e-6;
fixed ChaCha seeds make the run deterministic).
"""

import math
from collections import Counter
from fractions import Fraction

import pytest
from scipy.stats import beta

import securedp

RUNS = 3000
ALPHA = 1e-6


def cp(k, n, a):
    lo = 0.0 if k == 0 else beta.ppf(a / 2, k, n - k + 1)
    hi = 1.0 if k == n else beta.ppf(1 - a / 2, k + 1, n - k)
    return lo, hi


def certified_violation(c0, c1, eps):
    values = set(c0) | set(c1)
    a = ALPHA / (2 * max(len(values), 1))
    for v in values:
        lo0, hi0 = cp(c0.get(v, 0), RUNS, a)
        lo1, hi1 = cp(c1.get(v, 0), RUNS, a)
        if lo0 > math.exp(eps) * hi1 or lo1 > math.exp(eps) * hi0:  # float-ok: test statistics
            return v
    return None


def outputs(data, seed, **kw):
    prepared = securedp.prepare_sum(data, **kw)
    src = securedp.ChaChaSource(bytes([seed]) * 32)
    return Counter(prepared.execute(src).value for _ in range(RUNS))


@pytest.mark.slow
@pytest.mark.parametrize("shift", ["sensitivity", "step"])
def test_sum_outputs_share_support_and_lattice(shift):
    step = Fraction(1, 8)
    kw = {"bounds": (0, 1), "lattice": step, "epsilon": 1}
    x0 = [0.1, 0.7, 0.3]
    x1 = [*x0, 1.0] if shift == "sensitivity" else [0.1 + 0.125, 0.7, 0.3]
    c0, c1 = outputs(x0, 1, **kw), outputs(x1, 2, **kw)
    for v in list(c0) + list(c1):
        assert (Fraction(v) / step).denominator == 1
    assert certified_violation(c0, c1, 1.0) is None


@pytest.mark.slow
def test_mean_outputs_do_not_separate_neighbours():
    step = Fraction(1, 4)
    p0 = securedp.prepare_mean([0.5, 0.25], bounds=(0, 1), lattice=step, epsilon=1)
    p1 = securedp.prepare_mean([0.5, 0.25, 1.0], bounds=(0, 1), lattice=step, epsilon=1)
    s0, s1 = securedp.ChaChaSource(b"\3" * 32), securedp.ChaChaSource(b"\4" * 32)
    c0 = Counter(p0.execute(s0).value for _ in range(RUNS))
    c1 = Counter(p1.execute(s1).value for _ in range(RUNS))
    assert certified_violation(c0, c1, 1.0) is None
    assert all(0 <= v <= 1 for v in list(c0) + list(c1))
