"""How the report writes a record's fields for a reviewer: values as text, and a sentence for each parameter.

A reviewer reads sentences, not JSON: every recorded value is written exactly but plainly (``null``
is never printed: an absent value is ``—``), a list of more than :data:`SHORT` entries is summarised
("99 values, from -1099511627776 to 1099511627776") with the full list folded into a ``<details>``
element, a table aggregation's parameters become one sentence, and every known parameter name gets
its meaning. A value that is not what its name says (an ``alpha`` of ``"x"``, a ``scale_units`` of
``"-1"``) is shown as written and marked ``<span class="odd">``. Everything returned is HTML with
every recorded value escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from securedp.audit.report_noise import DEFAULT_ALPHA, rational

SHORT = 8
"""Lists longer than this are summarised, with the full list folded away."""
ABSENT = "—"

PARAMETERS = {
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
    "shares": "the fraction of the cost each aggregation received",
    "delta": "the delta of partition selection",
    "selection": "the partition selection rule",
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
MOMENT_PREFIXES = {"count_": "of the noisy count", "sum_of_squares_": "of the noisy centred sum of squares",
                   "sum_": "of the noisy sum (a mean's or variance's: centred)"}
POSITIVE = ("lattice_step", "delta", "beta", "epsilon_each", "epsilon_cell")
"""Parameters that must be positive rationals (as must every ``*scale_units``, ``*variance_units`` and
``*sensitivity_units``)."""
RATIONALS = ("q", "threshold", "centre_units")
"""Parameters that must be rationals."""
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
              "exponential": "the exponential mechanism (a selection)"}


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


def explain(name: str) -> str:
    """The meaning of parameter ``name`` (with its moment prefix), or a plain statement that it is not described."""
    if name in PARAMETERS:
        return PARAMETERS[name]
    for prefix, moment in MOMENT_PREFIXES.items():
        rest = name.removeprefix(prefix)
        if rest != name and rest in PARAMETERS:
            return f"{PARAMETERS[rest]}, {moment}"
    return "recorded by the release; this report does not describe it"


def aggregation(value: dict[str, Any]) -> str:
    """One sentence for a table aggregation's parameters: its column, bounds, step and each noise."""
    parts = [f"{k.replace('_', ' ')} {plain(v)}" for k, v in value.items() if k != "noise"]
    noises = value.get("noise")
    if isinstance(noises, list):
        for i, noise in enumerate(noises):
            if isinstance(noise, dict):
                law = MECHANISMS.get(str(noise.get("mechanism")), plain(noise.get("mechanism")))
                rest = "; ".join(f"{k.replace('_', ' ')} {plain(v)}" for k, v in noise.items() if k != "mechanism")
                parts.append(f"noise {i + 1}: {law}, {rest}")
            else:
                parts.append(f"noise {i + 1}: {plain(noise)}")
        if not noises:
            parts.append("no additive noise (a selection)")
    return "; ".join(parts)


def parameter_row(name: str, value: Any) -> tuple[str, str, str]:
    """(name, value, explanation) of one parameter, as HTML cells, odd values marked."""
    if isinstance(value, dict) and "noise" in value:
        return e(name), e(aggregation(value)), e("an aggregation of the table: its column, bounds and noises")
    if name == "noise" and isinstance(value, list):
        return e(name), e(aggregation({"noise": value})), e(PARAMETERS["noise"])
    note = ""
    if name == "alpha":
        found = rational(value)
        if found is None or not 0 < found < 1:
            note = odd(f"alpha {plain(value)} is not a rational in (0, 1): the half-widths below are at the "
                       f"report's level 1 - {DEFAULT_ALPHA}")
    elif name in POSITIVE or name.endswith(("scale_units", "variance_units", "sensitivity_units")):
        found = rational(value)
        if found is None or found <= 0:
            note = odd(f"{plain(value)} is not a positive rational, as {name} should be")
    elif name in RATIONALS and rational(value) is None:
        note = odd(f"{plain(value)} is not a rational, as {name} should be")
    return e(name), shown(value), e(explain(name)) + (" " + note if note else "")


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
