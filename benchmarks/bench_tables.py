"""Grouped table with per-person bounding: 10**7 rows, 10**4 public groups, up to 10 rows per person.

Run: ``python benchmarks/bench_tables.py [rows] [--hashlib]`` (``--hashlib``: digests by
hashlib even when the optional polars-hash plugin is installed). Each person has 1..10 rows
(uniform), each row a group drawn uniformly from 10**4 and units in
[0, 200000]; bounding keeps ``max_groups = 3`` groups per person and
``max_rows = 5`` rows per group. Reported: the time of bounding plus exact
per-key aggregates (and of its SHA-256 part), of the noise for a count + sum
+ mean table over the public keys, and the peak resident memory
(``resource.getrusage``). One run per input kind (a table this size is the
warm-up of nothing: Polars has no plan cache to fill).
"""

from __future__ import annotations

import resource
import sys
import time
from fractions import Fraction

import numpy as np
import polars as pl

import securedp.engines.bounding as bounding
import securedp.engines.digest as digest
from securedp.engines.digest import draw_salt
from securedp.hazmat.bits import ChaChaSource
from securedp.hazmat.samplers import discrete_laplace

GROUPS = 10**4
MAX_GROUPS, MAX_ROWS, WIDTH = 3, 5, 200_000


def table(rows: int) -> pl.DataFrame:
    gen = np.random.default_rng(2026)  # benchmark data only, never a privacy decision
    sizes = gen.integers(1, 11, rows // 5 + 1)
    persons = np.repeat(np.arange(len(sizes)), sizes)[:rows]
    return pl.DataFrame({
        "person": persons,
        "group": gen.integers(0, GROUPS, rows),
        "income": gen.integers(0, WIDTH + 1, rows),
    })


def clock() -> tuple[float, float]:
    """Wall time and CPU time of the process (all threads): on a shared machine the CPU time is
    the steadier measure of the work done."""
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> str:
    wall, cpu = clock()
    return f"{wall - start[0]:.2f} s ({cpu - start[1]:.2f} CPU-s)"


def timed_digests() -> list[tuple[float, float]]:
    """Wrap the digest function so that the SHA-256 share of the time is measured."""
    spent: list[tuple[float, float]] = []
    inner = bounding.digest_heads

    def wrapper(frame: pl.DataFrame, salt: bytes, fields: list[str]) -> pl.Series:
        t = clock()
        out = inner(frame, salt, fields)
        end = clock()
        spent.append((end[0] - t[0], end[1] - t[1]))
        return out

    bounding.digest_heads = wrapper
    return spent


def release(data: object, source: ChaChaSource, spent: list[tuple[float, float]]) -> dict[str, str]:
    spent.clear()
    t = clock()
    agg = bounding.bound_and_aggregate(
        data, person="person", keys=["group"], units="income", max_groups=MAX_GROUPS, max_rows=MAX_ROWS,
        salt=draw_salt(source),
    )
    bounded = since(t)
    t = clock()
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
    noised = since(t)
    assert len(means) == GROUPS
    hashing = f"{sum(w for w, _ in spent):.2f} s ({sum(c for _, c in spent):.2f} CPU-s)"
    return {"bound+aggregate": bounded, "of which messages+sha256": hashing, "noise (count, sum, mean)": noised,
            "keys": str(len(agg.rows))}


def main() -> None:
    sizes = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = int(sizes[0]) if sizes else 10**7
    if "--hashlib" in sys.argv:
        digest._polars_hash = None
    spent = timed_digests()
    frame = table(rows)
    backend = "hashlib" if digest._polars_hash is None else "polars-hash"
    print(f"{rows} rows, {frame['person'].n_unique()} persons, {GROUPS} groups, "
          f"max_groups {MAX_GROUPS}, max_rows {MAX_ROWS}, digests by {backend}")
    inputs = {"polars": lambda: frame, "pandas": lambda: frame.to_pandas()}
    for kind, make in inputs.items():
        data = make()
        numbers = release(data, ChaChaSource(b"\x42" * 32), spent)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{kind}: " + ", ".join(f"{k} {v}" for k, v in numbers.items()) + f"; peak RSS so far {peak:.0f} MiB")


if __name__ == "__main__":
    main()
