"""The median's draw: the exponential mechanism against permute-and-flip, from their laws (issue 26).

Run: ``python benchmarks/bench_median_draws.py [--datasets males,wages] [--offsets 0,4,8]`` (the datasets of
``bench_utility.py``; each needs its package). For every median cell of ``bench_utility.py`` (person and row level,
per group and overall, bounded truth: the mechanism's error alone) it prints the pooled RMSE of

* ``securedp``: the release as it is, the exponential mechanism over the ``2**20``-step lattice with the fallback
  point (the entries of :func:`bench_fallback.cell_entries`, the library's own window of the cell);
* ``pf, same entries``: permute-and-flip (McKenna and Sheldon 2020) over the same candidates, every lattice point
  and the fallback's ``W`` copies each a candidate: what an exact permute-and-flip over the lattice would give;
* ``two-level c0``: permute-and-flip over the same candidates plus the points of a coarse lattice (the coarsest
  power of two giving at least ``--coarse`` steps, each point one candidate), the fine candidates' scores
  lowered by ``c = ln(fine points / coarse points) + c0`` over the rate (a public offset: the selection stays
  ``epsilon``-DP, an offset moves no score's sensitivity): a coarse answer where a coarse point scores nearly as
  well as the best fine one (small cells), the fine lattice where none does (large ones). The fallback entry's
  offset keeps its share of flat scores at 3/4 (its ``W`` copies against ``coarse points (1 + exp(-c0))`` heads);
* ``opendp``: permute-and-flip over OpenDP's candidates in ``bench_utility.py`` (securedp 0.1's default lattice)
  with OpenDP's score ``|#below - #above|`` at the same rate, averaged over 8 alignments of its grid.

Every figure is an **expected** squared error computed from the mechanism's law, not from draws, so two
mechanisms compare on the same data without Monte Carlo noise. Permute-and-flip's law over entries of ``k_i``
candidates with coins ``p_i = exp(-x_i)``: the first head in a uniform order is the candidate whose uniform key
``U`` is smallest among the heads, so ``P(entry i) = integral_0^1 k_i p_i (1 - p_i t)**(k_i - 1)
prod_{j != i} (1 - p_j t)**k_j dt``, the point uniform in its entry; the integral is taken on 4,000 log-spaced
nodes from ``1e-16`` to ``1e-2`` and 400 Gauss-Legendre nodes above (float64: a benchmark's arithmetic,
never a release's), and the printed ``mass`` is the largest distance of a cell's total from 1
(``tests/docs/test_bench_median_draws_run.py`` checks the quadrature against the law by enumeration).
"""

from __future__ import annotations

import argparse
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_fallback as bf  # the cells' entries: one definition
import bench_utility as bu

import securedp
from securedp.mechanisms.rank_utility import LevelLaw
from securedp.mechanisms.selection_price import selection_epsilon
from securedp.privacy.cost import Cost

FALLBACK = Fraction(3, 4)
_LOG_NODES = np.exp(np.linspace(math.log(1e-16), math.log(1e-2), 4000))
_LEGENDRE, _LEGENDRE_WEIGHTS = np.polynomial.legendre.leggauss(400)
NODES = np.concatenate([_LOG_NODES, 1e-2 + (1 - 1e-2) * (_LEGENDRE + 1) / 2])
_TRAPEZOID = np.diff(_LOG_NODES, prepend=0.0, append=_LOG_NODES[-1]) / 2
WEIGHTS = np.concatenate([_TRAPEZOID[:-1] + _TRAPEZOID[1:], (1 - 1e-2) / 2 * _LEGENDRE_WEIGHTS])
"""Quadrature on [0, 1]: trapezoid weights on log-spaced nodes up to 1e-2 (where a large entry's factor falls
steeply), Gauss-Legendre above (smooth there)."""


def pf_law(k: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, float]:
    """Permute-and-flip's probability of each entry (``k`` candidates, coin ``exp(-x)``, ``min(x) = 0``) and the
    distance of their total from 1."""
    p = np.exp(-x)
    kept = k * p > 1e-18
    kk, pp = k[kept].astype(np.float64), p[kept]
    logs = np.log1p(-np.outer(NODES, pp))
    total = logs @ kk
    share = np.zeros(len(k))
    parts = [WEIGHTS @ (np.exp(total[:, None] - logs[:, i:i + 4096]) * kk[i:i + 4096] * pp[i:i + 4096])
             for i in range(0, len(kk), 4096)]  # 4,096 entries at a time: bounded memory
    share[kept] = np.concatenate(parts) if parts else []
    mass = float(share.sum())
    return share / mass, abs(mass - 1)


def em_law(k: np.ndarray, x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        log_weight = np.log(k) - x
    share = np.exp(log_weight - log_weight.max())
    return share / share.sum()


def cell_errors(values: np.ndarray, bounds: tuple[int, int], rate: float, truth: float, coarse: int,
                offsets: list[float]) -> tuple[dict[str, float], float]:
    """One cell's expected squared error under each draw, and the worst mass deviation of its integrals."""
    widths, scores, centres, step, window = bf.cell_entries(values, bounds, FALLBACK)
    squared = bf.squared_errors(widths, centres, truth / step, True) * step * step
    x = rate * scores
    x -= x.min()
    out = {"securedp": float(em_law(widths, x) @ squared)}
    share, worst = pf_law(widths, x)
    out["pf, same entries"] = float(share @ squared)
    lo, hi = bounds
    grid = securedp.Lattice.for_bounds(lo, hi, resolution=coarse)
    c_lo, c_hi = grid.bounds_units(lo, hi)
    points = [Fraction(u) * grid.step / Fraction(step) for u in range(c_lo, c_hi + 1)]
    units = np.array([int(p) for p in points], dtype=np.int64)  # coarse points lie on the fine lattice
    c_scores = np.array([window.score_at(int(u)) for u in units], dtype=np.float64)
    c_squared = (units * step - truth) ** 2
    fine_points = float(widths.sum() - widths[-1])
    for c0 in offsets:
        c = math.log(fine_points / len(units)) + c0
        fallback = math.log(fine_points / (len(units) * (1 + math.exp(-c0))))  # flat scores: P(fallback) = 3/4
        xx = np.concatenate([rate * scores[:-1] + c, [rate * scores[-1] + fallback], rate * c_scores])
        xx -= xx.min()
        share, deviation = pf_law(np.concatenate([widths, np.ones(len(units))]), xx)
        worst = max(worst, deviation)
        out[f"two-level c0={c0:g}"] = float(share @ np.concatenate([squared, c_squared]))
    ours = np.sort(values.astype(np.float64))
    opendp = []
    for shift in range(bu.ALIGNMENTS):
        cand = np.array(bu.opendp_candidates(bounds, False, Fraction(shift, bu.ALIGNMENTS) if shift else None))
        below = np.searchsorted(ours, cand, "left")
        above = len(ours) - np.searchsorted(ours, cand, "right")
        gap = np.abs(below - above).astype(np.float64)
        share, deviation = pf_law(np.ones(len(cand)), rate * (gap - gap.min()))
        worst = max(worst, deviation)
        opendp.append(float(share @ (cand - truth) ** 2))
    out["opendp"] = float(np.mean(opendp))
    return out, worst


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(bu.DEFAULT_DATASETS))
    parser.add_argument("--offsets", default="0,4,8", help="the two-level draw's c0 values")
    parser.add_argument("--coarse", type=int, default=128, help="the coarse lattice's least number of steps")
    args = parser.parse_args(argv)
    offsets = [float(c) for c in args.offsets.split(",")]
    header = None
    for dataset, raw in bu.loaded(args.datasets, bu.DATASETS):
        for case in bu.make_cases(dataset, raw):
            if case.task.kind not in ("median", "overall") or case.truth_kind != "bounded":
                continue
            law = LevelLaw(Fraction(1, 2), selection_epsilon(Cost.of(Fraction(case.task.epsilon), None), case.k),
                           case.m)
            cells, worst = [], 0.0
            for key, truth in zip(case.keys, case.truth, strict=True):
                values = case.frame.loc[case.frame["group"] == key, "value"].to_numpy()
                if len(values):
                    errors, deviation = cell_errors(values, case.bounds, float(law.rate), float(truth), args.coarse,
                                                    offsets)
                    cells.append(errors)
                    worst = max(worst, deviation)
            names = list(cells[0])
            if header is None:
                header = f"{'case':42} " + " ".join(f"{n:>18}" for n in names) + "   mass"
                print(header)
            pooled = [math.sqrt(np.mean([c[n] for c in cells])) for n in names]
            print(f"{case.label:42} " + " ".join(f"{v:18.5g}" for v in pooled) + f"   {worst:.1e}", flush=True)


if __name__ == "__main__":
    main()
