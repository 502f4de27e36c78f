"""A reviewer's report of an audit log: one self-contained, static HTML page.

``securedp audit report LOG [--public-key K] [--head H] [--seed-file S --data D] -o report.html``
(or :func:`write_report`) writes a page that needs nothing but a browser: no script, no network, no
external style sheet, font or image (a Content-Security-Policy of ``default-src 'none'`` forbids every
load, so a page that tried one would show it as a console error). It shows:

1. **Verification**: a headline, green only when every line verifies and, if the log was replayed,
   every release reproduced exactly (red otherwise, saying which lines did not); the first problem
   if any, and what the outcome is worth (signed against the reviewer's key, or integrity against
   accidents only);
2. **Budget over time**: each ledger's ``spent`` after every record, as an SVG plot with numbered
   axes and each ledger's total as a labelled dashed line, with the exact rationals in a table beside
   it, and the delta ledger where delta is spent;
3. **Releases**: per record its statistic, mechanism, cost and charge (the charge of a record that
   states none derived as the verifier derives it), budget after it, parameters, value (a
   table release as a table), input commitment, random source and, when a seed and the data are given,
   the replay status; its noise laws with the proven half-width at level ``1 - alpha`` and a plot of
   each law's probability mass function, with numbered axes and the half-width marked and labelled.

The plots are illustrations: their coordinates are floats computed for drawing only (from exact
rationals, :mod:`securedp.audit.report_plot`). Every number written (tick and marker labels, text and
tables) is the record's exact rational or a bound proven from it
(:mod:`securedp.audit.report_model`). Every value from the log is HTML-escaped, so a released key such
as ``<script>`` is shown as text.
"""

from __future__ import annotations

import html
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import gmpy2

from securedp.audit.report_model import Entry, NoiseLaw, ReviewReport, build_report
from securedp.audit.report_plot import Axis, Plot

__all__ = ["render_report", "write_report"]

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.6rem}h2{margin-top:2.2rem;border-bottom:1px solid #ccc}h3{margin-top:1.6rem}
table{border-collapse:collapse;margin:.6rem 0}caption{text-align:left;font-weight:600;padding:.2rem 0}
th,td{border:1px solid #bbb;padding:.2rem .5rem;text-align:left;vertical-align:top}th{background:#f1f1f1}
code,.num{font-family:ui-monospace,monospace;font-size:.9em;overflow-wrap:anywhere}
.ok{color:#0a6b2b;font-weight:600}.bad{color:#a40000;font-weight:600}
p.headline{font-size:1.15rem;padding:.4rem .7rem;border-left:6px solid}p.headline.ok{border-color:#0a6b2b}
p.headline.bad{border-color:#a40000;background:#fbeaea}
svg{max-width:100%;height:auto;background:#fafafa;border:1px solid #ddd}
section.release{border-left:4px solid #3a6ea5;padding-left:1rem;margin-top:1.5rem}
"""
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_MAX_ROWS = 200


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _text(value: Any) -> str:
    """A recorded value as a reviewer reads it: rationals as written, structures as compact JSON, none as ``—``."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return "—" if value is None else str(value)


def _table(caption: str, header: Sequence[str], rows: Iterable[Sequence[Any]], raw: bool = False) -> str:
    head = "".join(f'<th scope="col">{_e(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c if raw else _e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><caption>{_e(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _fields(caption: str, pairs: Iterable[tuple[str, Any]]) -> str:
    body = "".join(f'<tr><th scope="row">{_e(k)}</th><td class="num">{_e(_text(v))}</td></tr>' for k, v in pairs)
    return f"<table><caption>{_e(caption)}</caption><tbody>{body}</tbody></table>"


_COLOURS = ["#3a6ea5", "#c8553d", "#2a9d8f", "#8e44ad", "#e9a03b", "#555555"]


def _brief(value: Fraction) -> str:
    """``value`` exactly when that is short enough for a plot's label, else a pointer to the table."""
    text = str(value)
    return text if len(text) <= 24 else "(exact value in the table)"


Reading = tuple[Fraction | None, Fraction | None, Fraction | None]


def plot_ledgers(report: ReviewReport, read: Callable[[Entry], Reading], what: str, ids: Iterator[int]) -> str:
    """``spent`` after each record, one line per ledger, each ledger's total a labelled dashed line.

    ``read`` gives a record's (spent, remaining, charged) on the plotted budget. A ledger's line starts
    just before its first record, at that record's ``spent`` minus its charge (when the charge is known).
    """
    ledgers: dict[str, list[tuple[int, Fraction]]] = {}
    totals: dict[str, Fraction] = {}
    for entry in report.entries:
        spent, remaining, charged = read(entry)
        if spent is None:
            continue
        if entry.ledger not in ledgers:
            ledgers[entry.ledger] = [] if charged is None else [(entry.line - 1, spent - charged)]
        ledgers[entry.ledger].append((entry.line, spent))
        if remaining is not None:
            totals[entry.ledger] = spent + remaining
    if not ledgers:
        return ""
    top = max([*totals.values(), *(s for points in ledgers.values() for _, s in points), Fraction(0)]) or Fraction(1)
    low = min([Fraction(0), *(s for points in ledgers.values() for _, s in points)])
    last = max(entry.line for entry in report.entries)
    plot = Plot(Axis(Fraction(0), Fraction(last), "log line", integers=True), Axis(low, top, f"{what} spent"), ids)
    colour = {name: _COLOURS[i % len(_COLOURS)] for i, name in enumerate(ledgers)}
    for name, points in ledgers.items():
        plot.points([(Fraction(line), s) for line, s in points], colour[name],
                    [f"{name}, after line {line}: {what} spent {s}" for line, s in points])
        plot.legend.append((name, colour[name]))
    by_total: dict[Fraction, list[str]] = {}
    for name, total in totals.items():
        by_total.setdefault(total, []).append(name)
    for total, names in by_total.items():
        more = f" ({len(names)} ledgers)" if len(names) > 1 else ""
        plot.horizontal(total, colour[names[0]], f"total {_brief(total)}{more}")
    description = "; ".join(f"{name}: {what} spent {', '.join(str(s) for _, s in points)}"
                            + (f" of a total {totals[name]}" if name in totals else "")
                            for name, points in ledgers.items())
    svg = plot.svg(f"{what} spent after each record, per ledger (dashed: the ledger's total)", description)
    return (f"<figure>{svg}<figcaption>{_e(what)} spent after each log line, per ledger; each dashed line is a "
            f"ledger's total (spent + remaining).</figcaption></figure>")


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
    unit = "in lattice units" if law.step is None else f"in lattice units (1 unit = {law.step} in the column's units)"
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


def _budget_plots(report: ReviewReport, ids: Iterator[int]) -> str:
    kinds = sorted({str(e.record.get("budget_kind")) for e in report.entries if e.budget("spent") is not None})
    plots = plot_ledgers(report, lambda x: (x.budget("spent"), x.budget("remaining"), x.charge.amount),
                         " or ".join(kinds), ids)
    plots += plot_ledgers(report, lambda x: (x.delta("spent"), x.delta("remaining"), x.delta("charged")), "delta", ids)
    return plots or "<p>No record carries budget fields.</p>"


def _budget_table(report: ReviewReport) -> str:
    rows = []
    for e in report.entries:
        delta = e.delta("spent")
        rows.append((e.line, e.ledger, e.kind, _text(e.charge.currency), _text(e.charge.amount),
                     _text(e.record.get("spent")), _text(e.record.get("remaining")),
                     "—" if delta is None else f"{delta} (remaining {e.delta('remaining')})"))
    return _table("Budget after each record (exact rationals; a charge the record does not state is derived)",
                  ["line", "ledger", "record", "currency", "charged", "spent", "remaining", "delta spent"], rows)


def _noise_section(entry: Entry, ids: Iterator[int]) -> str:
    if not entry.noise:
        return ""
    rows = []
    for law in entry.noise:
        width = "" if law.halfwidth is None else str(law.halfwidth)
        rows.append((law.label, law.mechanism, ("scale " if law.mechanism == "discrete_laplace" else "σ² ")
                     + str(law.parameter), law.halfwidth_units, width, f"1 - {law.alpha}"))
    table = _table("Noise laws and the half-widths of their intervals (proven by directed rounding)",
                   ["noise of", "law", "parameter (units)", "half-width (units)", "half-width (column units)",
                    "level"], rows)
    plots = "".join(f"<figure>{_noise_plot(law, law.halfwidth_units, ids)}<figcaption>{_e(law.label)}: "
                    f"{_e(law.mechanism)} noise; dashed lines at ±{law.halfwidth_units} lattice units, the half-width "
                    f"at level 1 - {_e(law.alpha)}</figcaption></figure>" for law in entry.noise)
    return table + plots


def _value(entry: Entry) -> str:
    value, labels = entry.record.get("value"), entry.record.get("labels")
    if isinstance(labels, list) and isinstance(value, list):
        shown = value[:_MAX_ROWS]
        more = f" (first {_MAX_ROWS} of {len(value)} rows)" if len(value) > _MAX_ROWS else ""
        return _table(f"Released table, line {entry.line}{more}", [str(x) for x in labels],
                      [[_text(c) for c in row] if isinstance(row, list) else [_text(row)] for row in shown])
    return f'<p>Released value: <code>{_e(_text(value))}</code></p>'


def _replay(entry: Entry, report: ReviewReport) -> str:
    if not report.replayed:
        return ""
    r = entry.replay
    if r is None:
        return f'<p>Replay: <span class="bad">not replayed</span> {_e(report.replay_error or "")}</p>'
    if r.skipped:
        return "<p>Replay: nothing to re-derive (a partition's charge).</p>"
    data = {True: "input commitment matches the data", False: "input commitment does NOT match the data",
            None: "no input commitment"}[r.data_matches]
    status = '<span class="ok">reproduced exactly</span>' if r.ok else f'<span class="bad">{_e(r.problem)}</span>'
    return f"<p>Replay: {status}; {_e(data)}.</p>"


def _cost(entry: Entry) -> list[tuple[str, Any]]:
    """The cost rows of a release: only fields it has, and its charge (recorded, or derived as verify derives it)."""
    record, charge = entry.record, entry.charge
    rows: list[tuple[str, Any]] = [("mechanism", record.get("mechanism"))]
    rows += [(name, record[name]) for name in ("epsilon", "rho") if record.get(name) is not None]
    if charge.delta is not None:
        rows.append(("delta", charge.delta))
    amount = charge.how if charge.amount is None else f"{charge.amount} {charge.currency} ({charge.how})"
    rows.append(("charged", amount))
    rows += [(label, record[name]) for label, name in (("spent after", "spent"), ("remaining after", "remaining"),
                                                       ("total", "total")) if record.get(name) is not None]
    if record.get("max_contributions") is not None:
        rows.append(("max_contributions", record["max_contributions"]))
    return [*rows, ("time", entry.time), ("writer", entry.writer), ("signed", "yes" if entry.signed else "no")]


def _release(entry: Entry, report: ReviewReport, ids: Iterator[int]) -> str:
    record = entry.record
    title = f"Line {entry.line}: {entry.kind}"
    start = (f'<section class="release" id="line-{entry.line}" aria-labelledby="r{entry.line}">'
             f'<h3 id="r{entry.line}">{_e(title)}</h3>')
    if entry.kind == "partition":
        pairs = [(k, record.get(k)) for k in ("budget_kind", "charged", "budget", "max_partitions", "parts", "opens",
                                               "spent", "remaining")]
        return f'{start}{_fields("Partition charge", pairs)}{_replay(entry, report)}</section>'
    parameters = record.get("parameters") or {}
    commitment = record.get("input_commitment") or {}
    source = record.get("source") or {}
    return (f'{start}{_fields("Cost and budget", _cost(entry))}{_value(entry)}'
            f'{_fields("Parameters", sorted(parameters.items()) if isinstance(parameters, dict) else [])}'
            f'{_noise_section(entry, ids)}'
            f'{_fields("Input commitment", sorted(commitment.items()) if isinstance(commitment, dict) else [])}'
            f'{_fields("Random source", sorted(source.items()) if isinstance(source, dict) else [])}'
            f'{_replay(entry, report)}</section>')


def _verification(report: ReviewReport) -> str:
    v = report.verification
    rows = [("lines verified", v.valid), ("head hash", v.head), ("signed lines", v.signed),
            ("checked with public key", v.key or "no key given"), ("trust", v.trust)]
    replay = ""
    if report.replayed:
        done = report.releases_replayed
        good = sum(r.ok for r in done)
        replay = (f"<p>Replay from the seed and the data: {good} of {len(done)} releases reproduced exactly"
                  f"{'; ' + _e(report.replay_error) if report.replay_error else ''}.</p>")
    state = "ok" if report.ok else "bad"
    return (f'<p class="headline {state}">{_e(report.headline)}</p>'
            f"{_fields('Signature and chain', rows)}{replay}")


def render_report(report: ReviewReport) -> str:
    """The report as one self-contained HTML document (see the module docstring)."""
    ids = itertools.count(1)
    releases = "".join(_release(x, report, ids) for x in report.entries) or "<p>The log holds no verified record.</p>"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>securedp audit report: {_e(Path(report.log).name)}</title><style>{_STYLE}</style></head><body><main>"
        f"<h1>Audit report: {_e(Path(report.log).name)}</h1>"
        f"<h2>Verification</h2>{_verification(report)}"
        f"<h2>Budget over time</h2>{_budget_plots(report, ids)}{_budget_table(report)}"
        f"<h2>Releases</h2>{releases}"
        "</main></body></html>\n"
    )


def write_report(
    log: str | Path, output: str | Path, *, public_key: Any = None, head: Any = None, seed: bytes | None = None,
    data: str | Path | None = None,
) -> ReviewReport:
    """Verify (and optionally replay) ``log`` and write its HTML report to ``output``; returns the report."""
    report = build_report(log, public_key=public_key, head=head, seed=seed, data=data)
    Path(output).write_text(render_report(report), encoding="utf-8")
    return report
