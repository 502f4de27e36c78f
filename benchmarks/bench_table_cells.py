"""The driver side of a grouped table release: the noise step and the output frame, without the engine.

Run: ``python benchmarks/bench_table_cells.py [keys ...] [--profile]`` (default ``10**4 10**5``).
For each number of public keys, synthetic exact aggregates (every key with rows in 1..50 and a sum
of units in [0, 200000] per row, as ``bench_tables.py``) are released as a count, a sum and a mean
(``max_groups = 3``, ``max_rows = 5``, ``epsilon = 1``, step 1) by
:func:`securedp.tables.cells.release_cells` from a seeded ChaCha20 source, then built into a
Polars frame and a pandas frame by :func:`securedp.tables.frames.exact_frame`. Times are wall
seconds, best of three (the data are the same each time).
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl

from securedp.engines.bounding import KeyAggregates
from securedp.hazmat.bits import ChaChaSource
from securedp.tables.cells import Aggregates, Column, cells_of, release_cells
from securedp.tables.frames import exact_frame
from securedp.tables.spec import Count, Mean, Sum

K, M, WIDTH = 3, 5, 200_000


class SyntheticEngine:
    """An engine whose aggregates are given: every key of ``range(keys)`` holds rows."""

    def __init__(self, keys: int) -> None:
        gen = np.random.default_rng(2026)  # benchmark data only, never a privacy decision
        rows = gen.integers(1, 51, keys)
        self.aggregates = KeyAggregates(pl.DataFrame({"group": np.arange(keys)}), rows.tolist(), rows.tolist(),
                                        [int(r) * int(gen.integers(0, WIDTH + 1)) for r in rows], None)

    def column(self, _index: int, _salt: bytes, _squares: bool) -> KeyAggregates:
        return self.aggregates

    def counts(self, _salt: bytes) -> KeyAggregates:
        return self.aggregates


def run(keys: int) -> tuple[float, float, float]:
    aggregations = [Count(), Sum("income", (0, WIDTH)), Mean("income", (0, WIDTH))]
    columns = [Column(a, Fraction(1), 0, WIDTH, 0) for a in aggregations[1:]]  # type: ignore[arg-type]
    engine: Any = SyntheticEngine(keys)
    public = pl.DataFrame({"group": np.arange(keys)})

    def part(_name: str) -> tuple[Fraction | None, Fraction | None]:
        return Fraction(1, 3), None

    best = [float("inf")] * 3
    for _ in range(3):
        aggregates = Aggregates(engine, columns, b"salt", same_rows=True)
        cells = cells_of(aggregates.counts, public, ["group"])
        start = time.perf_counter()
        names, rows, steps = release_cells(cells, aggregates.counts, aggregates, columns, aggregations, part, K, M,
                                           Fraction(1, 20), ChaChaSource(bytes(32)), {}, ["group"], {})
        cells_s = time.perf_counter() - start
        start = time.perf_counter()
        exact_frame(names, rows, "polars", {"group": pl.Int64()}, steps)
        polars_s = time.perf_counter() - start
        start = time.perf_counter()
        exact_frame(names, rows, "pandas", {"group": pl.Int64()}, steps)
        pandas_s = time.perf_counter() - start
        best = [min(b, t) for b, t in zip(best, (cells_s, polars_s, pandas_s), strict=True)]
    return best[0], best[1], best[2]


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--profile"]
    sizes = [int(float(a)) for a in args] or [10**4, 10**5]
    if "--profile" in sys.argv:
        cProfile.runctx("run(sizes[0])", globals(), {"sizes": sizes}, "/tmp/bench_table_cells.prof")
        pstats.Stats("/tmp/bench_table_cells.prof").sort_stats("cumulative").print_stats(25)
        return
    print(f"{'keys':>8} {'release_cells':>14} {'exact_frame pl':>15} {'exact_frame pd':>15}")
    for keys in sizes:
        cells_s, polars_s, pandas_s = run(keys)
        print(f"{keys:>8} {cells_s:>14.3f} {polars_s:>15.3f} {pandas_s:>15.3f}")


if __name__ == "__main__":
    main()
