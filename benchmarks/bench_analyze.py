"""Contribution analysis against a table release on the same data (``bench_tables.py``'s table).

Run: ``python benchmarks/bench_analyze.py [rows]`` (default 10**7): persons with 1..10 rows, each row in
one of 10**4 groups. Timed, each the median of 3 runs (wall seconds, CPU seconds of all threads in
brackets): the table release ``prepare_table(..., max_groups=3, max_rows=5, keys=range(10**4))`` of a
count alone, and of a count, a sum and a mean; the exact ``analyze_contributions`` (default
candidates) and the private one (``epsilon=1``).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

from bench_tables import GROUPS, MAX_GROUPS, MAX_ROWS, WIDTH, table

from securedp.hazmat.bits import ChaChaSource
from securedp.planning import analyze_contributions
from securedp.tables import Count, Mean, Sum, prepare_table


def timed(run: Callable[[], object]) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 10**7
    data = table(rows)
    keys = list(range(GROUPS))
    income = (0, WIDTH)

    def release(aggregations: list[object]) -> Callable[[], object]:
        return lambda: prepare_table(data, group_by=["group"], aggregations=aggregations, keys=keys,
                                     id_column="person", max_groups=MAX_GROUPS, max_rows=MAX_ROWS,
                                     epsilon=1).execute(ChaChaSource(b"\x01" * 32))

    cases = {
        "table: count": release([Count()]),
        "table: count, sum, mean": release([Count(), Sum("income", income), Mean("income", income)]),
        "analyze (exact)": lambda: analyze_contributions(data, id_column="person", group_by="group"),
        "analyze (epsilon=1)": lambda: analyze_contributions(data, id_column="person", group_by="group",
                                                             epsilon=1, rng=ChaChaSource(b"\x02" * 32)),
    }
    print(f"{rows} rows, {GROUPS} groups, median of 3 runs: wall s [CPU s]")
    for name, run in cases.items():
        wall, cpu = timed(run)
        print(f"  {name:26} {wall:7.2f} [{cpu:6.2f}]")


if __name__ == "__main__":
    main()
