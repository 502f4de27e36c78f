"""count / sum / mean over 10**6 values, from a NumPy array and from a Python list.

Run: ``python benchmarks/bench_releases.py``. Times are the median of
several runs after one warm-up (which builds the noise plan for the scale).
When ``opendp`` is importable the same releases are timed with its
``clamp >> sum >> laplace`` pipeline and shown side by side.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import securedp

N = 10**6
BOUNDS = (0.0, 100.0)
REPEATS = 7


def timed(fn) -> float:
    fn()
    runs = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def ours(data) -> dict[str, float]:
    src = securedp.ChaChaSource(b"\x42" * 32)
    return {
        "count": timed(lambda: securedp.count(data, epsilon=1, rng=src)),
        "sum": timed(lambda: securedp.sum(data, bounds=BOUNDS, epsilon=1, rng=src)),
        "mean": timed(lambda: securedp.mean(data, bounds=BOUNDS, epsilon=1, rng=src)),
    }


def opendp_times(data: np.ndarray) -> dict[str, float] | None:
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    values = data.tolist()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    s = (space >> dp.t.then_clamp(BOUNDS) >> dp.t.then_sum() >> dp.m.then_laplace(100.0))
    c = (space >> dp.t.then_count() >> dp.m.then_laplace(1.0))
    return {"count": timed(lambda: c(values)), "sum": timed(lambda: s(values))}


def main() -> None:
    rng = np.random.default_rng(0)  # benchmark data only
    array = rng.uniform(-10, 110, N)
    listed = array.tolist()
    rows = {"numpy array": ours(array), "python list": ours(listed)}
    other = opendp_times(array)
    if other is not None:
        rows["opendp (list)"] = other
    print(f"{'':14}" + "".join(f"{k:>12}" for k in ("count", "sum", "mean")))
    for name, times in rows.items():
        print(f"{name:14}" + "".join(f"{times[k] * 1e3:>10.2f}ms" if k in times else f"{'-':>12}" for k in ("count", "sum", "mean")))
    if other is None:
        print("(opendp not importable: no side-by-side figures)")


if __name__ == "__main__":
    main()
