"""The self-test's statistics: chi-square tail without SciPy, binning, and power against a wrong law."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from securedp import ChaChaSource
from securedp.hazmat.samplers import discrete_laplace
from securedp.hazmat.selftest import CASES, MIN_EXPECTED, chi2_sf, g_test, merge_bins, run_case


@pytest.mark.parametrize("x, df", [(0.5, 1), (3, 2), (10, 5), (100, 80), (30, 3), (500, 400), (200, 10), (1e-3, 10)])
def test_chi2_survival_matches_scipy(x: float, df: int) -> None:
    assert chi2_sf(x, df) == pytest.approx(stats.chi2.sf(x, df), rel=1e-9, abs=1e-300)


def test_bins_expect_at_least_five_and_keep_all_mass() -> None:
    pmf = CASES[5].pmf()
    groups = merge_bins(pmf, 10_000)
    assert all(mass * 10_000 >= MIN_EXPECTED for _, mass in groups)
    assert sum(len(keys) for keys, _ in groups) == len(pmf)
    assert sum(mass for _, mass in groups) == pytest.approx(1, abs=1e-12)


def test_every_case_passes_with_a_fixed_seed() -> None:
    rng = ChaChaSource(bytes(32))
    for case in CASES:
        assert run_case(case, 50_000, rng, lambda done: None).passed, case.name


def test_a_wrong_law_fails() -> None:
    laplace_5_2 = next(c for c in CASES if c.name == "discrete_laplace(5/2)")
    wrong = discrete_laplace(3, 50_000, rng=ChaChaSource(bytes(32)))
    _, p, _, _ = g_test(np.asarray(wrong), laplace_5_2.pmf())
    assert p < 1e-6
