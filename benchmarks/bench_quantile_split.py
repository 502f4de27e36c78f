"""Deciles on real public data: the recursive split against ``m`` separate selections and PipelineDP's tree.

Three ways to release the deciles ``1/10 .. 9/10`` of one column at one total epsilon (row level: each row
its own person, ``max_contributions = 1``), many times each:

* ``split``: securedp's recursive split (:mod:`securedp.mechanisms.quantile_split`, the default of
  ``securedp.quantiles`` for three or more levels): ``ceil(log2(10)) = 4`` depths at ``epsilon / 4`` each;
* ``separate``: securedp's earlier default, one exact exponential mechanism per level at ``epsilon / 9``
  (:class:`securedp.mechanisms.quantile.Quantile` each);
* ``pipelinedp``: PipelineDP's ``PERCENTILE(10) .. PERCENTILE(90)`` in one aggregation (one quantile tree,
  Laplace noise, the whole epsilon), if ``pipeline_dp`` is importable.

Both securedp entrants use the default lattice (``2**20`` to ``2**21`` steps across the bounds) and the
default fallback; they are drawn from the statistic directly on the column's counts per lattice point (the
same draw as the public function's, without the table's reading for every run).

Errors, averaged over the 9 levels and the runs: the **rank error** ``dist(q n, [#{x < y}, #{x <= y}])``
(rows) of the released ``y`` among the clamped data, and the **value error** ``|y - t|`` with ``t`` NumPy's
``quantile`` of the clamped data. Data (shipped in their packages, no network): the pooled columns of the
accuracy benchmark's datasets (``benchmarks/bench_utility.py``), with its public bounds.

Target: on every dataset and epsilon, ``split``'s mean rank error at most that of ``separate`` and of
``pipelinedp`` (ratio <= 1.00)::

    python benchmarks/bench_quantile_split.py                 # 200 runs per figure
    python benchmarks/bench_quantile_split.py --quick         # 30 runs
    python benchmarks/bench_quantile_split.py --datasets males,penguins --epsilons 1,0.1
    python benchmarks/bench_quantile_split.py --root-laws     # permute-and-flip inside the split, from the laws

**Permute-and-flip inside the split** (``--root-laws``). The split draws every part by the exponential mechanism
(its module docstring says why: a coin per candidate per depth). What permute-and-flip would gain there is
measured at the root, the selection every other level's part starts from: the expected RMSE of its exact law under
each draw (the library's :class:`~securedp.mechanisms.quantile_split.HalfRowWindow` with every entry built, the
fallback entry included; permute-and-flip's law by quadrature, :func:`bench_median_draws.pf_law`), on the default
lattice of each dataset and on a step-1 integer column (diamonds ``price``, the held-out benchmark's).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_utility import DATASETS

from securedp import ChaChaSource
from securedp.mechanisms.quantile import Quantile, default_lattice
from securedp.mechanisms.quantile_split import HalfRowWindow, SplitQuantiles
from securedp.mechanisms.rank_utility import DEFAULT_FALLBACK, fallback_weight
from securedp.mechanisms.records import LatticeColumn
from securedp.privacy.cost import Cost

LEVELS = tuple(Fraction(i, 10) for i in range(1, 10))


def column_counts(values: np.ndarray, column: LatticeColumn) -> tuple[np.ndarray, np.ndarray]:
    """The clamped values' distinct lattice points (units) and their counts (rounded to the nearest point)."""
    step = float(column.lattice.step)
    units = np.clip(np.rint(values / step).astype(np.int64), column.lo_u, column.hi_u)
    points, counts = np.unique(units, return_counts=True)
    return points, counts


def securedp_draws(method: str, column: LatticeColumn, epsilon: Fraction, points: np.ndarray, counts: np.ndarray,
                   runs: int, seed: bytes) -> np.ndarray:
    cost = Cost.of(epsilon=epsilon)
    source = ChaChaSource(hashlib.sha256(seed).digest())
    if method == "split":
        draw = SplitQuantiles(cost, column, LEVELS).cell_points(points, counts)
        units = [draw(source) for _ in range(runs)]
    else:
        each = cost.split(len(LEVELS))
        draws = [Quantile(each, column, (q,)).cell_points(points, counts) for q in LEVELS]
        units = [tuple(d(source)[0] for d in draws) for _ in range(runs)]
    return np.asarray(units, dtype=np.float64) * float(column.lattice.step)


def pipelinedp_draws(values: np.ndarray, bounds: tuple[float, float], epsilon: float, runs: int) -> np.ndarray:
    import pipeline_dp
    metrics = [pipeline_dp.Metrics.PERCENTILE(10 * i) for i in range(1, 10)]
    rows = [(i, "all", float(v)) for i, v in enumerate(values)]
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: r[1],
                                            value_extractor=lambda r: r[2])
    params = pipeline_dp.AggregateParams(noise_kind=pipeline_dp.NoiseKind.LAPLACE, metrics=metrics,
                                         max_partitions_contributed=1, max_contributions_per_partition=1,
                                         min_value=float(bounds[0]), max_value=float(bounds[1]))
    out = np.empty((runs, len(LEVELS)))
    for r in range(runs):
        accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=0)
        engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
        result = engine.aggregate(rows, params, extractors, public_partitions=["all"])
        accountant.compute_budgets()
        got = dict(result)["all"]
        out[r] = [float(getattr(got, f"percentile_{10 * i}")) for i in range(1, 10)]
    return out


def errors(released: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    """Mean rank error (rows) and mean value error over runs and levels."""
    ordered = np.sort(values)
    n = len(ordered)
    below = np.searchsorted(ordered, released, side="left")
    at_or_below = np.searchsorted(ordered, released, side="right")
    target = np.asarray([float(q) * n for q in LEVELS])
    rank = np.maximum(0, np.maximum(below - target, target - at_or_below))
    truth = np.quantile(ordered, [float(q) for q in LEVELS])
    return float(rank.mean()), float(np.abs(released - truth).mean())


def root_law_rmse(column: LatticeColumn, epsilon: Fraction, points: np.ndarray, counts: np.ndarray,
                  truth: float) -> tuple[float, float]:
    """Expected RMSE of the split's root selection (the median of the deciles' tree, at ``epsilon / D``) under the
    exponential mechanism and under permute-and-flip, from their exact laws (module docstring)."""
    from bench_median_draws import em_law, pf_law  # the laws' quadrature: one definition

    split = SplitQuantiles(Cost.of(epsilon=epsilon), column, LEVELS)
    root, law = split.tree[0], split.laws[0]
    weight = fallback_weight(DEFAULT_FALLBACK, column.hi_u - column.lo_u + 1)
    window = HalfRowWindow(points, counts, counts, column.lo_u, column.hi_u, root.q, 10**18, weight)
    entries = [i for i in range(len(window.widths) - 1) if window.widths[i] > 0]  # the fallback entry is last
    widths = np.append(np.asarray(window.widths, dtype=np.float64)[entries], float(window.widths[-1]))
    scores = np.append(np.asarray(window.scores, dtype=np.float64)[entries], float(window.scores[-1]))
    starts = np.array([window.start(i) for i in entries] + [window.fallback_point], dtype=np.float64)
    ends = np.append(starts[:-1] + widths[:-1] - 1, starts[-1])
    step = float(column.lattice.step)
    centre, spread = (starts + ends) / 2 * step, (ends - starts + 1)
    spread[-1] = 1  # the fallback's W units all stand for one point
    squared = (spread ** 2 - 1) / 12 * step * step + (centre - truth) ** 2
    x = float(law.rate) * (scores - scores.min())
    return math.sqrt(float(em_law(widths, x) @ squared)), math.sqrt(float(pf_law(widths, x)[0] @ squared))


def root_laws(names: list[str], epsilons: list[Fraction]) -> None:
    print("The split's root selection (median at epsilon / 4), expected RMSE from the exact laws: exponential "
          "mechanism (the split's draw) against permute-and-flip")
    cases: list[tuple[str, np.ndarray, tuple[int, int], object]] = []
    for name in names:
        dataset = DATASETS[name]
        try:
            cases.append((name, dataset.load()["value"].to_numpy(dtype=np.float64), dataset.bounds, None))
        except ImportError as error:
            print(f"{name}: skipped ({error})")
    try:
        from bench_heldout_gaps import _data
        cases.append(("diamonds price (step 1)", _data("diamonds")["price"].to_numpy(dtype=np.float64),
                      (0, 20_000), 1))
    except ImportError as error:
        print(f"diamonds: skipped ({error})")
    for name, raw, (lo, hi), lattice in cases:
        values = np.clip(raw, lo, hi)
        column = LatticeColumn.of(bounds=(lo, hi), lattice=lattice, max_contributions=1, default=default_lattice)
        points, counts = column_counts(values, column)
        for epsilon in epsilons:
            em, pf = root_law_rmse(column, epsilon, points, counts, float(np.quantile(values, 0.5)))
            print(f"{name:24} eps {epsilon!s:>4}: exponential {em:10.4g}  permute-and-flip {pf:10.4g}  "
                  f"ratio {pf / em:.3f}", flush=True)


def available(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="males,wages,laborsupply,snmesp,penguins,seattle")
    parser.add_argument("--epsilons", default="1,0.1")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--root-laws", action="store_true",
                        help="only permute-and-flip against the exponential mechanism at the split's root, exactly")
    args = parser.parse_args(argv)
    if args.root_laws:
        root_laws(args.datasets.split(","), [Fraction(e) for e in args.epsilons.split(",")])
        return 0
    runs = 30 if args.quick else args.runs
    peers = available("pipeline_dp")
    methods: list[str] = ["split", "separate"] + (["pipelinedp"] if peers else [])
    if not peers:
        print("pipeline_dp is not importable: its entrant is skipped")
    print(f"{'dataset':12} {'n':>5} {'eps':>4} " + " ".join(f"{m + ' rank':>15} {m + ' value':>16}" for m in methods)
          + "   split/separate  split/pipelinedp   target <= 1.00")
    met = True
    for name in args.datasets.split(","):
        dataset = DATASETS[name]
        try:
            frame = dataset.load()
        except ImportError as error:
            print(f"{name}: skipped ({error})")
            continue
        lo, hi = dataset.bounds
        values = np.clip(frame["value"].to_numpy(dtype=np.float64), lo, hi)
        column = LatticeColumn.of(bounds=(lo, hi), lattice=None, max_contributions=1, default=default_lattice)
        points, counts = column_counts(values, column)
        for eps_text in args.epsilons.split(","):
            epsilon = Fraction(eps_text)
            found: dict[str, tuple[float, float]] = {}
            for method in methods:
                if method == "pipelinedp":
                    released = pipelinedp_draws(values, (lo, hi), float(epsilon), runs)
                else:
                    released = securedp_draws(method, column, epsilon, points, counts, runs,
                                              f"{name}|{eps_text}|{method}".encode())
                found[method] = errors(released, values)
            ratios = [found["split"][0] / max(found[m][0], 1e-12) for m in methods[1:]]
            ok = all(r <= 1.0 for r in ratios)
            met &= ok
            cells = " ".join(f"{found[m][0]:15.2f} {found[m][1]:16.4g}" for m in methods)
            shown = "  ".join(f"{r:15.2f}" for r in ratios)
            print(f"{name:12} {len(values):5d} {eps_text:>4} {cells}   {shown}   {'met' if ok else 'NOT MET'}")
    print(f"target (split's mean rank error <= each peer's, every dataset and epsilon): {'met' if met else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
