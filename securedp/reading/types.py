"""A column's declared type, read from its schema alone: is it an integer column?

The answer chooses the default lattice of a value column (step 1 for integers, so whole hours stay
whole: :func:`securedp.mechanisms.records.typed_lattice`). It is read from the **schema**, never from
the cells: the type a column declares is public, like its name (as in OpenDP's and Tumult's
input domains), and two neighbouring tables with one schema get one lattice whatever rows they hold.

========================================  ==========================================================
column or table                           integer when
========================================  ==========================================================
NumPy array                               its dtype is a signed or unsigned integer (``kind`` ``i``/``u``)
pandas Series / DataFrame column          NumPy ``int*``/``uint*``, or nullable ``Int*``/``UInt*``
Polars Series / DataFrame / LazyFrame     ``Int*``/``UInt*``
pyarrow Array / ChunkedArray / Table      an Arrow integer type
Spark DataFrame                           ``ByteType``, ``ShortType``, ``IntegerType``, ``LongType``
Parquet file                              the file's schema says ``Int*``/``UInt*``
CSV file, Python list, anything else      never: CSV cells are text, a list has no type (give ``lattice=1``,
                                          ``:1`` or ``--step 1`` for whole numbers)
========================================  ==========================================================

A schema inferred from the data (pandas ``read_csv`` gives ``float64`` to an integer column with one
missing cell) is the data holder's to fix before a release: declare the types when reading, or pass
the lattice. ``bool`` is no integer type here (booleans are not numbers to the lattice screen).

**Declared types** (:func:`declared_schema`): ``schema={"hours": "int", "pid": "text"}`` (the command's
``--schema hours:int,pid:text``) declares how the named columns are read, whatever their own type, so
that a CSV file's whole numbers stay whole: ``"int"`` (integers: a value column's default step is 1 and a
value holding a fraction is an unusable record; ids and keys read as integers,
:mod:`securedp.reading.keys`), ``"number"`` (exact numbers, a value column's default) or ``"text"`` (ids
and keys read as text). The declaration is public, like the column names, and decides nothing by a cell.
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DECLARED_TYPES", "declared_schema", "integer_columns", "integer_typed"]

DECLARED_TYPES = ("int", "number", "text")
"""The types a caller may declare for a column (``schema=``)."""


def declared_schema(schema: Any) -> dict[str, str]:
    """``schema`` (a mapping of column names to :data:`DECLARED_TYPES`, or ``None``) checked, as a dict."""
    if schema is None:
        return {}
    if not hasattr(schema, "items"):
        raise TypeError("schema must map column names to declared types, such as {'hours': 'int'}")
    checked: dict[str, str] = {}
    for column, declared in schema.items():
        if not isinstance(column, str) or declared not in DECLARED_TYPES:
            raise ValueError(f"schema: column {column!r} is declared {declared!r}; the declared types are "
                             f"{', '.join(DECLARED_TYPES)}")
        checked[column] = declared
    return checked

_SPARK_INTEGERS = frozenset({"byte", "short", "integer", "long"})


def _module(data: Any) -> str:
    return type(data).__module__.split(".")[0]


def _polars_integer(dtype: Any) -> bool:
    return bool(dtype.is_integer())


def _arrow_integer(dtype: Any) -> bool:
    import pyarrow as pa  # loaded already: ``dtype`` is an Arrow type

    return bool(pa.types.is_integer(dtype))


def _pandas_integer(dtype: Any) -> bool:
    kind = getattr(dtype, "kind", None)
    return kind in ("i", "u") and not str(dtype).startswith("bool")


def integer_typed(column: Any) -> bool:
    """True when the one column ``column`` declares an integer type (see the module docstring)."""
    module = _module(column)
    name = type(column).__name__
    if module == "numpy" or (module == "pandas" and name == "Series"):
        return _pandas_integer(getattr(column, "dtype", None))
    if module == "polars" and name == "Series":
        return _polars_integer(column.dtype)
    if module == "pyarrow" and hasattr(column, "type"):
        return _arrow_integer(column.type)
    return False


def integer_columns(table: Any, names: Sequence[str], schema: Mapping[str, str] | None = None) -> frozenset[str]:
    """The columns among ``names`` that ``table`` (a table, or a CSV or Parquet path) declares integer, or that
    ``schema`` declares ``"int"`` (a column ``schema`` declares otherwise is not integer).

    A name the table does not hold is simply not integer here: the reader names it when the table is read.
    """
    declared = dict(schema or {})
    typed = _typed_integer_columns(table, [c for c in names if c not in declared])
    return typed | frozenset(c for c in names if declared.get(c) == "int")


def _typed_integer_columns(table: Any, names: Sequence[str]) -> frozenset[str]:
    from securedp.reading.files import FileTable, TableFile

    if isinstance(table, TableFile):
        return _typed_integer_columns(table.path, names)
    if isinstance(table, FileTable):  # a CSV file's columns are text; a Parquet file's, its own types
        return frozenset() if table.lines is not None else _typed_integer_columns(table.frame, names)
    if isinstance(table, Mapping):  # the columns of a one-column release
        return frozenset(c for c in names if c in table and integer_typed(table[c]))
    if isinstance(table, (str, pathlib.Path)):
        file = pathlib.Path(table)
        if file.suffix.lower() not in (".parquet", ".pq") or not file.exists():
            return frozenset()
        import polars as pl

        try:
            schema = pl.read_parquet_schema(file)
        except (OSError, pl.exceptions.PolarsError):
            return frozenset()  # not a Parquet file after all: the reader refuses it when the table is read
        return frozenset(c for c in names if c in schema and _polars_integer(schema[c]))
    module, kind = _module(table), type(table).__name__
    if module == "polars":
        schema = table.collect_schema() if kind == "LazyFrame" else table.schema
        return frozenset(c for c in names if c in schema and _polars_integer(schema[c]))
    if module == "pandas" and kind == "DataFrame":
        return frozenset(c for c in names if c in table.columns and _pandas_integer(table[c].dtype))
    if module == "pyarrow" and kind == "Table":
        return frozenset(c for c in names if c in table.column_names and _arrow_integer(table.schema.field(c).type))
    if module == "pyspark":
        fields = {f.name: f.dataType.typeName() for f in table.schema.fields}
        return frozenset(c for c in names if fields.get(c) in _SPARK_INTEGERS)
    return frozenset()
