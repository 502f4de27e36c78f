"""Grouped tables on the shapes that cost the bounding engine most, beside the favourable one.

Run: ``python benchmarks/bench_tables_shapes.py [rows]`` (default 10**7). The data is
``bench_tables.py``'s (persons with 1..10 rows, incomes in [0, 200000]); each shape changes one
thing, and every case is a count + sum + mean of ``income`` at epsilon 1 with public keys, timed in
a fresh process (wall seconds of ``prepare_table`` and ``.execute``, and the peak resident memory):

* ``integers``: integer person ids and 10**4 integer groups, k=3, m=5 (the favourable shape);
* ``strings``: the same ids and groups as strings (``person-123``, ``g45``): codes by a checked
  keyed hash, and 17 + 8 bytes of fields per message instead of 10 + 7, two SHA-256 blocks;
* ``shuffled strings``: the ``strings`` data with its rows in random order (each person's rows
  scattered, as in a file not sorted by person; the text written in that order, as a reader would);
* ``sparse ids``: integer ids spread over 2**40 .. 2**61 (ranked, not subtracted);
* ``3 groups``: 3 groups, m=2: most persons hold more than 2 rows in a group, so rows are hashed;
* ``no group-by``: one cell, m=2: every person over 2 rows has all their rows hashed.
* ``skewed``: the issue's unfavourable real-world shape: Zipf-distributed groups (weight of group
  ``g`` proportional to ``1 / (g + 1)**1.1``, so a few groups hold most rows), persons with 1 to 30
  rows (uniformly: most persons are over ``max_rows`` in some group, and hashed), and float incomes with cents
  (``12345.67`` as float64) on the lattice of step ``0.01``; k=3, m=5.
* ``skewed persons``: the ``skewed`` data with skewed person sizes: a person has ``s`` rows
  (``1 <= s <= 30``) with probability proportional to ``1 / s``, so most persons have a few rows
  and some have 30 (mean 7.5 rows, 1.3 million persons at 10**7 rows).

Each shape runs ``--rounds`` times (default 3), the shapes taken in turn, and the verdict is on the
median total. Before the first round a process of its own touches :data:`WARM_GIB` GiB once and frees
it: on a new virtual machine the first touch of each page of guest memory is a fault on the host
(measured 2026-12-02: 2.1 s to fill 800 MB once, 0.06-0.09 s on memory touched before), which charged
the first runs of a fresh machine up to 2.5 s more per table. Freed pages are handed out again first,
so the children's tables then run on memory that any long-running machine would have.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np
import polars as pl
from bench_tables import GROUPS, WIDTH, table

from securedp.hazmat.bits import ChaChaSource
from securedp.tables import Count, Mean, Sum, prepare_table

SHAPES = ("integers", "strings", "shuffled strings", "sparse ids", "3 groups", "no group-by", "skewed",
          "skewed persons")


def query(shape: str, frame: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The frame and ``prepare_table`` arguments of one shape."""
    kw: dict[str, Any] = {"aggregations": [Count(), Sum("income", (0, WIDTH), 1), Mean("income", (0, WIDTH), 1)],
                          "id_column": "person", "max_groups": 3, "max_rows": 5, "epsilon": 1,
                          "group_by": ["group"], "keys": list(range(GROUPS))}
    if shape == "shuffled strings":
        order = np.random.default_rng(7).permutation(frame.height)  # benchmark data only
        frame = pl.DataFrame({c: frame[c].to_numpy()[order] for c in frame.columns})
    if shape in ("strings", "shuffled strings"):
        frame = frame.with_columns(pl.format("person-{}", "person").alias("person"),
                                   pl.format("g{}", "group").alias("group"))
        kw["keys"] = [f"g{i}" for i in range(GROUPS)]
    elif shape == "sparse ids":
        frame = frame.with_columns((pl.col("person") * 1_000_003 + 2**40).alias("person"))
    elif shape == "3 groups":
        frame = frame.with_columns((pl.col("group") % 3).alias("group"))
        kw.update(keys=[0, 1, 2], max_rows=2)
    elif shape == "no group-by":
        kw.update(group_by=[], keys=None, max_groups=1, max_rows=2)
    elif shape in ("skewed", "skewed persons"):
        frame = skewed(frame.height, shape == "skewed persons")
        kw["aggregations"] = [Count(), Sum("income", (0, WIDTH), "0.01"), Mean("income", (0, WIDTH), "0.01")]
    return frame, kw


def skewed(rows: int, skewed_sizes: bool = False) -> pl.DataFrame:
    """``rows`` rows of the ``skewed`` shape, or of ``skewed persons`` (see the module docstring);
    benchmark data only."""
    gen = np.random.default_rng(2027)  # benchmark data only, never a privacy decision
    if skewed_sizes:
        weights = 1.0 / np.arange(1, 31)
        sizes = gen.choice(np.arange(1, 31), size=rows // 4 + 1, p=weights / weights.sum())
    else:
        sizes = gen.integers(1, 31, rows // 2 + 1)
    persons = np.repeat(np.arange(len(sizes)), sizes)[:rows]
    weights = 1.0 / np.arange(1, GROUPS + 1) ** 1.1
    groups = gen.choice(GROUPS, size=rows, p=weights / weights.sum())
    cents = gen.integers(0, WIDTH * 100 + 1, rows)
    return pl.DataFrame({"person": persons, "group": groups, "income": cents / 100})


def run(shape: str, rows: int) -> dict[str, float]:
    frame, kw = query(shape, table(rows))
    start = time.perf_counter()
    prepared = prepare_table(frame, **kw)
    prepared_at = time.perf_counter()
    prepared.execute(ChaChaSource(bytes(32)))
    done = time.perf_counter()
    return {"prepare": prepared_at - start, "execute": done - prepared_at,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


TARGET_SECONDS = 4.0
"""Issue 20's target at 10**7 rows, on any shape (OpenDP's Polars API took 31.1 s on ``integers``:
``bench_tables_opendp.py``, in its own environment)."""


WARM_GIB = 4
"""GiB touched once before the first round (about twice a table's peak resident memory)."""


def warm_memory(gib: int = WARM_GIB) -> None:
    """Touch ``gib`` GiB once, in a process of its own, and free it (see the module docstring: the host's
    first-touch faults; a child would inherit this process's peak resident memory through ``exec``)."""
    subprocess.run([sys.executable, "-c", f"import numpy as np; blocks = [np.ones(1 << 27) for _ in range({gib})]"],
                   check=True)


def main() -> None:
    args = sys.argv[1:]
    rows = int(args[0]) if args and args[0].isdigit() else 10**7
    if "--shape" in args:
        print(json.dumps(run(args[args.index("--shape") + 1], rows)))
        return
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 3
    warm_memory()
    totals: dict[str, list[float]] = {shape: [] for shape in SHAPES}
    peaks: dict[str, float] = {}
    failed: dict[str, str] = {}
    for _ in range(rounds):
        for shape in SHAPES:
            child = subprocess.run([sys.executable, __file__, str(rows), "--shape", shape], capture_output=True,
                                   text=True, check=False)
            if child.returncode != 0:
                failed[shape] = child.stderr.strip()
                continue
            r = json.loads(child.stdout.strip().splitlines()[-1])
            totals[shape].append(r["prepare"] + r["execute"])
            peaks[shape] = max(peaks.get(shape, 0.0), r["peak_mib"])
    print(f"{rows} rows, count + sum + mean, epsilon 1; seconds wall of prepare + execute over {rounds} rounds "
          f"(target at 10**7 rows: median <= {TARGET_SECONDS} s on every shape; OpenDP's Polars API: 31.1 s on "
          "integers)")
    print(f"{'shape':<16} {'min':>6} {'median':>7} {'max':>6} {'peak MiB':>9}")
    for shape in SHAPES:
        if shape in failed:
            print(f"{shape}: failed\n{failed[shape]}")
            continue
        runs = sorted(totals[shape])
        median = runs[len(runs) // 2] if len(runs) % 2 else (runs[len(runs) // 2 - 1] + runs[len(runs) // 2]) / 2
        verdict = "" if rows != 10**7 else "  meets target" if median <= TARGET_SECONDS else "  MISSES target"
        print(f"{shape:<16} {runs[0]:6.2f} {median:7.2f} {runs[-1]:6.2f} {peaks[shape]:9.0f}{verdict}")

if __name__ == "__main__":
    main()
