"""Files read exactly: the needed columns of a CSV or Parquet file, or of CSV bytes from standard input.

:func:`read_file` is the one reader of files for every path that takes one (grouped tables in Python
and from the command line, one-column releases from the command line, their replay, public keys from
``--keys-file``). Its rules:

* **Only the needed columns are read** (a column the release does not name can hold anything).
* **Parquet** columns keep the types the file declares (a schema, public like the column names).
* **CSV text follows one grammar** (:mod:`securedp.reading.delimited`: RFC 4180 as CSV writers write it).
  A record that does not parse (an unmatched quote, text after a closing quote, another number of cells
  than the header) is refused for the data holder, naming its line and the fault, and is dropped in an
  analyst-facing session: it covers its own first line only, so no cell can make the file unreadable or
  change how another record reads.
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

A file is read into a :class:`FileTable`: the needed columns as Polars, and where each row stands in
the file (``line 72`` of a CSV file; ``row 70`` of a Parquet file), so that an error names the place
a person would look.
"""

from __future__ import annotations

import codecs
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from securedp.reading.cells import REPLACEMENT
from securedp.reading.delimited import Malformed, MissingColumns, header_of, parse_csv
from securedp.reading.mode import analyst_facing
from securedp.reading.text import arrow_text

__all__ = ["FileTable", "MissingColumns", "TableFile", "check_encoding", "column_names", "read_csv_bytes", "read_file"]


@dataclass(frozen=True)
class FileTable:
    """The needed columns of a file (``frame``, Polars: CSV columns are text) and each row's place in it.

    ``lines`` holds, for a CSV file, the line each row starts on (the header is line 1); ``None`` for a
    Parquet file, whose row ``i`` is its ``i``-th row. ``name`` names the file (or standard input).
    """

    frame: Any
    name: str
    lines: np.ndarray | None = None
    rows: int | None = None
    """The number of rows, when :attr:`frame` holds no column to count them (``None``: its height)."""
    positions: np.ndarray | None = None
    """For a piece of a Parquet file (:mod:`securedp.reading.pieces`), the file's row number of each row
    (``None``: row ``i`` is the file's row ``i``)."""

    @property
    def height(self) -> int:
        """The number of rows read."""
        return int(self.frame.height) if self.rows is None else self.rows

    @property
    def columns(self) -> list[str]:
        """The names of the columns read."""
        return list(self.frame.columns)

    def __len__(self) -> int:
        """The number of rows read."""
        return self.height

    def where(self, row: int) -> str:
        """Where row ``row`` of :attr:`frame` stands in the file: ``"line 72"`` or ``"row 70"``."""
        if self.lines is not None:
            return f"line {int(self.lines[row])}"
        return f"row {row if self.positions is None else int(self.positions[row])}"


_UTF8 = "utf-8"


@dataclass(frozen=True)
class TableFile:
    """A CSV or Parquet file to read as a table, with its format: the CSV ``delimiter`` and ``encoding``.

    Public like the path: a release given one reads only the columns it needs, when it starts reading its
    data (:func:`securedp.reading.tables.table_source`), so that its public arguments are checked first.
    """

    path: str | pathlib.Path
    delimiter: str = ","
    encoding: str = _UTF8

    def read(self, columns: Sequence[str] | None) -> FileTable:
        """The ``columns`` (all if ``None``) of the file (:func:`read_file`)."""
        return read_file(self.path, columns, delimiter=self.delimiter, encoding=self.encoding)


def is_parquet(path: str | pathlib.Path) -> bool:
    """Whether the file at ``path`` is read as Parquet (by its name: ``.parquet`` or ``.pq``), else as CSV."""
    return pathlib.Path(path).suffix.lower() in (".parquet", ".pq")


def check_encoding(encoding: str) -> str:
    """The canonical name of ``encoding`` (``"utf-8"``, ``"latin-1"`` ...); an unknown name raises ``ValueError``."""
    try:
        return codecs.lookup(encoding).name.replace("_", "-")
    except (LookupError, TypeError):
        raise ValueError(f"unknown encoding {encoding!r}: give a name Python knows, such as utf-8 or latin-1") from None


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _decoded(data: bytes, encoding: str) -> tuple[str, int | None]:
    """``data`` as text (bytes invalid in ``encoding`` as U+FFFD), and the line of the first invalid byte, or
    ``None``."""
    try:
        return data.decode(encoding), None
    except UnicodeDecodeError as error:
        return data.decode(encoding, errors="replace"), _line_of(data, error.start)


def read_csv_bytes(data: bytes, columns: Sequence[str] | None, *, where: str = "standard input",
                   delimiter: str = ",", encoding: str = _UTF8) -> FileTable:
    """The ``columns`` (all if ``None``) of CSV ``data`` as text columns (see the module docstring)."""
    import polars as pl

    encoding = check_encoding(encoding)
    if data.startswith(codecs.BOM_UTF8) and encoding == _UTF8:
        data = data[len(codecs.BOM_UTF8):]
    text, invalid = _decoded(data, encoding)
    try:
        parsed = parse_csv(text, columns, delimiter)
    except MissingColumns:
        raise
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    if parsed.malformed and not analyst_facing():  # an analyst-facing session drops them: a rule of each record
        raise malformed_error(where, parsed.malformed[0], len(parsed.malformed))
    frame = pl.DataFrame([pl.Series(c, parsed.columns[c], dtype=pl.String) for c in parsed.columns])
    if invalid is not None and not analyst_facing():  # the data holder is told, if a needed cell is concerned
        column = replaced_column(frame)
        if column is not None:
            raise encoding_error(where, column, encoding, invalid)
    return FileTable(frame, where, parsed.lines, parsed.rows)


def malformed_error(where: str, first: Malformed, count: int) -> ValueError:
    """The data holder's error for ``count`` records that do not parse, ``first`` the first."""
    return ValueError(f"{where}, line {first.line}: not a CSV record: {first.reason} ({count} such line(s)); a cell "
                      "holding a quote, the delimiter or a line break must be quoted, with its quotes doubled "
                      '("5\'11""")')


def replaced_column(frame: Any) -> str | None:
    """The first column of ``frame`` (text) with a cell holding U+FFFD, the character a lossy decoder writes."""
    for column in frame.columns:
        if frame[column].str.contains(REPLACEMENT, literal=True).fill_null(False).any():
            return str(column)
    return None


def encoding_error(where: str, column: str, encoding: str, invalid: int) -> ValueError:
    """The data holder's error for a needed ``column`` of a file not valid in ``encoding`` (first invalid byte on
    line ``invalid``)."""
    return ValueError(f"{where}: column {column!r} is not valid {encoding} (the first invalid byte is on line "
                      f"{invalid}); if the file is in another encoding, declare it (encoding=, or --encoding "
                      "latin-1 ...)")


def column_names(path: str | pathlib.Path, *, delimiter: str = ",", encoding: str = _UTF8) -> list[str]:
    """The column names of the CSV (its header in ``encoding``, decoded leniently: names are public) or Parquet
    file. The CSV is read until its first line break (or its end), 64 KiB at a time."""
    import polars as pl

    file = pathlib.Path(path)
    if is_parquet(file):
        return list(pl.read_parquet_schema(file))
    encoding = check_encoding(encoding)
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    text, first = "", True
    with open(file, "rb") as handle:
        while True:
            chunk = handle.read(1 << 16)
            if first and encoding == _UTF8 and chunk.startswith(codecs.BOM_UTF8):
                chunk = chunk[len(codecs.BOM_UTF8):]
            first = False
            text += decoder.decode(chunk, final=not chunk)
            if not chunk or "\n" in text or "\r" in text:
                break
    return header_of(text, delimiter)


def read_parquet(file: pathlib.Path, columns: list[str] | None, groups: Sequence[int] | None = None) -> Any:
    """The ``columns`` of a Parquet file as Polars (with ``groups``, of those row groups only, read by pyarrow in
    the types Polars reads); a text column that is not valid UTF-8 (Polars refuses the whole file) is read by
    pyarrow and refused naming it for the data holder, or decoded lossily
    (:func:`securedp.reading.text.arrow_text`) in an analyst-facing session, as a CSV file's bytes are."""
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(file)
    wide = [f.name for f in schema if (columns is None or f.name in columns) and pa.types.is_decimal(f.type)
            and f.type.precision > 38]
    if wide:  # Polars holds no decimal of more than 38 digits (in memory, pyarrow's are read cell by cell)
        raise ValueError(f"{file}: column {wide[0]!r} is a decimal of more than 38 digits, which securedp cannot read "
                         "from a Parquet file: write it as decimal(38) or narrower, or as text")
    refused: Exception | None = None
    if groups is None:
        try:
            return pl.read_parquet(file, columns=columns)
        except pl.exceptions.ComputeError as error:
            refused = error  # invalid UTF-8; any other fault stands (or pyarrow's reading raises its own)
        table = pq.read_table(file, columns=columns)
    else:
        table = pq.ParquetFile(file).read_row_groups(list(groups), columns=columns)
    given = {name: table.column(name) for name in table.column_names}
    read = {name: arrow_text(column) for name, column in given.items()}
    invalid = [name for name in given if read[name] is not given[name]]
    if not invalid and refused is not None:
        raise refused
    if invalid and not analyst_facing():
        raise ValueError(f"{file}: column {invalid[0]!r} holds text that is not valid UTF-8; write the file with "
                         "valid text, or remove those rows")
    frame = pl.from_arrow(pa.table(read) if invalid else table)
    assert isinstance(frame, pl.DataFrame)
    polars_types = {name: dtype for name, dtype in pl.read_parquet_schema(file).items() if name in frame.columns}
    return frame if frame.schema == polars_types else frame.cast(polars_types)  # type: ignore[arg-type]


def parquet_columns(file: pathlib.Path, columns: Sequence[str] | None) -> list[str] | None:
    """The distinct ``columns`` of a Parquet file (``None``: all), checked: a file that is no Parquet, or lacks
    one of them, is refused (:class:`MissingColumns`)."""
    import polars as pl

    try:
        names = pl.read_parquet_schema(file)
    except pl.exceptions.PolarsError as error:  # not a Parquet file: say so, in one line
        raise ValueError(f"{file} is not a readable Parquet file ({str(error).strip().splitlines()[0]})") from None
    absent = [c for c in dict.fromkeys(columns or ()) if c not in names]
    if absent:
        raise MissingColumns(absent, list(names))
    return None if columns is None else list(dict.fromkeys(columns))


def read_file(path: str | pathlib.Path, columns: Sequence[str] | None, *, delimiter: str = ",",
              encoding: str = _UTF8) -> FileTable:
    """The ``columns`` (all if ``None``) of the CSV or Parquet file at ``path`` (see the module docstring)."""
    import polars as pl

    file = pathlib.Path(path)
    if not file.exists():
        raise FileNotFoundError(f"no such table file: {file}")
    if file.is_dir():
        raise IsADirectoryError(f"{file} is a folder: give a table file (CSV or Parquet)")
    if is_parquet(file):
        wanted = parquet_columns(file, columns)
        if wanted == []:  # no column: the file's number of rows, from its metadata
            import pyarrow.parquet as pq

            return FileTable(pl.DataFrame(), str(file), rows=pq.ParquetFile(file).metadata.num_rows)
        return FileTable(read_parquet(file, wanted), str(file))
    return read_csv_bytes(file.read_bytes(), columns, where=str(file), delimiter=delimiter, encoding=encoding)


def table_column_names(data: Any) -> list[str]:
    """The column names of a table (pandas, Polars, pyarrow) or a file (names are public; no value is read)."""
    if isinstance(data, (str, pathlib.Path)):
        return column_names(data)
    if isinstance(data, TableFile):
        return column_names(data.path, delimiter=data.delimiter)
    collect_schema = getattr(data, "collect_schema", None)  # a Polars LazyFrame
    if collect_schema is not None:
        return list(collect_schema().names())
    names = getattr(data, "column_names", None)  # pyarrow
    return [str(c) for c in (names if names is not None else data.columns)]
