"""How the report writes a record's fields for a reviewer: values as text, and a sentence for each parameter.

A reviewer reads sentences, not JSON: every recorded value is written exactly but plainly (``null``
is never printed: an absent value is ``—``), a list of more than :data:`SHORT` entries is summarised
("99 values, from -1099511627776 to 1099511627776") with the full list folded into a ``<details>``
element, and every known parameter name gets its meaning (:func:`explain`), in its context: the
record's own parameters (:data:`PARAMETERS`), or those of one aggregation of a table, or of the
one-cell table that a release of one column is (:data:`AGGREGATION`, one row per noise law:
:func:`aggregation_rows`). A value that is not what its name says (an ``alpha`` of ``"x"``, a
``scale_units`` of ``"-1"``) is shown as written and marked ``<span class="odd">``. Everything
returned is HTML with every recorded value escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from securedp.audit.report_noise import DEFAULT_ALPHA, rational
from securedp.hazmat.exact.rational import exact_text

SHORT = 8
"""Lists longer than this are summarised, with the full list folded away."""
ABSENT = "—"

PARAMETERS = {
    "format": ("the record format: 2, every release of data is a table of one or more cells, each aggregation's "
               "record under its name; 1 (no format recorded): securedp 0.1's, a release of one column stating "
               "its noise flat in its parameters"),
    "alpha": "intervals are stated at level 1 - alpha",
    "lattice_step": "the value of one lattice unit, in the column's units",
    "scale_units": "the scale of the discrete Laplace noise, in lattice units",
    "variance_units": "the variance sigma² of the discrete Gaussian noise, in squared lattice units",
    "sensitivity_units": "the most one person can change the exact aggregate, in lattice units",
    "bounds": "the public clamping bounds [lo, hi], in the column's units",
    "bounds_units": "the clamping bounds in lattice units",
    "centre_units": "the public centre subtracted from every value before summing, in lattice units",
    "budget_split": "how the cost is divided among the noisy moments",
    "edges": "the bin edges of the histogram",
    "kind": "bins (by edges) or categories",
    "categories": "the declared categories, in order",
    "q": "the quantile level",
    "qs": "the quantile levels",
    "epsilon_each": "the epsilon of each quantile's exponential mechanism",
    "utility": "the score the exponential mechanism favours",
    "sensitivity": "the most one person can change the score",
    "beta": "the probability that the threshold admits an empty bin",
    "exponents": "[e, E]: candidate bins of width 2^e up to ±2^E",
    "method": "how the bounds were chosen",
    "noisy_counts": "the noisy count of every bin, from which the bounds were read",
    "threshold": "the noisy count a bin (or a private key) must reach to be kept",
    "group_by": "the columns whose values make the keys",
    "keys": "public (given by the caller) or private (chosen by partition selection)",
    "max_groups": "the most keys one person may contribute to",
    "max_rows": "the most rows one person may contribute per key",
    "privacy_unit": "the column naming the person protected",
    "salt_commitment": "SHA-256 commitment to the secret salt that chose each person's kept rows",
    "shares": "the fraction of the cost each aggregation (and partition selection, with private keys) received",
    "delta": "the delta of partition selection: for a threshold, the delta its integer threshold proves "
             "(charged; at most delta_asked)",
    "delta_asked": "the delta asked of partition selection; the threshold proves, and the release charges, delta",
    "selection": "the partition selection rule that chose the private keys",
    "selection_count": "the released count whose noisy value, at least the threshold, chose the private keys",
    "delta_per_key": "delta / max_groups: the most likely a key that only one person holds was to appear",
    "selection_rho": "the rho of the Gaussian partition selection",
    "selection_variance": "the variance sigma² of the Gaussian partition selection's noise, in persons squared",
    "guarantee": "the privacy guarantee of the partition selection",
    "epsilon": "the epsilon of the selection",
    "monotonic": "whether every score moves the same way when one person is added (halves the noise)",
    "noise_scale": "the scale of the noise added to each score",
    "labels": "the histogram's categories or bins, one noisy count each",
    "cell_sensitivity_units": "the most one person can change one cell's noisy integer, in lattice units",
    "released": "how the released value is computed from the selected points",
    "rho_cells": "the rho-zCDP cost of the selections of each cell",
    "conversion": "how the selection's epsilon-DP is converted to rho-zCDP",
    "scales": "the Laplace scale of each part of the histogram, in counts",
    "sensitivities": "the sensitivity of each part of the histogram, in counts",
    "groups_cap": "the largest number of groups per person counted",
    "rows_cap": "the largest number of rows per person counted",
    "id_column": "the column naming the person protected",
    "column": "the column aggregated",
    "candidates": "the number of lattice points the selection chose among",
    "epsilon_cell": "the epsilon of each cell's selection",
    "rank_error_bound": "a bound on the rank error of the released quantile",
    "noise": "the noise of each noisy integer",
}
AGGREGATION = {
    "noise": "the law of each noisy integer of every cell (none: the value is selected, not noised)",
    "bounds_units": "the clamping bounds [lo, hi] in lattice units (a histogram's: its first and last bin's index)",
    "selection": "the mechanism that selects the value (or the points a value is computed between) among the "
                 "lattice points; the selection adds no noise",
    "q": "the quantile level (an interquartile range's: both quartiles)",
    "sensitivity": "the most one person can change the utility's score g: m max(a, b - a) for the level q = a/b",
    "candidates": "the number of lattice points the selection chose among",
    "utility": "minus the score g(y) of a candidate y, b times the distance in rows from q n to the ranks "
               "[#{x < y}, #{x <= y}] that y holds (0 on every exact q-quantile), less the tie margin c at each "
               "end of a block of tied records when one is recorded",
    "tie_margin": "c: the tie margin in rows, ceil(1 / rank rate) (0 for q = 0 or 1): a point holding k tied "
                  "records is taken to hold the ranks [#{x < y} + min(q k, c), #{x <= y} - min((1 - q) k, c)]; "
                  "some candidate scores at most b c, so the rank error bound adds c (absent: c = 0)",
    "law": "the law of the selected point: the exponential mechanism over every lattice point of the bounds "
           "and the fallback point",
    "fallback": "p: about the probability that a cell without records releases the fallback point (the atom "
                "W / (candidates + W) <= p, its value (W + 1) / (candidates + W) >= p; 0: no fallback)",
    "fallback_weight": "W: the fallback point's weight against the lattice points' 1 each, floor(candidates p / "
                       "(1 - p)); its score is h = max(a, b - a) n, the worst any candidate can have",
    "fallback_units": "the fallback point f in lattice units (one per level): the lattice point nearest "
                      "lo + q (hi - lo), lo and hi the least and greatest candidates, released when the "
                      "fallback is drawn",
    "fallback_rows_bound": "a cell of at least this many rows releases the fallback with probability at most "
                           "alpha (W exp(-rate (h - b c)) <= alpha, c the tie margin)",
    "rate": "the exact rate of the law, epsilon / (2 sensitivity), or epsilon / sensitivity for q = 0 or 1",
    "rank_error_bound": "r: at level 1 - alpha, the selected point, the fallback included, is within r rows of "
                        "q n: at most q n + r values lie below it and at least q n - r at or below it "
                        "(ln((candidates + W) / alpha) over the rank rate, rounded up, plus the tie margin c)",
    "sensitivity_units": "the most one person can change one bin's count",
    "scale_units": "the scale of the discrete Laplace noise of each bin's count",
    "variance_units": "the variance sigma² of the discrete Gaussian noise of each bin's count",
}
"""Meanings within one aggregation's record, where they differ from the record's own parameters'."""
MOMENT_PREFIXES = {"count_": "of the noisy count", "sum_of_squares_": "of the noisy centred sum of squares",
                   "sum_": "of the noisy sum (a mean's or variance's: centred)"}
POSITIVE = ("lattice_step", "delta", "delta_asked", "delta_per_key", "beta", "epsilon_each", "epsilon_cell")
"""Parameters that must be positive rationals (as must every ``*scale_units``, ``*variance_units`` and
``*sensitivity_units``)."""
RATIONALS = ("q", "threshold", "centre_units")
"""Parameters that must be rationals (``q`` may be a list of them)."""
UNDESCRIBED = "recorded by the release; this report does not describe it"
SOURCE = {
    "kind": "the random source: chacha20 (a seeded stream, replayable from the seed) or the system's CSPRNG",
    "reproducible": "whether the release can be re-derived from a seed",
    "seed_commitment": "the seed's SHA-256 commitment (the seed itself is never logged)",
    "substream": "the labels of the stream's substreams, outermost first",
}
COMMITMENT = {
    "scheme": "the commitment scheme",
    "nonce": "16 random bytes, fresh per release",
    "mac": "HMAC-SHA256, under a key only the seed derives, of the exact input the noise step consumed",
}
MECHANISMS = {"discrete_laplace": "discrete Laplace noise (pure epsilon-DP)",
              "discrete_gaussian": "discrete Gaussian noise (rho-zCDP)",
              "exponential": "the exponential mechanism (a selection)",
              "permute_and_flip": "permute-and-flip (a selection)"}


def e(value: object) -> str:
    """``value`` as escaped HTML text."""
    return html.escape(str(value), quote=True)


def odd(text: str) -> str:
    """A marked note that a value is not what its name says."""
    return f'<span class="odd">{e(text)}</span>'


def plain(value: Any) -> str:
    """A recorded JSON value as plain text, exactly: ``—`` for none, ``yes``/``no``, ``[a, b]``, ``k: v; ...``."""
    if value is None:
        return ABSENT
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {plain(v)}" for k, v in value.items())
    return str(value)


def number_text(value: Any) -> str:
    """A released number in the one style of the command's output, exactly: an integer as ``3``, a rational with a
    finite decimal expansion as that expansion (``29929.5``, never ``59859/2``), any other as ``num/den``
    (:func:`~securedp.hazmat.exact.rational.exact_text`); anything else as :func:`plain` writes it."""
    number = None if isinstance(value, bool) else rational(value)
    return plain(value) if number is None else exact_text(number)


def shown(value: Any) -> str:
    """``value`` as HTML: plain text, a long list summarised with the full list folded into ``<details>``."""
    if isinstance(value, list) and len(value) > SHORT:
        numbers = [rational(v) for v in value]
        summary = f"{len(value)} values, first {plain(value[0])}, last {plain(value[-1])}"
        known = [n for n in numbers if n is not None]
        if len(known) == len(value):  # numbers: a range when ascending, else their least and greatest
            ascending = known == sorted(known)
            summary = (f"{len(value)} values, from {plain(value[0])} to {plain(value[-1])}" if ascending
                       else f"{summary}; least {min(known)}, greatest {max(known)}")
        return f"{e(summary)}<details><summary>all {len(value)}</summary>{e(plain(value))}</details>"
    return e(plain(value))


def aggregation_words() -> dict[str, str]:
    """:data:`AGGREGATION`, and the meaning each statistic gives the fields its record adds
    (:attr:`~securedp.mechanisms.statistic.CellStatistic.record_words`, from the one list of statistics)."""
    from securedp.tables.spec import STATISTICS  # the one list; loaded when a report explains an aggregation

    stated = (getattr(getattr(entry.make, "statistic", None), "record_words", {}) for entry in STATISTICS.values())
    return {**{name: text for words in stated for name, text in words.items()}, **AGGREGATION}


def explain(name: str, inside: bool = False) -> str:
    """The meaning of parameter ``name`` (with its moment prefix), ``inside`` an aggregation's record or not, or
    :data:`UNDESCRIBED`."""
    if inside and name in (words := aggregation_words()):
        return words[name]
    if name in PARAMETERS:
        return PARAMETERS[name]
    for prefix, moment in MOMENT_PREFIXES.items():
        rest = name.removeprefix(prefix)
        if rest != name and rest in PARAMETERS:
            return f"{PARAMETERS[rest]}, {moment}"
    return UNDESCRIBED


def _note(name: str, value: Any) -> str:
    """A marked note when ``value`` is not what parameter ``name`` should be, else ``""``."""
    if name == "alpha":
        found = rational(value)
        if found is None or not 0 < found < 1:
            return odd(f"alpha {plain(value)} is not a rational in (0, 1): the half-widths below are at the "
                       f"report's level 1 - {DEFAULT_ALPHA}")
    elif name in POSITIVE or name.endswith(("scale_units", "variance_units", "sensitivity_units")):
        found = rational(value)
        if found is None or found <= 0:
            return odd(f"{plain(value)} is not a positive rational, as {name} should be")
    elif name in RATIONALS:
        values = value if name == "q" and isinstance(value, list) and value else [value]
        if any(rational(v) is None for v in values):
            return odd(f"{plain(value)} is not a rational, as {name} should be")
    return ""


def parameter_row(name: str, value: Any, inside: bool = False) -> tuple[str, str, str]:
    """(name, value, explanation) of one parameter (``inside`` an aggregation's record), as HTML cells, odd
    values marked."""
    note = _note(name, value)
    return e(name), shown(value), e(explain(name, inside)) + (" " + note if note else "")


def law_text(noise: Any) -> str:
    """One recorded noise law in words: its mechanism and each parameter by name (plain text)."""
    if not isinstance(noise, dict):
        return plain(noise)
    law = MECHANISMS.get(str(noise.get("mechanism")), plain(noise.get("mechanism")))
    return "; ".join([law, *(f"{k} {plain(v)}" for k, v in noise.items() if k != "mechanism")])


def _noise_rows(noises: list[Any], moments: Sequence[str]) -> list[tuple[str, str, str]]:
    """One row per recorded noise law, named by the noisy integer it is added to."""
    if not noises:
        return [(e("noise"), e("none"), e("no noise is added: the value is selected (see selection)"))]
    rows = []
    for i, noise in enumerate(noises):
        name = f"noise {i + 1}: {moments[i] if i < len(moments) else 'an integer'}"
        if not isinstance(noise, dict):
            rows.append((e(name), shown(noise), odd("not an object, as a noise law should be")))
            continue
        words = "; ".join(f"{k}: {explain(str(k))}" for k in noise if k != "mechanism")
        notes = " ".join(n for k, v in noise.items() if (n := _note(str(k), v)))
        meaning = f"the noise added to each cell's {name.partition(': ')[2]}" + (f" ({words})" if words else "")
        rows.append((e(name), e(law_text(noise)), e(meaning) + (" " + notes if notes else "")))
    return rows


def aggregation_rows(fields: dict[str, Any], moments: Sequence[str]) -> list[tuple[str, str, str]]:
    """The rows of one aggregation's record: first each noise law (named by the noisy integer of ``moments``
    it is added to), then each other parameter, in the record's order, with its meaning within an aggregation."""
    noises = fields.get("noise")
    rows = _noise_rows(noises, moments) if isinstance(noises, list) else []
    return rows + [parameter_row(str(name), value, inside=True) for name, value in fields.items()
                   if name != "noise" or not isinstance(value, list)]


def label_text(label: Any) -> str:
    """A histogram bin ``[lo, hi]`` as ``lo to hi``; any other label as plain text."""
    if isinstance(label, list) and len(label) == 2 and not any(isinstance(x, (list, dict)) for x in label):
        return f"{plain(label[0])} to {plain(label[1])}"
    return plain(label)


def table(caption: str, header: Sequence[str], rows: Iterable[Sequence[str]], kind: str = "") -> str:
    """A captioned table of HTML cells (the caller escapes), in a box that scrolls rather than widen the page."""
    head = "".join(f'<th scope="col">{h}</th>' for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    cls = f' class="{kind}"' if kind else ""
    return (f'<div class="scroll"><table{cls}><caption>{e(caption)}</caption><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def fields(caption: str, rows: Iterable[tuple[str, str, str]], kind: str = "") -> str:
    """A captioned table of (name, value, meaning) rows, all HTML (the caller escapes)."""
    body = "".join(f'<tr><th scope="row">{name}</th><td class="num">{value}</td><td>{meaning}</td></tr>'
                   for name, value, meaning in rows)
    cls = f' class="{kind}"' if kind else ""
    return (f'<div class="scroll"><table{cls}><caption>{e(caption)}</caption><thead><tr><th scope="col">field</th>'
            f'<th scope="col">value</th><th scope="col">meaning</th></tr></thead><tbody>{body}</tbody></table></div>')
