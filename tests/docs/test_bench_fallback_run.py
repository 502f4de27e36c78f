"""The fallback benchmark (``benchmarks/bench_fallback.py``) still runs, on its synthetic data (no dataset package
needed), and its exact expected error agrees with the mechanism's releases: the mean squared error of seeded
releases of one cell falls inside a wide interval around the exact figure, and moving the fallback moves both."""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_fallback  # noqa: E402

import securedp  # noqa: E402
from securedp import ChaChaSource  # noqa: E402


def test_it_runs_on_the_synthetic_groups(capsys) -> None:  # type: ignore[no-untyped-def]
    bench_fallback.main(["--datasets", "skewed", "--probabilities", "0,3/4"])
    out = capsys.readouterr().out
    assert "skewed/person/bounded/median" in out and "skewed/row/bounded/median" in out


def test_the_exact_error_is_the_releases_error() -> None:
    """Eight records near 6 in (4, 9) at epsilon 1/8: a cell near the no-signal regime, where the fallback moves the
    error most. 4,000 seeded releases per probability; the sample mean of the squared error has a relative
    standard error of a few per cent here, so a 20 % window fails only on a wrong law."""
    values = np.array([5.6, 5.9, 6.0, 6.1, 6.3, 6.3, 6.8, 7.4])
    truth = float(np.median(values))
    for p in (Fraction(0), Fraction(3, 4)):
        (exact,) = bench_fallback.cell_mse(values, (4, 9), Fraction(1, 16), truth, [p])
        prepared = securedp.prepare_median(values, bounds=(4, 9), epsilon="1/8", fallback=p)
        source = ChaChaSource(bytes([7]) * 32)
        drawn = np.array([float(prepared.execute(source).value) for _ in range(4000)])
        measured = float(np.mean((drawn - truth) ** 2))
        assert math.isclose(measured, exact, rel_tol=0.2), (p, measured, exact)
