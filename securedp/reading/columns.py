"""One column of any in-memory kind, read exactly: the records the lattice screen turns into units.

:func:`column_values` is the one place where a column object becomes records, for one-column releases
(:func:`securedp.lattice.columns.as_records`) and for the value columns of grouped tables alike. One
rule per kind, never a converter's accident:

=====================================  ============================================================
column                                 records
=====================================  ============================================================
NumPy array                            itself (``longdouble`` included: the screen reads it exactly)
pyarrow ``Array``/``ChunkedArray``     integers of at most 64 bits and floats without a null:
                                       ``to_numpy()`` (the same values, exactly); anything else
                                       ``to_pylist()``: exact Python values, ``None`` for a null
                                       (text that is not UTF-8 decoded lossily: :mod:`.text`)
pandas Series, NumPy dtype             ``to_numpy()``: the column's own int, uint, float, bool or
                                       object values (a pandas ``Index`` or array, ``pd.array(...)``,
                                       is read as the Series holding it, by the same rules)
pandas Series, extension dtype         ``Int*``/``UInt*`` without a missing value: an ``int64``/
(nullable ``Int64``, ``Float64``,      ``uint64`` array; anything else (a missing value, ``Float*``,
``boolean``, ``string``, Arrow)        ``boolean``, text, Arrow types): Python objects with ``None``
                                       for a missing value (``to_numpy(dtype=object, na_value=None)``)
Polars Series                          integers of at most 64 bits or booleans without a null, and
                                       floats: ``to_numpy()``; anything else (a null in an integer
                                       column, 128-bit integers, decimals, text): Python objects
                                       (``to_list()``), read record by record: text stays text
any other iterable                     ``list(...)``
=====================================  ============================================================

An integer column with a missing value is **never** read through ``float64`` (pandas 3 and Polars
both give ``float64`` from ``to_numpy()`` there, rounding every other value above ``2**53``): one
person's missing value cannot move anyone else's.

A value column that a release screens onto the lattice is read by :func:`value_column`: the same records,
except that an integer (of at most 64 bits) or float column with a missing cell, from pandas (nullable
dtypes), Polars or pyarrow, is a NumPy masked array instead of Python objects: its own values at their own
dtype, 0 in each missing cell, and the mask of the missing cells, the records :func:`column_values` reads as
``None``; a Polars text column whose every cell is a decimal integer of at most 18 digits is those integers
(the numbers its cells read as one by one: :data:`_INTEGER_TEXT`); and a pandas ``Float32``/``Float64``
column without a missing cell is its values as ``float64``
(exactly: ``float64`` holds every ``float32``). The lattice screen reads either in one vectorised pass (a
column of 10**6 took about 130 ms as Python objects, with or without a missing value).
"""

from __future__ import annotations

import collections.abc
from typing import Any

import numpy as np

from securedp.reading.text import arrow_text

__all__ = ["check_ordered", "column_values", "refuse_non_column", "refuse_unordered", "value_column"]

_WIDE = {"Int8": "int64", "Int16": "int64", "Int32": "int64", "Int64": "int64",
         "UInt8": "uint64", "UInt16": "uint64", "UInt32": "uint64", "UInt64": "uint64"}


def _module(data: Any) -> str:
    return type(data).__module__.split(".")[0]


def refuse_non_column(column: Any, name: str) -> None:
    """Raise :class:`TypeError` when ``column`` is no column of records, judged by its type alone: a text
    (``str``, ``bytes``, ``bytearray``: one value, whose characters or bytes are no rows) or a set (no row
    order, so ids and values could not be aligned and a replay could pair them otherwise)."""
    if isinstance(column, (str, bytes, bytearray)):
        raise TypeError(f"{name} must be a column of records, not {type(column).__name__}: a text is one value "
                        "(put it in a list to release it as a record)")
    if isinstance(column, collections.abc.Set):
        raise TypeError(f"{name} must be a column of records in row order, not a {type(column).__name__}, which "
                        "has no order (pass a list)")


def refuse_unordered(values: Any, name: str) -> None:
    """Raise :class:`TypeError` when the public values ``values`` (keys, categories, levels, candidates,
    scores) are a set: the order of a release's values, and of the noise each one draws, follows theirs,
    and a set of texts iterates in another order in every process, so one seed would give other bytes."""
    if isinstance(values, collections.abc.Set):
        raise TypeError(f"{name} must be in a fixed order (a list or tuple), not a {type(values).__name__}: the "
                        "release follows their order")


def check_ordered(values: Any, name: str, what: str) -> None:
    """Raise :class:`TypeError` unless ``values`` is an ordered collection of public values: a text
    (``str``, ``bytes``) or a non-iterable raises "``name`` must be ``what``", a set as
    :func:`refuse_unordered` says."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be {what}")
    refuse_unordered(values, name)


def _pandas_series(data: Any) -> Any:
    """``data`` as a pandas Series when it is a pandas column: itself, or the Series holding a pandas
    ``Index`` or array (``pd.array(...)``, ``Series.array``) without a copy; else None. An array's own
    ``to_numpy()`` gives ``float64`` for an integer array with a missing value, rounding its integers above
    ``2**53``: it is never called."""
    if _module(data) != "pandas":
        return None
    if type(data).__name__ == "Series":
        return data
    import pandas as pd  # loaded already: ``data`` is a pandas object

    if isinstance(data, (pd.api.extensions.ExtensionArray, pd.Index)):
        return pd.Series(data, copy=False)
    return None


def _pandas_values(series: Any) -> np.ndarray:
    dtype = series.dtype
    if isinstance(dtype, np.dtype):
        return np.asarray(series.to_numpy())
    wide = _WIDE.get(str(dtype))
    if wide is not None and not series.isna().any():
        return np.asarray(series.to_numpy(dtype=wide))
    return np.asarray(series.to_numpy(dtype=object, na_value=None), dtype=object)


def _polars_values(series: Any) -> np.ndarray | list[Any]:
    import polars as pl  # loaded already: ``series`` is a Polars Series

    dtype = series.dtype
    wide = dtype in (pl.Int128, pl.UInt128)  # NumPy holds no 128-bit integer: Python ints, null or not
    if dtype.is_float() or ((dtype.is_integer() or dtype == pl.Boolean) and not wide and series.null_count() == 0):
        return np.asarray(series.to_numpy())
    return list(series.to_list())


def _arrow_values(data: Any) -> np.ndarray | list[Any]:
    if _module(data) == "pyarrow":
        import pyarrow as pa  # loaded already: ``data`` is a pyarrow array

        kind = data.type
        if data.null_count == 0 and (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            return np.asarray(data.to_numpy())  # a NumPy array of the same values (float16 stays float16)
    return list(arrow_text(data).to_pylist())


def column_values(data: Any) -> np.ndarray | list[Any]:
    """The records of the one column ``data`` (see the module docstring); ``data`` is known to be one column."""
    if isinstance(data, np.ndarray):
        return data
    if callable(getattr(type(data), "to_pylist", None)):  # a pyarrow Array or ChunkedArray
        return _arrow_values(data)
    series = _pandas_series(data)
    if series is not None:
        return _pandas_values(series)
    module = _module(data)
    if module == "polars" and type(data).__name__ == "Series":
        return _polars_values(data)
    to_numpy = getattr(data, "to_numpy", None)
    if to_numpy is not None and callable(to_numpy):
        return np.asarray(to_numpy())
    return data if isinstance(data, list) else list(data)


_INTEGER_TEXT = r"^-?[0-9]{1,18}$"
"""A value column of Polars text whose every cell matches this is read as those integers at once: each is the number
its text reads as record by record (the same values, sooner). Only for values: a label is its text
(a histogram's categories, a partition's keys), whatever the other cells hold."""


def value_column(data: Any) -> np.ndarray | list[Any]:
    """The records of a value column (see the module docstring): :func:`column_values`, or a masked array of
    an integer or float column with a missing cell, or a pandas ``Float*`` column's values as ``float64``."""
    numeric = _numeric_values(data)
    return column_values(data) if numeric is None else numeric


def _numeric_values(data: Any) -> np.ndarray | None:
    """An integer (at most 64 bits) or float column holding a missing cell as ``(values, mask)``; a pandas
    nullable integer or float column without one as its values; else None (:func:`column_values` reads it)."""
    module = _module(data)
    series = _pandas_series(data)
    if series is not None:
        data = series
        dtype = str(data.dtype)
        wide = _WIDE.get(dtype) or ("float64" if dtype in ("Float32", "Float64") else None)
        if wide is None:
            return None
        absent = np.asarray(data.isna().to_numpy(), dtype=bool)
        if not absent.any():  # the column's own values (a Float* column too: float64 holds float32 exactly)
            return np.asarray(data.to_numpy(dtype=wide))
        return np.ma.MaskedArray(np.asarray(data.to_numpy(dtype=wide, na_value=0)), absent)
    if module == "polars" and type(data).__name__ == "Series":
        import polars as pl  # loaded already: ``data`` is a Polars Series

        if data.dtype == pl.String and data.null_count() == 0 and data.str.contains(_INTEGER_TEXT).all():
            return np.asarray(data.cast(pl.Int64).to_numpy())  # text of integers (a CSV column), parsed at once
        numeric = data.dtype.is_float() or (data.dtype.is_integer() and data.dtype not in (pl.Int128, pl.UInt128))
        if not numeric or data.null_count() == 0:
            return None
        return np.ma.MaskedArray(np.asarray(data.fill_null(0).to_numpy()), np.asarray(data.is_null().to_numpy()))
    if module == "pyarrow" and callable(getattr(type(data), "to_pylist", None)):
        import pyarrow as pa
        import pyarrow.compute as pc

        if not (pa.types.is_integer(data.type) or pa.types.is_floating(data.type)) or data.null_count == 0:
            return None
        values = pc.fill_null(data, pa.scalar(0, type=data.type))
        absent = data.is_null()  # booleans: an Array converts them only with zero_copy_only=False
        absent = absent.to_numpy() if isinstance(absent, pa.ChunkedArray) else absent.to_numpy(zero_copy_only=False)
        return np.ma.MaskedArray(np.asarray(values.to_numpy()), np.asarray(absent, dtype=bool))
    return None
