"""Files read exactly: the needed columns of a CSV or Parquet file, or of CSV bytes from standard input.

:func:`read_file` is the one reader of files for every path that takes one (grouped tables in Python
and from the command line, one-column releases from the command line, their replay, public keys from
``--keys-file``). Its rules:

* **Only the needed columns are read** (a column the release does not name can hold anything).
* **Parquet** columns keep the types the file declares (a schema, public like the column names).
* **CSV cells are text, exactly as written.** No type is inferred: inference looks at the data, so one
  row (a value after row 10,000 that does not parse, an id ``"x"`` among numbers) could change how every
  other row is read. Values become lattice units through the exact screen (``"2.5"``, ``"1/3"``,
  ``"1e-3"`` read exactly; anything else is an unusable record); ids and keys are their text, so
  ``"01"`` and ``"1"`` are two keys and ``"ann"`` and ``"ann "`` two persons. A column of canonical
  integers (``"-3"``, ``"10"``) is still summed exactly and fast.
* **The encoding is UTF-8** (a byte-order mark is skipped) **or the one the caller declares**
  (``encoding="latin-1"``, ``--encoding``); bytes are never decoded lossily, so two distinct byte
  strings never become one id or key. A file that is not valid in its encoding is refused for the
  data holder, naming the file and the line (never the bytes); in an analyst-facing session the invalid
  bytes become U+FFFD, and a cell holding U+FFFD (the character a lossy decoder writes, in any file) is
  no id, key or number: its row is dropped like any unusable record, by a rule of that row alone.
"""

from __future__ import annotations

import codecs
import io
import pathlib
from collections.abc import Sequence
from typing import Any

from securedp.reading.cells import REPLACEMENT
from securedp.reading.mode import analyst_facing
from securedp.reading.text import arrow_text

__all__ = ["MissingColumns", "check_encoding", "column_names", "read_csv_bytes", "read_file"]


class MissingColumns(ValueError):
    """Columns the release names are not in the file (``absent``; ``names``: the file's columns)."""

    def __init__(self, absent: list[str], names: list[str]) -> None:
        super().__init__(f"column(s) {absent} are not in the table (it has {names})")
        self.absent, self.names = absent, names


_UTF8 = "utf-8"


def check_encoding(encoding: str) -> str:
    """The canonical name of ``encoding`` (``"utf-8"``, ``"latin-1"`` ...); an unknown name raises ``ValueError``."""
    try:
        return codecs.lookup(encoding).name.replace("_", "-")
    except (LookupError, TypeError):
        raise ValueError(f"unknown encoding {encoding!r}: give a name Python knows, such as utf-8 or latin-1") from None


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _utf8(data: bytes, encoding: str) -> tuple[bytes, int | None]:
    """``data`` as UTF-8 bytes (invalid bytes as U+FFFD), and the line of the first invalid byte, or ``None``."""
    if encoding != "utf-8":
        try:
            return data.decode(encoding).encode(_UTF8), None
        except UnicodeDecodeError as error:
            return data.decode(encoding, errors="replace").encode(_UTF8), _line_of(data, error.start)
    try:
        data.decode(_UTF8)
    except UnicodeDecodeError as error:
        return data, _line_of(data, error.start)
    return data, None


def read_csv_bytes(data: bytes, columns: Sequence[str] | None, *, where: str = "standard input",
                   delimiter: str = ",", encoding: str = _UTF8) -> Any:
    """The ``columns`` (all if ``None``) of CSV ``data`` as a Polars frame of text columns (module docstring)."""
    import polars as pl

    encoding = check_encoding(encoding)
    if data.startswith(codecs.BOM_UTF8) and encoding == _UTF8:
        data = data[len(codecs.BOM_UTF8):]
    data, invalid = _utf8(data, encoding)
    names = _header(data, delimiter)
    absent = [c for c in dict.fromkeys(columns or ()) if c not in names]
    if absent:
        raise MissingColumns(absent, names)
    wanted = list(dict.fromkeys(columns)) if columns is not None else names
    read = wanted or names[:1]  # at least one column, so that the frame keeps its number of rows
    # Invalid bytes become U+FFFD, which no id, key or number holds: such a cell is unusable by a rule of its
    # own row (tables.frames and the Spark engine drop ids and keys holding it, the screen refuses the text).
    try:
        frame = pl.read_csv(io.BytesIO(data), separator=delimiter, columns=read, infer_schema=False,
                            encoding="utf8-lossy" if invalid is not None else "utf8")
    except pl.exceptions.ComputeError:  # a line with more fields than the header: a delimiter in a cell
        raise ValueError(f"{where}: a line has more fields than the header ({len(names)}): is a {delimiter!r} "
                         "inside a cell that is not quoted? quote such cells (\"A, B\") as CSV does") from None
    if invalid is not None and not analyst_facing():  # the data holder is told, if a needed cell is concerned
        for column in wanted:
            hit = frame[column].str.contains(REPLACEMENT, literal=True).fill_null(False)
            if hit.any():
                raise ValueError(f"{where}: column {column!r} is not valid {encoding} (the first invalid byte is on "
                                 f"line {invalid}); if the file is in another encoding, declare it (encoding=, or "
                                 "--encoding latin-1 ...)")
    return frame


def _header(data: bytes, delimiter: str) -> list[str]:
    """The column names of CSV ``data`` (its header row; names are public, decoded leniently)."""
    import polars as pl

    return pl.read_csv(io.BytesIO(data), separator=delimiter, n_rows=0, infer_schema=False,
                       encoding="utf8-lossy").columns


def column_names(path: str | pathlib.Path, *, delimiter: str = ",") -> list[str]:
    """The column names of the CSV (its header, decoded leniently: names are public) or Parquet file."""
    import polars as pl

    file = pathlib.Path(path)
    if file.suffix.lower() in (".parquet", ".pq"):
        return list(pl.read_parquet_schema(file))
    with open(file, "rb") as handle:
        head = handle.read(1 << 16)
    return _header(head[len(codecs.BOM_UTF8):] if head.startswith(codecs.BOM_UTF8) else head, delimiter)


def _read_parquet(file: pathlib.Path, columns: list[str] | None) -> Any:
    """The ``columns`` of a Parquet file as Polars; a text column that is not valid UTF-8 (Polars refuses
    the whole file) is read by pyarrow and refused naming it for the data holder, or decoded lossily
    (:func:`securedp.reading.text.arrow_text`) in an analyst-facing session, as a CSV file's bytes are."""
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pl.read_parquet(file, columns=columns)
    except pl.exceptions.ComputeError as error:
        refused = error  # invalid UTF-8; any other fault stands (or pyarrow's reading raises its own)
    table = pq.read_table(file, columns=columns)
    given = {name: table.column(name) for name in table.column_names}
    read = {name: arrow_text(column) for name, column in given.items()}
    invalid = [name for name in given if read[name] is not given[name]]
    if not invalid:
        raise refused
    if not analyst_facing():
        raise ValueError(f"{file}: column {invalid[0]!r} holds text that is not valid UTF-8; write the file with "
                         "valid text, or remove those rows")
    return pl.from_arrow(pa.table(read))


def read_file(path: str | pathlib.Path, columns: Sequence[str] | None, *, delimiter: str = ",",
              encoding: str = _UTF8) -> Any:
    """The ``columns`` (all if ``None``) of the CSV or Parquet file at ``path`` as a Polars frame."""
    import polars as pl

    file = pathlib.Path(path)
    if not file.exists():
        raise FileNotFoundError(f"no such table file: {file}")
    if file.suffix.lower() in (".parquet", ".pq"):
        names = pl.read_parquet_schema(file)
        absent = [c for c in dict.fromkeys(columns or ()) if c not in names]
        if absent:
            raise MissingColumns(absent, list(names))
        return _read_parquet(file, None if columns is None else list(dict.fromkeys(columns)))
    return read_csv_bytes(file.read_bytes(), columns, where=str(file), delimiter=delimiter, encoding=encoding)
