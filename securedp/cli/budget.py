"""The command's budget file (:mod:`securedp.ledger.budget_file`, re-exported under its former name), the
line that states it after a release, ``securedp budget FILE``, which shows it, and ``securedp budget create FILE
--epsilon E [--delta D]`` (or ``--rho R``), which creates one on purpose, with nothing spent.

``Budget`` here is the state of a budget file (:class:`~securedp.ledger.audit_record.BudgetState`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from securedp.hazmat.exact.rational import display_rational, format_rational, positive_rational
from securedp.ledger.audit_record import BudgetState as Budget
from securedp.ledger.audit_record import Currency
from securedp.ledger.budget import delta_rational
from securedp.ledger.budget_file import FORMAT, BudgetError, BudgetFile, read_budget

__all__ = ["FORMAT", "Budget", "BudgetError", "BudgetFile", "add_command", "budget_line"]


def budget_line(budget: Budget) -> str:
    """``spent S of T, remaining R (currency)``: a budget after a release, for reading (exact in ``--json``)."""
    return (f"spent {display_rational(budget.spent)} of {display_rational(budget.total)}, "
            f"remaining {display_rational(budget.remaining)} ({budget.currency})")


def add_command(sub: Any) -> None:
    """Register ``budget`` on the subparsers ``sub`` of the ``securedp`` command."""
    show = sub.add_parser("budget", help="show a budget file: total, spent, remaining, its delta ledger (or create "
                                         "one: budget create FILE --epsilon E --delta D)")
    show.add_argument("file", nargs="+", metavar="[create] FILE",
                      help="the budget file (--budget-file of the releases); `create FILE` makes a new one")
    show.add_argument("--epsilon", help="create: the total epsilon, exact (1, 1/2, 0.5)")
    show.add_argument("--rho", help="create: a zCDP budget of this total rho instead")
    show.add_argument("--delta", help="create: also a delta ledger of this total, exact (1e-6), for the tables with "
                                      "private keys (--delta)")
    show.add_argument("--json", action="store_true", help="print its fields exactly, as the file stores them")
    show.set_defaults(run=budget_command)


def _usage(message: str) -> int:
    print(f"securedp: error: {message} (see `securedp budget --help`)", file=sys.stderr)
    return 2


def budget_command(args: argparse.Namespace) -> int:
    """``securedp budget FILE``: the file, checked as a release checks it (a hand-edited file is refused),
    shown; nothing is charged or written. ``securedp budget create FILE --epsilon E [--delta D]`` (or ``--rho``):
    a new file of that total with nothing spent (:meth:`BudgetFile.create`: an existing file is refused)."""
    words, given = args.file, [f for f, v in (("--epsilon", args.epsilon), ("--rho", args.rho),
                                              ("--delta", args.delta)) if v is not None]
    if words[0] == "create" and len(words) == 2:
        if (args.epsilon is None) == (args.rho is None):
            return _usage("budget create needs its total: exactly one of --epsilon E and --rho R")
        currency = Currency.EPSILON if args.rho is None else Currency.RHO
        total = positive_rational(args.epsilon if args.rho is None else args.rho, f"--{currency.value}")
        delta = None if args.delta is None else delta_rational(args.delta, "--delta")
        BudgetFile(words[1], total, currency.value, delta).create()
        args.file = words[1]
    elif len(words) != 1:
        return _usage("give one budget file to show, or `create FILE --epsilon E [--delta D]`")
    elif given:
        return _usage(f"{given[0]} creates a budget file: securedp budget create FILE --epsilon E [--delta D]")
    else:
        args.file = words[0]
    state = read_budget(args.file)
    if args.json:
        fields: dict[str, Any] = {"currency": state.currency.value, "total": format_rational(state.total),
                                  "spent": format_rational(state.spent),
                                  "remaining": format_rational(state.remaining)}
        if state.delta_total is not None:
            fields.update(delta_total=format_rational(state.delta_total),
                          delta_spent=format_rational(state.delta_spent),
                          delta_remaining=format_rational(state.delta_total - state.delta_spent))
        pending = {} if state.pending is None else {"pending": {"writer": state.pending.writer,
                                                                "record": state.pending.record}}
        print(json.dumps({**fields, "ledger": state.ledger, **pending}, indent=1))
        return 0
    lines = [f"{args.file}: a budget in {state.currency} ({FORMAT}, ledger {state.ledger})",
             f"  total      {display_rational(state.total)}",
             f"  spent      {display_rational(state.spent)}",
             f"  remaining  {display_rational(state.remaining)}"]
    if state.delta_total is None:
        lines.append("  delta      none (no delta ledger: a table with private keys cannot be charged to it)")
    else:
        lines.append(f"  delta      total {display_rational(state.delta_total)}, spent "
                     f"{display_rational(state.delta_spent)}, remaining "
                     f"{display_rational(state.delta_total - state.delta_spent)}")
    if state.pending is not None:
        lines.append("  pending    the record of the last charge may not be in its audit log yet (a release is in "
                     "progress, or died after its charge): the next release with that log appends it if it is missing")
    print("\n".join(lines))
    return 0
