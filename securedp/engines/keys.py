"""Public keys of a grouped table, converted exactly to the type of their group column.

``keys=`` gives the cells of a table with public keys: one value per
``group_by`` column, as Python values or a pandas, Polars or pyarrow table
(:func:`public_keys`). Their structure is checked before the data is read
(one value per group column, no missing value, no key twice). Once the
table's column types are known, :meth:`PublicKeys.typed` converts every
key value to its column's type **exactly**, whether the table has rows or
not, or refuses it naming the column:

* an **integer** column (``Int8`` ... ``UInt64``) takes a Python or NumPy
  integer (not a bool), a string that is the canonical decimal text of an
  integer (``"10"``, ``"-3"``, ``"0"``; not ``"+10"``, ``"010"``, ``"-0"``,
  ``" 10"``, ``"1_0"`` or ``"10.0"``), or an integral float, ``Decimal`` or
  ``Fraction`` (``10.0`` is ``10``; ``10.5``, NaN and infinities are
  refused); the integer must lie in the range of the column's type;
* a **string** column takes a string (as it is) or an integer, written as
  its canonical decimal text (``10`` is ``"10"``); a float is refused (its
  text is not unique: ``10.0`` or ``10``).

No conversion rounds or truncates. Two keys that convert to the same value
(``10`` and ``"10"``) are refused as a repeated key. The converted keys are
the cells of the release and the keys of its output, so they have the
column's type there too.
"""

from __future__ import annotations

import decimal
import numbers
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from securedp.reading.cells import is_missing
from securedp.reading.columns import check_ordered
from securedp.reading.keys import key_column
from securedp.reading.tables import column_names, is_table, table_source

_CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]*")
_INT_RANGES: dict[type[pl.DataType], tuple[int, int]] = {
    pl.Int8: (-(1 << 7), (1 << 7) - 1), pl.Int16: (-(1 << 15), (1 << 15) - 1),
    pl.Int32: (-(1 << 31), (1 << 31) - 1), pl.Int64: (-(1 << 63), (1 << 63) - 1),
    pl.UInt8: (0, (1 << 8) - 1), pl.UInt16: (0, (1 << 16) - 1), pl.UInt32: (0, (1 << 32) - 1),
    pl.UInt64: (0, (1 << 64) - 1),
}


@dataclass(frozen=True)
class PublicKeys:
    """The caller's public keys as given: one tuple of values per key, in the order of ``group_by``."""

    group_by: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    def typed(self, schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
        """The keys as a Polars frame whose group columns have the types ``schema`` gives (see the module
        docstring); a key that does not convert exactly, or two that convert to one, raise naming the column."""
        columns = []
        for j, column in enumerate(self.group_by):
            dtype = schema[column]
            if dtype == pl.Null:  # a column without any usable cell has no type: the keys give it theirs
                columns.append(pl.Series(column, [row[j] for row in self.rows], strict=True))
                continue
            values = [_convert(row[j], column, dtype) for row in self.rows]
            columns.append(pl.Series(column, values, dtype=dtype))
        frame = pl.DataFrame({c.name: c for c in columns})  # a mapping: from a list, a column "" is "column_0"
        if frame.is_duplicated().any():
            raise ValueError(f"two public keys are the same key once converted to the types of the group "
                             f"column(s) {list(self.group_by)}")
        return frame


def _exact_integer(value: Any) -> int | None:
    """``value`` as an int when it is an integer, a canonical integer text or an integral number; else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, str):
        return int(value) if _CANONICAL_INT.fullmatch(value) else None
    if isinstance(value, numbers.Rational):
        return int(value.numerator) if value.denominator == 1 else None
    if isinstance(value, (float, np.floating, decimal.Decimal)):
        try:
            numerator, denominator = value.as_integer_ratio()  # exact, for every float width and for Decimal
        except (ValueError, OverflowError):  # NaN, infinities
            return None
        return int(numerator) if denominator == 1 else None
    return None


def _convert(value: Any, column: str, dtype: pl.DataType) -> Any:
    """One key value in the type of its group column, exactly, or an error naming the column."""
    kind = type(dtype)
    if kind in _INT_RANGES:
        n = _exact_integer(value)
        if n is None:
            raise TypeError(f"public key {value!r} is not an integer, but group column {column!r} holds {dtype} "
                            "integers (give integers, canonical integer text such as '10', or integral numbers)")
        lo, hi = _INT_RANGES[kind]
        if not lo <= n <= hi:
            raise ValueError(f"public key {n} is outside the range of group column {column!r} ({dtype}: "
                             f"{lo} to {hi})")
        return n
    if dtype == pl.String:
        if isinstance(value, str):
            return value
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            return str(int(value))
        raise TypeError(f"public key {value!r} is not a string, but group column {column!r} holds strings "
                        "(give strings, or integers for their decimal text)")
    raise TypeError(f"group column {column!r} has type {dtype}: public keys are for integer or string columns")


def public_keys(keys: Any, group_by: Sequence[str]) -> PublicKeys:
    """The caller's public keys (tuples, single values for one group column, or a pandas, Polars or pyarrow
    table, or a mapping of column names to columns, with the ``group_by`` columns), checked for shape, missing
    values and repeats; not yet typed."""
    if is_table(keys) or isinstance(keys, Mapping):  # read as every table is: each key column by the rule of keys
        missing = [c for c in group_by if c not in column_names(keys)]
        if missing:
            raise ValueError(f"the public keys lack the group_by column(s) {missing}")
        source = table_source(keys, group_by)
        read = [key_column(source.columns[c], c, "group_by") for c in group_by]
        if any(column.unusable.any() for column in read):
            raise ValueError("a public key has a missing value")
        rows = list(zip(*(column.values.to_list() for column in read), strict=True))
    else:
        check_ordered(keys, "keys", "a sequence of public keys or a table of them")
        rows = [k if isinstance(k, tuple) else (k,) for k in keys]
        if any(len(r) != len(group_by) for r in rows):
            raise ValueError(f"every public key must have {len(group_by)} value(s), one per group_by column")
    if any(is_missing(v) for r in rows for v in r):
        raise ValueError("a public key has a missing value")
    try:
        repeated = len(set(rows)) != len(rows)
    except TypeError:
        raise TypeError("public keys must be hashable values (integers or strings)") from None
    if repeated:
        raise ValueError("the public keys repeat a key")
    return PublicKeys(tuple(group_by), tuple(rows))

