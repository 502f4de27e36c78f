"""The exponential mechanism against permute-and-flip for a median over a grid of candidates (issue 26).

Run: ``python benchmarks/bench_median_draws.py [dataset]`` (default ``males``, any dataset of
``bench_utility.py``; it needs that dataset's package). For grids of 2**10 .. 2**16 candidates across the
dataset's bounds, shifted by 8 alignments, the RMSE of the median of all its rows at epsilon 1 (scores
``|#below - #above|``, sensitivity 1): the exponential mechanism's exactly, permute-and-flip's (OpenDP's
``ExponentialMin``) by 4,000 simulated draws per alignment (NumPy's generator: an analysis of two laws,
never a release). ``docs/benchmarks.md`` ("The row-level median misses") reads the table.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from bench_utility import DATASETS


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "males"
    dataset = DATASETS[name]
    values = np.sort(dataset.load()["value"].to_numpy().astype(float))
    n, (lo, hi) = len(values), map(float, dataset.bounds)
    truth = float(np.median(values))
    rng = np.random.default_rng(1)  # simulation of permute-and-flip's law only
    print(f"{name}: {n} rows, bounds ({lo}, {hi}), median {truth}; RMSE over 8 alignments of the grid")
    print(f"{'candidates':>10} {'exponential mechanism':>22} {'permute-and-flip':>17}")
    for steps in (2**10, 2**12, 2**14, 2**16):
        step, em, pf = (hi - lo) / steps, [], []
        for shift in np.linspace(0, 1, 9)[:-1]:
            points = lo + (np.arange(steps) + shift) * step
            below = np.searchsorted(values, points, "left")
            above = n - np.searchsorted(values, points, "right")
            gap = np.abs(below - above) - np.abs(below - above).min()
            accept = np.exp(-gap / 2.0)  # epsilon 1 over twice the sensitivity
            em.append(float(np.sum(accept / accept.sum() * (points - truth) ** 2)))
            near = np.flatnonzero(accept > 1e-12)
            draws = [rng.choice(near[rng.random(near.size) < accept[near]]) for _ in range(4000)]
            pf.append(float(np.mean((points[draws] - truth) ** 2)))
        print(f"{steps:>10,} {math.sqrt(np.mean(em)):>22.6f} {math.sqrt(np.mean(pf)):>17.6f}")


if __name__ == "__main__":
    main()
