"""A column's declared type, read from its schema alone: the grid its values come on, if the type states one.

The answer chooses the default lattice of a value column (:func:`securedp.mechanisms.records.typed_lattice`):
step 1 for an integer column, so whole hours stay whole, and step ``10**-s`` for a decimal column of scale ``s``
(``decimal(10, 2)``: step ``1/100``), so cents stay cents and the selections' candidates are the values the data
can take. It is read from the **schema**, never from the cells: the type a column declares is public, like its name
(as in OpenDP's and Tumult's input domains), and two neighbouring tables with one schema get one lattice whatever
rows they hold.

========================================  ==========================================================
column or table                           its declared grid (:func:`typed_step`)
========================================  ==========================================================
NumPy array                               1 when its dtype is a signed or unsigned integer (``kind`` ``i``/``u``)
pandas Series / DataFrame column          1 for NumPy ``int*``/``uint*``, nullable ``Int*``/``UInt*`` and Arrow
                                          integers; ``10**-s`` for ``pd.ArrowDtype(pa.decimal128(p, s))``
Polars Series / DataFrame / LazyFrame     1 for ``Int*``/``UInt*``; ``10**-s`` for ``Decimal(p, s)``
pyarrow Array / ChunkedArray / Table      1 for an Arrow integer type; ``10**-s`` for
                                          ``decimal128(p, s)`` and ``decimal256(p, s)``
Spark DataFrame                           1 for ``ByteType``, ``ShortType``, ``IntegerType``, ``LongType``;
                                          ``10**-s`` for ``DecimalType(p, s)``
Parquet file                              the file's schema, as Polars reads it (integers, ``Decimal(p, s)``)
CSV file, Python list, anything else      none: CSV cells are text, a list has no type (give ``lattice=1``,
                                          ``lattice="0.01"``, ``:0.01`` or ``--step 0.01`` for the grid)
========================================  ==========================================================

**Python ``Decimal`` objects** (a list, a NumPy or pandas ``object`` column) have no column-level scale: each
cell carries its own exponent, and reading it would let a cell choose the lattice, so such a column has no declared
grid (the bounds' rule applies; give the grid as ``lattice=``). A negative Arrow scale (``decimal128(5, -2)``, whole
hundreds) is step ``100``. A scale finer than the data's own grid (Spark gives Python ``Decimal`` values
``decimal(38, 18)``) is honoured but helps nothing: only the data's own grid keeps a selection's candidates off the
gaps between tied records (:func:`securedp.mechanisms.quantile.default_lattice`); cast the column or pass the grid.

A schema inferred from the data (pandas ``read_csv`` gives ``float64`` to an integer column with one
missing cell) is the data holder's to fix before a release: declare the types when reading, or pass
the lattice. ``bool`` is no integer type here (booleans are not numbers to the lattice screen).

**Declared types** (:func:`declared_schema`): ``schema={"hours": "int", "pid": "text"}`` (the command's
``--schema hours:int,pid:text``) declares how the named columns are read, whatever their own type, so
that a CSV file's whole numbers stay whole: ``"int"`` (integers: a value column's default step is 1 and a
value holding a fraction is an unusable record; ids and keys read as integers,
:mod:`securedp.reading.keys`), ``"number"`` (exact numbers, a value column's default: no declared grid, even
for a decimal column) or ``"text"`` (ids and keys read as text). The declaration is public, like the column
names, and decides nothing by a cell.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

__all__ = ["DECLARED_TYPES", "declared_schema", "typed_step", "typed_steps"]

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


def _decimal_step(scale: int) -> Fraction:
    """The grid of a decimal type of scale ``scale``: ``10**-scale`` (a negative scale: whole powers of ten)."""
    return Fraction(1, 10**scale) if scale >= 0 else Fraction(10**-scale)


def _polars_step(dtype: Any) -> Fraction | None:
    if dtype.is_integer():
        return Fraction(1)
    return _decimal_step(dtype.scale) if dtype.is_decimal() else None


def _arrow_step(dtype: Any) -> Fraction | None:
    import pyarrow as pa  # loaded already: ``dtype`` is an Arrow type

    if pa.types.is_integer(dtype):
        return Fraction(1)
    return _decimal_step(dtype.scale) if pa.types.is_decimal(dtype) else None


def _pandas_step(dtype: Any) -> Fraction | None:
    arrow = getattr(dtype, "pyarrow_dtype", None)  # pd.ArrowDtype: the Arrow type's grid
    if arrow is not None:
        return _arrow_step(arrow)
    kind = getattr(dtype, "kind", None)
    return Fraction(1) if kind in ("i", "u") and not str(dtype).startswith("bool") else None


def _spark_step(dtype: Any) -> Fraction | None:
    name = dtype.typeName()
    if name in _SPARK_INTEGERS:
        return Fraction(1)
    return _decimal_step(dtype.scale) if name == "decimal" else None


def typed_step(column: Any) -> Fraction | None:
    """The grid the one column ``column`` declares by its type: 1 for integers, ``10**-s`` for a decimal of scale
    ``s``, else ``None`` (see the module docstring)."""
    module = _module(column)
    name = type(column).__name__
    if module == "numpy" or (module == "pandas" and name == "Series"):
        return _pandas_step(getattr(column, "dtype", None))
    if module == "polars" and name == "Series":
        return _polars_step(column.dtype)
    if module == "pyarrow" and hasattr(column, "type"):
        return _arrow_step(column.type)
    return None


def typed_steps(table: Any, names: Sequence[str], schema: Mapping[str, str] | None = None) -> dict[str, Fraction]:
    """The declared grid of each column among ``names`` whose type states one in ``table`` (a table, or a CSV or
    Parquet path): 1 for an integer column or one ``schema`` declares ``"int"``, ``10**-s`` for a decimal column of
    scale ``s`` (a column ``schema`` declares otherwise has none).

    A name the table does not hold has none here: the reader names it when the table is read.
    """
    declared = dict(schema or {})
    typed = _typed_steps(table, [c for c in names if c not in declared])
    return typed | {c: Fraction(1) for c in names if declared.get(c) == "int"}


def _of(types: Mapping[str, Any], names: Sequence[str], step: Callable[[Any], Fraction | None]) -> dict[str, Fraction]:
    found = {c: step(types[c]) for c in names if c in types}
    return {c: s for c, s in found.items() if s is not None}


def _typed_steps(table: Any, names: Sequence[str]) -> dict[str, Fraction]:
    from securedp.reading.files import FileTable, TableFile

    if isinstance(table, TableFile):
        return _typed_steps(table.path, names)
    if isinstance(table, FileTable):  # a CSV file's columns are text; a Parquet file's, its own types
        return {} if table.lines is not None else _typed_steps(table.frame, names)
    if isinstance(table, Mapping):  # the columns of a one-column release
        found = {c: typed_step(table[c]) for c in names if c in table}
        return {c: s for c, s in found.items() if s is not None}
    if isinstance(table, (str, pathlib.Path)):
        file = pathlib.Path(table)
        if file.suffix.lower() not in (".parquet", ".pq") or not file.exists():
            return {}
        import polars as pl

        try:
            schema = pl.read_parquet_schema(file)
        except (OSError, pl.exceptions.PolarsError):
            return {}  # not a Parquet file after all: the reader refuses it when the table is read
        return _of(schema, names, _polars_step)
    module, kind = _module(table), type(table).__name__
    if module == "polars":
        return _of(table.collect_schema() if kind == "LazyFrame" else table.schema, names, _polars_step)
    if module == "pandas" and kind == "DataFrame":
        return _of({c: table[c].dtype for c in names if c in table.columns}, names, _pandas_step)
    if module == "pyarrow" and kind == "Table":
        return _of({c: table.schema.field(c).type for c in names if c in table.column_names}, names, _arrow_step)
    if module == "pyspark":
        return _of({f.name: f.dataType for f in table.schema.fields}, names, _spark_step)
    return {}
