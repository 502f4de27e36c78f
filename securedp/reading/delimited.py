"""CSV text read record by record: one grammar, total, so that no cell can change how another record reads.

:func:`parse_csv` is the one reader of delimited text (CSV files, standard input, ``--keys-file``). It
never fails on the data: each record of the text is either **parsed** (one cell per header column) or
**malformed** (a :class:`Malformed` entry naming its line and why); nothing a cell holds can make the
whole text unreadable or change how the records after it are read, except as the grammar below says.

**The grammar** (RFC 4180, read as every common CSV writer writes it):

* Records end at a line break outside quotes: ``\\n``, ``\\r\\n`` or a lone ``\\r`` (the lines of
  :class:`io.StringIO` with ``newline=""``). A final line break is optional.
* Cells are separated by the delimiter (one character, ``","`` by default). No cell is stripped: ``" 1"``
  is the text ``" 1"``.
* A cell that **starts** with a double quote is quoted: it holds everything up to the next lone quote,
  ``""`` standing for one quote; delimiters and line breaks inside it are text (a record may span
  lines). The closing quote must be followed by the delimiter or the end of the record.
* A quote anywhere else is an ordinary character: ``5'11"`` and ``ab"c`` are texts, as Excel, pandas
  and Python's :mod:`csv` read them.
* An empty cell (nothing between two delimiters, or ``""``) is blank (``None``). An empty line is a
  record whose every cell is blank (what a one-column file holds for a missing value).
* The first record is the header: the column names, read by the same rules (``"a""b"`` names the
  column ``a"b``). A header that does not parse, or names a column twice, is refused: the header is the
  schema, public like the column names.

**Malformed records.** A record is malformed when a quoted cell is not closed before the end of the
text, when text follows a closing quote, or when it has another number of cells than the header (a
delimiter inside a cell that is not quoted). A malformed record covers **its first line only**: reading
resumes on the next line, so a stray quote can never swallow the records after it. For a file written
by a CSV writer (which quotes every cell holding a quote, a delimiter or a line break), no cell can make
any record malformed; for a file assembled by hand, the damage of one bad cell stays on its own line
unless a later quote happens to close it into a well-formed record. What a caller does with a malformed
record (refuse it naming the line, or drop it) is its choice: :mod:`securedp.reading.files`.

**Two readers, one grammar.** Text with no double quote and no lone ``\\r``, whose every non-empty line
has exactly one cell per header column, is read by Polars (a fast path); any other text by Python's
:mod:`csv` state machine, line by line where a record is malformed. Both give the same cells (a test
compares them on generated text).
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["CsvText", "HeaderError", "Malformed", "MissingColumns", "header_of", "parse_csv"]

_FIELD_LIMIT = (1 << 31) - 1
"""The longest cell the slow path reads. Python's :mod:`csv` stops at 131,072 characters by default and
its limit is one value for the whole process: :func:`parse_csv` raises it to this (never lowers it), so
that no cell's length decides whether its record parses, whatever another thread does meanwhile."""


@dataclass(frozen=True)
class Malformed:
    """A record that does not parse: the line it starts on (the header is line 1) and why."""

    line: int
    reason: str


@dataclass(frozen=True)
class CsvText:
    """The parsed records: the header, the requested columns (text, ``None`` for a blank cell), the line
    each parsed record starts on, and the malformed records, in order."""

    header: list[str]
    columns: dict[str, list[str | None]]
    lines: np.ndarray
    malformed: list[Malformed]

    @property
    def rows(self) -> int:
        """The number of parsed records."""
        return int(self.lines.size)


class MissingColumns(ValueError):
    """Columns the release names are not in the table (``absent``; ``names``: the table's columns)."""

    def __init__(self, absent: list[str], names: list[str]) -> None:
        super().__init__(f"column(s) {absent} are not in the table (it has {names})")
        self.absent, self.names = absent, names


class HeaderError(ValueError):
    """The header row does not parse, is missing, or names a column twice (refused: it is the schema)."""


def _check_delimiter(delimiter: str) -> None:
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
        raise ValueError(f"the delimiter must be one character other than a quote or a line break, got {delimiter!r}")


def _physical_lines(text: str) -> list[str]:
    """The lines of ``text`` with their line breaks (``\\n``, ``\\r\\n`` or a lone ``\\r``), as :mod:`csv`
    reads them."""
    return io.StringIO(text, newline="").readlines()


def _records(lines: list[str], start: int, delimiter: str) -> Iterator[tuple[int, list[str] | None, str]]:
    """``(line index, cells or None, reason)`` of each record from line ``start`` on. A record that does
    not parse is ``None`` with the reason and covers its first line only: reading resumes on the next."""
    if csv.field_size_limit() < _FIELD_LIMIT:
        csv.field_size_limit(_FIELD_LIMIT)
    position = start
    while position < len(lines):
        reader = csv.reader((lines[i] for i in range(position, len(lines))), delimiter=delimiter, quotechar='"',
                            doublequote=True, strict=True, skipinitialspace=False)
        consumed = 0
        try:
            for cells in reader:
                yield position + consumed, cells, ""
                consumed = reader.line_num
        except csv.Error as error:
            failed = position + consumed
            yield failed, None, _reason(str(error))
            position = failed + 1
            continue
        return


_UNCLOSED = "a quoted cell is not closed (an unmatched double quote)"


def _reason(message: str) -> str:
    if "expected after" in message:
        return "text follows the closing quote of a quoted cell"
    if "end of data" in message:
        return _UNCLOSED
    return f"not valid CSV ({message})"


def _header(text: str, delimiter: str) -> tuple[list[str], int, int]:
    """The column names, the number of lines the header row takes and where the text after it starts
    (only the header's lines are read)."""
    stream = io.StringIO(text, newline="")
    lines: list[str] = []
    for line in stream:
        lines.append(line)
        _, cells, reason = next(_records(lines, 0, delimiter))
        if cells is not None or reason != _UNCLOSED:
            break  # the header is complete, or broken otherwise than by a line break inside a quoted name
    if not lines:
        raise HeaderError("the text is empty: a CSV file starts with a header row naming its columns")
    if cells is None:
        raise HeaderError(f"the header row does not parse: {reason}")
    if not cells:
        raise HeaderError("the header row is empty: a CSV file starts with a header row naming its columns")
    repeated = sorted({c for c in cells if cells.count(c) > 1})
    if repeated:
        raise HeaderError(f"the header names column(s) {repeated} more than once")
    return cells, len(lines), sum(map(len, lines))


def header_of(text: str, delimiter: str = ",") -> list[str]:
    """The column names of CSV ``text`` (its first record, read by the grammar of the module docstring)."""
    _check_delimiter(delimiter)
    return _header(text, delimiter)[0]


def _simple(body: str, delimiter: str, width: int) -> bool:
    """Whether ``body`` (the text after the header) reads alike in Polars: no quote, no lone ``\\r``, a first
    line that is not empty (Polars counts the cells of every line by it), no U+FEFF opening it (Polars drops one
    there, as a byte-order mark; here it is the first cell's text, as on the other path), and every non-empty
    line with exactly ``width`` cells (a vectorised count of delimiters per line)."""
    if '"' in body or body.count("\r") != body.count("\r\n") or not delimiter.isascii() or body.startswith("\ufeff"):
        return False
    if not body.strip("\r\n"):  # empty lines only (Polars then sees one column): each a record of blank cells
        return not body
    data = np.frombuffer(body.encode("utf-8"), dtype=np.uint8)
    breaks = np.flatnonzero(data == 10)
    ends = breaks if data.size == 0 or data[-1] == 10 else np.append(breaks, data.size)
    starts = np.concatenate(([0], breaks + 1))[: ends.size]
    separators = np.flatnonzero(data == ord(delimiter))
    per_line = np.searchsorted(separators, ends) - np.searchsorted(separators, starts)
    carriage = (ends > starts) & (data[np.maximum(ends - 1, 0)] == 13)
    empty = ends - starts - carriage == 0
    if width > 1 and empty[0]:  # Polars would take the width of the table from that empty first line
        return False
    return bool(np.all((per_line == width - 1) | empty))


def _fast(body: str, header: list[str], wanted: list[str], delimiter: str, first: int) -> CsvText:
    """Quote-free text of ``width`` cells per line, by Polars (records are lines ``first``, ``first + 1`` ...)."""
    import polars as pl

    if not body:
        return CsvText(header, {c: [] for c in wanted}, np.zeros(0, dtype=np.int64), [])
    indices = [header.index(c) for c in wanted]
    frame = pl.read_csv(io.BytesIO(body.encode("utf-8")), has_header=False, separator=delimiter, quote_char=None,
                        infer_schema=False, columns=sorted(set(indices)) or [0])
    read = dict(zip(sorted(set(indices)), frame.get_columns(), strict=False))  # in the order read
    lines = np.arange(first, first + frame.height, dtype=np.int64)
    return CsvText(header, {c: read[i].to_list() for c, i in zip(wanted, indices, strict=True)}, lines, [])


def parse_csv(text: str, columns: Sequence[str] | None = None, delimiter: str = ",") -> CsvText:
    """The ``columns`` (all if ``None``) of the CSV ``text`` (see the module docstring).

    Raises :class:`HeaderError` for a header that does not parse and :class:`MissingColumns` for a
    requested column the header lacks (both :class:`ValueError`); never because of a record.
    """
    _check_delimiter(delimiter)
    if sys.version_info < (3, 11) and "\x00" in text:  # Python 3.10's csv refuses NUL; it is a character here
        return _with_nul(text, columns, delimiter)
    header, consumed, offset = _header(text, delimiter)
    wanted = list(header) if columns is None else list(dict.fromkeys(columns))
    absent = [c for c in wanted if c not in header]
    if absent:
        raise MissingColumns(absent, header)
    body = text[offset:]
    if _simple(body, delimiter, len(header)):
        return _fast(body, header, wanted, delimiter, consumed + 1)
    return _slow(_physical_lines(body), consumed, header, wanted, delimiter)


def _slow(lines: list[str], before: int, header: list[str], wanted: list[str], delimiter: str) -> CsvText:
    """Any text after the header (its ``before`` lines), by Python's :mod:`csv`, record by record."""
    width = len(header)
    positions = [header.index(c) for c in wanted]
    columns: list[list[str | None]] = [[] for _ in wanted]
    parsed: list[int] = []
    malformed: list[Malformed] = []
    for line, cells, reason in _records(lines, 0, delimiter):
        if cells is not None and not cells:  # an empty line: every cell blank
            cells = [""] * width
        if cells is None or len(cells) != width:
            if cells is not None:
                reason = (f"it has {len(cells)} cells, the header {width} (a delimiter {delimiter!r} inside a cell "
                          "that is not quoted?)")
            malformed.append(Malformed(before + line + 1, reason))
            continue
        parsed.append(before + line + 1)
        for out, position in zip(columns, positions, strict=True):
            cell = cells[position]
            out.append(cell if cell else None)
    return CsvText(header, dict(zip(wanted, columns, strict=True)), np.array(parsed, dtype=np.int64), malformed)


def _with_nul(text: str, columns: Sequence[str] | None, delimiter: str) -> CsvText:
    """:func:`parse_csv` on Python 3.10 for text holding NUL: a code point absent from the text stands in
    for NUL while the :mod:`csv` module reads it, and is put back."""
    stand_in = next(chr(c) for c in range(0xE000, 0x110000) if chr(c) not in text)
    read = parse_csv(text.replace("\x00", stand_in), columns, delimiter)
    back = {name: [None if v is None else v.replace(stand_in, "\x00") for v in values]
            for name, values in read.columns.items()}
    return CsvText([c.replace(stand_in, "\x00") for c in read.header], back, read.lines, read.malformed)
