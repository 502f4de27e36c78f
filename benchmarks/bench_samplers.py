"""Throughput of securedp's exact samplers: scalar (pooled) and batched draws, and randomness used.

Run from the repository root::

    python benchmarks/bench_samplers.py            # full: median of 5 runs, batches of 10**6
    python benchmarks/bench_samplers.py --quick    # smoke run: 3 runs, smaller n
    python benchmarks/bench_samplers.py --quick --json results.json   # also write the numbers as JSON

With ``--json FILE`` the same measurements (plus ``SecureGenerator.laplace``
at scale 1, scalar and batch) are also written to FILE for
``benchmarks/plot_benchmarks.py``; the printed table is unchanged.

See benchmarks/README.md for what the columns mean. If ``opendp`` is
importable, its per-call and vector APIs are measured side by side on a tenth
of the calls and of the batch size (OpenDP is not a dependency of securedp).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import securedp
from securedp import SystemSource

CASES = [
    ("discrete_laplace", "scale", 1),
    ("discrete_laplace", "scale", 10),
    ("discrete_laplace", "scale", 1000),
    ("discrete_laplace", "scale", 10**6),
    ("discrete_gaussian", "sigma", 1),
    ("discrete_gaussian", "sigma", 10),
    ("discrete_gaussian", "sigma", 1000),
]

TARGETS = (
    "Targets (scale / sigma 10): batched Laplace >= 3M/s, batched Gaussian >= 1M/s; "
    "scalar Laplace >= 250k/s, scalar Gaussian >= 150k/s."
)


def median_rate(work: Callable[[], None], count: int, runs: int) -> float:
    """Median over ``runs`` of ``count / seconds`` for one call of ``work``."""
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        rates.append(count / (time.perf_counter() - start))
    return statistics.median(rates)


def measure_securedp(name: str, param: Any, scalar_n: int, batch_n: int, runs: int) -> dict[str, float]:
    sampler = getattr(securedp, name)
    start = time.perf_counter()
    sampler(param)  # first call: builds the plan and fills the scalar pool
    setup = time.perf_counter() - start
    sampler(param, size=batch_n)  # warm-up of the batch path

    def scalar() -> None:
        for _ in range(scalar_n):
            sampler(param)

    source = SystemSource()
    sampler(param, size=batch_n, rng=source)
    return {
        "setup_ms": 1000 * setup,
        "scalar": median_rate(scalar, scalar_n, runs),
        "batch": median_rate(lambda: sampler(param, size=batch_n), batch_n, runs),
        "bytes": source.bytes_served / batch_n,
    }


def opendp_measurements(name: str, param: Any, batch_n: int) -> tuple[Callable[[], Any], Callable[[], Any]] | None:
    """OpenDP's per-call and vector measurements for the same law, or None if unavailable."""
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    try:
        dp.enable_features("contrib")
        if name == "discrete_laplace":
            scalar = dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=float(param))
            vector = dp.m.make_laplace(
                dp.vector_domain(dp.atom_domain(T=int), size=batch_n), dp.l1_distance(T=int), scale=float(param)
            )
        else:
            scalar = dp.m.make_gaussian(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=float(param))
            vector = dp.m.make_gaussian(
                dp.vector_domain(dp.atom_domain(T=int), size=batch_n), dp.l2_distance(T=int), scale=float(param)
            )
    except Exception as error:  # an API this script does not know: report, do not crash
        print(f"  (opendp {name}({param}) unavailable: {error})")
        return None
    zeros = [0] * batch_n
    return (lambda: scalar(0)), (lambda: vector(zeros))


def measure_opendp(name: str, param: Any, scalar_n: int, batch_n: int, runs: int) -> dict[str, float] | None:
    made = opendp_measurements(name, param, batch_n)
    if made is None:
        return None
    one, many = made

    def scalar() -> None:
        for _ in range(scalar_n):
            one()

    return {"scalar": median_rate(scalar, scalar_n, runs), "batch": median_rate(many, batch_n, runs)}


def measure_generator(scalar_n: int, batch_n: int, runs: int) -> dict[str, float]:
    """``SecureGenerator().laplace(3.2, 1.0)``: scalar calls/s and batch samples/s (default source)."""
    rng = securedp.SecureGenerator()
    rng.laplace(3.2, 1.0)
    rng.laplace(3.2, 1.0, size=batch_n)

    def scalar() -> None:
        for _ in range(scalar_n):
            rng.laplace(3.2, 1.0)

    return {
        "scalar": median_rate(scalar, scalar_n, runs),
        "batch": median_rate(lambda: rng.laplace(3.2, 1.0, size=batch_n), batch_n, runs),
    }


def write_json(path: str, settings: dict[str, Any], samplers: list[dict[str, Any]],
               generator: dict[str, float]) -> None:
    """The results as JSON (format ``securedp-bench-samplers/1``): rates in samples per second."""
    doc = {
        "format": "securedp-bench-samplers/1",
        "securedp": securedp.__version__,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        **settings,
        "samplers": samplers,
        "generator_laplace_scale_1": generator,
    }
    Path(path).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def rate(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.2f}M"
    return f"{value / 1e3:.0f}k"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 runs, 20k scalar draws, batches of 10**5")
    parser.add_argument("--json", metavar="FILE",
                        help="also write the results as JSON to FILE (for plot_benchmarks.py)")
    args = parser.parse_args(argv)
    runs, scalar_n, batch_n = (3, 20_000, 10**5) if args.quick else (5, 200_000, 10**6)
    results: list[dict[str, Any]] = []

    print(f"securedp {securedp.__version__}, Python {sys.version.split()[0]}; median of {runs} runs; "
          f"scalar: {scalar_n:,} calls, default source (pooled); batch: size={batch_n:,}")
    header = f"{'sampler':<18} {'param':>13} {'set-up ms':>10} {'scalar/s':>10} {'batch/s':>10} {'bytes/sample':>13}"
    rows, opendp_rows = [], []
    for name, param_name, param in CASES:
        ours = measure_securedp(name, param, scalar_n, batch_n, runs)
        rows.append(f"{name:<18} {param_name + '=' + str(param):>13} {ours['setup_ms']:>10.1f} "
                    f"{rate(ours['scalar']):>10} {rate(ours['batch']):>10} {ours['bytes']:>13.1f}")
        theirs = measure_opendp(name, param, scalar_n // 10, batch_n // 10, runs)
        results.append({"sampler": name, "param_name": param_name, "param": param, **ours, "opendp": theirs})
        if theirs is not None:
            opendp_rows.append(f"{name:<18} {param_name + '=' + str(param):>13} "
                               f"{rate(ours['scalar']):>10} {rate(theirs['scalar']):>10} "
                               f"{rate(ours['batch']):>10} {rate(theirs['batch']):>10}")
    print(header)
    print("\n".join(rows))
    if opendp_rows:
        print("\nSide by side with OpenDP (OpenDP measured on 1/10 of the scalar calls and of the batch size):")
        print(f"{'sampler':<18} {'param':>13} {'ours 1/s':>10} {'opendp 1/s':>10} {'ours bat/s':>10} "
              f"{'opendp vec/s':>10}")
        print("\n".join(opendp_rows))
    else:
        print("\n(opendp not importable: no side-by-side comparison)")
    print("\n" + TARGETS)
    if args.json:
        settings = {"quick": args.quick, "runs": runs, "scalar_calls": scalar_n, "batch_size": batch_n}
        write_json(args.json, settings, results, measure_generator(scalar_n, batch_n, runs))


if __name__ == "__main__":
    main()
