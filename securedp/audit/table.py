"""Reading one column (and optionally a person-id column) of a CSV file, for the command and replay."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path


class DataError(ValueError):
    """The data file cannot be read as required (missing file, column or header)."""


@dataclass(frozen=True)
class Column:
    """The cells of one column, as strings in file order, and the rows' person ids (or ``None``).

    Ids are the ``id_column`` cells numbered in order of first appearance
    (0, 1, 2, ...), since the release functions take integer ids; a blank
    (empty or whitespace-only) id cell is refused with :class:`DataError`.
    """

    values: list[str]
    ids: list[int] | None


def read_column(path: str | Path, column: str, id_column: str | None = None) -> Column:
    """Read ``column`` (and ``id_column``) from the CSV file at ``path``, which must have a header row.

    Cells are returned verbatim (as strings): the release functions read
    numeric strings exactly and refuse the others. Raises :class:`DataError`
    naming the file and column on any problem.
    """
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames
            if not header:
                raise DataError(f"{path}: empty file, expected a header row")
            for name in (column, id_column):
                if name is not None and name not in header:
                    raise DataError(f"{path}: no column {name!r} (columns: {', '.join(header)})")
            values: list[str] = []
            raw_ids: list[str] = []
            for row in reader:
                values.append(row[column] if row[column] is not None else "")
                if id_column is not None:
                    raw_ids.append(row[id_column] or "")
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"cannot read {path}: {exc}") from None
    if id_column is None:
        return Column(values, None)
    blank = [i for i, raw in enumerate(raw_ids) if not raw.strip()]
    if blank:  # a blank id is no person: numbering it would merge every row without an id into one person
        raise DataError(
            f"{path}: column {id_column!r} is blank in data row {blank[0] + 1} ({len(blank)} row(s) without a "
            "person id); blank ids would merge different people into one: fill them in or remove those rows"
        )
    numbering: dict[str, int] = {}
    return Column(values, [numbering.setdefault(raw, len(numbering)) for raw in raw_ids])
