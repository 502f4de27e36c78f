"""The ``securedp`` command: ``release``, ``analyze``, ``bounds``, ``budget``, ``demo``, ``selftest``, ``audit ...``.

Every failure is reported as one line, ``securedp: error: <message>``, on
standard error: exit status 2 for a usage error (unknown option, missing
argument), 1 for anything else (unreadable file, bad column or number,
exhausted budget, failed verification or replay). No traceback is printed.

``securedp release --analyst-facing`` runs the release as an analyst-facing
session does (:mod:`securedp.session.boundary`): unusable records, ids
and keys are dropped instead of refused, and every public argument is
checked before the data file is opened; from then on any failure that is
not about the budget file, the audit log or the command's own options is
reported as the one fixed line of :class:`~securedp.ledger.errors.DataRefused`,
naming no value, row, column type or count.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from securedp._version import __version__
from securedp.audit.log import AuditLogError
from securedp.cli import budget, commands, planning, table_command
from securedp.ledger.budget_file import BudgetError
from securedp.ledger.errors import BudgetExceeded, IncompatibleCost
from securedp.session.boundary import check_public_arguments, data_boundary

PUBLIC_STATE = (commands.Failure, BudgetError, BudgetExceeded, IncompatibleCost, AuditLogError, BrokenPipeError)
"""What ``--analyst-facing`` reports as it is after the data was read: the command's own failures (about its
options), the budget file's and the audit log's errors, a reader of the output that went away; never raised by
a reader of the data."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"securedp: error: {message} (see `{self.prog} --help`)\n")


def add_reading_options(parser: argparse.ArgumentParser) -> None:
    """How the values of the file are read: ``--missing``, ``--fill``, ``--schema`` (every command that reads a
    value column)."""
    parser.add_argument("--missing", default="raise", choices=["raise", "drop", "impute"],
                        help="unusable values (blank, not a number): refuse naming the first (default), drop them, "
                             "or impute --fill")
    parser.add_argument("--fill", help="the public value imputed with --missing impute")
    parser.add_argument("--schema", help="declared column types: COLUMN:TYPE,... with TYPE int, number or text "
                                         "(a CSV file's cells are text: hours:int keeps whole hours whole)")


def build_parser() -> argparse.ArgumentParser:
    """The parser of the whole command (also used to document it)."""
    parser = _Parser(prog="securedp", description="Exact differential privacy from the command line.")
    parser.add_argument("--version", action="version", version=f"securedp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_release(sub)
    planning.add_commands(sub)  # analyze, bounds
    budget.add_command(sub)
    demo = sub.add_parser("demo", help="several releases on the built-in example dataset")
    demo.set_defaults(run=commands.demo)
    test = sub.add_parser("selftest", help="goodness-of-fit checks of every sampler on this machine")
    test.add_argument("--draws", type=int, default=None, help="draws per sampler (default: 1,000,000)")
    test.add_argument("--plot", help="also save a figure of empirical against exact probabilities (needs matplotlib)")
    test.set_defaults(run=commands.selftest)
    _add_audit(sub)
    return parser


def _add_release(sub: argparse._SubParsersAction[_Parser]) -> None:
    """``securedp release``: one statistic of a column, or a grouped table (:mod:`securedp.cli.table_command`)."""
    rel = sub.add_parser("release", help="one private release from a CSV column, or a grouped table")
    rel.add_argument("data", help="CSV file with a header row (a table: also Parquet, or - for standard input)")
    rel.add_argument("--column", help="the column to release a statistic of")
    rel.add_argument("--stat", choices=commands.stat_choices(), help="the statistic")
    cost = rel.add_mutually_exclusive_group(required=True)
    cost.add_argument("--epsilon", help="pure-DP cost, exact: 0.5, 1/3, 1e-2 (Laplace-type noise)")
    cost.add_argument(
        "--rho", help="zCDP cost instead, exact (discrete Gaussian noise; count/sum/mean/variance/histogram)"
    )
    rel.add_argument("--bounds", help="public bounds on one value: LO,HI")
    rel.add_argument("--step", help="the lattice step of --bounds (1 keeps whole numbers whole; CSV cells are text, "
                                    "so the default comes from the bounds)")
    rel.add_argument("--q", help="the quantile, in [0, 1] (for --stat quantile)")
    rel.add_argument("--levels", help="several quantiles, each once, increasing, each in [0, 1]: deciles are "
                                      "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9 (for --stat quantiles; three or more by the "
                                      "recursive split, epsilon / ceil(log2(levels + 1)) per depth)")
    trims = ", ".join(f"--stat {name} and every --{name.replace('_', '-')}" for name in commands.taking("trim"))
    rel.add_argument("--trim", help="the trim level, in [0, 1/2): the mean between the TRIM and 1 - TRIM quantiles "
                                    f"({trims}; default 0.1)")
    rel.add_argument("--fallback", help="the selections' fallback probability, in [0, 1): about the chance that a "
                                        "cell without records releases the lattice point nearest LO + q (HI - LO), "
                                        "the middle of the bounds for a median "
                                        f"({', '.join(commands.taking('fallback'))}; default 3/4; 0: none)")
    rel.add_argument("--bins", help="histogram bin edges: E0,E1,...,Ek")
    rel.add_argument("--categories", help="histogram categories: A,B,... (cells compared verbatim)")
    rel.add_argument("--max-contributions", default="1", help="rows one person may contribute (default 1)")
    rel.add_argument("--id-column", help="person-id column: enforce --max-contributions per person")
    add_reading_options(rel)
    rel.add_argument("--encoding", default="utf-8",
                     help="the CSV file's text encoding (default utf-8, strictly; e.g. latin-1): never decoded lossily")
    rel.add_argument("--budget-file", help="JSON file persisting the total and spent budget")
    rel.add_argument(
        "--budget",
        help="the total budget, in the release's currency (epsilon or rho; creates --budget-file, must match it later)",
    )
    rel.add_argument(
        "--budget-delta",
        help="with --budget, give the new --budget-file a delta ledger of this total, exact (1e-6): what the tables "
             "with private keys (--delta) charged to it may spend; must match it later",
    )
    rel.add_argument("--audit-log", help="append the release to this hash-chained JSON-lines log")
    rel.add_argument("--signing-key", help="sign the audit record with this Ed25519 key (from `securedp audit keygen`)")
    rel.add_argument("--seed-file", help="32-byte seed (raw or hex) for a replayable ChaCha20 stream")
    rel.add_argument("--json", action="store_true", help="print the release record as JSON")
    rel.add_argument("--dry-run", action="store_true",
                     help="validate, price and print the release's plan (accuracy before release); draw nothing, "
                          "charge nothing, write no audit record")
    rel.add_argument("--analyst-facing", action="store_true",
                     help="withhold every error that may depend on the data (one fixed message), and drop "
                          "unusable records, ids and keys instead of refusing them")
    table_command.add_table_options(rel)
    rel.set_defaults(run=_release)


def _add_audit(sub: argparse._SubParsersAction[_Parser]) -> None:
    """``securedp audit verify | replay | report | keygen | head``."""
    audit = sub.add_parser("audit", help="sign, verify or replay an audit log")
    audit_sub = audit.add_subparsers(dest="audit_command", required=True, parser_class=_Parser)
    head_help = "a head hash published earlier (64 hex), or a signed head file (needs --public-key)"
    key_help = "the signer's public key (ed25519:... text or a file), obtained out of band: every record must verify"
    verify = audit_sub.add_parser(
        "verify", help="check the hash chain, the record formats, signatures and the budget arithmetic")
    verify.add_argument("log")
    verify.add_argument("--public-key", help=key_help)
    verify.add_argument("--head", help=head_help)
    verify.add_argument("--budget-file", help="a budget file whose ledger this log records: a charge it holds whose "
                        "record is not in the log (its release died) is reported")
    verify.set_defaults(run=commands.verify)
    replay = audit_sub.add_parser("replay", help="re-derive every release from the seed and the data")
    replay.add_argument("log")
    replay.add_argument("--seed-file", required=True)
    replay.add_argument("--data", required=True, help="the CSV file the releases were made from")
    replay.add_argument("--public-key", help=key_help)
    replay.add_argument("--head", help=head_help)
    replay.set_defaults(run=commands.replay)
    report = audit_sub.add_parser(
        "report", help="write a reviewer's HTML report: verification, budget over time, every release and its noise")
    report.add_argument("log")
    report.add_argument("-o", "--output", required=True, help="the HTML file to write (self-contained, no scripts)")
    report.add_argument("--public-key", help=key_help)
    report.add_argument("--head", help=head_help)
    report.add_argument("--seed-file", help="with --data: replay every release and show whether it reproduces")
    report.add_argument("--data", help="the CSV file the releases were made from (with --seed-file)")
    report.set_defaults(run=commands.report)
    keygen = audit_sub.add_parser(
        "keygen", help="create an Ed25519 signing key (KEY, mode 0600) and its public key (KEY.pub)")
    keygen.add_argument("--out", required=True, help="where to write the private key; never overwritten")
    keygen.set_defaults(run=commands.keygen)
    head = audit_sub.add_parser(
        "head", help="verify a signed log and print a signed head statement (count and last hash)")
    head.add_argument("log")
    head.add_argument("--key", required=True, help="the signing key of the log")
    head.add_argument("--out", help="write the statement to this new file instead of printing it")
    head.set_defaults(run=commands.head)


_NEGATIVE_VALUE = re.compile(r"-(?:\d|\.\d|inf|nan)", re.IGNORECASE)


def _option_strings(parser: argparse.ArgumentParser) -> tuple[set[str], set[str]]:
    """Every option string of ``parser`` and its subparsers, and those of them that take a value."""
    every: set[str] = set()
    valued: set[str] = set()
    for action in parser._actions:
        every.update(action.option_strings)
        if action.option_strings and action.nargs != 0:
            valued.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                child_every, child_valued = _option_strings(child)
                every |= child_every
                valued |= child_valued
    return every, valued


def attach_negative_values(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """``argv`` with each value that starts with a minus sign joined to its option: ``--bounds=-5,-1``.

    argparse takes a word such as ``-5,-1`` or ``-1e30,1e30`` after
    ``--bounds`` for an option and reports that ``--bounds`` has no value.
    Here, a word after an option that takes a value (or an abbreviation
    that only options taking a value begin with; argparse still reports an
    ambiguous one) is joined to it with ``=`` when it begins with a
    minus sign followed by a digit, a point and a digit, ``inf`` or ``nan``:
    no option of the command looks like that, so nothing else changes.
    Words after ``--`` are left alone.
    """
    every, valued = _option_strings(parser)
    out: list[str] = []
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            out.extend(words[i:])
            break
        if word.startswith("--") and "=" not in word and i + 1 < len(words) and _NEGATIVE_VALUE.match(words[i + 1]):
            matches = {word} if word in every else {o for o in every if o.startswith(word)}
            if matches and matches <= valued:
                out.append(f"{word}={words[i + 1]}")
                i += 2
                continue
        out.append(word)
        i += 1
    return out


_ID_LIKE = re.compile(r"(^|[_\W])(id|pid|uid|person|persons|user|customer|patient|subject|member)([_\W]|$)",
                      re.IGNORECASE)


def _warn_about_the_privacy_unit(args: argparse.Namespace) -> None:
    """Without ``--id-column`` each row is a person: say so when the file has a column named like an id."""
    if args.id_column is not None or args.data == "-":
        return
    from securedp.reading.files import column_names

    try:
        names = column_names(args.data, delimiter=getattr(args, "delimiter", ","))
    except Exception:  # the release itself reports an unreadable file
        return
    alike = [n for n in names if _ID_LIKE.search(n)]
    if alike:
        print(f"securedp: warning: no --id-column, so every row counts as a different person, but column "
              f"{alike[0]!r} looks like a person id: pass --id-column {alike[0]} if a person can have several "
              "rows", file=sys.stderr)


_TABLE_ONLY = {"keys": "--keys", "keys_file": "--keys-file", "delta": "--delta", "selection": "--selection",
               "output": "--output", "target": "--target", "auto_epsilon": "--auto-epsilon", "cell_rows": "--cell-rows",
               "memory_budget": "--memory-budget"}
_TABLE_DEFAULTS = {"max_groups": ("--max-groups", "1"), "max_rows": ("--max-rows", "1"),
                   "alpha": ("--alpha", "0.05"), "delimiter": ("--delimiter", ","),
                   "engine": ("--engine", "memory"), "missing_keys": ("--missing-keys", "raise"),
                   "grid": ("--grid", "1/100")}
_COLUMN_ONLY = {"bounds": "--bounds", "step": "--step", "q": "--q", "levels": "--levels", "bins": "--bins",
                "categories": "--categories"}


def _refuse_other_mode(args: argparse.Namespace, table: bool) -> None:
    """Refuse every option of the other mode (one statistic of one column, or a grouped table), naming the
    option that does apply, rather than ignoring it."""
    if table:
        given = [flag for name, flag in _COLUMN_ONLY.items() if getattr(args, name) is not None]
        if args.max_contributions != "1":
            given.append("--max-contributions")
        if given:
            raise commands.Failure(
                f"{given[0]} applies to one statistic of one column (--column/--stat), not to a table: in a table, "
                "bounds (and a step) go with each aggregation (--sum COLUMN:LO,HI[:STEP] ...) and the per-person "
                "bound is --max-groups/--max-rows")
        return
    given = [flag for name, flag in _TABLE_ONLY.items() if getattr(args, name, None) is not None]
    given += [flag for name, (flag, default) in _TABLE_DEFAULTS.items() if getattr(args, name, default) != default]
    if given:
        raise commands.Failure(
            f"{given[0]} applies to a grouped table (--group-by and aggregations such as --count), not to one "
            "statistic of one column (--column/--stat): "
            + ("the per-person bound here is --max-contributions" if given[0] in ("--max-groups", "--max-rows")
               else "the result is printed (or --json); drop the option" if given[0] == "--output"
               else "drop the option, or release a table"))


def _release(args: argparse.Namespace) -> int:
    """A grouped table if table options are given, else one statistic of one column.

    After a release made without ``--id-column``, a warning names a column that looks like a person id
    (an error stays one line: the warning follows a release, never a failure).
    """
    table = table_command.wants_table(args)
    _refuse_other_mode(args, table)
    if table:
        status = table_command.release_table(args)
    elif args.column is None or args.stat is None:
        raise commands.Failure("give --column and --stat (one statistic), or --group-by/--count/--sum ... (a table)")
    else:
        status = commands.release(args)
    _warn_about_the_privacy_unit(args)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command with ``argv`` (default ``sys.argv[1:]``) and return the exit status.

    Negative option values need no ``=``: ``--bounds -5,-1`` is read as
    ``--bounds=-5,-1`` (:func:`attach_negative_values`).
    """
    parser = build_parser()
    args = parser.parse_args(attach_negative_values(sys.argv[1:] if argv is None else argv, parser))
    try:
        if getattr(args, "analyst_facing", False):
            return _analyst_facing(args)
        return int(args.run(args))
    except BrokenPipeError:
        return _closed_output()
    except commands.Failure as failure:
        return _fail(str(failure))
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except (ValueError, TypeError, OSError, ArithmeticError, LookupError, AuditLogError, BudgetExceeded) as exc:
        return _fail(_one_line(exc))
    except Exception as exc:
        return _fail(f"internal error ({type(exc).__name__}): {_one_line(exc)}")


def _analyst_facing(args: argparse.Namespace) -> int:
    """``securedp release --analyst-facing``: the public arguments checked first, then the release behind the
    error boundary (see the module docstring)."""
    if table_command.wants_table(args):
        import polars as pl

        table = table_command.placeholder_bounds(table_command.table_query(args))  # COLUMN:auto is chosen later
        check_public_arguments(lambda: table.prepare(pl.DataFrame()))  # stops before reading the empty table
    elif args.column is not None and args.stat is not None:
        query = commands.one_column_query(args)  # the query of a one-column release, from the options only
        check_public_arguments(lambda: query.prepare({}))  # stops before reading the (empty) table
    return int(data_boundary(True, lambda: args.run(args), reading=True, passes=PUBLIC_STATE))


_PYTHON_WORDS = [  # the library's keyword arguments, as the command's flags (one place for every message)
    (re.compile(r"\bprepare_(\w+)\(\) got an unexpected keyword argument '(\w+)'"),
     lambda m: f"--{m.group(2).replace('_', '-')} does not apply to --stat {m.group(1).lower()}"),
    (re.compile(r"\bor pass unknown='drop'"), lambda _: "or run with --analyst-facing, which drops it"),
    (re.compile(r"\b(missing_keys|missing|selection|engine)='(\w+)'"),
     lambda m: f"--{m.group(1).replace('_', '-')} {m.group(2)}"),
    (re.compile(r"\b(fill|delta|keys|rho|epsilon|bins|categories|bounds|alpha)=(<[^>]*>)?"),
     lambda m: f"--{m.group(1)}" + (f" {m.group(2)}" if m.group(2) else "")),
    (re.compile(r"\b(max_contributions|max_groups|max_rows|id_column|group_by|keys_file)\b"),
     lambda m: "--" + m.group(1).replace("_", "-")),
    (re.compile(r"\bqs\[(\d+)\]"), lambda m: f"level {int(m.group(1)) + 1}"),  # several quantiles' levels
]


def cli_words(message: str) -> str:
    """A library message in the command's words: keyword arguments become flags (``missing='drop'`` is
    ``--missing drop``, ``delta=`` is ``--delta``), an unexpected keyword names the flag that does not apply."""
    for pattern, replace in _PYTHON_WORDS:
        message = pattern.sub(replace, message)
    return message


def _closed_output() -> int:
    """The reader of standard output went away (``securedp demo | head -1``): exit quietly, as a Unix tool
    killed by ``SIGPIPE`` does (status 141), with nothing more written to the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's flush at exit must not fail again
    except (OSError, ValueError):
        pass
    return 128 + 13


_ERRNO = re.compile(r"^\[Errno \d+\]\s*|\s*\(os error \d+\)")


def _os_text(exc: OSError) -> str:
    """An operating-system error as one plain line: ``noseed: no such file or directory``, without Python's
    ``[Errno 2]`` or Rust's ``(os error 2)``."""
    if exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror[0].lower()}{exc.strerror[1:]}"
    return _ERRNO.sub("", str(exc).strip())


def _one_line(exc: BaseException) -> str:
    text = (_os_text(exc) if isinstance(exc, OSError) else str(exc)).strip().splitlines()
    return cli_words(text[0]) if text else type(exc).__name__


def _fail(message: str, status: int = 1) -> int:
    print(f"securedp: error: {message}", file=sys.stderr)
    return status
