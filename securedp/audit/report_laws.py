"""The noise section of a release in the reviewer's report: its laws, a mean's half-width, its selections.

For each release (rendered by :mod:`securedp.audit.report`): a table of its noise laws with the proven
half-width of each at level ``1 - alpha`` in lattice units and in its own units (counts, or the
column's units), each mean's half-width in the column's units at five stated counts, each selection's
rule, level, epsilon, candidates and rank error bound, and a plot of each law's probability mass
function. The plots' coordinates are floats for drawing only; every number written is exact or a
bound rounded outward and labelled so.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

import gmpy2

from securedp.audit.report_model import Entry, MeanWidth, NoiseLaw
from securedp.audit.report_plot import Axis, Plot, exact_number, magnitude
from securedp.audit.report_words import ABSENT, e, plain, table

__all__ = ["noise_section", "selection_section"]

SELECTIONS = {"exponential": "the exponential mechanism", "permute_and_flip": "permute-and-flip (every candidate)"}


def _pmf(law: NoiseLaw, t: int) -> tuple[list[int], list[float]]:
    """Unit offsets and their probabilities (floats, for drawing only) over about 1.5 half-widths."""
    reach = max(t * 3 // 2, 3)
    stride = max(1, (2 * reach) // 120)
    ks = list(range(-(reach // stride) * stride, reach + 1, stride))
    with gmpy2.context(precision=64):
        p = gmpy2.mpq(law.parameter.numerator, law.parameter.denominator)
        if law.mechanism == "discrete_laplace":
            weights = [float(gmpy2.exp(-abs(gmpy2.mpq(k)) / p)) for k in ks]
        else:
            weights = [float(gmpy2.exp(-(gmpy2.mpq(k) ** 2) / (2 * p))) for k in ks]
    total = sum(weights) or 1.0
    return ks, [w / total for w in weights]


def _noise_plot(law: NoiseLaw, t: int, ids: Iterator[int]) -> str:
    ks, ps = _pmf(law, t)
    unit = "in lattice units" if law.step is None else f"in lattice units (1 unit = {law.step} {law.measure})"
    if law.measure == "counts":
        unit = "in counts"
    plot = Plot(Axis(Fraction(ks[0]), Fraction(ks[-1]), f"noise, {unit}", integers=True),
                Axis(Fraction(0), Fraction(max(ps)), "probability"), ids)
    plot.bars([Fraction(k) for k in ks], ps, "#3a6ea5")
    for edge in sorted({-t, t}):
        text = str(edge) if len(str(t)) <= 12 else ("-t" if edge < 0 else "+t")
        plot.vertical(Fraction(edge), "#c8553d", ("+" if edge > 0 else "±" if edge == 0 else "") + text)
    name = "scale" if law.mechanism == "discrete_laplace" else "sigma^2"
    return plot.svg(f"{law.mechanism} noise of {law.label}, {name} {law.parameter} units",
                    f"Probability mass from {ks[0]} to {ks[-1]} units; dashed lines at the half-width ±{t} units "
                    f"(level 1 - {law.alpha})")


def _rounded_up(value: Fraction, digits: int = 4) -> str:
    """``value`` > 0 rounded up to ``digits`` significant digits, written exactly (a bound, never below)."""
    scale = Fraction(10) ** (digits - 1 - magnitude(value))
    return exact_number(Fraction(-((-value * scale) // 1)) / scale)


def _mean(width: MeanWidth) -> str:
    """A mean's half-width in the column's units: how it is bounded, and its value at five stated counts."""
    rows = [(e(f"{n:,}"), e(_rounded_up(at)), e(at)) for n in width.counts() if (at := width.at(n)) is not None]
    cells = "" if width.cells is None else (
        f" Each cell's released interval ({width.cells}_low to {width.cells}_high) comes from that cell's own "
        "noisy moments, at the same level.")
    words = (f"t_n = {width.count_halfwidth} (count) and t_s = {width.sum_halfwidth} (centred sum, lattice units) "
             f"are the half-widths at level 1 - {width.alpha / 2} each, so both hold at 1 - {width.alpha}; "
             f"R = {width.half_range} units is the farthest a value lies from the centre; one unit is {width.step} in "
             f"the column's units. At a true count of n > {width.count_halfwidth} rows the released mean lies within "
             f"((t_s + R t_n) / (n - t_n) + 1/2) x {width.step} of the true mean, and never farther than the width "
             f"of the bounds ({width.span} units).{cells}")
    caption = f"Half-width of the mean in the column's units ({width.label}), at level 1 - {width.alpha}"
    return f"<p>{e(words)}</p>" + table(caption, ["true count n", "half-width (column units, rounded up)",
                                                  "half-width, exactly"], rows, "mean-width")


def noise_section(entry: Entry, ids: Iterator[int]) -> str:
    """The noise laws' table, each mean's half-width in the column's units, and a plot per law."""
    level = entry.level
    note = "" if level.stated else " (the report's level: the record states none)"
    if level.odd is not None:
        note = f" (the report's level: the record's alpha {level.odd} is not a rational in (0, 1))"
    rows, plots = [], []
    for law in entry.noise:
        t = law.halfwidth_units
        if law.halfwidth is not None:
            converted = f"{law.halfwidth} {law.measure}"
        elif t is None:
            converted = "not computed: the parameter is too long"
        else:
            converted = law.measure
        rows.append((e(law.label), e(law.mechanism.replace("_", " ")),
                     e(("scale " if law.mechanism == "discrete_laplace" else "σ² ") + str(law.parameter)),
                     e(ABSENT if t is None else t), e(converted), e(f"1 - {law.alpha}{note}")))
        if t is not None:
            plots.append(f"<figure>{_noise_plot(law, t, ids)}<figcaption>{e(law.label)}: {e(law.mechanism)} noise; "
                         f"dashed lines at ±{e(t)} lattice units, the half-width at level 1 - "
                         f"{e(law.alpha)}</figcaption></figure>")
    laws = "" if not rows else table(
        "Noise laws and the half-widths of their intervals (proven by directed rounding)",
        ["noise of", "law", "parameter (lattice units)", "half-width (lattice units)", "half-width (its own units)",
         "level"], rows)
    widths = "".join(_mean(w) if isinstance(w, MeanWidth) else f"<p>{e(w.label)}: {e(w.reason)}.</p>"
                     for w in entry.widths)
    return laws + widths + selection_section(entry) + "".join(plots)


def selection_section(entry: Entry) -> str:
    """Each selection: its rule, level, epsilon, sensitivity, candidates and rank error bound, and what they mean."""
    if not entry.selections:
        return ""
    rows, derived = [], False
    for s in entry.selections:
        derived = derived or s.derived
        among = ABSENT if s.candidates is None else f"{s.candidates:,}" + (
            "" if s.step is None else f" lattice points, {s.step} apart")
        fallback = "none" if s.fallback is None else (
            f"probability {s.fallback} without records; at most alpha from "
            f"{ABSENT if s.fallback_rows is None else f'{s.fallback_rows:,}'} rows")
        rows.append((e(s.label), e(SELECTIONS.get(s.rule, s.rule)), e(s.q), e(plain(s.epsilon)),
                     e(plain(s.sensitivity)), e(among), e(plain(s.rank_error_bound)), e(fallback),
                     e(f"1 - {s.alpha}")))
    words = ("No noise is added: the exponential mechanism selects one of the candidate lattice points y with "
             "probability proportional to exp(-rate g(y)), where, for the level q = a/b, the score "
             "g(y) = max(0, b #{x < y} - a n, a n - b #{x <= y}) is b times the distance, in rows, from q n to the "
             "ranks y holds (0 on every exact q-quantile, ties included; with a recorded tie margin c, a block of k "
             "tied records holds its ranks less min(q k, c) below and min((1 - q) k, c) above, and the rank error "
             "bound adds c). One person with m rows moves it by at most "
             "the sensitivity m max(a, b - a), and the rate is epsilon / (2 sensitivity), or epsilon / sensitivity "
             "for q = 0 or 1, where adding rows never lowers g (McSherry and Talwar 2007). With probability at least "
             "1 - alpha the selected point's rank error is at most the bound r: at most q n + r values lie below it "
             "and at least q n - r at or below it.")
    if any(s.fallback is not None for s in entry.selections):
        words += (" A fallback point f, the lattice point nearest lo + q (hi - lo) for the least and greatest "
                  "candidates lo and hi (the middle of the bounds for a median), is one more candidate, of weight W ="
                  " floor(candidates p / (1 - p)) for the fallback probability p and scored h = max(a, b - a) n, the "
                  "worst score any candidate can have: a cell whose records cannot be told from none releases f "
                  "rather than a near-uniform draw over the bounds, a cell without records with probability about p, "
                  "and a cell of the stated rows or more with probability at most alpha. h moves by at most the "
                  "sensitivity, never down when rows are added, so the privacy map is the same. The rank error bound "
                  "r holds for every release, the fallback point included: it is taken over the candidates and W.")
    if derived:
        words += (" A record of format 1 (securedp 0.1) selected by another law, proportional to "
                  "exp(-epsilon |#{x < y} - q n| / (2 sensitivity)) with the sensitivity in rows, and states neither "
                  "the candidates nor r: the report derives them as securedp 0.1 stated them, the candidates being "
                  "every lattice point from lo to hi of bounds_units, and r at the report's level.")
    return table("Selections (no additive noise) and their rank error bounds", [
        "selection of", "rule", "level q", "epsilon (each selection)", "sensitivity (of g)", "candidates",
        "rank error bound r (rows)", "fallback point", "level"], rows, "selections") + f"<p>{e(words)}</p>"
