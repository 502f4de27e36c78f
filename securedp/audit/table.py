"""Reading one column (and optionally a person-id column) of a data file, for the command and replay."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from securedp.mechanisms.contributions import analyst_facing
from securedp.reading.cells import is_unusable_text
from securedp.reading.files import MissingColumns, read_file


class DataError(ValueError):
    """The data file cannot be read as required (missing file, column or header)."""


@dataclass(frozen=True)
class Column:
    """The cells of one column, as strings in file order, and the rows' person ids (or ``None``).

    Ids are the ``id_column`` cells as integers by :func:`person_code` (a rule of each cell alone),
    since the release functions take integer ids; a blank
    (empty or whitespace-only) id cell is refused with :class:`DataError`.
    """

    values: list[str]
    ids: list[int | None] | None


def read_column(path: str | Path, column: str, id_column: str | None = None, *, encoding: str = "utf-8") -> Column:
    """Read ``column`` (and ``id_column``) from the CSV (with a header row) or Parquet file at ``path``.

    The file is read by the one file reader, :func:`securedp.reading.files.read_file` (needed columns
    only, cells as text exactly as written, UTF-8 or the declared ``encoding``, never lossy). Cells are
    returned as strings (an empty cell as ``""``): the release functions read numeric strings exactly
    and refuse the others. Raises :class:`DataError` naming the file on any problem.
    """
    try:
        frame = read_file(path, [column, *([id_column] if id_column is not None else [])], encoding=encoding).frame
    except MissingColumns as missing:
        raise DataError(f"{path}: no column {missing.absent[0]!r} (columns: {', '.join(missing.names)})") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read {path}: {exc}") from None
    except Exception as exc:  # the CSV parser's own errors: an empty file, a malformed row
        empty = type(exc).__name__ == "NoDataError"
        raise DataError(f"{path}: empty file, expected a header row" if empty
                        else f"cannot read {path}: {type(exc).__name__}") from None
    values = ["" if v is None else str(v) for v in frame[column].to_list()]
    if id_column is None:
        return Column(values, None)
    raw_ids = ["" if v is None else str(v) for v in frame[id_column].to_list()]
    blank = [i for i, raw in enumerate(raw_ids) if is_unusable_text(raw)]
    if blank and analyst_facing():  # no error depends on the data: a row without a usable id is dropped
        unusable = set(blank)
        return Column(values, [None if i in unusable else person_code(raw) for i, raw in enumerate(raw_ids)])
    if blank:  # a blank id is no person: numbering it would merge every row without an id into one person
        raise DataError(
            f"{path}: column {id_column!r} is blank in data row {blank[0] + 1} ({len(blank)} row(s) without a "
            "person id); blank ids would merge different people into one: fill them in or remove those rows"
        )
    return Column(values, [person_code(raw) for raw in raw_ids])


_INT64 = 1 << 63


def person_code(text: str) -> int:
    """The integer person id of the id cell ``text``: a rule of that text alone.

    Canonical decimal text of ``n < 2**63`` (``0``, ``17``: no sign, no leading zero, no space) is
    ``n``; any other text ``t`` is ``2**63`` plus the big-endian integer of the byte ``0x01`` followed by
    the UTF-8 bytes of ``t``. Distinct texts get distinct codes, and a row's code never depends on other
    rows: numbering ids by first appearance (as before) let one added person renumber everyone after
    them, and so move their salted digests and the rows they keep.
    """
    if text.isascii() and text.isdigit() and (text == "0" or text[0] != "0"):
        n = int(text)
        if n < _INT64:
            return n
    return _INT64 + int.from_bytes(b"\x01" + text.encode("utf-8"), "big")
