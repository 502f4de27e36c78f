"""What each subcommand of ``securedp`` does; :mod:`securedp.cli.main` parses the arguments."""

from __future__ import annotations

import argparse
import json
from fractions import Fraction
from typing import Any

from securedp.audit.kept import kept_path
from securedp.audit.replay import NOT_REPLAYABLE, read_seed, replay_log
from securedp.audit.signing import load_public_key, load_signing_key, make_head, write_key_pair
from securedp.audit.verify import verify_log
from securedp.cli import pipeline
from securedp.cli.pipeline import Failure
from securedp.cli.show import counted, show_release
from securedp.engines.protocol import MISSING_KEYS
from securedp.hazmat.exact.bounds import levels
from securedp.hazmat.exact.rational import display_rational, exact_text, positive_rational, to_int, to_rational
from securedp.ledger.audit_record import Currency
from securedp.ledger.budget_file import read_budget
from securedp.ledger.release import PreparedRelease
from securedp.reading.files import check_encoding
from securedp.reading.types import DECLARED_TYPES, declared_schema, typed_steps
from securedp.session.recording import holds
from securedp.tables.plan import ROWS, width_text
from securedp.tables.query import Query
from securedp.tables.spec import STATISTICS as REGISTRY
from securedp.tables.table import CellRoute

STAT_CHOICES = frozenset(REGISTRY.commands)


def stat_choices() -> tuple[str, ...]:
    """``--stat``'s choices: the statistics of one column of :data:`securedp.tables.spec.STATISTICS`, sorted."""
    return tuple(sorted(REGISTRY.commands))


def taking(option: str) -> tuple[str, ...]:
    """The statistics of ``--stat`` that take ``option`` (``trim``, ``fallback``): the command's help names them."""
    return REGISTRY.taking(option, commands=True)


__all__ = ["STAT_CHOICES", "Failure", "parse_schema"]


def add_missing_keys_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--missing-keys raise|drop``: one option, one spelling, for every command that reads group keys
    (:data:`securedp.engines.protocol.MISSING_KEYS`)."""
    parser.add_argument("--missing-keys", default="raise", choices=list(MISSING_KEYS),
                        help="rows whose --group-by value is missing or blank: raise (default) or drop them")


def parse_schema(text: str | None) -> dict[str, str]:
    """``--schema hours:int,pid:text`` as declared column types (:func:`securedp.reading.types.declared_schema`);
    a column name holding a comma or colon cannot be declared here (use the Python API)."""
    if text is None:
        return {}
    pairs = {}
    for part in text.split(","):
        column, sep, declared = part.rpartition(":")
        if not sep or not column:
            raise Failure(f"--schema: expected COLUMN:TYPE[,COLUMN:TYPE...] with TYPE one of "
                          f"{', '.join(DECLARED_TYPES)}, got {part!r}")
        pairs[column] = declared
    return declared_schema(pairs)


def _numbers(text: str | None, name: str) -> tuple[Fraction, ...] | None:
    if text is None:
        return None
    parts = text.split(",")
    if any(not p.strip() for p in parts):
        raise Failure(f"--{name}: expected comma-separated numbers, got {text!r}")
    return tuple(to_rational(p, f"--{name}") for p in parts)


def _levels(text: str | None) -> tuple[Fraction, ...] | None:
    """``--levels Q1,Q2,...``, counted against :data:`~securedp.hazmat.exact.bounds.MAX_LEVELS` before any level is
    read (their order and range are the query's to check)."""
    if text is not None:
        levels(text.count(",") + 1, "--levels")
    return _numbers(text, "levels")


def _bin_edges(text: str | None) -> tuple[Fraction, ...] | None:
    try:
        return _numbers(text, "bins")
    except ValueError as error:
        raise Failure(f"{error} (bins are numeric edges; for labels such as north,south use --categories)") from None


def one_column_query(args: argparse.Namespace) -> Query:
    """The :class:`~securedp.tables.query.Query` of ``release --column --stat``, from the options only."""
    bounds = _numbers(args.bounds, "bounds")
    if bounds is not None and len(bounds) != 2:
        raise Failure(f"--bounds: expected LO,HI, got {args.bounds!r}")
    schema = parse_schema(getattr(args, "schema", None))
    if args.q is not None and "," in args.q:
        raise Failure(f"--q takes one level, got {args.q!r}: several quantiles are --stat quantiles --levels Q1,Q2,...")
    return Query.of_column(
        statistic=args.stat,
        column=args.column,
        epsilon=None if args.epsilon is None else positive_rational(args.epsilon, "--epsilon"),
        rho=None if args.rho is None else positive_rational(args.rho, "--rho"),
        bounds=None if bounds is None else (bounds[0], bounds[1]),
        q=None if args.q is None else to_rational(args.q, "--q"),
        bins=_bin_edges(args.bins),
        categories=None if args.categories is None else tuple(args.categories.split(",")),
        max_contributions=to_int(args.max_contributions, "--max-contributions"),
        id_column=args.id_column,
        encoding=check_encoding(args.encoding),
        lattice=None if args.step is None else positive_rational(args.step, "--step"),
        missing=args.missing, fill=None if args.fill is None else to_rational(args.fill, "--fill"),
        schema=tuple(schema.items()), analyst_facing=bool(args.analyst_facing),
        trim=None if args.trim is None else to_rational(args.trim, "--trim"),
        fallback=None if args.fallback is None else to_rational(args.fallback, "--fallback"),
        qs=_levels(args.levels),
    ).check()


def release(args: argparse.Namespace) -> int:
    """``securedp release --column --stat``: the one-cell table of the file's column, by the command's one
    pipeline (:mod:`securedp.cli.pipeline`: checked, charged, drawn, recorded), then printed.

    The release is priced in ``epsilon`` (``--epsilon``, pure DP) or in
    ``rho`` (``--rho``, zCDP); a budget file counts one of the two and
    refuses a release priced in the other. ``--json`` prints the record as
    the audit log stores it (exact: integers, ``"num/den"`` strings); the
    text output writes values as :func:`securedp.cli.show.number` does.
    """
    query = one_column_query(args)
    ledgers = None if args.dry_run else pipeline.preflight(args, query.currency)
    prepared = query.prepare(args.data)
    if ledgers is None:
        print("\n".join(dry_run_lines(f"{query.statistic} of column {query.column!r}", query.currency, query.cost,
                                       prepared)))
        return 0
    released = pipeline.release(args, ledgers, prepared, query.to_json())
    recorder = released.recorder
    if args.json:
        released.show(json.dumps(recorder.record, indent=2) + "\n")
    else:
        typed = typed_steps(args.data, [query.column], dict(query.schema)).get(query.column)
        lines = [show_release(released.release, query, recorder.budget, typed)]
        entry = recorder.entry
        if entry is not None:
            signed = "" if "sig" not in entry else f", signed by {entry['signer'][:16]}…"
            lines.append(f"  audit    record {entry['seq']} appended to {args.audit_log} (hash {entry['hash'][:16]}…"
                         f"{signed})")
        released.show("\n".join(lines) + "\n")
    return released.finish()


DRY_RUN_ALPHA = Fraction(1, 20)


def dry_run_lines(what: str, currency: Currency, cost: Fraction, prepared: PreparedRelease) -> list[str]:
    """The plan of a one-column release (``--dry-run``): its cost and its accuracy at level 0.95, from the
    public parameters alone; nothing is drawn or charged and no record is written."""
    lines = [f"{what}: dry run, nothing drawn, nothing charged, no audit record",
             f"  cost     {currency} {display_rational(cost)}"]
    plan = prepared.route.table.plan if isinstance(prepared.route, CellRoute) else None
    step = None if plan is None or not plan.outputs else plan.outputs[0].lattice_step
    if step is not None:
        lines.append(f"  lattice  step {exact_text(step)}")
    accuracy = {} if prepared.accuracy is None else prepared.accuracy(DRY_RUN_ALPHA)
    at = prepared.value_halfwidth
    widths = {n: at(DRY_RUN_ALPHA, n) for n in ROWS} if at is not None else {}
    if widths and all(w is not None for w in widths.values()):
        squared = " squared" if prepared.statistic == "variance" else ""
        lines.append(f"  accuracy the {prepared.statistic} +/- (in the column's units{squared}) with probability 0.95, "
                     "if the column keeps")
        lines += [f"  {n:>14,} rows: +/- {width_text(w)}" for n, w in widths.items() if w is not None]
        lines.append("  (rows kept after --max-contributions; noise only) and its noisy parts:")
    for name, width in accuracy.items():
        unit = "rows" if name.startswith("rank_error") or name == "count" else \
            "(column units squared)" if name.endswith("squares") else "(column units)"
        lines.append(f"  accuracy {name or 'value'} +/- {width_text(width)} {unit} with probability 0.95")
    return lines


def _head_options(args: argparse.Namespace) -> dict[str, Any]:
    """``verify_log`` options from ``--public-key`` and ``--head`` (a 64-hex hash, or a signed head file)."""
    options: dict[str, Any] = {}
    if getattr(args, "public_key", None) is not None:
        options["public_key"] = load_public_key(args.public_key)
    head = getattr(args, "head", None)
    if head is not None:
        if len(head) == 64 and all(c in "0123456789abcdef" for c in head):
            options["expected_head"] = head
        elif "public_key" not in options:
            raise Failure("--head FILE (a signed head) needs --public-key (the signer's key, obtained out of band)")
        else:
            options["head"] = head
    return options


def verify(args: argparse.Namespace) -> int:
    """``securedp audit verify``: report the first bad record, or the head hash and what the log is worth."""
    report = verify_log(args.log, **_head_options(args))
    missing = [f"{counted(len(report.kept), 'record')} kept in {kept_path(args.log)} (a charge that stands, whose "
               "append failed) not in the log"] if report.kept else []
    if getattr(args, "budget_file", None) is not None:
        pending = read_budget(args.budget_file).pending
        if pending is not None and not holds(lambda writer: (e["record"] for e in reversed(report.entries)
                                                             if e["writer"] == writer), pending, [pending.writer]):
            missing.append(f"the budget file {args.budget_file} holds a charge whose record is not in the log (a "
                           "release died after its charge, or could not append its record)")
    if not report.ok:
        raise Failure("; ".join([f"{args.log}: {report.problem}", *missing]))
    print(f"{args.log}: OK, {counted(report.valid, 'record')}, chain intact, budget arithmetic exact")
    print(report.trust)
    print(f"head {report.head}")
    if missing:
        raise Failure(f"{args.log} is incomplete: {'; '.join(missing)}; the next release with this log and budget "
                      "file appends them (securedp audit verify lists what it cannot)")
    return 0


def keygen(args: argparse.Namespace) -> int:
    """``securedp audit keygen``: a new Ed25519 signing key (mode 0600) and its public key for reviewers."""
    private, public, text = write_key_pair(args.out)
    print(f"signing key written to {private} (mode 0600): "
          "give it to the party that runs the releases, never to reviewers")
    print(f"public key written to {public}; give reviewers this text, by a channel the analyst does not control:")
    print(text)
    return 0


def head(args: argparse.Namespace) -> int:
    """``securedp audit head``: verify the log and sign a head statement (record count and last hash)."""
    key = load_signing_key(args.key)
    report = verify_log(args.log, public_key=key.public_key())
    if not report.ok:
        raise Failure(f"{args.log}: {report.problem}")
    statement = make_head(key, report.valid, report.head)
    text = json.dumps(statement, sort_keys=True, separators=(",", ":"))
    if args.out is None:
        print(text)
    else:
        with open(args.out, "x", encoding="utf-8") as handle:
            handle.write(text + "\n")
        print(f"signed head of {counted(report.valid, 'record')} written to {args.out}")
    return 0


def replay(args: argparse.Namespace) -> int:
    """``securedp audit replay``: re-derive every release; fail on the first difference (or, when nothing differs,
    on the first release that cannot be re-derived, labelled not replayable with its reason)."""
    results = replay_log(args.log, read_seed(args.seed_file), args.data, **_head_options(args))
    for result in results:
        if result.skipped:
            print(f"line {result.line}: {result.statistic}: skipped (a budget charge, not a release)")
        elif result.ok:
            data = (", input commitment matches the data" if result.data_matches else
                    ", its input commitment (of an earlier record format) NOT CHECKED" if result.unchecked_commitment
                    else "")
            print(f"line {result.line}: {result.statistic}: reproduced exactly{data}")
        elif not result.replayable:
            why = str(result.problem).removeprefix(NOT_REPLAYABLE + ": ")
            print(f"line {result.line}: {result.statistic}: NOT REPLAYABLE ({why})")
        else:
            differs = ("DATA DIFFERS" if result.data_matches is False else
                       "NOT REPRODUCED BY THIS VERSION (an earlier record format)" if result.earlier else "DIFFERS")
            print(f"line {result.line}: {result.statistic}: {differs}")
    bad = next((r for r in results if not r.ok and r.replayable), None) or next((r for r in results if not r.ok),
                                                                                  None)
    if bad is not None:
        reproduced = sum(r.ok and not r.skipped for r in results)
        unreplayable = sum(not r.replayable for r in results)
        tally = (f" ({reproduced} reproduced exactly, {unreplayable} not replayable, nothing differs)"
                 if bad.replayable is False else "")
        raise Failure(f"{args.log}: line {bad.line}: {bad.problem}{tally}")
    releases = sum(not r.skipped for r in results)
    skipped = len(results) - releases
    note = f" ({counted(skipped, 'budget charge')} that release nothing skipped)" if skipped else ""
    every = "the one release" if releases == 1 else f"all {releases:,} releases"
    print(f"{args.log}: {every} reproduced exactly from the seed and {args.data}{note}")
    return 0


def report(args: argparse.Namespace) -> int:
    """``securedp audit report``: write the reviewer's HTML page (:mod:`securedp.audit.report`)."""
    from securedp.audit.report import write_report

    if (args.seed_file is None) != (args.data is None):
        raise Failure("--seed-file and --data go together: both to replay the releases in the report, or neither")
    seed = None if args.seed_file is None else read_seed(args.seed_file)
    written = write_report(args.log, args.output, seed=seed, data=args.data, **_head_options(args))
    print(f"{args.output}: report of {counted(len(written.entries), 'record')} ({written.headline})")
    return 0 if written.ok else 1  # 1 when a line does not verify or a replayed release does not reproduce


def demo(_args: argparse.Namespace) -> int:
    """``securedp demo``: see :mod:`securedp.cli.demo`."""
    from securedp.cli.demo import run_demo

    return run_demo()


def selftest(args: argparse.Namespace) -> int:
    """``securedp selftest``: see :mod:`securedp.hazmat.selftest`."""
    from securedp.cli.selftest import run_selftest

    return run_selftest(args.draws, args.plot)
