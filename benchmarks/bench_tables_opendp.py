"""OpenDP's Polars plugin on the query of ``bench_tables.py``: the baseline for its ``table`` cases.

Run with an interpreter that has ``opendp[polars]`` (OpenDP is not a dependency of securedp; keep it
in a separate environment): ``/work/venv-peers/bin/python benchmarks/bench_tables_opendp.py [rows]``.
This script shares no code with securedp; :func:`table` is a copy of the generator of
``bench_tables.py`` (same NumPy seed, so the same rows).

The query: privacy unit the person (``dp.unit_of(contributions=..., identifier="person")``), at most
``max_groups = 3`` groups per person (``truncate_num_groups``) and ``max_rows = 5`` rows per person
per group (``truncate_per_group``), group by ``group`` with public keys (a ``Margin`` with
``invariant="keys"`` and the 10**4 keys joined in with ``with_keys``), a count, and a sum and a mean
of ``income`` clipped to (0, 200000), epsilon 1 in total. With ``--rows-unit`` the privacy unit is
instead 15 rows (``contributions=15``, no truncation: a person's rows are assumed, not enforced, to
be at most 15), the fallback for OpenDP versions without identifier truncation.

Differences from securedp that remain: OpenDP's truncation keeps each person's 3 smallest group
values (``keep="first"``; its hashed ``keep="sample"`` fails on Polars 1.36, see :func:`query`) and
5 rows per group by a shuffle (``keep="sample"``), not by a salted SHA-256; its noise on integers is exact
(discrete Laplace) but its mean is a post-processed ratio of two noisy integers released as a
float; it splits epsilon across the three expressions by its own rule. Private keys (partition
selection) are not timed here: securedp's ``table ... private`` cases have no counterpart.

Stages: ``prepare`` builds the context and the query and resolves it into a measurement (privacy
map, with OpenDP's binary search for the noise scale; no pass over the data); ``execute`` invokes the
measurement on the data and collects the result. Seconds are wall with
CPU seconds (all threads) in brackets; peak RSS is ``ru_maxrss`` of this process, input included.
"""

from __future__ import annotations

import resource
import sys
import time
from typing import Any

import numpy as np
import opendp.prelude as dp
import polars as pl

GROUPS = 10**4
MAX_GROUPS, MAX_ROWS, WIDTH = 3, 5, 200_000
MAX_LENGTH = 10**8

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


def query(data: pl.LazyFrame, by_identifier: bool) -> Any:
    """The OpenDP query: a LazyFrameQuery, not yet resolved."""
    keys = pl.LazyFrame({"group": np.arange(GROUPS)})
    # With an identifier, contributions counts identifiers: one person; truncation then bounds the rows.
    unit = (dp.unit_of(contributions=1, identifier="person") if by_identifier
            else dp.unit_of(contributions=MAX_GROUPS * MAX_ROWS))
    context = dp.Context.compositor(
        data=data,
        privacy_unit=unit,
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        # max_length: OpenDP needs a public bound on a group's rows to rule out integer overflow in a sum.
        margins=[dp.polars.Margin(by=["group"], invariant="keys", max_length=MAX_LENGTH)],
    )
    q = context.query()
    if by_identifier:
        # keep="first" (the smallest group values): OpenDP 0.16's default keep="sample" builds a struct with
        # two fields of the same name, which Polars 1.36 refuses at collect ("multiple fields with name").
        q = q.truncate_num_groups(MAX_GROUPS, by=["group"], keep="first").truncate_per_group(MAX_ROWS, by=["group"])
    income: Any = pl.col("income").fill_null(0)  # Any: OpenDP registers the .dp namespace at run time
    return q.group_by("group").agg(
        dp.len(signed=True).alias("count"),  # signed, as securedp's counts
        income.dp.sum((0, WIDTH)).alias("income_sum"),
        income.dp.mean((0, WIDTH)).alias("income_mean"),
    ).with_keys(keys)


def run(data: pl.LazyFrame, by_identifier: bool) -> tuple[Clock, Clock, pl.DataFrame, pl.DataFrame]:
    """Resolve the query into a measurement (``query.release()`` would resolve it a second time), then
    invoke the measurement on the data; also returns OpenDP's summary of the noise (scales)."""
    t = clock()
    q = query(data, by_identifier)
    measurement = q.resolve()
    prepared = since(t)
    t = clock()
    released = measurement(data).collect()
    return prepared, since(t), released, q.summarize()


def main() -> None:
    sizes = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = int(sizes[0]) if sizes else 10**7
    by_identifier = "--rows-unit" not in sys.argv
    dp.enable_features("contrib")
    frame = table(rows)
    input_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    unit = ("person (identifier), truncated to 3 groups x 5 rows" if by_identifier
            else "15 rows (contributions=15, NOT enforced per person: the data has up to 10 rows per person)")
    print(f"OpenDP {dp.__version__ if hasattr(dp, '__version__') else ''}: {rows} rows, {GROUPS} public keys, "
          f"privacy unit {unit}, epsilon 1; seconds wall (CPU)")
    prepared, executed, released, noise = run(frame.lazy(), by_identifier)
    if len(released) != GROUPS:
        raise AssertionError(f"{len(released)} cells for {GROUPS} public keys")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    line = "{:<22} {:>16} {:>16} {:>10} {:>20} {:>6}"
    print(line.format("case", "prepare", "execute", "total wall", "peak RSS MiB (input)", "cells"))
    print(line.format("opendp polars public", f"{prepared[0]:6.2f} ({prepared[1]:6.2f})",
                      f"{executed[0]:6.2f} ({executed[1]:6.2f})", f"{prepared[0] + executed[0]:.2f}",
                      f"{peak:.0f} ({input_rss:.0f})", len(released)))
    scales = ", ".join(f"{c} {a} {s:g}" for c, a, s in noise.select("column", "aggregate", "scale").iter_rows())
    print(f"OpenDP noise scales: {scales}")


if __name__ == "__main__":
    main()
