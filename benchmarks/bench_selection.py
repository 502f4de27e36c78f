"""Benchmarks of the exact selections, side by side with OpenDP when it is importable.

Run: ``python benchmarks/bench_selection.py``. Targets (issue): median of 10**6
integers in [0, 2**32) over the full integer lattice <= 0.15 s; exponential
mechanism over 100,000 candidates (integers, or distinct floats) >= 1,000 selections/s.
"""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np

import securedp
from securedp import ChaChaSource


def best_of(fn, repeat: int = 5) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    source = ChaChaSource(bytes(32))
    data = (np.arange(10**6, dtype=np.int64) * 2654435761) % (1 << 32)
    t = best_of(lambda: securedp.median(data, bounds=(0, 2**32 - 1), epsilon=1, rng=source))
    print(f"median, 10**6 ints, all 2**32 lattice points: {t:.3f} s  (target <= 0.15 s)")

    scores = (np.arange(100_000, dtype=np.int64) * 7919) % 1_000_000_000
    n = 300
    t = best_of(lambda: [securedp.exponential_mechanism(scores, epsilon=1, sensitivity=1, rng=source)
                         for _ in range(n)], repeat=3)
    print(f"exponential mechanism, 100,000 int candidates, fresh call each: {n / t:,.0f} selections/s (target >= 1,000)")
    prepared = securedp.prepare_exponential_mechanism(scores, epsilon=1, sensitivity=1)
    t = best_of(lambda: [prepared.execute(source) for _ in range(n)], repeat=3)
    print(f"exponential mechanism, 100,000 candidates, prepared once: {n / t:,.0f} selections/s")
    floats = np.linspace(0.0, 1000.0, 100_000)  # 100,000 distinct floats of many binary exponents
    t = best_of(lambda: [securedp.exponential_mechanism(floats, epsilon=1, sensitivity=1, rng=source)
                         for _ in range(n)], repeat=3)
    print(f"exponential mechanism, 100,000 distinct float candidates, fresh call each: {n / t:,.0f} selections/s"
          " (target >= 1,000)")
    prepared = securedp.prepare_exponential_mechanism(floats, epsilon=1, sensitivity=1)
    t = best_of(lambda: [prepared.execute(source) for _ in range(n)], repeat=3)
    print(f"exponential mechanism, 100,000 distinct float candidates, prepared once: {n / t:,.0f} selections/s")
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
