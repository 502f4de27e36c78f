"""A table release from a file of any size in a bounded memory: the persons in pieces, each bounded in memory.

A CSV or Parquet file whose in-memory release would need more than the caller's ``memory_budget``
(:func:`piece_count`, from public things only: the budget, the file's size, a Parquet file's row count and
the number of columns read) is read once in pieces of bounded size (:mod:`securedp.reading.pieces`) and
its rows are written, to a temporary folder, into ``K`` parts by a keyed hash of each row's person id
(read by the one rule of :mod:`securedp.reading.keys`), its key fresh from the OS (so that no one can
choose ids that crowd one part). All the rows of a person are then in one part, so that per-person
bounding in each part (:class:`~securedp.engines.polars.engine.PolarsEngine`, the same salted SHA-256
rule) keeps exactly the rows the whole table's bounding keeps, and the exact integers per key of the
parts add up to the whole table's (:mod:`securedp.engines.polars.merge`): **the same salt gives the same
release, byte for byte, whatever** ``K``. Without an id column each row is its own person and the parts
are runs of rows.

Refusals are those of the whole table, decided before anything is drawn: every part is read and checked
(ids, keys and value cells) when the release is prepared, and an unusable id or key is refused naming
the first in the file and their number there, as for the whole file. (A value cell refused names the
first refused in its part.) Each checked part is kept on disk between uses (compressed, as are the rows by
part), and read back when a salt's integers are computed: at most one part is in memory at a
time. ``K = 1`` is the in-memory engine itself.
"""

from __future__ import annotations

import logging
import math
import pathlib
import re
import secrets
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, TypeVar

import numpy as np
import polars as pl

from securedp.engines.keys import PublicKeys
from securedp.engines.polars.engine import PolarsEngine
from securedp.engines.polars.merge import merged_aggregates, merged_units
from securedp.engines.protocol import UNITS, Bounds, ColumnSpec, Engine, KeyAggregates, UnitCounts
from securedp.reading.files import FileTable, TableFile, is_parquet
from securedp.reading.keys import KeyColumn, key_column
from securedp.reading.pieces import cuttable_encoding, file_pieces

DEFAULT_BUDGET = 4 << 30
"""The memory budget of a table release when the caller sets none: 4 GiB."""
RESERVED = 768 << 20
"""Of the budget, what the interpreter, its libraries and the release's own work beside the rows take."""
PER_ROW, PER_COLUMN = 24, 48
"""Peak bytes of the in-memory release per row of a Parquet file: ``PER_ROW + PER_COLUMN * columns read``
(measured: 1.6 GiB for 10**7 rows of three integer columns, 14 GiB for 10**8)."""
PER_CSV_BYTE = 24
"""Peak bytes of the in-memory release per byte of a CSV file (its cells are read as text)."""
MAX_PARTS = 1 << 12
"""The most parts a file is read in (10**9 rows of Parquet need about 25 at 8 GiB): a budget too small for the file
then gets parts larger than itself, rather than millions of files."""
_UNITS = {"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "kb": 10**3, "mb": 10**6,
          "gb": 10**9, "tb": 10**12}
LOG = logging.getLogger("securedp.pieces")
"""Progress of a release in parts (rows read, parts checked and bounded), at level ``INFO``: counts of rows and
parts only, for the data holder's own log (nothing is shown unless the caller configures logging)."""
_PACKED: Literal["zstd"] = "zstd"
"""How the parts' files are compressed (lossless): about 7 bytes a row of three integer columns, not 32, so that the
temporary files of 10**9 rows take about the Parquet file's size rather than 30 GB."""
_PLACE = "_securedp_place"
_PART = "_securedp_part"
T = TypeVar("T")


def memory_budget(value: Any) -> int:
    """``value`` as a number of bytes: a positive int, or text such as ``"4GiB"``, ``"512 MiB"``, ``"8GB"``
    (``None``: :data:`DEFAULT_BUDGET`). Anything else raises ``ValueError``."""
    if value is None:
        return DEFAULT_BUDGET
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", value) if isinstance(value, str) else None
    if match is None or match.group(2).lower() not in _UNITS or Fraction(match.group(1)) <= 0:
        raise ValueError(f"memory_budget must be a positive number of bytes or text such as '4GiB', '512MiB' or "
                         f"'8GB', got {value!r}")
    return max(1, int(Fraction(match.group(1)) * _UNITS[match.group(2).lower()]))


def _usable(budget: int) -> int:
    return max(budget - RESERVED, budget // 4, 1)


def read_sizes(usable: int, columns: int) -> tuple[int, int]:
    """The rows (Parquet) and bytes (CSV) read at a time, a quarter of the ``usable`` budget at the most."""
    rows = max(1 << 16, min(1 << 24, usable // (4 * (PER_ROW + PER_COLUMN * columns))))
    return rows, max(1 << 20, usable // (4 * PER_CSV_BYTE))


def piece_count(file: TableFile, columns: int, budget: int) -> int:
    """How many parts the file is read in so that each part's release fits ``budget`` bytes (from public things
    only: the budget, the file's size, a Parquet file's row count and the number of ``columns`` read); 1 for a
    CSV file in an encoding that cannot be cut at its line breaks
    (:func:`~securedp.reading.pieces.cuttable_encoding`)."""
    path = pathlib.Path(file.path)
    if not path.is_file() or not columns:
        return 1
    if is_parquet(path):
        import pyarrow.parquet as pq

        try:
            rows = int(pq.ParquetFile(path).metadata.num_rows)
        except Exception:  # not a Parquet file: the whole file's reader refuses it
            return 1
        need = rows * (PER_ROW + PER_COLUMN * columns)
    else:
        if not cuttable_encoding(file.encoding):
            return 1
        need = path.stat().st_size * PER_CSV_BYTE
    return min(MAX_PARTS, max(1, math.ceil(need / _usable(budget))))


def memory_engine(data: Any, id_column: str | None, bounds: Bounds, columns: Sequence[ColumnSpec],
                  public: PublicKeys | None, missing: str, fill: Any) -> Engine:
    """The engine of every table but a Spark one: the in-memory engine, or for a file that does not fit the
    memory budget (:attr:`Bounds.memory_budget`) the :class:`PiecesEngine`."""
    if isinstance(data, (str, pathlib.Path)):
        data = TableFile(data)
    if isinstance(data, TableFile):
        read = [*([id_column] if id_column is not None else []), *bounds.group_by, *(c.column for c in columns)]
        count = piece_count(data, len(dict.fromkeys(read)), memory_budget(bounds.memory_budget))
        if count > 1:
            return PiecesEngine(data, id_column, bounds, columns, public, missing, fill, count)
    return PolarsEngine(data, id_column, bounds, columns, public, missing, fill)


@dataclass(frozen=True)
class _TypedOnce(PublicKeys):
    """Public keys converted once to the group columns' types for every part (the parts share the file's types:
    converting 10**4 keys took 0.1 s a part)."""

    def typed(self, schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
        types = tuple(repr(schema[c]) for c in self.group_by)
        cache: dict[tuple[str, ...], pl.DataFrame] = self.__dict__.setdefault("_typed", {})
        if types not in cache:
            cache[types] = super().typed(schema)
        return cache[types]


class PiecesEngine:
    """The engine of a file read in ``count`` parts (see the module)."""

    def __init__(self, file: TableFile, id_column: str | None, bounds: Bounds, columns: Sequence[ColumnSpec],
                 public: PublicKeys | None, missing: str, fill: Any, count: int) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="securedp-pieces-")  # removed with the engine
        try:
            self._split(file, id_column, bounds, columns, public, missing, fill, count)
        except BaseException:  # a refusal or a failure: the private rows written so far go now, not when collected
            self._folder.cleanup()
            raise

    def _split(self, file: TableFile, id_column: str | None, bounds: Bounds, columns: Sequence[ColumnSpec],
               public: PublicKeys | None, missing: str, fill: Any, count: int) -> None:
        """Read the file, write each person's rows to the part of its id, check every part and park it on disk."""
        folder = pathlib.Path(self._folder.name)
        budget = _usable(memory_budget(bounds.memory_budget))
        wanted = list(dict.fromkeys([*([id_column] if id_column is not None else []), *bounds.group_by,
                                     *(c.column for c in columns)]))
        roles = [(c, "group_by") for c in bounds.group_by] + ([(id_column, "id")] if id_column is not None else [])
        dropped = {c for c, role in roles if bounds.analyst_facing or (bounds.drop_missing_keys and role == "group_by")}
        first: dict[str, tuple[KeyColumn, int, str]] = {}
        unusable = dict.fromkeys([c for c, _ in roles], 0)
        seed = secrets.randbits(64)
        parts: list[list[pathlib.Path]] = [[] for _ in range(count)]
        empty: pl.DataFrame | None = None
        lines = False
        rows, size = read_sizes(budget, len(wanted))
        read_rows = 0
        for b, piece in enumerate(file_pieces(file, wanted, rows, size)):
            frame, lines = piece.frame, piece.lines is not None
            empty = frame.clear() if empty is None else empty
            reads = {c: key_column(frame[c], c, role, bounds.schema.get(c)) for c, role in roles}
            for c, _ in roles:
                if c not in dropped and reads[c].unusable.any():
                    if c not in first:
                        at = int(reads[c].unusable.arg_true()[0])
                        first[c] = (reads[c], at, piece.where(at))
                    unusable[c] += int(reads[c].unusable.sum())
            place = piece.lines if piece.lines is not None else piece.positions
            frame = frame.with_columns(pl.Series(_PLACE, np.asarray(place, dtype=np.int64)))
            if id_column is not None:
                frame = frame.with_columns((reads[id_column].values.hash(seed) % count).cast(pl.Int64).alias(_PART))
            else:
                frame = frame.with_columns(pl.lit(b % count, pl.Int64).alias(_PART))
            for (p,), part in frame.partition_by(_PART, as_dict=True, include_key=False).items():
                path = folder / f"rows-{p}-{b}.arrow"
                part.write_ipc(path, compression=_PACKED)
                parts[int(p)].append(path)
            read_rows += frame.height
            LOG.info("read %s rows of %s into %d parts", f"{read_rows:,}", file.path, count)
        for c, role in roles:  # in the order the whole table's reader refuses them
            if c in first:
                read, at, stands = first[c]
                raise read.refused(c, role, _stands(stands), at, unusable[c])
        assert empty is not None
        if public is not None:
            public = _TypedOnce(public.group_by, public.rows)
        self._engines: list[PolarsEngine] = []
        self._parked: list[pathlib.Path] = []
        self._whole: dict[int, list[bool]] = {}
        for p, paths in enumerate(parts):
            if not paths and (self._engines or any(parts[p + 1:])):
                continue  # an empty part adds nothing (one is kept when every part is empty)
            held = pl.concat([pl.read_ipc(path) for path in paths]) if paths \
                else empty.with_columns(pl.Series(_PLACE, [], dtype=pl.Int64))
            for path in paths:
                path.unlink()
            place = held[_PLACE].to_numpy()
            table = FileTable(held.drop(_PLACE), str(file.path), lines=place if lines else None,
                              positions=None if lines else place)
            del held
            engine = PolarsEngine(table, id_column, bounds, columns, public, missing, fill)
            del table
            self._engines.append(engine)
            self._parked.append(folder / f"part-{p}")
            self._park(len(self._engines) - 1)
            LOG.info("checked part %d of %d", p + 1, count)
        self.public = self._engines[0].public

    def _park(self, i: int) -> None:
        """Write part ``i``'s frames to disk and hold only their schemas. A value column's frame that keeps every
        row is the base frame and its units (:meth:`PolarsEngine._screen`): only the units are written."""
        engine, stem = self._engines[i], self._parked[i]
        engine.where = _nowhere  # the part's file table is no longer needed
        engine.base.write_ipc(stem.with_suffix(".base"), compression=_PACKED)
        for j, frame in enumerate(engine.columns):
            whole = frame.height == engine.base.height  # a filter that keeps every row keeps the base's rows
            (frame.select(UNITS) if whole else frame).write_ipc(stem.with_suffix(f".{j}"), compression=_PACKED)
            self._whole.setdefault(i, []).append(whole)
        self._clear(engine)

    @staticmethod
    def _clear(engine: PolarsEngine) -> None:
        engine.base = engine.base.clear()
        engine.columns = [frame.clear() for frame in engine.columns]

    def _each(self, call: Callable[[PolarsEngine], T]) -> list[T]:
        """``call`` on every part's engine, each part read back from disk for the call only."""
        results = []
        for i, engine in enumerate(self._engines):
            stem = self._parked[i]
            engine.base = base = pl.read_ipc(stem.with_suffix(".base"))
            read = [pl.read_ipc(stem.with_suffix(f".{j}")) for j in range(len(engine.columns))]
            engine.columns = [base.hstack(frame) if whole else frame
                              for frame, whole in zip(read, self._whole.get(i, []), strict=True)]
            del base, read
            try:
                results.append(call(engine))
                LOG.info("bounded and aggregated part %d of %d", i + 1, len(self._engines))
            finally:
                self._clear(engine)
        return results

    def counts(self, salt: bytes) -> KeyAggregates:
        return merged_aggregates(self._each(lambda engine: engine.counts(salt)))

    def column(self, index: int, salt: bytes, squares: bool) -> KeyAggregates:
        return merged_aggregates(self._each(lambda engine: engine.column(index, salt, squares)))

    def unit_counts(self, index: int, salt: bytes) -> UnitCounts:
        return merged_units(self._each(lambda engine: engine.unit_counts(index, salt)))

    def output(self, names: Sequence[str], rows: Sequence[Sequence[Any]],
               steps: Mapping[str, Fraction | None]) -> Any:
        return self._engines[0].output(names, rows, steps)


def _stands(where: str) -> Callable[[int], str]:
    """Where the first unusable cell of a column stands in the file, whatever its row in its piece."""
    return lambda _: where


def _nowhere(row: int) -> str:
    return f"row {row}"
