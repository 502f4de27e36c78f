"""Person-level medians per group, group by group: securedp's exponential mechanism against PipelineDP's tree.

``bench_utility.py`` pools a task's error over its groups. For the person-level median per group (at most
2 groups and 4 rows per person, epsilon 1, so each cell runs at epsilon 1/2 with 4 rows per person) PipelineDP's
quantile tree wins the pooled figure on ``wages`` and ``laborsupply``. This script shows where: each group's
persons, rows and true median (bounded truth), and each library's RMSE, mean and standard deviation of its
releases over the runs, so the pooled figure can be read group by group. ``--bounds LO HI`` moves the public
bounds (the same data): an estimator that returns the middle of the bounds when a cell holds no signal moves
with them, one that reads the data does not.

Run it in the peers' environment (``benchmarks/README.md``)::

    /work/venv-peers/bin/python benchmarks/bench_small_groups.py wages
    /work/venv-peers/bin/python benchmarks/bench_small_groups.py wages --bounds 4 14 --runs 100
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_utility as bu  # the cases and both entrants: one definition


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", choices=[name for name, d in bu.DATASETS.items() if d.panel])
    parser.add_argument("--runs", type=int, default=bu.RUNS)
    parser.add_argument("--bounds", type=int, nargs=2, metavar=("LO", "HI"), help="other public bounds")
    args = parser.parse_args(argv)
    dataset = bu.DATASETS[args.dataset]
    if args.bounds:
        dataset = dataclasses.replace(dataset, bounds=tuple(args.bounds))
    case = next(c for c in bu.make_cases(dataset, dataset.load())
                if c.level == "person" and c.truth_kind == "bounded" and c.task.kind == "median")
    ours, tree = bu.securedp_run(case, args.runs), bu.pipelinedp_run(case, args.runs)
    grouped = case.frame.groupby("group")
    rows, persons = grouped.size(), grouped["person"].nunique()
    lo, hi = case.bounds
    print(f"{dataset.name}, person-level median per group, bounds ({lo}, {hi}) (middle {(lo + hi) / 2}), "
          f"{args.runs} runs; RMSE, mean and sd of the releases")
    print(f"{'group':>8} {'persons':>8} {'rows':>6} {'truth':>8} | {'securedp':>26} | {'pipelinedp (tree)':>26}")
    order = sorted(range(len(case.keys)), key=lambda i: -int(persons.get(case.keys[i], 0)))
    for i in order:
        key, truth = case.keys[i], case.truth[i]
        cells = []
        for released in (ours[:, i], tree[:, i]):
            rmse = float(np.sqrt(np.mean((released - truth) ** 2)))
            cells.append(f"{rmse:8.3f} {released.mean():8.3f} {released.std():8.3f}")
        print(f"{key:>8} {int(persons.get(key, 0)):8d} {int(rows.get(key, 0)):6d} {truth:8.3f} | {cells[0]} | "
              f"{cells[1]}")
    for name, released in (("securedp", ours), ("pipelinedp", tree)):
        pooled = float(np.sqrt(np.nanmean((released - case.truth) ** 2)))
        big = [i for i, key in enumerate(case.keys) if persons.get(key, 0) >= 20]
        large = float(np.sqrt(np.nanmean((released[:, big] - case.truth[big]) ** 2)))
        print(f"{name}: pooled RMSE {pooled:.4f}; over the {len(big)} groups of at least 20 persons {large:.4f}")


if __name__ == "__main__":
    main()
