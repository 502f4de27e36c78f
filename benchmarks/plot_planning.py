"""Predicted against realised error of a planned table, on the built-in example data (docs/planning.md).

For each epsilon of a grid, the plan of ``count`` and ``hours_sum`` per region (``max_rows=4``, every
row of the example kept) states its half-width at level 0.95 before anything is drawn; 300 seeded
releases then give the realised errors ``|released - true|``. The figure shows, per epsilon, the stated
half-width and the realised 95th percentile (which must not exceed it by more than sampling error), and
the script prints the empirical coverage. Needs the ``[plot]`` extra (matplotlib)::

    python benchmarks/plot_planning.py docs/img/planning.png
"""

from __future__ import annotations

import sys
from fractions import Fraction

import numpy as np
import polars as pl

import securedp
from securedp import ChaChaSource
from securedp.cli.example_data import PATH
from securedp.tables import Count, Sum

EPSILONS = ["1/8", "1/4", "1/2", "1", "2", "4"]
RUNS = 300


def main(out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frame = pl.read_csv(PATH)
    query = {"group_by": ["region"], "keys": ["north", "south", "east", "west"], "id_column": "person_id",
             "max_rows": 4, "aggregations": [Count(), Sum("hours", (0, 80), 1)], "alpha": "0.05"}
    truth = frame.group_by("region").agg(pl.len().alias("count"), pl.col("hours").round(0).sum().alias("hours_sum"))
    true = {row["region"]: row for row in truth.iter_rows(named=True)}
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, name in zip(axes, ["count", "hours_sum"], strict=True):
        planned, realised, covered = [], [], []
        for eps in EPSILONS:
            prepared = securedp.prepare_table(frame, epsilon=eps, **query)
            width = next(o for o in prepared.plan.outputs if o.name == name).halfwidths[""]
            source = ChaChaSource(f"planning-{eps}".encode().ljust(32, b"\0"))
            errors = []
            for _ in range(RUNS):
                release = prepared.execute(source)
                for row in release.value:
                    values = dict(zip(release.labels, row, strict=True))
                    errors.append(abs(Fraction(values[name]) - true[values["region"]][name]))
            planned.append(float(width))
            realised.append(float(np.percentile([float(e) for e in errors], 95)))
            covered.append(np.mean([e <= width for e in errors]))
            print(f"{name} epsilon {eps}: planned +/- {width}, realised 95th percentile {realised[-1]:.1f}, "
                  f"coverage {covered[-1]:.3f}")
        x = [float(Fraction(e)) for e in EPSILONS]
        ax.loglog(x, planned, "o-", label="planned half-width (stated before the draw)")
        ax.loglog(x, realised, "s--", label="realised 95th percentile of |error|")
        ax.set_title(name)
        ax.set_xlabel("epsilon")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("error (column units)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "planning.png")
