"""Grouped table with per-person bounding: 10**7 rows, 10**4 groups, up to 10 rows per person.

Run: ``python benchmarks/bench_tables.py [rows] [--hashlib]`` (``--hashlib``: digests by
hashlib even when the optional polars-hash plugin is installed). Each person has 1..10 rows
(uniform), each row a group drawn uniformly from 10**4 and units in [0, 200000]; bounding keeps
``max_groups = 3`` groups per person and ``max_rows = 5`` rows per group.

Two levels are timed, one case per fresh process (so that each case's peak resident memory,
``resource.getrusage(...).ru_maxrss``, is its own, input table included):

* ``bounding``: the engine step alone, :func:`securedp.engines.polars.bounding.bound_and_aggregate`,
  then a count + sum + mean noised here over the public keys (what a hand-written release does);
* ``table``: the public API, ``securedp.tables.prepare_table(data, group_by=["group"], ...,
  max_groups=3, max_rows=5, epsilon=1).execute(ChaChaSource(...))`` with a count, a sum and a mean
  of ``income`` on (0, 200000), step 1, over the public keys ``range(10**4)`` or over private keys
  (``keys=None, delta="1e-9"``: Laplace thresholding).

Stages: ``prepare`` is ``prepare_table`` (validation, screening of the id, key and value cells,
pricing); ``execute`` is ``.execute`` (salt, bounding and exact aggregates, selection, noise, the
output frame), of which ``bound+agg`` is the time spent bounding and aggregating (in
``bound_and_aggregate``, or in the in-memory engine's calls that bound: ``PolarsEngine.counts``,
``column``, ``unit_counts``) and ``sha256``
the time spent in the salted digests. Times are wall seconds with CPU seconds (all threads) in
brackets: on a shared machine CPU seconds are the steadier measure. ``random B`` is the number of
bytes the ChaCha20 source served (``bytes_served``). One run per case (a table this size is the
warm-up of nothing: Polars has no plan cache to fill). The OpenDP counterpart of the ``table``
cases is ``bench_tables_opendp.py``.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl

import securedp.bounding.digest as digest
import securedp.engines.polars.bounding as bounding
import securedp.engines.polars.smallest as smallest
from securedp.bounding.digest import draw_salt
from securedp.engines.polars.engine import PolarsEngine
from securedp.hazmat.bits import ChaChaSource
from securedp.hazmat.samplers import discrete_laplace
from securedp.tables import Count, Mean, Sum, TableRelease, prepare_table

GROUPS = 10**4
MAX_GROUPS, MAX_ROWS, WIDTH = 3, 5, 200_000
DELTA = "1e-9"
CASES = ("bounding polars", "bounding pandas", "table polars public", "table pandas public",
         "table polars private", "table pandas private")

Clock = tuple[float, float]


def table(rows: int) -> pl.DataFrame:
    gen = np.random.default_rng(2026)  # benchmark data only, never a privacy decision
    sizes = gen.integers(1, 11, rows // 5 + 1)
    persons = np.repeat(np.arange(len(sizes)), sizes)[:rows]
    return pl.DataFrame({
        "person": persons,
        "group": gen.integers(0, GROUPS, rows),
        "income": gen.integers(0, WIDTH + 1, rows),
    })


def clock() -> Clock:
    """Wall time and CPU time of the process (all threads)."""
    return time.perf_counter(), time.process_time()


def since(start: Clock) -> Clock:
    wall, cpu = clock()
    return wall - start[0], cpu - start[1]


def timed(owner: Any, *names: str) -> list[Clock]:
    """Wrap each ``owner.name`` (a module global or a method its callers look up at call time) so that
    the wall and CPU time of every call is recorded in the returned list."""
    spent: list[Clock] = []
    for name in names:
        inner: Callable[..., Any] = getattr(owner, name)

        def wrapper(*args: Any, inner: Callable[..., Any] = inner, **kwargs: Any) -> Any:
            t = clock()
            out = inner(*args, **kwargs)
            spent.append(since(t))
            return out

        setattr(owner, name, wrapper)
    return spent


def total(spent: list[Clock]) -> Clock:
    return sum(w for w, _ in spent), sum(c for _, c in spent)


def by_hand(data: object, source: ChaChaSource) -> tuple[Clock | None, Clock, int]:
    """Bounding and exact aggregates by the engine, then count + sum + mean noised over the public keys."""
    t = clock()
    agg = bounding.bound_and_aggregate(
        data, person="person", keys=["group"], units="income", max_groups=MAX_GROUPS, max_rows=MAX_ROWS,
        salt=draw_salt(source),
    )
    # Public keys: every group gets a cell; absent ones count 0. Half the budget each to count and sum.
    cells = pl.DataFrame({"group": np.arange(GROUPS)}).join(
        agg.keys.with_columns(pl.Series("rows", agg.rows), pl.Series("total", agg.total, dtype=pl.Int128)),
        on="group", how="left",
    ).fill_null(0)
    count_scale = MAX_GROUPS * MAX_ROWS * 2
    noisy_count = cells["rows"].to_numpy() + discrete_laplace(count_scale, size=GROUPS, rng=source)
    sum_noise = discrete_laplace(count_scale * WIDTH, size=GROUPS, rng=source)
    noisy_sum = [int(s) + int(z) for s, z in zip(cells["total"].to_list(), sum_noise, strict=True)]
    means = [Fraction(s, c) if c > 0 else None for s, c in zip(noisy_sum, noisy_count.tolist(), strict=True)]
    return None, since(t), len(means)


def by_api(data: object, source: ChaChaSource, private: bool) -> tuple[Clock | None, Clock, int]:
    """The public API: prepare_table(...).execute(source); checks the output's kind and size."""
    keys: dict[str, Any] = {"keys": None, "delta": DELTA} if private else {"keys": list(range(GROUPS))}
    t = clock()
    prepared = prepare_table(
        data, group_by=["group"], aggregations=[Count(), Sum("income", (0, WIDTH), 1), Mean("income", (0, WIDTH), 1)],
        id_column="person", max_groups=MAX_GROUPS, max_rows=MAX_ROWS, epsilon=1, **keys,
    )
    prepared_in = since(t)
    t = clock()
    release = prepared.execute(source)
    executed = since(t)
    assert isinstance(release, TableRelease)
    frame = release.frame
    if type(frame).__module__.split(".")[0] != type(data).__module__.split(".")[0]:
        raise AssertionError(f"a {type(data).__name__} input gave a {type(frame).__name__}")
    if not private and len(frame) != GROUPS:
        raise AssertionError(f"{len(frame)} cells for {GROUPS} public keys")
    return prepared_in, executed, len(frame)


def run_case(case: str, rows: int) -> dict[str, Any]:
    """One case, in this process: its stage times, peak RSS and random bytes."""
    hashing = timed(smallest, "_heads")  # group and row digests (by the CPU extension or by polars-hash)
    level, kind, *keys = case.split()
    engine = timed(bounding, "bound_and_aggregate") if level == "bounding" else \
        timed(PolarsEngine, "counts", "column", "unit_counts")  # the engine's calls that bound and aggregate
    frame = table(rows)
    data: object = frame if kind == "polars" else frame.to_pandas()
    del frame
    input_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    source = ChaChaSource(b"\x42" * 32)
    if level == "bounding":
        prepared, executed, cells = by_hand(data, source)
    else:
        prepared, executed, cells = by_api(data, source, keys == ["private"])
    return {"case": case, "prepare": prepared, "execute": executed, "engine": total(engine),
            "sha256": total(hashing), "input_rss": input_rss,
            "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "random_bytes": source.bytes_served, "cells": cells}


def cell(value: Clock | None) -> str:
    return "-" if value is None else f"{value[0]:6.2f} ({value[1]:6.2f})"


def main() -> None:
    args = sys.argv[1:]
    sizes = [a for a in args if not a.startswith("--") and a not in CASES]
    rows = int(sizes[0]) if sizes else 10**7
    if "--hashlib" in args:
        digest._polars_hash = None
    if "--case" in args:  # a child: one case, one JSON line
        print(json.dumps(run_case(args[args.index("--case") + 1], rows)))
        return
    backend = "hashlib" if digest._polars_hash is None else "polars-hash"
    frame = table(rows)
    print(f"{rows} rows, {frame['person'].n_unique()} persons, {GROUPS} groups, max_groups {MAX_GROUPS}, "
          f"max_rows {MAX_ROWS}, epsilon 1 (private keys: delta {DELTA}), digests by {backend}; "
          "seconds wall (CPU)")
    del frame
    header = ("case", "prepare", "execute", "of which bound+agg", "of which sha256", "total wall",
              "peak RSS MiB (input)", "random B", "cells")
    line = "{:<22} {:>16} {:>16} {:>18} {:>16} {:>10} {:>20} {:>10} {:>6}"
    print(line.format(*header))
    flags = ["--hashlib"] if "--hashlib" in args else []
    for case in CASES:
        child = subprocess.run([sys.executable, __file__, str(rows), *flags, "--case", case],
                               capture_output=True, text=True, check=False)
        if child.returncode != 0:
            print(f"{case}: failed\n{child.stderr.strip()}")
            continue
        r = json.loads(child.stdout.strip().splitlines()[-1])
        whole = (r["prepare"][0] if r["prepare"] else 0.0) + r["execute"][0]
        print(line.format(case, cell(r["prepare"]), cell(r["execute"]), cell(r["engine"]), cell(r["sha256"]),
                          f"{whole:.2f}", f"{r['peak_rss']:.0f} ({r['input_rss']:.0f})", r["random_bytes"],
                          r["cells"]))


if __name__ == "__main__":
    main()
