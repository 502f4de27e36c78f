"""How ``securedp release`` writes a released table: CSV (standard output or ``--output``) with every cell a
spreadsheet would run as a formula neutralised, or JSON rows (an ``--output`` ending in ``.json``) with the
exact values."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from securedp.cli import pipeline

if TYPE_CHECKING:  # Polars loads only when a table is released
    import polars as pl


_FORMULA_START = r"^[=+\-@\t\r]"  # what makes a spreadsheet read a CSV cell as a formula (OWASP, CSV injection)
_PLAIN_NUMBER = r"^-?[0-9]+(\.[0-9]+)?(/[0-9]+)?$"


def neutralised(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every text cell and column name that begins with ``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return prefixed with a single quote ``'``, so that a spreadsheet shows it as text instead of running
    it as a formula (OWASP's guidance on CSV injection).

    The cells of integer and decimal columns are numbers and are left alone, and so is text that is a plain
    number (``-3``, ``-1.5``, ``-1/3``: the exact values of the release), which no spreadsheet runs.
    """
    import polars as pl

    def risky(text: str) -> bool:
        return re.match(_FORMULA_START, text) is not None and re.match(_PLAIN_NUMBER, text) is None

    columns = []
    for name, dtype in frame.schema.items():
        column = pl.col(name)
        if dtype == pl.String:
            flagged = column.str.contains(_FORMULA_START) & ~column.str.contains(_PLAIN_NUMBER)
            column = pl.when(flagged).then(pl.concat_str([pl.lit("'"), column])).otherwise(column)
        columns.append(column.alias(f"'{name}" if risky(name) else name))
    return frame.select(columns)


def write_table(released: pipeline.Released, args: argparse.Namespace) -> None:
    """The table on standard output (:meth:`~securedp.cli.pipeline.Released.show`), or in ``--output``; if that
    file cannot be written now (after the draw: the release is charged and recorded), the table is shown instead
    and the failure reported when the command finishes."""
    import polars as pl

    from securedp.tables.table import TableRelease

    result = released.release
    assert isinstance(result, TableRelease)
    frame = result.frame
    if not isinstance(frame, pl.DataFrame):
        frame = pl.from_pandas(frame.toPandas()) if hasattr(frame, "toPandas") else pl.from_dataframe(frame)
    frame = neutralised(frame)  # the CSV cells; the JSON output below keeps the exact values
    if args.output is None:
        released.show(frame.write_csv())
        return
    try:
        if str(args.output).lower().endswith(".json"):
            with open(args.output, "w", encoding="utf-8") as out:
                out.write(json_rows(result.labels or (), result.value))
        else:
            frame.write_csv(args.output)
    except OSError as error:
        released.show(frame.write_csv())
        released.failed_writes.append(f"cannot write {args.output} ({error.strerror or error}); the release was "
                                      "charged and recorded, and its table is printed instead")


def json_rows(labels: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The released rows as a JSON list of objects, each value as a person writes it, exactly: integers and
    lattice values with a finite decimal expansion as JSON numbers (``53.5``, never ``"107/2"``), any other
    rational as its ``"num/den"`` text (:func:`securedp.cli.show.exact_text`), keys and text as strings."""
    from securedp.cli.show import exact_text

    def cell(value: Any) -> str:
        if value is None or isinstance(value, (bool, str)) or not isinstance(value, (int, Fraction)):
            return json.dumps(value if value is None or isinstance(value, (bool, str, int)) else str(value))
        text = exact_text(value)
        return json.dumps(text) if "/" in text else text

    lines = ["{" + ", ".join(f"{json.dumps(name)}: {cell(v)}" for name, v in zip(labels, row, strict=True)) + "}"
             for row in rows]
    return "[\n" + ",\n".join(f" {line}" for line in lines) + "\n]\n"
