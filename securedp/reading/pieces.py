"""A CSV or Parquet file read in pieces of a bounded size, in order: what a table release reads when the whole
file would not fit in its memory budget (:mod:`securedp.engines.polars.pieces`).

Each piece is a :class:`~securedp.reading.files.FileTable` read by the same rules as the whole file
(:func:`~securedp.reading.files.read_file`), whose rows say where they stand in the whole file (``line 72``,
``row 70``), so that the pieces, one after the other, are the rows :func:`read_file` reads, in its order:

* **Parquet**: runs of whole row groups of about ``rows`` rows (a row group larger than the budget is read
  whole).
* **CSV**: about ``size`` bytes at a time, cut after a line break, in an encoding where a line break is the
  byte ``0x0A`` and no other character holds that byte (UTF-8 and the one-byte encodings:
  :func:`cuttable_encoding`). A piece is parsed with the file's header by the one grammar
  (:func:`~securedp.reading.delimited.parse_csv`). Where a quoted cell is not closed by the end of a
  piece, the piece ends before the record holding it, which starts the next piece (at the end of the file,
  the record is read as the whole file's reader reads it: malformed, covering its first line). Faults of the
  whole file (records that do not parse, bytes invalid in the encoding in a needed column) are gathered
  over every piece and raised after the last one, in the words and order :func:`read_file` raises them.
"""

from __future__ import annotations

import codecs
import pathlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from securedp.reading.cells import REPLACEMENT
from securedp.reading.delimited import _UNCLOSED, CsvText, Malformed, _header, _physical_lines, parse_csv
from securedp.reading.files import (
    FileTable,
    TableFile,
    check_encoding,
    encoding_error,
    is_parquet,
    malformed_error,
    parquet_columns,
    read_parquet,
    replaced_column,
)
from securedp.reading.mode import analyst_facing

_UTF8 = "utf-8"


def cuttable_encoding(encoding: str) -> bool:
    """Whether text in ``encoding`` can be cut into pieces after any byte ``0x0A`` (a line break, and part of
    no other character): UTF-8 and the encodings of one byte per character."""
    name = check_encoding(encoding)
    if name == _UTF8:
        return True
    try:
        return "\n".encode(name) == b"\n" and len(bytes(range(256)).decode(name, errors="replace")) == 256
    except LookupError:  # a text codec without an encoder
        return False


def file_pieces(file: TableFile, columns: Sequence[str], rows: int, size: int) -> Iterator[FileTable]:
    """The ``columns`` of ``file`` in pieces (see the module docstring): of ``rows`` rows (Parquet) or about
    ``size`` bytes (CSV)."""
    path = pathlib.Path(file.path)
    if not path.exists():
        raise FileNotFoundError(f"no such table file: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder: give a table file (CSV or Parquet)")
    if is_parquet(path):
        yield from _parquet_pieces(path, columns, rows)
    else:
        yield from _csv_pieces(path, columns, size, file.delimiter, file.encoding)


def _parquet_pieces(path: pathlib.Path, columns: Sequence[str], rows: int) -> Iterator[FileTable]:
    """Runs of whole row groups of about ``rows`` rows (a row group is never read twice)."""
    import pyarrow.parquet as pq

    wanted = parquet_columns(path, columns)
    metadata = pq.ParquetFile(path).metadata
    sizes = [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)]
    start, run, held = 0, [], 0
    for g, size in enumerate(sizes):
        run.append(g)
        held += size
        if held >= rows or g == len(sizes) - 1:
            positions = np.arange(start, start + held, dtype=np.int64)
            yield FileTable(read_parquet(path, wanted, run), str(path), positions=positions)
            start, run, held = start + held, [], 0
    if not sizes:  # no row group: no row
        yield FileTable(read_parquet(path, wanted), str(path), positions=np.zeros(0, dtype=np.int64))


@dataclass
class _Faults:
    """Faults of a whole CSV file, gathered piece by piece."""

    malformed: Malformed | None = None
    malformed_count: int = 0
    invalid: int | None = None
    """The line of the first byte invalid in the encoding."""
    replaced: set[str] = field(default_factory=set)
    """The needed columns with a cell holding U+FFFD."""

    def raise_first(self, where: str, wanted: list[str], encoding: str) -> None:
        if analyst_facing():  # records and bytes are dropped or replaced there: a rule of each record
            return
        if self.malformed is not None:
            raise malformed_error(where, self.malformed, self.malformed_count)
        if self.invalid is not None and self.replaced:
            raise encoding_error(where, next(c for c in wanted if c in self.replaced), encoding, self.invalid)


def _byte_chunks(path: pathlib.Path, size: int) -> Iterator[bytes]:
    """The file's bytes in chunks of about ``size`` bytes, each ending after a byte ``0x0A`` (the last: the end)."""
    with open(path, "rb") as handle:
        carry = b""
        while True:
            block = handle.read(size)
            if not block:
                if carry:
                    yield carry
                return
            carry += block
            cut = carry.rfind(b"\n") + 1
            if cut:
                yield carry[:cut]
                carry = carry[cut:]


def _lines_in(text: str) -> int:
    """The physical lines of ``text`` ending in a line break (``\\n``, ``\\r\\n``, a lone ``\\r``)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def _csv_pieces(path: pathlib.Path, columns: Sequence[str], size: int, delimiter: str,
                encoding: str) -> Iterator[FileTable]:
    import polars as pl

    encoding = check_encoding(encoding)
    where, faults, wanted = str(path), _Faults(), list(dict.fromkeys(columns))
    header: str | None = None
    pending, consumed, newlines, ended, retry_at = "", 0, 0, False, 0
    chunks = _byte_chunks(path, size)
    while not ended:
        data = next(chunks, None)
        ended = data is None
        if data is not None:
            if header is None and not pending and encoding == _UTF8 and data.startswith(codecs.BOM_UTF8):
                data = data[len(codecs.BOM_UTF8):]
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError as error:
                text = data.decode(encoding, errors="replace")
                if faults.invalid is None:
                    faults.invalid = newlines + data.count(b"\n", 0, error.start) + 1
            newlines += data.count(b"\n")
            pending += text
        if header is None:
            try:
                offset = _header(pending, delimiter)[2]
            except ValueError:
                if not ended:
                    continue  # the header row is not complete yet
                parse_csv(pending, wanted, delimiter)  # the whole file's reader's error
                raise
            header, pending = pending[:offset], pending[offset:]
        if not pending and not ended:
            continue
        if len(pending) < retry_at and not ended:
            continue  # a record longer than the last piece: parse again at twice its length (linear, not quadratic)
        read, rest = _parsed(header, pending, wanted, delimiter, ended)
        if read is None:
            retry_at = 2 * len(pending)  # one record is longer than the piece: read on
            continue
        retry_at = 0
        for record in read.malformed:
            faults.malformed_count += 1
            if faults.malformed is None:
                faults.malformed = Malformed(record.line + consumed, record.reason)
        frame = pl.DataFrame([pl.Series(c, read.columns[c], dtype=pl.String) for c in wanted])
        if REPLACEMENT in pending:
            faults.replaced |= {c for c in wanted if replaced_column(frame.select(c)) is not None}
        yield FileTable(frame, where, read.lines + consumed)
        consumed += _lines_in(pending[: len(pending) - len(rest)])
        pending = rest
    faults.raise_first(where, wanted, encoding)


def _parsed(header: str, body: str, wanted: list[str], delimiter: str, ended: bool) -> tuple[CsvText | None, str]:
    """The records of ``body`` (the text after ``header``) that start before the first record holding a quoted
    cell not closed by the end of ``body`` (every record at the end of the file), and the text left to read
    (from that record on); ``None`` when the first record is such a one.

    A record that does not parse for another reason stopped inside ``body``, and one that parses ended there:
    the records kept are those of the whole file, and the next record of the whole file starts where they stop.
    """
    read = parse_csv(header + body, wanted, delimiter)
    unclosed = [m.line for m in read.malformed if m.reason == _UNCLOSED]
    if ended or not unclosed:
        return read, ""
    before = unclosed[0] - _lines_in(header) - 1  # the record's first line among the body's lines
    if before == 0:
        return None, body
    kept = int(np.searchsorted(read.lines, unclosed[0]))
    cut = sum(map(len, _physical_lines(body)[:before]))
    return CsvText(read.header, {c: v[:kept] for c, v in read.columns.items()}, read.lines[:kept],
                   [m for m in read.malformed if m.line < unclosed[0]]), body[cut:]
