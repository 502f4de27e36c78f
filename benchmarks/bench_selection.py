"""Benchmarks of the exact selections, each figure printed against its target (issue 20).

Run: ``python benchmarks/bench_selection.py`` (best of 5 runs, about half a minute) or
``--quick`` (best of 3, fewer selections: a few seconds). Figures and targets:

* median of 10**6 integers in [0, 2**32) over every integer lattice point: at most OpenDP's
  median over 1,024 candidates (44 ms, the issue's reference; when ``opendp`` is importable, its
  ``make_private_quantile`` over the same NumPy array, timed on this machine), with
  the system source and with a seeded ``ChaChaSource`` (which adds the input commitment: the
  sorted records encoded and MACed after the draw);
* the median of 10**6 integers in [0, 1000] and in [0, 2**15) (counts per lattice point, no sort; priced in
  epsilon over so few candidates, permute-and-flip over every candidate and the fallback's weight: 4,004 and
  131,072 coins, the most it flips, issue 42.3): at most OpenDP's median too;
* the exponential mechanism over 100,000 candidates, one fresh
  ``securedp.exponential_mechanism(scores, ...)`` call each time (screening, set-up and one
  draw): at least 2,000 selections/s for every shape; prepared once and executed many times,
  with the random bits read per selection;
* side figures without a target: rationals, 10**6 candidates, permute-and-flip, report noisy max,
  and OpenDP's ``report_noisy_max_gumbel`` when ``opendp`` is importable.

Rates use the default system source unless said otherwise. Run on an idle machine: on a shared
one, rates vary by 20-40 % from run to run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

import securedp
from securedp import ChaChaSource, SystemSource

CANDIDATES = 100_000
SPREAD = np.arange(CANDIDATES, dtype=np.int64) * 7919  # a fixed permutation of the residues below
SHAPES: dict[str, np.ndarray] = {
    "narrow ints 0..1000": SPREAD % 1001,
    "narrow ints 0..50": SPREAD % 51,
    "wide ints 0..10**9": SPREAD % 1_000_000_000,
    "distinct floats": np.linspace(0.0, 1000.0, CANDIDATES),
    "all tied": np.zeros(CANDIDATES, dtype=np.int64),
}
SELECTIONS_TARGET = 2_000
OPENDP_MEDIAN_MS = 44.0  # OpenDP, median of 10**6 ints over 1,024 candidates (the reference)


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` timed runs, after one warm-up run (seconds)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def verdict(ok: bool) -> str:
    return "meets target" if ok else "MISSES target"


def opendp_median(data: np.ndarray, repeat: int) -> float | None:
    """OpenDP's median of ``data`` over 1,024 evenly spaced integer candidates (``make_private_quantile``, the
    NumPy int64 array as its input: its fastest path), seconds; ``None`` when OpenDP is not importable."""
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    candidates = np.linspace(0, 2**32 - 1, 1024).astype(np.int64).tolist()
    domain = dp.vector_domain(dp.atom_domain(T="i64"), size=None)
    measurement = dp.m.make_private_quantile(domain, dp.symmetric_distance(), dp.max_divergence(),
                                             candidates=candidates, alpha=0.5, scale=1.0)
    return best_of(lambda: measurement(data), repeat)


def median_report(repeat: int) -> None:
    gen = np.random.default_rng(2026)  # benchmark data only
    wide = gen.integers(0, 2**32, 10**6)
    narrow = gen.integers(0, 1001, 10**6)
    coins = gen.integers(0, 2**15, 10**6)
    theirs = opendp_median(wide, repeat)
    target = OPENDP_MEDIAN_MS if theirs is None else theirs * 1e3
    where = "OpenDP, 1,024 candidates, the issue's reference" if theirs is None else \
        "OpenDP's make_private_quantile, 1,024 candidates, measured here"
    system, seeded = SystemSource(), ChaChaSource(bytes(32))
    cases = [
        ("median, 10**6 ints in [0, 2**32), system source", wide, 2**32 - 1, system),
        ("median, the same, seeded ChaCha (with input commitment)", wide, 2**32 - 1, seeded),
        ("median, 10**6 ints in [0, 1000], p-and-f, system source", narrow, 1000, system),
        ("median, 10**6 ints in [0, 2**15), p-and-f (2**17 coins)", coins, 2**15 - 1, system),
        ("median, the same, seeded ChaCha (with input commitment)", coins, 2**15 - 1, seeded),
    ]
    for name, data, hi, source in cases:
        t = best_of(lambda d=data, h=hi, s=source: securedp.median(d, bounds=(0, h), epsilon=1, rng=s), repeat)
        print(f"  {name:58s} {t * 1e3:7.1f} ms   target <= {target:.1f} ms ({where}): {verdict(t * 1e3 <= target)}")


def shapes_report(repeat: int, calls: int) -> None:
    """Selections/s of a fresh call (the target) and of a prepared release, and random bits per selection."""
    source = SystemSource()
    print(f"exponential mechanism, {CANDIDATES:,} candidates, epsilon 1 "
          f"(target: >= {SELECTIONS_TARGET:,}/s for a fresh call, every shape):")
    for name, scores in SHAPES.items():
        fresh = best_of(lambda s=scores: [securedp.exponential_mechanism(s, epsilon=1, sensitivity=1, rng=source)
                                          for _ in range(calls)], repeat) / calls
        prepared = securedp.prepare_exponential_mechanism(scores, epsilon=1, sensitivity=1)
        each = best_of(lambda p=prepared: [p.execute(source) for _ in range(10 * calls)], repeat) / (10 * calls)
        before = source.bytes_served
        for _ in range(10 * calls):
            prepared.execute(source)
        bits = 8 * (source.bytes_served - before) / (10 * calls)
        print(f"  {name:22s} fresh {1 / fresh:7,.0f}/s ({verdict(1 / fresh >= SELECTIONS_TARGET)})   "
              f"prepared {1 / each:8,.0f}/s   {bits:4.0f} bits/selection")
    seeded = securedp.prepare_exponential_mechanism(SHAPES["wide ints 0..10**9"], epsilon=1, sensitivity=1)
    chacha = ChaChaSource(bytes(32))
    each = best_of(lambda: [seeded.execute(chacha) for _ in range(10 * calls)], repeat) / (10 * calls)
    print(f"  wide ints, prepared, seeded ChaChaSource (input commitment included): {1 / each:,.0f}/s")


def side_report(repeat: int) -> None:
    source = ChaChaSource(bytes(32))
    scores = SHAPES["wide ints 0..10**9"]
    rationals = [Fraction(k, 1000003) for k in range(CANDIDATES)]
    t = best_of(lambda: securedp.exponential_mechanism(rationals, epsilon=1, sensitivity=1, rng=source), repeat)
    print(f"  exponential mechanism, 100,000 distinct rational candidates (list of Fractions): {t * 1e3:.0f} ms")
    million = (np.arange(10**6, dtype=np.int64) * 7919) % 1_000_000_000
    t = best_of(lambda: securedp.exponential_mechanism(million, epsilon=1, sensitivity=1, rng=source), repeat)
    print(f"  exponential mechanism, 10**6 candidates, score range 10**9: {t * 1e3:.1f} ms")
    t = best_of(lambda: securedp.permute_and_flip(scores, epsilon=1, sensitivity=1, rng=source), repeat)
    print(f"  permute-and-flip, 100,000 candidates: {t * 1e3:.1f} ms")
    t = best_of(lambda: securedp.report_noisy_max(scores, epsilon=1, sensitivity=1, rng=source), repeat)
    print(f"  report noisy max, 100,000 candidates: {t * 1e3:.1f} ms")


def opendp_report(repeat: int) -> None:
    try:
        import opendp.prelude as dp
    except ImportError:
        print("OpenDP not importable: no side-by-side figures (reference: median over 1,024 candidates "
              f"{OPENDP_MEDIAN_MS:.0f} ms)")
        return
    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    meas = space >> dp.m.then_report_noisy_max_gumbel(scale=2.0, optimize="max")
    fl = SHAPES["wide ints 0..10**9"].astype(float).tolist()
    t = best_of(lambda: [meas(fl) for _ in range(20)], repeat)
    print(f"OpenDP report_noisy_max_gumbel, 100,000 candidates: {20 / t:,.0f} selections/s")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="best of 3 runs, fewer selections (a few seconds)")
    args = parser.parse_args(argv)
    repeat, calls = (3, 10) if args.quick else (5, 30)
    print("median (one selection over every lattice point):")
    median_report(repeat)
    shapes_report(repeat, calls)
    print("other selections (no target):")
    side_report(repeat)
    opendp_report(repeat)


if __name__ == "__main__":
    main()
