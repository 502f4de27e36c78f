"""The driver side of a grouped table release: the noise step and the output frame, without the engine.

Run: ``python benchmarks/bench_table_cells.py [keys ...] [--profile]`` (default ``10**4 10**5``).
For each number of public keys, synthetic exact aggregates (every key with 500..1500 kept rows,
about what ``bench_tables.py`` keeps per key, half as many persons, and a sum of units in
[0, 200000] per row) are released as a count, a sum and a mean (``max_groups = 3``,
``max_rows = 5``, ``epsilon = 1``, step 1) by :func:`securedp.tables.cells.release_cells` from a
seeded ChaCha20 source, then built into a Polars frame and a pandas frame by
:func:`securedp.engines.frames.exact_frame`. Times are wall seconds with CPU seconds (all threads)
in brackets, each the best of three (the data are the same each time); on a shared machine CPU
seconds are the steadier measure. Both include the cyclic garbage collector's passes over the
Fractions the release holds.
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

from securedp.engines.frames import exact_frame
from securedp.engines.protocol import KeyAggregates
from securedp.hazmat.bits import ChaChaSource
from securedp.privacy.cost import Cost
from securedp.tables.cells import Aggregates, CellNoise, Column, cells_of, definitions, release_cells
from securedp.tables.spec import Count, Mean, Sum

K, M, WIDTH = 3, 5, 200_000


class SyntheticEngine:
    """An engine whose aggregates are given: every key of ``range(keys)`` holds rows."""

    def __init__(self, keys: int) -> None:
        gen = np.random.default_rng(2026)  # benchmark data only, never a privacy decision
        rows = gen.integers(500, 1501, keys)
        totals = [int(r) * int(u) for r, u in zip(rows, gen.integers(0, WIDTH + 1, keys), strict=True)]
        self.aggregates = KeyAggregates(pl.DataFrame({"group": np.arange(keys)}), rows.tolist(),
                                        (rows // 2).tolist(), totals, None)

    def column(self, _index: int, _salt: bytes, _squares: bool) -> KeyAggregates:
        return self.aggregates

    def counts(self, _salt: bytes) -> KeyAggregates:
        return self.aggregates


Clock = tuple[float, float]


def clock() -> Clock:
    return time.perf_counter(), time.process_time()


def since(start: Clock) -> Clock:
    wall, cpu = clock()
    return wall - start[0], cpu - start[1]


def run(keys: int) -> list[Clock]:
    aggregations = [Count(), Sum("income", (0, WIDTH)), Mean("income", (0, WIDTH))]
    columns = [Column(a, Fraction(1), 0, WIDTH, 0) for a in aggregations[1:]]  # type: ignore[arg-type]
    engine: Any = SyntheticEngine(keys)
    public = pl.DataFrame({"group": np.arange(keys)})

    def part(_name: str) -> Cost:
        return Cost.of(epsilon=Fraction(1, 3))

    defined = definitions(aggregations, part, K, M)

    best = [(float("inf"), float("inf"))] * 3
    for _ in range(3):
        aggregates = Aggregates(engine, columns, b"salt", same_rows=True)
        cells = cells_of(aggregates.counts, public, ["group"])
        noise = CellNoise(["group"], columns, aggregations, defined, Fraction(1, 20))
        start = clock()
        released = release_cells(noise, cells, aggregates, ChaChaSource(bytes(32)))
        names, rows, steps = released.names, released.rows, released.steps
        times = [since(start)]
        for kind in ("polars", "pandas"):
            start = clock()
            exact_frame(names, rows, kind, {"group": pl.Int64()}, steps)
            times.append(since(start))
        best = [(min(b[0], t[0]), min(b[1], t[1])) for b, t in zip(best, times, strict=True)]
        del released, names, rows, steps  # the next release is built without this one alive
    return best


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--profile"]
    sizes = [int(float(a)) for a in args] or [10**4, 10**5]
    if "--profile" in sys.argv:
        cProfile.runctx("run(sizes[0])", globals(), {"sizes": sizes}, "/tmp/bench_table_cells.prof")
        pstats.Stats("/tmp/bench_table_cells.prof").sort_stats("cumulative").print_stats(25)
        return
    print(f"{'keys':>8} {'release_cells':>18} {'exact_frame polars':>20} {'exact_frame pandas':>20}")
    for keys in sizes:
        print(f"{keys:>8} " + " ".join(f"{wall:>10.3f} [{cpu:.3f}]".rjust(width)
                                        for (wall, cpu), width in zip(run(keys), (18, 20, 20), strict=True)))

if __name__ == "__main__":
    main()
