"""What each subcommand of ``securedp`` does; :mod:`securedp.cli.main` parses the arguments."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from fractions import Fraction
from typing import Any, Iterator

from securedp.audit.log import AuditLog
from securedp.audit.query import STATISTICS, Query
from securedp.audit.replay import read_seed, replay_log
from securedp.audit.table import read_column
from securedp.audit.verify import verify_log
from securedp.cli.budget import Budget, BudgetFile
from securedp.cli.show import show_release
from securedp.hazmat.bits.chacha import ChaChaSource
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import positive_rational, to_int, to_rational
from securedp.mechanisms.release import jsonable

STAT_CHOICES = frozenset(STATISTICS)


class Failure(Exception):
    """A failure to report as one line with exit status 1."""


def _numbers(text: str | None, name: str) -> tuple[Fraction, ...] | None:
    if text is None:
        return None
    parts = [p for p in text.split(",")]
    if any(not p.strip() for p in parts):
        raise Failure(f"--{name}: expected comma-separated numbers, got {text!r}")
    return tuple(to_rational(p, f"--{name}") for p in parts)


def _bin_edges(text: str | None) -> tuple[Fraction, ...] | None:
    try:
        return _numbers(text, "bins")
    except ValueError as error:
        raise Failure(f"{error} (bins are numeric edges; for labels such as north,south use --categories)") from None


def _query(args: argparse.Namespace) -> Query:
    bounds = _numbers(args.bounds, "bounds")
    if bounds is not None and len(bounds) != 2:
        raise Failure(f"--bounds: expected LO,HI, got {args.bounds!r}")
    return Query(
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
    ).check()


@contextlib.contextmanager
def _charged(args: argparse.Namespace, currency: str, cost: Fraction) -> Iterator[Budget | None]:
    if args.budget_file is None:
        if args.budget is not None:
            raise Failure("--budget needs --budget-file")
        yield None
        return
    with BudgetFile(args.budget_file, args.budget, currency).charge(cost) as state:
        yield state


def _source(args: argparse.Namespace) -> RandomSource | None:
    """A fresh, uniquely labelled substream of the seed file's stream, or ``None`` for the system source."""
    if args.seed_file is None:
        return None
    return ChaChaSource(read_seed(args.seed_file)).substream(f"release-{os.urandom(16).hex()}")


def release(args: argparse.Namespace) -> int:
    """``securedp release``: validate, charge the budget file, draw, log, print.

    The release is priced in ``epsilon`` (``--epsilon``, pure DP) or in
    ``rho`` (``--rho``, zCDP); a budget file counts one of the two and
    refuses a release priced in the other.
    """
    query = _query(args)
    prepared = query.prepare(read_column(args.data, query.column, query.id_column))
    cost = prepared.epsilon if query.currency == "epsilon" else prepared.rho
    if cost is None or cost != query.cost:  # the mechanisms price exactly what was asked
        raise Failure(f"{query.statistic} is not priced in {query.currency}")
    source = _source(args)
    with _charged(args, query.currency, cost) as budget:
        log = None if args.audit_log is None else AuditLog(args.audit_log, writer=None if budget is None else budget.ledger)
        result = prepared.execute(source)
        record: dict[str, Any] = {**result.record(), "query": query.to_json()}
        if budget is not None:
            record.update(
                jsonable(
                    {
                        "budget_kind": budget.currency,
                        "total": budget.total,
                        "spent": budget.spent,
                        "remaining": budget.remaining,
                    }
                )
            )
        entry = None if log is None else log.append(record)
    if args.json:
        print(json.dumps(record, indent=2))
    else:
        print(show_release(result, query, budget))
        if entry is not None:
            print(f"  audit    record {entry['seq']} appended to {args.audit_log} (hash {entry['hash'][:16]}…)")
    return 0


def verify(args: argparse.Namespace) -> int:
    """``securedp audit verify``: report the first bad record, or the head hash."""
    report = verify_log(args.log, expected_head=args.head)
    if not report.ok:
        raise Failure(f"{args.log}: {report.problem}")
    print(f"{args.log}: OK, {report.valid} records, chain intact, budget arithmetic exact")
    print(f"head {report.head}")
    return 0


def replay(args: argparse.Namespace) -> int:
    """``securedp audit replay``: re-derive every release; fail on the first difference."""
    results = replay_log(args.log, read_seed(args.seed_file), args.data)
    for result in results:
        if result.skipped:
            print(f"line {result.line}: {result.statistic}: skipped (a budget charge, not a release)")
        else:
            print(f"line {result.line}: {result.statistic}: {'reproduced exactly' if result.ok else 'DIFFERS'}")
    bad = next((r for r in results if not r.ok), None)
    if bad is not None:
        raise Failure(f"{args.log}: line {bad.line}: {bad.problem}")
    releases = sum(not r.skipped for r in results)
    skipped = len(results) - releases
    note = f" ({skipped} partition records skipped)" if skipped else ""
    print(f"{args.log}: all {releases} releases reproduced exactly from the seed and {args.data}{note}")
    return 0


def demo(args: argparse.Namespace) -> int:
    """``securedp demo``: see :mod:`securedp.cli.demo`."""
    from securedp.cli.demo import run_demo

    return run_demo()


def selftest(args: argparse.Namespace) -> int:
    """``securedp selftest``: see :mod:`securedp.audit.selftest`."""
    from securedp.cli.selftest import run_selftest

    return run_selftest(args.draws, args.plot)
