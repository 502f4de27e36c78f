"""``securedp analyze`` (contribution analysis) and ``securedp bounds`` (private clamping bounds).

Both read a CSV or Parquet file through the one file reader. ``analyze`` without ``--epsilon`` is the
exact report, for the data holder only (refused with ``--analyst-facing``) and labelled *not private*;
with ``--epsilon`` it releases a contribution histogram, charged to ``--budget-file`` and appended to
``--audit-log`` like every release, and computes the report from it. ``bounds`` is always a release.

Printed figures are exact or rounded outward: fractions kept rounded down, errors and biases rounded up,
to the places shown (``--json`` prints them exactly, ``"num/den"``).
"""

from __future__ import annotations

import argparse
import json
from fractions import Fraction
from typing import Any

from securedp.audit.log import AuditLogError
from securedp.audit.planning_query import BoundsQuery, HistogramQuery
from securedp.cli import commands, pipeline
from securedp.cli.show import exact_text
from securedp.hazmat.exact.rational import display_rational, positive_rational, to_int, to_rational
from securedp.ledger.audit_record import Currency
from securedp.ledger.budget_file import BudgetError
from securedp.ledger.errors import BudgetExceeded, IncompatibleCost
from securedp.planning.bounds import DEFAULT_EXPONENTS, METHODS
from securedp.planning.contributions import ContributionReport, ReportPlan, analyze_contributions
from securedp.reading.files import check_encoding, read_file
from securedp.session.boundary import check_public_arguments, data_boundary

PASSES = (commands.Failure, BudgetError, BudgetExceeded, IncompatibleCost, AuditLogError, BrokenPipeError)
"""Failures about public state (the command's options, the budget file, the audit log), reported as they are."""


def add_commands(sub: Any) -> None:
    """Register ``analyze`` and ``bounds`` on the subparsers ``sub`` of the ``securedp`` command."""
    analyze = sub.add_parser("analyze", help="contributions per person and the (max_groups, max_rows) to choose")
    analyze.add_argument("data", help="CSV (with a header row) or Parquet file")
    analyze.add_argument("--id-column", required=True, help="the person column")
    analyze.add_argument("--group-by", action="append", required=True, help="group column(s): A or A,B (repeatable)")
    analyze.add_argument("--column", help="with --bounds: also predict the error of this column's sum")
    analyze.add_argument("--bounds", help="public bounds of --column: LO,HI")
    analyze.add_argument("--candidates", help="(max_groups, max_rows) pairs to evaluate: 1x1,2x4,... "
                                              "(default: powers of two up to the largest seen)")
    analyze.add_argument("--release-epsilon", default="1", help="epsilon of the planned table release (default 1)")
    analyze.add_argument("--alpha", default="0.05", help="noise half-widths at level 1 - alpha (default 0.05)")
    analyze.add_argument("--epsilon", help="analyse privately: release a contribution histogram at this epsilon")
    analyze.add_argument("--groups-cap", default="16", help="private: largest number of groups counted (default 16)")
    analyze.add_argument("--rows-cap", default="16", help="private: largest number of rows counted (default 16)")
    commands.add_missing_keys_option(analyze)
    _release_options(analyze)
    analyze.set_defaults(run=analyze_command)

    bounds = sub.add_parser("bounds", help="choose clamping bounds of a column privately")
    bounds.add_argument("data", help="CSV (with a header row) or Parquet file")
    bounds.add_argument("--column", required=True, help="the column to choose bounds for")
    bounds.add_argument("--epsilon", required=True, help="pure-DP cost, exact: 0.5, 1/3, 1e-2")
    bounds.add_argument("--id-column", help="person-id column: enforce --max-contributions per person")
    bounds.add_argument("--max-contributions", default="1", help="rows one person may contribute (default 1)")
    bounds.add_argument("--method", choices=METHODS, default="histogram",
                        help="signed magnitude histogram (default) or exponential-mechanism quantiles")
    bounds.add_argument("--exponents", default=",".join(map(str, DEFAULT_EXPONENTS)),
                        help="e,E: lattice step 2**e, range [-2**E, 2**E] (default -8,40)")
    bounds.add_argument("--quantiles", default="0.05,0.95", help="quantiles method: the two levels (default 0.05,0.95)")
    bounds.add_argument("--beta", default="0.05", help="histogram method: failure probability of the threshold")
    bounds.add_argument("--missing", default="raise", choices=["raise", "drop", "impute"],
                        help="unusable values (blank, not a number): refuse naming the first (default), drop them, "
                             "or impute --fill")
    bounds.add_argument("--fill", help="the public value imputed with --missing impute")
    _release_options(bounds)
    bounds.set_defaults(run=bounds_command)


def _release_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--encoding", default="utf-8", help="the CSV file's text encoding (default utf-8)")
    parser.add_argument("--budget-file", help="JSON file persisting the total and spent epsilon")
    parser.add_argument("--budget", help="the total epsilon (creates --budget-file, must match it later)")
    parser.add_argument("--budget-delta", help="with --budget, give the new --budget-file a delta ledger of this "
                                               "total, exact (1e-6), for the tables with private keys (--delta)")
    parser.add_argument("--audit-log", help="append the release to this hash-chained JSON-lines log")
    parser.add_argument("--signing-key", help="sign the audit record with this Ed25519 key")
    parser.add_argument("--seed-file", help="32-byte seed (raw or hex) for a replayable ChaCha20 stream")
    parser.add_argument("--json", action="store_true", help="print the result as JSON, exactly")
    parser.add_argument("--analyst-facing", dest="analyst", action="store_true",
                        help="withhold every error that may depend on the data (one fixed message)")


def _pair(text: str) -> tuple[int, int]:
    k, sep, m = text.partition("x")
    if not sep:
        raise commands.Failure(f"--candidates: expected KxM pairs such as 2x4, got {text!r}")
    return to_int(k, "--candidates"), to_int(m, "--candidates")


def _bounds(text: str | None) -> tuple[Fraction, Fraction] | None:
    if text is None:
        return None
    parts = [to_rational(p, "--bounds") for p in text.split(",")]
    if len(parts) != 2:
        raise commands.Failure(f"--bounds: expected LO,HI, got {text!r}")
    return parts[0], parts[1]


def _run(args: argparse.Namespace, query: BoundsQuery | HistogramQuery) -> pipeline.Released:
    """The release of ``query`` on the file through the command's one pipeline (:mod:`securedp.cli.pipeline`:
    the ledgers checked first, then charged to ``--budget-file``, drawn from ``--seed-file``, appended to
    ``--audit-log`` with the query, so that ``securedp audit replay`` re-derives it); with
    ``--analyst-facing``, the public arguments are checked first (on an empty placeholder) and the rest runs
    behind the analyst-facing error boundary. The caller shows the release, then calls ``finish()``."""
    import polars as pl

    # the pipeline reads the mode of `securedp release`; these commands keep their own flag (main routes
    # `analyst_facing` to the release command's checks); they spend no delta, but may create the file's ledger
    options = argparse.Namespace(**{**vars(args), "analyst_facing": args.analyst})

    def release() -> pipeline.Released:
        ledgers = pipeline.preflight(options, Currency.EPSILON)
        return pipeline.release(options, ledgers, query.prepare(args.data), query.to_json())

    if not args.analyst:
        return release()
    check_public_arguments(lambda: query.prepare(pl.DataFrame()))
    return data_boundary(True, release, reading=True, passes=PASSES)


def analyze_command(args: argparse.Namespace) -> int:
    """``securedp analyze``: the exact report (data holder only), or the private one with ``--epsilon``."""
    group_by = [c for text in args.group_by for c in text.split(",") if c]
    options: dict[str, Any] = {
        "column": args.column, "bounds": _bounds(args.bounds),
        "candidates": None if args.candidates is None else [_pair(p) for p in args.candidates.split(",")],
        "release_epsilon": positive_rational(args.release_epsilon, "--release-epsilon"),
        "alpha": to_rational(args.alpha, "--alpha")}
    plan = ReportPlan.of(**options)  # checked before anything is read or drawn
    encoding = check_encoding(args.encoding)
    if args.epsilon is None:
        if args.analyst:
            raise commands.Failure("the exact analysis reads the raw data and is not private: with "
                                   "--analyst-facing, give --epsilon (a private contribution histogram)")
        given = [flag for flag, value in [("--budget-file", args.budget_file), ("--budget", args.budget),
                                          ("--audit-log", args.audit_log), ("--seed-file", args.seed_file),
                                          ("--signing-key", args.signing_key),
                                          ("--groups-cap", args.groups_cap != "16"),
                                          ("--rows-cap", args.rows_cap != "16")] if value]
        if given:
            raise commands.Failure(f"{given[0]} applies to the private analysis (--epsilon); the exact analysis "
                                   "releases nothing")
        named = [args.id_column, *group_by, *([] if args.column is None else [args.column])]
        data = read_file(args.data, list(dict.fromkeys(named)), encoding=encoding)  # cells as text
        report = analyze_contributions(data, id_column=args.id_column, group_by=group_by,
                                       missing_keys=args.missing_keys, **options)
    else:
        query = HistogramQuery(args.id_column, tuple(group_by), positive_rational(args.epsilon, "--epsilon"),
                               to_int(args.groups_cap, "--groups-cap"), to_int(args.rows_cap, "--rows-cap"), encoding,
                               args.analyst, args.missing_keys)
        released = _run(args, query)
        report = plan.from_histogram(released.release)
        released.show((json.dumps(report.record(), indent=2) if args.json else show_report(report)) + "\n")
        return released.finish()
    print(json.dumps(report.record(), indent=2) if args.json else show_report(report))
    return 0


def bounds_command(args: argparse.Namespace) -> int:
    """``securedp bounds``: the private bounds of one column, as a release."""
    try:
        low, high = (int(p) for p in args.exponents.split(","))
    except ValueError:
        raise commands.Failure(f"--exponents: expected two integers e,E, got {args.exponents!r}") from None
    try:
        q_lo, q_hi = (to_rational(q, "--quantiles") for q in args.quantiles.split(","))
    except ValueError:
        raise commands.Failure(f"--quantiles: expected two levels Q1,Q2, got {args.quantiles!r}") from None
    query = BoundsQuery(args.column, positive_rational(args.epsilon, "--epsilon"), args.id_column,
                        to_int(args.max_contributions, "--max-contributions"), args.method, (low, high),
                        (q_lo, q_hi), to_rational(args.beta, "--beta"), check_encoding(args.encoding), args.missing,
                        None if args.fill is None else to_rational(args.fill, "--fill"), args.analyst)
    released = _run(args, query)
    release = released.release
    if args.json:
        released.show(json.dumps(release.record(), indent=2) + "\n")
    else:
        lo, hi = release.value
        assert release.epsilon is not None  # a bounds release is epsilon-DP
        method, epsilon = release.parameters["method"], display_rational(release.epsilon)
        released.show(f"bounds   {exact_text(lo)},{exact_text(hi)}   (--bounds {exact_text(lo)},{exact_text(hi)})\n"
                      f"  method {method}, epsilon {epsilon} (private)\n")
    return released.finish()


def _down(q: Fraction, places: int) -> str:
    return exact_text(Fraction(q.numerator * 10**places // q.denominator, 10**places))


def _up(q: Fraction, places: int) -> str:
    return exact_text(Fraction(-(-q.numerator * 10**places // q.denominator), 10**places))


def _percent_down(q: Fraction) -> str:
    return _down(q * 100, 2) + "%"


def show_report(report: ContributionReport) -> str:
    """The report as text: exact counts; fractions kept rounded down, errors rounded up (to 2 places); a private
    report's figures are estimates, each marked ``~``, and what its thresholds hid is said."""
    estimate = "" if report.release is None else "~"
    lines = [f"contribution analysis ({report.label})",
             f"  rows {estimate}{_up(report.rows, 0)}, persons {estimate}{_up(report.persons, 0)}, "
             f"cells {estimate}{_up(report.cells, 0)}",
             "  groups per person: " + _distribution(report.groups_per_person),
             "  rows per (person, group): " + _distribution(report.rows_per_pair)]
    lines += [f"  read as 0: {u.zeroed} of {u.bins} bins of {u.part} (noisy count at most {u.threshold}); their "
              f"noisy counts add up to ~{_up(u.hidden, 0)} {'pairs' if u.part.startswith('groups') else 'rows'}, "
              f"against ~{_up(u.kept, 0)} in the bins kept" for u in report.unseen]
    lines.append(f"  predicted error per cell at release epsilon {display_rational(report.release_epsilon)}, level "
                 f"1 - {display_rational(report.alpha)} (bias + noise half-width; kept: rounded down, errors: up)")
    has_sum = any(c.sum_error is not None for c in report.candidates)
    header = f"  {'max_groups':>10} {'max_rows':>8} {'rows kept':>10} {'persons whole':>13} {'count error':>12}"
    lines.append(header + (f" {'sum error':>14}" if has_sum else ""))
    for c in report.candidates:
        mark = "  <- recommended" if c == report.recommended else ""
        row = (f"  {c.max_groups:>10} {c.max_rows:>8} {estimate + _percent_down(c.rows_kept):>10} "
               f"{estimate + _percent_down(c.persons_whole):>13} {estimate + _up(c.count_error, 2):>12}")
        if c.sum_error is not None:
            row += f" {estimate + _up(c.sum_error, 2):>14}"
        lines.append(row + mark)
    what = "sum" if has_sum else "count"
    lines.append(f"  the predicted errors give the {what} all of --release-epsilon "
                 f"{display_rational(report.release_epsilon)}; a table of several aggregations splits its epsilon "
                 f"among them (see the shares of --dry-run): give --release-epsilon the share the {what} will get")
    r = report.recommended
    if r is None:
        lines.append(f"no recommendation: {report.withheld}")
        return "\n".join(lines)
    lines.append(f"recommended: --max-groups {r.max_groups} --max-rows {r.max_rows} "
                 f"(smallest predicted {what} error per cell)")
    if r.max_rows > 1:
        lines.append(f"  with --max-rows {r.max_rows}, a mean (or any statistic over rows) weights each person by the "
                     f"rows they keep, up to {r.max_rows}; --max-rows 1 weights every person once")
    return "\n".join(lines)


def _distribution(counts: dict[int, int]) -> str:
    shown = [f"{k}: {n}" for k, n in counts.items() if n]
    return ", ".join(shown) if shown else "(none)"
