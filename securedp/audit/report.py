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
   axes and each ledger's total as a labelled dashed line, with the exact rationals in a table
   beside it (the charge of a record that states none derived as the verifier derives it), and the
   delta ledger where delta is spent;
3. **Releases**: per record its format, cost and charge, budget after it, value (a table release as a
   table, a histogram one row per bin, ``lo``/``hi`` bounds as one row), every parameter with its
   meaning (each aggregation's record, of a table or of the one-cell table a release of one column is
   in format 2, as a table of its own, one row per noise law), the command's query, input commitment,
   random source and, when a seed and the data are given, the replay status; its noise laws with the
   proven half-width at level ``1 - alpha`` (and a mean's half-width in the column's units), its
   selections with their rank error bounds (:mod:`securedp.audit.report_laws`), and a plot of each
   law's probability mass function. Records of format 1 (securedp 0.1) are read as they were written.

The plots are illustrations: their coordinates are floats computed for drawing only, but every number
written (tick labels, marker labels, text and tables) is the record's exact rational, a bound proven
from it (:mod:`securedp.audit.report_model`), or a bound rounded outward and labelled so. Every value
from the log is HTML-escaped, so a released key such as ``<script>`` is shown as text, and a value that
is not what its name says is shown as written and marked (:mod:`securedp.audit.report_words`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

from securedp.audit.report_laws import noise_section
from securedp.audit.report_model import Entry, Part, ReviewReport, build_report
from securedp.audit.report_noise import record_format
from securedp.audit.report_plot import Axis, Plot
from securedp.audit.report_words import (
    ABSENT,
    COMMITMENT,
    MECHANISMS,
    SHORT,
    SOURCE,
    aggregation_rows,
    e,
    explain,
    fields,
    label_text,
    number_text,
    odd,
    parameter_row,
    plain,
    shown,
    table,
)

__all__ = ["render_report", "write_report"]

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.6rem}h2{margin-top:2.2rem;border-bottom:1px solid #ccc}h3{margin-top:1.6rem}
.scroll{max-width:100%;overflow-x:auto}table{border-collapse:collapse;margin:.6rem 0}
.scroll:has(table.released){max-height:32rem;overflow:auto}
table.released th,table.released td{white-space:nowrap;overflow-wrap:normal}
table.released td{font-family:ui-monospace,monospace;font-size:.9em;text-align:right}
caption{text-align:left;font-weight:600;padding:.2rem 0}
th,td{border:1px solid #bbb;padding:.2rem .5rem;text-align:left;vertical-align:top}td{overflow-wrap:anywhere}
th{background:#f1f1f1;overflow-wrap:break-word}td.num,code{font-family:ui-monospace,monospace;font-size:.9em}
.ok{color:#0a6b2b;font-weight:600}.bad{color:#a40000;font-weight:600}.odd{color:#8a4b00;font-weight:600}
p.headline{font-size:1.15rem;padding:.4rem .7rem;border-left:6px solid}p.headline.ok{border-color:#0a6b2b}
p.headline.bad{border-color:#a40000;background:#fbeaea}p.headline.odd{border-color:#8a4b00;background:#fdf3e6}
svg{max-width:100%;height:auto;background:#fafafa;border:1px solid #ddd}figure{margin:1rem 0}
section.release{border-left:4px solid #3a6ea5;padding-left:1rem;margin-top:1.5rem}
"""
_MAX_ROWS = 200
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


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
    return (f"<figure>{svg}<figcaption>{e(what)} spent after each log line, per ledger; each dashed line is a "
            f"ledger's total (spent + remaining).</figcaption></figure>")


def value_section(entry: Entry) -> str:
    """The released value: a table release as a table, a histogram one row per bin, labelled values one row."""
    value, labels = entry.record.get("value"), entry.record.get("labels")
    caption = f"Released value, line {entry.line}"
    rows = isinstance(value, list) and all(isinstance(r, list) for r in value) and (value or entry.kind == "table")
    if isinstance(labels, list) and isinstance(value, list) and rows:
        shown_rows = value[:_MAX_ROWS]
        more = f" (first {_MAX_ROWS} of {len(value)} rows)" if len(value) > _MAX_ROWS else "" if value else " (no rows)"
        parameters = entry.record.get("parameters")
        keys = set(parameters.get("group_by") or ()) if isinstance(parameters, dict) else set()
        numbers = [x not in keys for x in labels]  # a key stays as released ("1/2" is a key's text, not a half)
        return table(caption + more, [e(plain(x)) for x in labels],
                     [[e(number_text(c) if n else plain(c)) for c, n in zip(row, numbers, strict=False)]
                      for row in shown_rows], "released")
    if isinstance(labels, list) and isinstance(value, list) and len(labels) == len(value):
        if entry.kind in ("histogram", "contribution_histogram") or len(value) > SHORT:
            parameters = entry.record.get("parameters")
            kinds = [p.fields.get("kind") for p in entry.parts] + [parameters.get("kind")
                                                                   if isinstance(parameters, dict) else None]
            name = "category" if "categories" in kinds else "bin"
            head = [name if entry.kind == "histogram" else "cell", "count" if "histogram" in entry.kind else "value"]
            return table(caption, head, [(e(label_text(x)), e(plain(v))) for x, v in zip(labels, value, strict=True)],
                         "released")
        return table(caption, [e(plain(x)) for x in labels], [[e(plain(v)) for v in value]], "released")
    return f"<p>Released value: <code>{shown(value)}</code></p>"


def replay_line(entry: Entry, report: ReviewReport) -> str:
    """The replay's outcome for one line (nothing when the log was not replayed)."""
    if not report.replayed:
        return ""
    r = entry.replay
    if r is None:
        return f'<p>Replay: <span class="bad">not replayed</span> {e(report.replay_error or "")}</p>'
    if r.skipped:
        what = "a partition's charge" if r.statistic == "partition" else "a charge with nothing released"
        return f"<p>Replay: nothing to re-derive ({what}).</p>"
    data = {True: "input commitment matches the data", False: "input commitment does NOT match the data",
            None: "no input commitment"}[r.data_matches]
    if r.unchecked_commitment:
        data = "input commitment of an earlier record format: NOT CHECKED by this version (another input encoding)"
    elif not r.replayable:
        data = ("its input commitment is not checked (the release is not re-run)"
                if entry.record.get("input_commitment") is not None else "no input commitment")
    status = ('<span class="ok">reproduced exactly</span>' if r.ok else f'<span class="odd">{e(r.problem)}</span>'
              if not r.replayable else f'<span class="bad">{e(r.problem)}</span>')
    return f"<p>Replay: {status}; {e(data)}.</p>"


def _budget_plots(report: ReviewReport, ids: Iterator[int]) -> str:
    kinds = sorted({str(e.record.get("budget_kind")) for e in report.entries if e.budget("spent") is not None})
    plots = plot_ledgers(report, lambda x: (x.budget("spent"), x.budget("remaining"), x.charge.amount),
                         " or ".join(kinds), ids)
    plots += plot_ledgers(report, lambda x: (x.delta("spent"), x.delta("remaining"), x.delta("charged")), "delta", ids)
    return plots or "<p>No record carries budget fields.</p>"


def _budget_table(report: ReviewReport) -> str:
    rows = []
    for x in report.entries:
        spent, delta = x.budget("spent"), x.delta("spent")
        charged = ABSENT if x.charge.amount is None else str(x.charge.amount)
        rows.append((str(x.line), e(x.ledger), e(x.kind), e(x.charge.currency or ABSENT), e(charged),
                     e(ABSENT if spent is None else spent), e(plain(x.budget("remaining"))),
                     e(ABSENT if delta is None else f"{delta} (remaining {x.delta('remaining')})")))
    return table("Budget after each record (exact rationals; a charge the record does not state is derived)",
                 ["line", "ledger", "record", "currency", "charged", "spent", "remaining", "delta spent"], rows)


def _cost(entry: Entry) -> list[tuple[str, str, str]]:
    record, charge = entry.record, entry.charge
    own = "epsilon" if record.get("epsilon") is not None else "rho" if record.get("rho") is not None else None
    unread = "" if record_format(record) is not None else " " + odd("not an integer, as a format should be")
    rows = [("format", e("1 (none recorded: securedp 0.1)" if "format" not in record else plain(record["format"])),
             e(explain("format")) + unread),
            ("mechanism", e(plain(record.get("mechanism"))),
             e(MECHANISMS.get(str(record.get("mechanism")), "the mechanism the release names")))]
    if own is not None:
        rows.append(("cost", e(f"{own} {plain(record[own])}"), e("the privacy cost of this release" + (
            ": pure epsilon-DP" if own == "epsilon" else ": rho-zCDP (zero-concentrated DP)"))))
    if charge.delta is not None:
        rows.append(("delta", e(charge.delta), e("the delta this release spent (partition selection)")))
    amount = ABSENT if charge.amount is None else f"{charge.amount} {charge.currency}"
    rows.append(("charged", e(amount), e(charge.how)))
    for name, meaning in (("spent", "spent on this ledger after this record"), ("remaining", "left on this ledger"),
                          ("total", "the ledger's total"), ("delta_spent", "delta spent after this record"),
                          ("delta_remaining", "delta left")):
        if record.get(name) is not None:
            rows.append((name.replace("_", " "), e(plain(record[name])), e(f"{meaning} ({entry.ledger})")))
    if record.get("max_contributions") is not None:
        rows.append(("max_contributions", e(plain(record["max_contributions"])),
                     e("the most rows one person may contribute; the noise is calibrated to it")))
    rows += [("time", e(entry.time), e("when the line was written (UTC)")),
             ("writer", e(entry.writer), e("the AuditLog (one per session) or budget file that wrote the line")),
             ("signed", "yes" if entry.signed else "no", e("whether the line carries an Ed25519 signature"))]
    return [(e(name), value, meaning) for name, value, meaning in rows]


def _named(record: Any, meanings: dict[str, str], default: str) -> list[tuple[str, str, str]]:
    if not isinstance(record, dict):
        if record is None:
            return [(e("as recorded"), e(ABSENT), e("none recorded"))]
        return [(e("as recorded"), shown(record), odd("not an object"))]
    return [(e(k), shown(v), e(meanings.get(k, default))) for k, v in sorted(record.items())]


def _caption(part: Part) -> str:
    if part.table:
        return f"Parameters of aggregation {part.name}"
    return f"Parameters of the {part.label} (aggregation {part.name} of the one-cell table)"


def _release(entry: Entry, report: ReviewReport, ids: Iterator[int]) -> str:
    record = entry.record
    start = (f'<section class="release" id="line-{entry.line}" aria-labelledby="r{entry.line}">'
             f'<h3 id="r{entry.line}">{e(f"Line {entry.line}: {entry.kind}")}</h3>')
    unread = "" if entry.trouble is None else odd(f"part of this record could not be read: {entry.trouble}")
    trouble = f"<p>{unread}</p>" if unread else ""
    if entry.kind == "partition":
        rows = _cost(entry)[1:]
        rows += [(e(k), shown(record.get(k)), e(v)) for k, v in (
            ("budget", "each part's budget"), ("max_partitions", "the most parts one person may be in"),
            ("parts", "the declared keys"), ("opens", "the id every record of the parts' sub-sessions carries"))]
        return f'{start}{trouble}{fields("Partition charge", rows)}{replay_line(entry, report)}</section>'
    if record.get("kind") == "unreleased":
        rows = _cost(entry)[1:]
        rows += [(e(k), shown(record.get(k)), e(v)) for k, v in (
            ("statistic", "what was asked for"),
            ("error", "the exception the caller received, after the first random bit was read: the charge "
                      "stands, and nothing was released"))]
        return f'{start}{trouble}{fields("Charge with nothing released", rows)}{replay_line(entry, report)}</section>'
    parameters = record.get("parameters")
    own = {part.name for part in entry.parts}
    rows = ([parameter_row(str(k), v) for k, v in sorted(parameters.items()) if k not in own]
            if isinstance(parameters, dict) else _named(parameters, {}, ""))
    aggregations = "".join(fields(_caption(part), aggregation_rows(part.fields, part.moments()), "parameters")
                           for part in entry.parts)
    query = record.get("query")
    asked = "" if not isinstance(query, dict) else fields(
        "Query, as the command recorded it (what replay re-runs)",
        [(e(k), shown(v), e("the command's option")) for k, v in sorted(query.items()) if v is not None])
    return (f"{start}{trouble}{fields('Cost and budget', _cost(entry))}{value_section(entry)}"
            f"{fields('Parameters', rows, 'parameters')}{aggregations}{noise_section(entry, ids)}{asked}"
            f"{fields('Input commitment', _named(record.get('input_commitment'), COMMITMENT, ''))}"
            f"{fields('Random source', _named(record.get('source'), SOURCE, ''))}"
            f"{replay_line(entry, report)}</section>")


def _verification(report: ReviewReport) -> str:
    v = report.verification
    rows = [("lines verified", e(v.valid), e("lines whose chain, hash, fields and budget arithmetic check")),
            ("head hash", e(v.head or ABSENT), e("the last verified line's hash: publish it to detect truncation")),
            ("signed lines", e(v.signed), e("lines that carry a signature")),
            ("checked with public key", e(v.key or "no key given"), e("the key the signatures were checked against")),
            ("trust", e(v.trust), e("what the verification is worth"))]
    replay = ""
    if report.replayed:
        done = report.releases_replayed
        good = sum(r.ok for r in done)
        replay = (f"<p>Replay from the seed and the data: {good} of {len(done)} releases reproduced exactly"
                  f"{'; ' + e(report.replay_error) if report.replay_error else ''}.</p>")
    state = "ok" if report.ok else "odd" if report.verification.ok and report.replay_error is None and \
        not report.not_reproduced else "bad"
    return (f'<p class="headline {state}">{e(report.headline)}</p>'
            f"{fields('Signature and chain', [(e(a), b, c) for a, b, c in rows])}{replay}")


def render_report(report: ReviewReport) -> str:
    """The report as one self-contained HTML document (see the module docstring)."""
    ids = itertools.count(1)
    releases = "".join(_release(x, report, ids) for x in report.entries) or "<p>The log holds no verified record.</p>"
    name = e(Path(report.log).name)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>securedp audit report: {name}</title><style>{_STYLE}</style></head><body><main>"
        f"<h1>Audit report: {name}</h1>"
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

