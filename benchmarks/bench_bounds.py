"""Private bounds: the signed magnitude histogram against exponential-mechanism quantiles.

Run: ``python benchmarks/bench_bounds.py [--n 100000] [--seeds 20]``. For each dataset and method, the
bounds are chosen at ``epsilon = 1`` from ``--seeds`` seeded sources, and each pair of bounds is scored by
the error of a sum released with them at ``epsilon = 1``: the clamping bias ``|sum x - sum clamp(x)|``
plus the noise half-width at level 95% (exact, :func:`securedp.privacy.accuracy.laplace_halfwidth`,
on the lattice a sum with those bounds uses), divided by ``sum |x|``. Printed: the median of that ratio,
the median fraction of rows clamped, and the median bounds. (The ratio is a measurement in floats, not a
released number.)
"""

from __future__ import annotations

import argparse
import statistics
from fractions import Fraction

import numpy as np

from securedp import ChaChaSource
from securedp.mechanisms.records import resolve_lattice
from securedp.planning import prepare_private_bounds
from securedp.privacy.accuracy import laplace_halfwidth

DATASETS = {
    "lognormal incomes exp(N(10, 1))": lambda rng, n: rng.lognormal(10.0, 1.0, n).round(2),
    "normal N(0, 1000**2)": lambda rng, n: rng.normal(0.0, 1000.0, n).round(2),
}


def sum_error(x: np.ndarray, lo: Fraction, hi: Fraction, epsilon: int = 1) -> tuple[float, float]:
    """(sum error / sum |x|, fraction of rows clamped) of a sum released with bounds ``(lo, hi)``."""
    lattice = resolve_lattice(None, lo, hi) if lo < hi else None
    width = max(abs(lo), abs(hi))
    if lattice is None or width == 0:
        return float("inf"), 1.0
    width_u = max(int(abs(lo) / lattice.step), int(abs(hi) / lattice.step), 1)
    noise = float(laplace_halfwidth(Fraction(width_u, epsilon), "0.05") * lattice.step)
    clamped = np.clip(x, float(lo), float(hi))
    bias = abs(float(x.sum() - clamped.sum()))
    return (bias + noise) / float(np.abs(x).sum()), float(np.mean(clamped != x))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    print(f"n = {args.n}, epsilon = 1 for the bounds and 1 for the sum, median of {args.seeds} seeds")
    print(f"{'data':34} {'method':10} {'sum error / sum|x|':>19} {'rows clamped':>13}  median bounds")
    for name, make in DATASETS.items():
        x = make(rng, args.n)
        for method in ("histogram", "quantiles"):
            prepared = prepare_private_bounds(x, epsilon=1, method=method)
            errors, clamped, los, his = [], [], [], []
            for seed in range(args.seeds):
                lo, hi = prepared.execute(ChaChaSource(seed.to_bytes(32, "big"))).value
                error, share = sum_error(x, Fraction(lo), Fraction(hi))
                errors.append(error)
                clamped.append(share)
                los.append(float(lo))
                his.append(float(hi))
            print(f"{name:34} {method:10} {statistics.median(errors):19.5f} {statistics.median(clamped):13.4f}  "
                  f"({statistics.median(los):.6g}, {statistics.median(his):.6g})")


if __name__ == "__main__":
    main()
