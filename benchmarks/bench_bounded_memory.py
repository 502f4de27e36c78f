"""A grouped table from a Parquet file of any size, in a bounded memory: securedp against a plain Polars pipeline.

Run: ``python benchmarks/bench_bounded_memory.py ROWS [--budget GIB] [--cases securedp,plain] [--data FOLDER]``
(``ROWS`` such as ``10**7``, ``10**8``, ``10**9``). The file (persons of 1..10 rows, uniform, in runs;
each row a group drawn uniformly from 10**4 and an integer ``income`` in [0, 200000], as in
``bench_tables.py``) is generated into ``FOLDER`` (default the system's temporary folder) in pieces of
10**7 rows, once, and reused; nothing is shipped. Each case runs in a fresh process, whose peak resident
memory (``ru_maxrss`` of the child, what ``/usr/bin/time -v`` calls its maximum resident set size) is its own:

* ``securedp``: ``prepare_table(path, group_by=["group"], aggregations=[Count(), Sum, Mean], id_column="person",
  max_groups=3, max_rows=5, epsilon=1, keys=range(10**4), memory_budget=...)`` then ``.execute`` (seeded);
  the pieces are reported on standard error as they are read (progress);
* ``plain``: a plain Polars pipeline bounding persons the same way (each person's 3 groups and each group's
  5 rows of smallest seeded hash, Polars' own), then count and sum per group, exact integers, no noise.

Targets (the 2-core, 24 GiB machine of issue 44): at 10**8 rows ``securedp`` takes at most the ``plain``
pipeline's time, at most 12 times its own 10**7-row time, and at most 8 GiB; at 10**9 rows it completes within
``--budget 8``. The targets are printed beside the figures.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GROUPS = 10**4
WIDTH = 200_000
PIECE = 10**7


def data_file(rows: int, folder: Path) -> Path:
    """The benchmark's Parquet file of ``rows`` rows (generated once, in pieces of 10**7 rows)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / f"securedp-bench-bounded-{rows}.parquet"
    if path.exists():
        return path
    gen = np.random.default_rng(2026)  # benchmark data only, never a privacy decision
    partial = path.with_suffix(".partial")
    writer: pq.ParquetWriter | None = None
    first_person = 0
    for start in range(0, rows, PIECE):
        n = min(PIECE, rows - start)
        sizes = gen.integers(1, 11, n // 5 + 2)
        persons = np.repeat(np.arange(first_person, first_person + sizes.size), sizes)[:n]
        first_person = int(persons[-1]) + 1
        table = pa.table({"person": persons, "group": gen.integers(0, GROUPS, n),
                          "income": gen.integers(0, WIDTH + 1, n)})
        if writer is None:
            writer = pq.ParquetWriter(partial, table.schema)
        writer.write_table(table, row_group_size=1 << 20)
        print(f"generated {start + n:,} of {rows:,} rows", file=sys.stderr, flush=True)
    assert writer is not None
    writer.close()
    partial.rename(path)
    return path


def run_securedp(path: str, budget: float | None) -> dict[str, object]:
    import logging

    from securedp.hazmat.bits import ChaChaSource
    from securedp.tables import Count, Mean, Sum, prepare_table

    logging.basicConfig(level=logging.INFO, format="  %(relativeCreated)8.0f ms  %(message)s", stream=sys.stderr)
    extra = {}
    if budget is not None and "memory_budget" in inspect.signature(prepare_table).parameters:
        extra["memory_budget"] = f"{budget}GiB"
    start = time.perf_counter()
    prepared = prepare_table(path, group_by=["group"], aggregations=[
        Count(), Sum("income", (0, WIDTH), 1), Mean("income", (0, WIDTH), 1)], id_column="person", max_groups=3,
        max_rows=5, epsilon=1, keys=list(range(GROUPS)), **extra)  # type: ignore[arg-type]
    prepared_in = time.perf_counter() - start
    release = prepared.execute(ChaChaSource(bytes(32)))
    seconds = time.perf_counter() - start
    assert len(release.frame) == GROUPS
    return {"seconds": seconds, "prepare": prepared_in}


def run_plain(path: str) -> dict[str, object]:
    import polars as pl

    start = time.perf_counter()
    rows = pl.scan_parquet(path).select("person", "group", "income")
    pairs = (rows.group_by("person", "group").agg(pl.len().alias("n"))
             .with_columns(pl.struct("person", "group").hash(7).alias("h"))
             .filter(pl.col("h").rank("ordinal").over("person") <= 3))
    kept = (rows.join(pairs.select("person", "group"), on=["person", "group"], how="semi")
            .with_columns(pl.struct("person", "group", "income").hash(11).alias("h"))
            .filter(pl.col("h").rank("ordinal").over("person", "group") <= 5))
    table = kept.group_by("group").agg(pl.len().alias("count"), pl.col("income").sum().alias("sum")).collect(
        engine="streaming")
    seconds = time.perf_counter() - start
    assert table.height == GROUPS
    return {"seconds": seconds}


def child(case: str, path: str, budget: float | None) -> None:
    cpu = time.process_time()
    result = run_securedp(path, budget) if case == "securedp" else run_plain(path)
    result["cpu"] = time.process_time() - cpu  # all threads: on a shared machine the steadier measure
    result["peak"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # bytes: KiB on Linux
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", help="rows of the file, such as 10**8")
    parser.add_argument("--budget", type=float, default=None, help="securedp's memory_budget in GiB (default: its own)")
    parser.add_argument("--cases", default="securedp,plain")
    parser.add_argument("--data", default=tempfile.gettempdir())
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.rows, args.budget)
        return
    rows = int(eval(args.rows, {"__builtins__": {}}))  # "10**8": arithmetic on literals only
    path = data_file(rows, Path(args.data))
    print(f"{rows:,} rows, {path.stat().st_size / 2**30:.2f} GiB of Parquet at {path}", flush=True)
    for case in args.cases.split(","):
        command = [sys.executable, __file__, str(path), "--child", case]
        if args.budget is not None:
            command += ["--budget", str(args.budget)]
        done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, env=os.environ)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        stages = f" (prepare {result['prepare']:.1f} s)" if "prepare" in result else ""
        print(f"{case:9} {result['seconds']:8.1f} s [{result['cpu']:.1f} CPU-s]{stages}   "
              f"peak {result['peak'] / 2**30:6.2f} GiB", flush=True)
    print("targets at 10**8 rows: securedp <= plain's time, <= 12 x its 10**7 time, peak <= 8 GiB; "
          "10**9 rows complete within --budget 8")


if __name__ == "__main__":
    main()
