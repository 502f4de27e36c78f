"""The median-draw benchmark (``benchmarks/bench_median_draws.py``) computes permute-and-flip's law by quadrature:
checked here against the law by enumeration (every order of the candidates, every coin), on cases where the
exponential mechanism's law differs from it by far more than the tolerance, and run on a small synthetic panel."""

from __future__ import annotations

import math
import sys
from itertools import permutations
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_median_draws  # noqa: E402
import bench_utility as bu  # noqa: E402


def enumerated_law(k: list[int], x: list[float]) -> np.ndarray:
    """Permute-and-flip by its definition: each entry's ``k`` candidates, a uniform order of all of them, the first
    head returned; every order and every coin outcome summed (the best candidate's coin is 1)."""
    owner = [i for i, count in enumerate(k) for _ in range(count)]
    p = [math.exp(-x[i]) for i in owner]
    law = np.zeros(len(k))
    orders = list(permutations(range(len(owner))))
    for order in orders:
        stay = 1.0  # probability that every candidate before this one showed tails
        for candidate in order:
            law[owner[candidate]] += stay * p[candidate] / len(orders)
            stay *= 1 - p[candidate]
    return law


@pytest.mark.parametrize(("k", "x"), [([1, 1, 1], [0.0, 0.5, 2.0]), ([2, 1, 3], [0.0, 0.3, 1.0]),
                                      ([1, 4, 1], [0.7, 0.0, 0.2]), ([3, 3], [0.0, 0.1])])
def test_the_quadrature_is_the_law(k: list[int], x: list[float]) -> None:
    exact = enumerated_law(k, x)
    law, deviation = bench_median_draws.pf_law(np.array(k), np.array(x))
    assert deviation < 1e-4
    assert np.max(np.abs(law - exact)) < 1e-5, (law, exact)
    em = bench_median_draws.em_law(np.array(k, dtype=np.float64), np.array(x))
    assert np.max(np.abs(em - exact)) > 1e-3  # the two draws differ here: the check above can fail


def test_it_runs_on_a_small_panel(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """40 persons x 3 years in 3 groups, log wages in (0, 4) (seeded): every case kind, in a second or two."""
    gen = np.random.default_rng(3)
    person = np.repeat(np.arange(40), 3)
    frame = bu._frame(person, [f"g{p % 3}" for p in person], gen.normal(1.7, 0.4, size=len(person)))
    monkeypatch.setitem(bu.DATASETS, "panel", bu.Dataset("panel", "synthetic", "40 persons", (0, 4), True,
                                                         lambda: frame))
    bench_median_draws.main(["--datasets", "panel", "--offsets", "4"])
    out = capsys.readouterr().out
    assert "panel/person/bounded/median" in out and "panel/row/bounded/median overall" in out
    assert "two-level c0=4" in out
