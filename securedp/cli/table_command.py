"""``securedp release`` for grouped tables: ``--group-by``, one or more aggregations, a table file or stdin.

::

    securedp release data.parquet --group-by region --count --sum income:0,200000 \\
        --mean age:0,120 --id-column person --max-groups 3 --epsilon 1 --delta 1e-9

Each aggregation option takes ``COLUMN:LO,HI`` (``:STEP`` may follow, the
lattice step; the default is derived from the bounds as in the Python API).
``--keys A,B,...`` (one group column) or ``--keys-file FILE`` (a CSV or
Parquet table of key combinations) makes the keys public; without them the
keys are private and ``--delta`` is required (selected by thresholding the
released ``--persons`` or ``--count``, with discrete Laplace noise at
``--epsilon`` and discrete Gaussian at ``--rho``; without a count by a
separate selection; ``--selection`` chooses). The input is CSV (UTF-8, with
or without BOM; ``--delimiter``), Parquet (by the ``.parquet`` suffix), or
``-`` for CSV on standard input. The table is written as CSV to standard
output, or to ``--output FILE`` (CSV, or JSON records for a ``.json``
suffix); ``--json`` prints the audit record instead. ``--engine spark``
reads the file with the Spark session of the standard Spark configuration
(``spark-submit``, ``SPARK_HOME``, ``spark-defaults.conf``) and computes the
aggregates there.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import json
import sys
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from securedp.cli import pipeline
from securedp.cli.auto_plan import auto_cost, auto_dry_run
from securedp.cli.budget import budget_line
from securedp.cli.commands import Failure, add_missing_keys_option, parse_schema
from securedp.cli.progress import Stages
from securedp.cli.show import split_lines
from securedp.cli.table_output import write_table
from securedp.engines.registry import DEFAULT, engine_named, engine_names
from securedp.hazmat.exact.rational import display_rational, positive_rational, to_int, to_rational
from securedp.planning.budget import CELL_ROWS
from securedp.reading.files import check_encoding, read_csv_bytes
from securedp.tables.plan import ROWS

if TYPE_CHECKING:  # the table modules load only when a table is released
    from securedp.tables.query import AggregationQuery
    from securedp.tables.query import Query as TableQuery


def _kinds(takes: tuple[str, ...] = ("nothing", "column", "level", "levels")) -> tuple[str, ...]:
    """The aggregation options (``--count``, ``--sum`` ...) of the kinds that take ``takes``: names of
    :data:`securedp.tables.spec.KINDS`, read when the command runs (a statistic registered later has its own)."""
    from securedp.tables.spec import KINDS

    return tuple(name for name, kind in KINDS.items() if kind.takes in takes)


SHAPES = {"level": "COLUMN:Q:LO,HI[:STEP]", "levels": "COLUMN:Q1,Q2,...:LO,HI[:STEP]"}
"""An aggregation option's value when it takes a level or several (else ``COLUMN:LO,HI[:STEP]``)."""


def wants_table(args: argparse.Namespace) -> bool:
    """True if the arguments ask for a grouped table rather than one statistic of one column."""
    return bool(args.group_by or any(getattr(args, k, None) for k in _kinds()))


def keys_option(text: str) -> list[str]:
    """The keys of ``--keys``: one CSV line, so a key holding a comma is quoted (``'"A, B",C'``).

    A key that begins or ends with a space is refused: it is what splitting ``"A, B"`` at its comma makes
    (the release would then hold noise-only rows for keys that exist nowhere); ``--keys-file`` takes any key.
    """
    keys = next(csv.reader([text]), [])
    padded = next((k for k in keys if k != k.strip()), None)
    if padded is not None or not keys:
        shown = f"the key {padded!r} begins or ends with a space" if padded is not None else "no key given"
        raise Failure(f"--keys: {shown}; a comma inside a key? quote that key, as in a CSV line "
                      "(--keys '\"Craftsmen, Foremen\",Sales'), or list the keys in --keys-file")
    return keys


def _keys(args: argparse.Namespace, group_by: tuple[str, ...]) -> tuple[tuple[Any, ...], ...] | None:
    from securedp.reading.files import read_file

    if args.keys is not None and args.keys_file is not None:
        raise Failure("give --keys or --keys-file, not both")
    if args.keys is not None:
        if len(group_by) != 1:
            raise Failure("--keys A,B,... needs exactly one --group-by column; use --keys-file for several")
        return tuple((k,) for k in keys_option(args.keys))
    if args.keys_file is not None:
        frame = read_file(args.keys_file, list(group_by), delimiter=args.delimiter,
                          encoding=check_encoding(args.encoding)).frame.select(list(group_by))
        return tuple(frame.iter_rows())
    return None


def table_query(args: argparse.Namespace) -> TableQuery:
    """The :class:`TableQuery` the arguments describe (every number exact)."""
    from securedp.audit.table_query import parse_aggregation
    from securedp.tables.query import AggregationQuery
    from securedp.tables.query import Query as TableQuery
    from securedp.tables.spec import KINDS

    group_by = tuple(c for text in args.group_by or () for c in text.split(",") if c)
    aggregations: list[AggregationQuery] = []
    for kind in _kinds():
        given = getattr(args, kind)
        if kind not in _kinds(("column", "level", "levels")):
            aggregations += [AggregationQuery(kind)] if given else []
        else:
            aggregations += [parse_aggregation(kind, text) for text in given or ()]
    for option, value in (("trim", args.trim), ("fallback", args.fallback)):  # a statistic's own options
        if value is None:
            continue
        takers = [name for name, kind in KINDS.items() if option in kind.options]
        if not any(a.kind in takers for a in aggregations):
            spelled = ", ".join(f"--{name.replace('_', '-')}" for name in takers)
            raise Failure(f"--trim applies to {spelled} (or --stat {' or '.join(takers)}) only" if option == "trim"
                          else f"--fallback applies to the selections ({spelled}) only")
        exact: dict[str, Any] = {option: to_rational(value, f"--{option}")}
        aggregations = [dataclasses.replace(a, **exact) if a.kind in takers else a for a in aggregations]
    if not aggregations:
        raise Failure("give at least one aggregation: --count, --persons, --sum/--mean/--variance/--median "
                      "COLUMN:LO,HI, --quantile COLUMN:Q:LO,HI or --quantiles COLUMN:Q1,Q2,...:LO,HI")
    if args.stat is not None or args.column is not None:
        raise Failure("--stat/--column release one statistic of one column; a table takes --group-by and "
                      "aggregations such as --count or --sum COLUMN:LO,HI")
    return TableQuery(
        group_by=group_by, aggregations=tuple(aggregations),
        epsilon=None if args.epsilon is None else positive_rational(args.epsilon, "--epsilon"),
        rho=None if args.rho is None else positive_rational(args.rho, "--rho"),
        delta=None if args.delta is None else to_rational(args.delta, "--delta"),
        keys=_keys(args, group_by), id_column=args.id_column,
        max_groups=to_int(args.max_groups, "--max-groups"), max_rows=to_int(args.max_rows, "--max-rows"),
        selection=args.selection,
        alpha=to_rational(args.alpha, "--alpha"), missing=args.missing,
        fill=None if args.fill is None else to_rational(args.fill, "--fill"), delimiter=args.delimiter,
        encoding=check_encoding(args.encoding), missing_keys=args.missing_keys,
        schema=tuple(parse_schema(args.schema).items()), analyst_facing=bool(args.analyst_facing),
        memory_budget=_memory_budget(args.memory_budget),
    )


def _memory_budget(given: str | None) -> int | None:
    """``--memory-budget`` in bytes (``None``: the default), refused as the command's own error."""
    from securedp.engines.polars.pieces import memory_budget

    try:
        return None if given is None else memory_budget(given)
    except ValueError as error:
        raise Failure(str(error).replace("memory_budget", "--memory-budget", 1)) from None


def _data(args: argparse.Namespace, query: TableQuery) -> Any:
    if args.data == "-":
        return read_csv_bytes(sys.stdin.buffer.read(), query.columns(), delimiter=query.delimiter,
                              encoding=query.encoding)
    return engine_named(args.engine).open_file(args.data, query.delimiter, query.encoding)


def _targets(args: argparse.Namespace) -> dict[str, Any]:
    targets: dict[str, Any] = {}
    for text in args.target or ():
        name, _, width = text.rpartition(":")
        if not name or not width:
            raise Failure(f"--target: expected OUTPUT:WIDTH (count:50, income_sum:1000, income_mean:2000, "
                          f"age_median:20), got {text!r}")
        targets[name] = to_rational(width, f"--target {name}")
    return targets


def cell_rows(args: argparse.Namespace) -> int:
    """``--cell-rows``: the rows a cell keeps, at which a mean's or a variance's half-width is stated."""
    from securedp.bounding.limits import positive_count

    return positive_count(args.cell_rows or CELL_ROWS, "--cell-rows")


def _planned(args: argparse.Namespace, query: TableQuery) -> list[str]:
    """With ``--target``: the least epsilon (or rho) on the ``--grid`` up to the one given that meets every
    target (:func:`securedp.planning.least_budget`; a mean's or a variance's at ``--cell-rows``), proven both
    ways; nothing without ``--target``."""
    from securedp.planning.budget import least_budget, stated
    from securedp.reading.types import typed_steps
    from securedp.tables.plan import width_text

    targets = _targets(args)
    if not targets:
        return []
    currency, most = ("epsilon", query.epsilon) if query.epsilon is not None else ("rho", query.rho)
    assert most is not None  # a table query has exactly one of epsilon and rho
    rows = cell_rows(args)
    try:
        # the grids of a Parquet schema's integers and decimals and of --schema's "int", as the release takes them
        typed = typed_steps(args.data, query.columns(), dict(query.schema))
        found = least_budget(targets, currency=currency, grid=args.grid, most=most, cell_rows=rows,
                             **query.public(), typed_steps=typed)
    except ValueError as error:
        raise Failure(str(error).replace("the most you would spend", f"--{currency}")) from None
    lines = [f"plan: the least {currency} on the grid {display_rational(found.grid)} meeting every target is "
             f"{display_rational(found.amount, fraction=True)} (at most the {display_rational(most)} given)"]
    means = {o.name for o in found.plan.outputs if o.value_halfwidth is not None}
    for name, width in targets.items():
        below = "" if found.below is None else f"; at {display_rational(found.amount - found.grid, fraction=True)}: " \
            f"{width_text(stated(found.below, name, rows))}"
        where = f" in a cell of {rows:,} rows" if name in means else ""
        lines.append(f"  {name}: target {width_text(width)}{where}, stated {width_text(stated(found.plan, name, rows))}"
                     f"{below}")
    if any(name in means for name in targets):
        given = "--cell-rows" if args.cell_rows else "the default; --cell-rows N to state another count"
        lines.append(f"  a mean's or a variance's half-width is stated at {rows:,} rows kept in the cell ({given}): "
                     "it holds in every cell of at least that many rows")
    return lines


def placeholder_bounds(query: TableQuery) -> TableQuery:
    """``query`` with every ``COLUMN:auto`` given the bounds ``(0, 1)``: its public arguments can be checked
    before the auto bounds are chosen (a table refused for them never follows a bounds release)."""
    import dataclasses

    return dataclasses.replace(query, aggregations=tuple(
        dataclasses.replace(a, bounds=(Fraction(0), Fraction(1)), auto=False) if a.auto else a
        for a in query.aggregations))


def _auto_bounds(args: argparse.Namespace, query: TableQuery, data: Callable[[], Any]) -> TableQuery:
    """The query with every ``COLUMN:auto`` given bounds chosen privately: one bounds release per column
    (:func:`securedp.planning.bounds.prepare_column_bounds`, at ``--auto-epsilon``), each through the command's
    one pipeline (checked, charged, drawn, logged with its query, so replay re-derives it) before the table.
    Each reads ``data()`` (the table's data) as the table reads it: its delimiter, encoding, declared types,
    missing-value policy and mode."""
    import dataclasses

    from securedp.audit.planning_query import BoundsQuery
    from securedp.ledger.audit_record import Currency
    from securedp.tables.pricing import TableParameters, price_table

    auto = [a for a in query.aggregations if a.auto]
    if not auto:
        return query
    epsilon = auto_cost(args, query)
    placeholder = placeholder_bounds(query)
    price_table(TableParameters(**placeholder.public(), epsilon=query.epsilon, rho=query.rho))
    columns = list(dict.fromkeys(a.column for a in auto if a.column is not None))
    _check_room_for_all(pipeline.preflight(args, query.currency), query, epsilon * len(columns))
    placeholder.prepare(data())  # the table's columns and cells, read and checked as the table reads them
    rows = query.max_groups * query.max_rows if query.id_column is not None else 1
    chosen: dict[str, tuple[Fraction, Fraction]] = {}
    for a in auto:
        if a.column is None or a.column in chosen:
            continue
        bounds = BoundsQuery(a.column, epsilon, query.id_column, rows, encoding=query.encoding, missing=query.missing,
                             fill=query.fill, analyst_facing=query.analyst_facing, delimiter=query.delimiter,
                             schema=query.schema)
        ledgers = pipeline.preflight(args, Currency.EPSILON)
        released = pipeline.release(args, ledgers, bounds.prepare(data()), bounds.to_json())
        chosen[a.column] = released.release.value
        print(f"  bounds   {a.column}: [{chosen[a.column][0]}, {chosen[a.column][1]}], chosen privately at epsilon "
              f"{display_rational(epsilon)}", file=sys.stderr)
        released.finish()
    resolved = tuple(dataclasses.replace(a, bounds=chosen[a.column], auto=False) if a.auto and a.column else a
                     for a in query.aggregations)
    return dataclasses.replace(query, aggregations=resolved)


def _check_room_for_all(ledgers: pipeline.Ledgers, query: TableQuery, bounds_cost: Fraction) -> None:
    """Raise :class:`Failure` unless the budget file holds the bounds releases' ``bounds_cost`` and the table's own
    cost together (its delta too), before the first bounds release, by the budget's own rule: a table refused for
    its cost never follows a bounds release that was charged. (The bounds are priced in epsilon: a budget file in
    rho refuses them in their own preflight.)"""
    from securedp.ledger.budget import Budget
    from securedp.ledger.errors import BudgetExceeded, IncompatibleCost

    if ledgers.store is None or query.epsilon is None:
        return
    try:
        Budget(query.currency.value, store=ledgers.store).check(bounds_cost + query.epsilon, query.delta)
    except (BudgetExceeded, IncompatibleCost) as refused:
        raise Failure(f"{refused} (the auto bounds, epsilon {display_rational(bounds_cost)}, and the table, epsilon "
                      f"{display_rational(query.epsilon)}, together); nothing was read, drawn or charged") from None


def release_table(args: argparse.Namespace) -> int:
    """Validate and check the ledgers (:mod:`securedp.cli.pipeline`), then charge the budget file (epsilon or
    rho, and the delta of private keys), bound and aggregate, draw and log, and write the table."""
    from securedp.audit.table_query import describe, selection_line
    from securedp.tables.table import TableRelease

    query = table_query(args)
    data = functools.cache(lambda: _data(args, placeholder_bounds(query)))  # read once (standard input!), when needed
    if args.dry_run and any(a.auto for a in query.aggregations):  # the plan of what the auto bounds do not decide
        print("\n".join(auto_dry_run(args, query, data, sorted({*ROWS, cell_rows(args)}), placeholder_bounds(query))))
        return 0
    query = _auto_bounds(args, query, data)
    if args.target and not args.dry_run:
        raise Failure("--target plans a release before it is made: add --dry-run")
    ledgers = None if args.dry_run else pipeline.preflight(args, query.currency)
    with Stages(["read and check the table", "bound, aggregate and noise", "write"]) as stages:
        prepared = query.prepare_table(data())
        stages.next()
        if ledgers is None:
            assert prepared.plan is not None
            rows = sorted({*ROWS, cell_rows(args)})
            print("\n".join(["table: dry run, nothing drawn, nothing charged, no audit record",
                             *(f"  {line}" for line in prepared.plan.lines(rows)), *_planned(args, query)]))
            return 0
        released = pipeline.release(args, ledgers, prepared, query.to_json())
        recorder, result = released.recorder, released.release
        stages.next()
        if args.json:
            released.show(json.dumps(recorder.record, indent=2) + "\n")
            return released.finish()
        write_table(released, args)
    assert isinstance(result, TableRelease)
    for note in result.notes:  # read from the released values only
        print(f"securedp: note: {note}", file=sys.stderr)
    for line in split_lines(result.parameters):  # several quantiles: each level's rank interval
        print(f"  {line}", file=sys.stderr)
    entry = recorder.entry
    keys = selection_line(query, result.parameters, len(result.value))
    if args.output is not None or entry is not None or keys is not None:
        for line in describe(query):
            print(f"  {line}", file=sys.stderr)
    if keys is not None:  # stated at release time, whatever the output (the table itself is a plain frame)
        print(f"  {keys}", file=sys.stderr)
        if entry is not None:
            print(f"  audit    record {entry['seq']} appended to {args.audit_log}", file=sys.stderr)
    if recorder.budget is not None:  # on standard error: standard output is the table
        print(f"  budget   {budget_line(recorder.budget)}", file=sys.stderr)
    return released.finish()


def add_table_options(rel: argparse.ArgumentParser) -> None:
    """The options of a table release, added to ``securedp release``."""
    table = rel.add_argument_group("grouped tables (give --group-by and/or aggregations instead of --stat)")
    table.add_argument("--group-by", action="append", help="group column(s): A or A,B (repeatable)")
    from securedp.tables.spec import KINDS

    for kind in _kinds():
        spec = KINDS[kind]
        if spec.takes == "nothing":
            table.add_argument(f"--{kind}", action="store_true", help=(spec.make.__doc__ or kind).strip().rstrip("."))
            continue
        shape = SHAPES.get(spec.takes, "COLUMN:LO,HI[:STEP]")
        spelled = [f"--{kind.replace('_', '-')}"] + ([f"--{kind}"] if "_" in kind else [])  # --a-name and --a_name
        several = (": three or more increasing levels, by the recursive split (deciles: 0.1,0.2,...,0.9)"
                   if spec.takes == "levels" else "")
        table.add_argument(*spelled, dest=kind, action="append", metavar=shape,
                           help=f"{kind.replace('_', ' ')} of a column{several} (repeatable)")
    table.add_argument("--keys", help="public keys of the one group column, one CSV line: A,B,... (quote a key "
                                      "holding a comma: '\"A, B\",C'; default: private keys)")
    table.add_argument("--keys-file", help="public keys: a CSV or Parquet table of the group columns")
    table.add_argument("--max-groups", default="1", help="groups one person may contribute to (default 1)")
    table.add_argument("--max-rows", default="1", help="rows one person may contribute per group (default 1)")
    table.add_argument("--delta", help="delta of partition selection (private keys), exact: 1e-9")
    table.add_argument("--selection", choices=["count", "laplace", "optimal", "gaussian"],
                       help="partition selection rule (default: count, thresholding the released count; without "
                            "--count or --persons: laplace with --epsilon, gaussian with --rho)")
    table.add_argument("--alpha", default="0.05", help="confidence intervals at level 1 - alpha (default 0.05)")
    table.add_argument("--delimiter", default=",", help="CSV delimiter (default ,)")
    add_missing_keys_option(table)
    table.add_argument("--memory-budget", metavar="SIZE",
                       help="memory a release from a CSV or Parquet file may take, such as 4GiB (the default) or "
                            "512MiB: a larger file is read and bounded in parts of its persons, with the same "
                            "release")
    table.add_argument("--target", action="append", metavar="OUTPUT:WIDTH",
                       help="with --dry-run: the half-width an output may have (count:50, income_sum:1000, "
                            "income_mean:2000 at --cell-rows, age_mean.centred_sum:500, age_median:20 rows; keys:40, "
                            "the persons a private key needs for a 1/2 chance); prints the least budget meeting "
                            "every target, up to the --epsilon (or --rho) given (repeatable)")
    table.add_argument("--cell-rows", help=f"with --dry-run: the rows a cell keeps, at which a mean's or a "
                                           f"variance's half-width is stated and targeted (default {CELL_ROWS})")
    table.add_argument("--auto-epsilon", help="the cost of choosing each COLUMN:auto's bounds privately (a "
                                                "release of its own, before the table)")
    table.add_argument("--grid", default="1/100", help="the grid of budgets --target searches (default 1/100)")
    table.add_argument("--output", help="write the table here (CSV, or JSON for .json) instead of standard output")
    table.add_argument("--engine", default=DEFAULT, choices=engine_names(),
                       help="where the aggregates are computed (spark: the standard Spark configuration)")
