"""The default quantile lattice, chosen by measurement: securedp's median error against the lattice's resolution.

A median's candidates are the points of a lattice in the public bounds. A column not typed integer gets the
coarsest power of two giving at least ``R`` steps across the bounds (``securedp.mechanisms.quantile.
QUANTILE_RESOLUTION``). Two errors pull ``R`` in opposite directions:

* **rounding**: a record is rounded by up to ``(hi - lo) / (2 R)``, so a coarse lattice has an error floor;
* **ties on a coarse grid**: values recorded in tenths, cents or hundredths tie, and every lattice point in the
  open gap beside a tied block shares the gap's score, so a gap holding ``w`` lattice points weighs ``w`` times
  one point. On a fine lattice the gaps beside a tied median outweigh the median's own point (the exact tie
  needs about ``ln(w) / rate`` more score to win), and the error grows to the grid's step.

This script releases every median of ``bench_utility.py`` (the real public panels, bounded and unbounded truth,
person and row level, per group and overall, epsilon 1, 200 seeded runs each) with the lattice each ``R``
would give, plus two synthetic shapes (lognormal incomes, continuous, skewed; and the same rounded to whole
hundreds, tied), and prints the RMSE per case and ``R``, and per ``R`` the geometric mean and the worst of its
RMSE over the best ``R``'s RMSE in that case. Every release is the exact one of the public API
(``securedp.prepare_table`` / ``prepare_median`` with ``lattice=`` the step ``R`` gives); nothing here is a
float simulation. It needs the datasets' packages (``benchmarks/README.md``)::

    python benchmarks/bench_quantile_lattice.py              # 200 runs, about 25 minutes on 2 cores
    python benchmarks/bench_quantile_lattice.py --runs 20    # a smoke run
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_utility as bu  # the cases and securedp's entrant: one definition

import securedp
from securedp.mechanisms.quantile import QUANTILE_RESOLUTION

EXPONENTS = (12, 16, 20, 24, 28, 32)


def _lognormal(rounded: bool) -> pd.DataFrame:
    """5,000 persons x 2 rows, lognormal incomes (median 40,000) in 5 regions, seeded (a benchmark's data, not a
    privacy decision); ``rounded``: to whole hundreds, so the records tie on a grid of 100."""
    gen = np.random.default_rng(7)
    n = 10_000
    value = np.exp(gen.normal(math.log(40_000), 0.8, n))
    if rounded:
        value = np.round(value, -2)
    return bu._frame(np.arange(n) // 2, gen.integers(0, 5, n), value)


SYNTHETIC = [bu.Dataset("lognormal", "synthetic lognormal incomes (seeded)", "5,000 persons x 2 rows, 5 regions",
                        (0, 200_000), True, lambda: _lognormal(False)),
             bu.Dataset("lognormal/100", "the same incomes rounded to hundreds", "tied on a grid of 100",
                        (0, 200_000), True, lambda: _lognormal(True))]


def step_for(bounds: tuple[int, int], exponent: int) -> str:
    step = securedp.Lattice.for_bounds(bounds[0], bounds[1], resolution=1 << exponent).step
    step = Fraction(step)
    return f"{step.numerator}/{step.denominator}"


def rmse(case: bu.Case, runs: int) -> float:
    """The RMSE over ``runs`` seeded releases; the seeds do not depend on the lattice (common random numbers: the
    resolutions are compared on the same random bits, so their difference is not Monte Carlo noise alone)."""
    case.seed = lambda _who, run: bu.hashlib.sha256(f"bench_quantile_lattice/{case.label}/{run}".encode()).digest()
    released = bu.securedp_run(case, runs)
    return float(np.sqrt(np.nanmean((released - case.truth) ** 2)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=bu.RUNS)
    parser.add_argument("--datasets", default=",".join(bu.DEFAULT_DATASETS + [d.name for d in SYNTHETIC]))
    args = parser.parse_args(argv)
    datasets = {**bu.DATASETS, **{d.name: d for d in SYNTHETIC}}
    print(f"Median RMSE against the default lattice's resolution R (steps across the bounds); {args.runs} runs; "
          f"securedp's default now R = 2**{QUANTILE_RESOLUTION.bit_length() - 1}")
    header = "case".ljust(46) + "".join(f"R=2**{e}".rjust(11) for e in EXPONENTS)
    print(header)
    table: list[list[float]] = []
    for dataset, raw in bu.loaded(args.datasets, datasets):
        for case in bu.make_cases(dataset, raw):
            if case.task.kind not in ("median", "overall"):
                continue
            row = [rmse(replace(case, lattice=step_for(case.bounds, e), candidates=None), args.runs)
                   for e in EXPONENTS]
            table.append(row)
            print(f"{case.label:46}" + "".join(f"{x:11.4g}" for x in row), flush=True)
    ratios = np.array([[x / min(row) if min(row) > 0 else (1.0 if x == 0 else math.inf) for x in row]
                       for row in table])
    finite = np.where(np.isfinite(ratios), ratios, np.nan)
    print("\nper R, RMSE over the best R's RMSE in the same case:")
    print("geometric mean".ljust(46) + "".join(f"{x:11.3g}" for x in np.exp(np.nanmean(np.log(finite), axis=0))))
    print("worst".ljust(46) + "".join(f"{x:11.3g}" for x in np.nanmax(finite, axis=0)))
    print("cases within 10% of the best".ljust(46) + "".join(f"{int(x):11d}" for x in np.sum(finite <= 1.1, axis=0)))


if __name__ == "__main__":
    main()
