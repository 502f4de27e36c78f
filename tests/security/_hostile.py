"""Neighbouring datasets of every input kind, the second holding one more record with a hostile cell.

A dataset is a list of rows ``(id, key, value, note)`` (``note`` is a column no release reads); :func:`build`
writes it as one input kind (pandas with each dtype family, Polars with each, pyarrow with each, CSV text
assembled by hand or by a CSV writer, in UTF-8 with a byte-order mark, Latin-1 or UTF-16, and Parquet), the
way a data holder would hold it. :data:`CELLS` are the hostile cells each kind can hold. The releases of
``test_neighbour_matrix.py`` read a dataset and the same dataset with one added row whose cell of one
role is hostile; :func:`outcome` is what an analyst sees of each.
"""

from __future__ import annotations

import csv
import decimal
import io
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import gmpy2
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from polars.exceptions import PanicException

COLUMNS = ("id", "g", "v", "note")
"""The columns: person id, group key, value, and a column no release reads."""
ROLES = {"id": 0, "key": 1, "value": 2, "unqueried": 3}
"""Which cell of the added row is hostile."""

Row = tuple[Any, Any, Any, Any]


class Undecodable(bytes):
    """A CSV cell written as these raw bytes (not text in the file's encoding)."""


# --- hostile cells ------------------------------------------------------------------------------------------

TEXT = ["", " ", "\t", "\u3000", "x", "HIV+", "-1", "007", "2.5", "1/3", "1/0", "1e400", "-1e400", "nan", "inf",
        "NaN", "-0", "9" * 40, "\u0661\u0662", "\ufffd", "\ud800", "\x00", "\ufeff7", "a\u2028b", "5.0", "True",
        '"', '"x', 'x"', "5'11\"", '"a"b', 'ab"c', '""', "a,b", ",", "a\nb", "a\rb", "\r", "\n", "\r\n", "=cmd()",
        "1." + "0" * 3000, "7" * 401]
"""Text: blanks, numbers in odd spellings, undecodable text, quotes, delimiters and line breaks, and numbers too
long to read (securedp.hazmat.exact.bounds.CELL_CHARS)."""
NUMBERS: list[Any] = [None, float("nan"), float("inf"), -float("inf"), -1, 0, 2**53 + 1, 2**63 - 1, 2**63, 2**64,
                      10**400, -(10**400), 2.5, 11.0, float(2**53), -0.0, 1e308]
"""Numbers, missing cells and ones that overflow every fixed-width type."""
OBJECTS: list[Any] = [True, False, np.bool_(True), b"x", bytearray(b"7"), np.float64(11), np.float32(1.5),
                      np.int8(-3), np.uint64(2**64 - 1), np.longdouble(1) / 3, decimal.Decimal("NaN"),
                      decimal.Decimal("-Infinity"), decimal.Decimal(11), decimal.Decimal("1e-400"), Fraction(7, 2),
                      Fraction(4, 1), pd.NA, pd.NaT, decimal.Decimal("sNaN"), gmpy2.mpz(11), gmpy2.mpq(7, 2),
                      gmpy2.mpfr("nan"), np.float16(2.5), np.longdouble("inf"), np.datetime64("2024-01-01"),
                      np.timedelta64(3, "s"), complex(1, 2), (1, 2), [1], {"a": 1}, object(),
                      pd.Timestamp("2024-01-01"), pd.Interval(0, 1), np.str_("7"), np.bytes_(b"7"),
                      decimal.Decimal("1." + "0" * 3000), Fraction(10**3000 + 1, 10**3000), decimal.Decimal(10**450)]
"""Python and NumPy objects an ``object`` column can hold (the last three too long to read as a value; the last an
integer that is too long as a value and an id of 1,495 bits)."""
BYTES = [Undecodable(b"\xff"), Undecodable(b"M\xfcller"), Undecodable(b"\xc3"), Undecodable(b"\xef\xbb\xbf1"),
         Undecodable(b"\xfe\xff")]
"""Raw bytes in a CSV file: invalid UTF-8, Latin-1, a truncated sequence, a byte-order mark mid-file."""


# --- input kinds --------------------------------------------------------------------------------------------

def _fit(make: Callable[[list[Any]], Any], cells: list[Any]) -> Any:
    """``make(cells)``; a cell the kind cannot hold is missing there (as a loader would leave it)."""
    attempts = (lambda: cells, lambda: [c if _holds(make, c) else None for c in cells],
                lambda: [c if type(c) in (int, float, str) else None for c in cells])
    for attempt in attempts:
        try:
            return make(attempt())
        except (Exception, PanicException):
            continue
    return make([None] * len(cells))


def _holds(make: Callable[[list[Any]], Any], cell: Any) -> bool:
    try:
        make([cell])
    except (Exception, PanicException):  # a Polars constructor may panic on a cell it cannot convert
        return False
    return True


def _pandas(columns: dict[str, list[Any]], kinds: dict[str, str], family: str) -> pd.DataFrame:
    out: dict[str, Any] = {}
    for name, cells in columns.items():
        kind = kinds[name]
        if family == "pandas":
            out[name] = _fit(pd.Series, cells)
        elif family == "pandas-object":
            out[name] = pd.Series(cells, dtype=object)
        elif family == "pandas-nullable":
            dtype = {"int": "Int64", "float": "Float64", "text": "string"}[kind]
            out[name] = _fit(lambda c, d=dtype: pd.Series(pd.array(c, dtype=d)), cells)
        elif family == "pandas-categorical":
            out[name] = _fit(lambda c: pd.Series(pd.Categorical(c)), cells) if name in ("g", "note", "id") else \
                _fit(pd.Series, cells)
        else:  # pandas-arrow
            dtype = pd.ArrowDtype({"int": pa.int64(), "float": pa.float64(), "text": pa.large_string()}[kind])
            out[name] = _fit(lambda c, d=dtype: pd.Series(c, dtype=d), cells)
    return pd.DataFrame(out)


_POLARS = {"polars": {"int": pl.Int64, "float": pl.Float64, "text": pl.String},
           "polars-wide": {"int": pl.Int128, "float": pl.Decimal(38, 6), "text": pl.Categorical},
           "polars-enum": {"int": pl.UInt64, "float": pl.Float32, "text": None},
           "polars-text": {"int": pl.String, "float": pl.String, "text": pl.String}}


def _polars(columns: dict[str, list[Any]], kinds: dict[str, str], family: str) -> pl.DataFrame:
    series = []
    for name, cells in columns.items():
        dtype = _POLARS[family][kinds[name]]
        if family == "polars-text":  # a loader that reads every cell as its text
            cells = [None if c is None else bytes(c).decode("latin-1") if isinstance(c, Undecodable) else str(c)
                     for c in cells]
        if dtype is None:  # an Enum of the column's own texts
            texts = [c for c in cells if isinstance(c, str)]
            dtype = pl.Enum(sorted(set(texts)))
        series.append(_fit(lambda c, d=dtype, n=name: pl.Series(n, c, dtype=d, strict=False), cells))
    return pl.DataFrame(series)


def _undecodable_strings(cells: list[Any]) -> pa.Array:
    """Arrow strings whose bytes may be invalid UTF-8 (Arrow takes the buffers as they are)."""
    raw = [None if c is None else (bytes(c) if isinstance(c, Undecodable) else str(c).encode("utf-8", "replace"))
           for c in cells]
    return pa.array(raw, type=pa.binary()).view(pa.string())


_ARROW = {"pyarrow": {"int": pa.int64(), "float": pa.float64(), "text": pa.string()},
          "pyarrow-dictionary": {"int": pa.int64(), "float": pa.float64(),
                                 "text": pa.dictionary(pa.int32(), pa.string())},
          "pyarrow-large": {"int": pa.uint64(), "float": pa.decimal128(38, 10), "text": pa.large_string()}}


def _arrow(columns: dict[str, list[Any]], kinds: dict[str, str], family: str) -> pa.Table:
    arrays = {}
    for name, cells in columns.items():
        kind = _ARROW[family][kinds[name]]
        if kinds[name] == "text" and any(isinstance(c, Undecodable) for c in cells):
            array = _undecodable_strings(cells)
            arrays[name] = array.dictionary_encode() if pa.types.is_dictionary(kind) else array
        else:
            if pa.types.is_decimal(kind):  # a loader writes the decimals of the numbers it reads
                cells = [decimal.Decimal(repr(c)) if type(c) is float and c == c and abs(c) != float("inf") else c
                         for c in cells]
            arrays[name] = _fit(lambda c, k=kind: pa.array(c, type=k), cells)
    return pa.table(arrays)


def _text(cell: Any) -> str | bytes:
    if isinstance(cell, Undecodable):
        return bytes(cell)
    return "" if cell is None else str(cell)


ENCODINGS = {"csv": "utf-8", "csv-quoted": "utf-8", "csv-bom-crlf": "utf-8", "csv-latin1": "latin-1",
             "csv-utf16": "utf-16"}
"""The encoding each CSV kind is written in (and declared with, when not UTF-8)."""


def _csv(columns: dict[str, list[Any]], family: str) -> bytes:
    encoding = ENCODINGS[family]
    rows = list(zip(*columns.values(), strict=True))
    newline = "\r\n" if family == "csv-bom-crlf" else "\n"
    if family == "csv-quoted":  # a CSV writer: every cell quoted as it needs (bytes as their lossless text)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerows([COLUMNS, *[[_text(c) if not isinstance(c, Undecodable) else bytes(c).decode("latin-1")
                                      for c in row] for row in rows]])
        return out.getvalue().encode("utf-8", "surrogatepass")
    lines = [",".join(COLUMNS).encode(encoding)]
    for row in rows:  # assembled by hand: cells as they are, no quoting
        cells = [_text(c) for c in row]
        lines.append(b",".join(c if isinstance(c, bytes) else c.encode(encoding, "surrogatepass" if encoding ==
                                                                         "utf-8" else "replace") for c in cells))
    data = newline.encode(encoding).join(lines) + newline.encode(encoding)
    if family == "csv-utf16":
        data = ("\n".join(",".join(_text(c) if not isinstance(c, Undecodable) else bytes(c).decode("latin-1")
                                   for c in row) for row in [COLUMNS, *rows]) + "\n").encode("utf-16",
                                                                                             "surrogatepass")
    return (b"\xef\xbb\xbf" + data) if family == "csv-bom-crlf" else data


FRAME_KINDS = ("pandas", "pandas-object", "pandas-nullable", "pandas-categorical", "pandas-arrow", "polars",
               "polars-wide", "polars-enum", "polars-text", "pyarrow", "pyarrow-dictionary", "pyarrow-large")
FILE_KINDS = ("csv", "csv-quoted", "csv-bom-crlf", "csv-latin1", "csv-utf16", "parquet", "parquet-dictionary")
COLUMN_KINDS = ("list", "numpy-object", *FRAME_KINDS)
"""The kinds a one-column release takes (a frame's columns, a list, a NumPy object array)."""


def cells_for(kind: str) -> list[Any]:
    """The hostile cells a dataset of ``kind`` can hold."""
    if kind in ("csv", "csv-latin1", "polars-text"):
        return [*TEXT, *BYTES]
    if kind.startswith("csv"):
        return TEXT
    if kind.startswith(("pyarrow", "parquet")):
        return [*TEXT, *NUMBERS, *BYTES[:3]]
    if kind in ("pandas-object", "list", "numpy-object", "pandas"):
        return [*TEXT, *NUMBERS, *OBJECTS]
    return [*TEXT, *NUMBERS, *OBJECTS[:12]]


def build(rows: list[Row], kind: str, types: dict[str, str], folder: Path) -> Any:
    """``rows`` as a dataset of ``kind`` (a frame, a file path or a :class:`~securedp.reading.files.TableFile`,
    or for one-column kinds a mapping of columns); ``types``: each column's base type (``int``, ``float``,
    ``text``)."""
    from securedp.reading.files import TableFile

    columns = {name: [r[i] for r in rows] for i, name in enumerate(COLUMNS)}
    if kind == "list":
        return columns
    if kind == "numpy-object":
        return {name: np.array([*cells, 0], dtype=object)[:-1] for name, cells in columns.items()}
    if kind.startswith("pandas"):
        return _pandas(columns, types, kind)
    if kind.startswith("polars"):
        return _polars(columns, types, kind)
    if kind.startswith("pyarrow"):
        return _arrow(columns, types, kind)
    if kind.startswith("parquet"):
        path = folder / f"{kind}-{len(rows)}-{abs(hash(repr(rows))) % 10**12}.parquet"
        pq.write_table(_arrow(columns, types, "pyarrow-dictionary" if kind.endswith("dictionary") else "pyarrow"),
                       path)
        return str(path)
    path = folder / f"{kind}-{len(rows)}-{abs(hash(repr(rows))) % 10**12}.csv"
    path.write_bytes(_csv(columns, kind))
    encoding = ENCODINGS[kind]
    return str(path) if encoding == "utf-8" else TableFile(path, encoding=encoding)


def column(data: Any, name: str) -> Any:
    """The column ``name`` of a dataset, as its kind holds it."""
    if isinstance(data, dict):
        return data[name]
    if isinstance(data, pa.Table):
        return data.column(name)
    return data[name]


# --- what an analyst sees -----------------------------------------------------------------------------------

def outcome(call: Callable[[], Any]) -> tuple[str, ...]:
    """``("released",)`` or ``(exception type, message)``: what an analyst sees of one release."""
    try:
        call()
    except Exception as error:
        return (type(error).__name__, str(error))
    return ("released",)
