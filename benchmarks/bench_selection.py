"""Benchmarks of the exact selections, side by side with OpenDP when it is importable.

Run: ``python benchmarks/bench_selection.py``. Targets (issue): median of 10**6
integers in [0, 2**32) over the full integer lattice <= 0.15 s; the exponential
mechanism over 100,000 candidates >= 2,000 selections/s for every score shape
(narrow integers, wide integers, distinct floats, many ties) when a prepared
release is executed many times. Each shape reports selections/s (fresh call and
prepared) and the random bits read per selection. Rates use the default system
source; a seeded ``ChaChaSource`` adds an input commitment (an HMAC over the
encoded scores) to every release, reported separately.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

import securedp
from securedp import ChaChaSource, SystemSource

CANDIDATES = 100_000
SHAPES: dict[str, np.ndarray] = {
    "narrow ints 0..1000": (np.arange(CANDIDATES, dtype=np.int64) * 7919) % 1001,
    "wide ints 0..10**9": (np.arange(CANDIDATES, dtype=np.int64) * 7919) % 1_000_000_000,
    "distinct floats": np.linspace(0.0, 1000.0, CANDIDATES),
    "many ties (10 values)": (np.arange(CANDIDATES, dtype=np.int64) * 7919) % 10,
}


def best_of(fn: Callable[[], Any], repeat: int = 5) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def shapes_report(n: int = 300) -> None:
    """Selections/s (fresh call, prepared) and random bits per selection, per score shape."""
    source = SystemSource()
    print(f"exponential mechanism, {CANDIDATES:,} candidates, epsilon 1 (target >= 2,000 selections/s prepared):")
    for name, scores in SHAPES.items():
        fresh = best_of(lambda s=scores: [securedp.exponential_mechanism(s, epsilon=1, sensitivity=1, rng=source)
                                          for _ in range(n // 10)], repeat=3) / (n // 10)
        prepared = securedp.prepare_exponential_mechanism(scores, epsilon=1, sensitivity=1)
        each = best_of(lambda p=prepared: [p.execute(source) for _ in range(n)], repeat=3) / n
        before = source.bytes_served
        for _ in range(n):
            prepared.execute(source)
        bits = 8 * (source.bytes_served - before) / n
        print(f"  {name:24s} fresh {1 / fresh:8,.0f}/s   prepared {1 / each:8,.0f}/s   {bits:5.0f} bits/selection")
    seeded = securedp.prepare_exponential_mechanism(SHAPES["wide ints 0..10**9"], epsilon=1, sensitivity=1)
    chacha = ChaChaSource(bytes(32))
    each = best_of(lambda: [seeded.execute(chacha) for _ in range(n)], repeat=3) / n
    print(f"  wide ints, prepared, seeded ChaChaSource (input commitment included): {1 / each:,.0f}/s")


def main() -> None:
    source = ChaChaSource(bytes(32))
    data = (np.arange(10**6, dtype=np.int64) * 2654435761) % (1 << 32)
    t = best_of(lambda: securedp.median(data, bounds=(0, 2**32 - 1), epsilon=1, rng=source))
    print(f"median, 10**6 ints, all 2**32 lattice points: {t:.3f} s  (target <= 0.15 s)")
    shapes_report()
    scores = SHAPES["wide ints 0..10**9"]
    rationals = [Fraction(k, 1000003) for k in range(100_000)]
    t = best_of(lambda: securedp.exponential_mechanism(rationals, epsilon=1, sensitivity=1, rng=source), repeat=3)
    print(f"exponential mechanism, 100,000 distinct rational candidates (list of Fractions): {t * 1e3:.0f} ms")
    million = (np.arange(10**6, dtype=np.int64) * 7919) % 1_000_000_000
    t = best_of(lambda: securedp.exponential_mechanism(million, epsilon=1, sensitivity=1, rng=source))
    print(f"exponential mechanism, 10**6 candidates, score range 10**9: {t:.3f} s")
    t = best_of(lambda: securedp.permute_and_flip(scores, epsilon=1, sensitivity=1, rng=source))
    print(f"permute-and-flip, 100,000 candidates: {t * 1e3:.1f} ms")
    t = best_of(lambda: securedp.report_noisy_max(scores, epsilon=1, sensitivity=1, rng=source))
    print(f"report noisy max, 100,000 candidates: {t * 1e3:.1f} ms")

    try:
        import opendp.prelude as dp
    except ImportError:
        print("OpenDP not importable: no side-by-side figures")
        return
    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    meas = space >> dp.m.then_report_noisy_max_gumbel(scale=2.0, optimize="max")
    fl = scores.astype(float).tolist()
    t = best_of(lambda: [meas(fl) for _ in range(20)], repeat=3)
    print(f"OpenDP report_noisy_max_gumbel, 100,000 candidates: {20 / t:,.0f} selections/s")


if __name__ == "__main__":
    main()
