"""The canonical, engine-independent digests that decide which rows per-person bounding keeps.

**Encoding.** A release draws a secret 16-byte ``salt`` from its random source
(:func:`draw_salt`). A *field* is the canonical text ``t`` of one value
written as a netstring: the number of UTF-8 bytes of ``t`` in decimal, ``:``,
``t``, ``,``. The canonical text of an integer is its decimal form (``-12``,
``0``, ``1234``: no sign for non-negatives, no leading zeros); of a string,
the string itself (any non-blank UTF-8 text); other types (bool, float,
decimal, dates, null) are refused by the engine, so a caller casts them
first. Then

* group message of a person ``p`` in a group with key columns
  ``k1, ..., km``: ``hex(salt) || field(p) || field(k1) || ... || field(km)``;
* row message: the group message followed by ``field(u)``, ``u`` the row's
  lattice units (an integer);

where ``hex(salt)`` is 32 lowercase hexadecimal characters. The digest is
SHA-256 of the UTF-8 bytes of the message; digests are ordered as 32-byte
unsigned big-endian numbers (the order of their lowercase hex strings), and
bounding keeps the *smallest*.

Example (:data:`EXAMPLE`): salt ``00 01 ... 0f``, person ``"alice"``, key
``(7,)``: message ``000102...0f5:alice,1:7,``, and its row with 250 units
appends ``3:250,``.

**The same digest elsewhere.** Spark SQL, for string or integral columns:
``sha2(concat('<hex salt>', cast(octet_length(cast(p as string)) as string),
':', cast(p as string), ',', ...), 256)``; DuckDB: ``sha256('<hex salt>' ||
strlen(p::VARCHAR)::VARCHAR || ':' || p::VARCHAR || ',' || ...)`` (``strlen``
counts bytes). Both return the lowercase hex digest, whose string order is the
order used here.

**One definition.** The salt prefix and the netstring field are defined once,
in :mod:`securedp.bounding.messages` (:func:`~securedp.bounding.messages.salt_text`,
:func:`~securedp.bounding.messages.field_parts`): :func:`field` and
:func:`message` here build them from Polars expressions, and
:func:`securedp.bounding.messages.message_text` from Python strings (hashed by
:mod:`hashlib`, without Polars, for the single-column releases), so both hash
the same bytes.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import polars as pl

from securedp.bounding.messages import SALT_BYTES as SALT_BYTES  # re-exported: the engines read them here
from securedp.bounding.messages import draw_salt as draw_salt
from securedp.bounding.messages import field_parts as field_parts
from securedp.bounding.messages import salt_text as salt_text


def _optional_polars_hash() -> Any:
    """The optional ``polars-hash`` plugin (importing it registers the ``chash`` namespace), or None."""
    try:
        return importlib.import_module("polars_hash")
    except ImportError:  # pragma: no cover - depends on the environment
        return None


_polars_hash = _optional_polars_hash()

_INTEGER = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)

EXAMPLE = {
    "salt": bytes(range(16)),
    "person": "alice",
    "key": (7,),
    "units": 250,
    "group_message": "000102030405060708090a0b0c0d0e0f5:alice,1:7,",
    "row_message": "000102030405060708090a0b0c0d0e0f5:alice,1:7,3:250,",
}
"""A documented example; ``tests/unit/test_bounding.py`` checks its digest against hashlib."""


def canonical_text(column: str, dtype: pl.DataType) -> pl.Expr:
    """The canonical text of a column's values (integers in decimal, strings as they are)."""
    if dtype in _INTEGER:
        return pl.col(column).cast(pl.String)
    if dtype == pl.String:
        return pl.col(column)
    raise TypeError(f"column {column!r} has type {dtype}: ids, keys and units must be integers or strings")


def field(text: pl.Expr) -> list[pl.Expr]:
    """The netstring parts of one field: byte length, ``:``, text, ``,``."""
    return field_parts(text, text.str.len_bytes().cast(pl.String), pl.lit)


def message(salt: bytes, texts: Sequence[pl.Expr]) -> pl.Expr:
    """The message ``hex(salt) || field(t1) || field(t2) || ...`` as one string expression."""
    parts = [pl.lit(salt_text(salt))]
    for text in texts:
        parts.extend(field(text))
    return pl.concat_str(parts)


def hex_digests(frame: pl.DataFrame, salt: bytes, fields: Sequence[str]) -> pl.Series:
    """The lowercase hex SHA-256 of each row's message over ``fields`` (in order), as a String Series.

    With the optional ``polars-hash`` plugin (Rust, SHA-NI where the CPU has
    it) the digests are computed inside Polars, the two halves of the table in
    parallel; otherwise by :mod:`hashlib`, one call per row (about 1 us each).
    Both compute SHA-256 of the same bytes, so the digests are identical.
    """
    return message_digests(frame, message(salt, [canonical_text(c, frame.schema[c]) for c in fields]))


def hashlib_digests(messages: pl.Series) -> pl.Series:
    """SHA-256 (lowercase hex) of each message's UTF-8 bytes, by hashlib."""
    sha256 = hashlib.sha256
    return pl.Series("_digest", [sha256(m.encode()).hexdigest() for m in messages.to_list()], dtype=pl.String)


def polars_hash_digests(frame: pl.DataFrame, text: pl.Expr) -> pl.Series:
    """SHA-256 (lowercase hex) of the string expression ``text`` on each row, by the polars-hash
    plugin, the two halves of ``frame`` in parallel."""
    if _polars_hash is None:
        raise ImportError("polars-hash is not installed")
    digest = cast(Any, pl.col("_message")).chash.sha2_256().alias("_digest")
    half = frame.height // 2
    parts = [frame.slice(0, half).lazy(), frame.slice(half).lazy()]
    return pl.concat(pl.collect_all([part.select(text.alias("_message")).select(digest) for part in parts]))["_digest"]


def message_heads(frame: pl.DataFrame, text: pl.Expr) -> pl.Series:
    """The first 64 bits (big-endian, as UInt64) of SHA-256 of the string expression ``text`` on each row.

    With ``polars-hash``, messages, digests and heads are computed in one query on Polars'
    streaming engine, so its morsels are hashed in parallel and no column of messages or hex
    digests is ever held for the whole frame; otherwise by :mod:`hashlib`.
    """
    head = pl.col("_digest").str.slice(0, 16).str.to_integer(base=16, dtype=pl.UInt64).alias("_head")
    if _polars_hash is None:
        return pl.DataFrame([message_digests(frame, text)]).select(head).to_series()
    digest = cast(Any, text).chash.sha2_256().alias("_digest")
    return frame.lazy().select(digest).select(head).collect(engine="streaming").to_series()


def message_digests(frame: pl.DataFrame, text: pl.Expr) -> pl.Series:
    """The lowercase hex SHA-256 of the string expression ``text`` on each row (polars-hash, or hashlib)."""
    if _polars_hash is None:
        return hashlib_digests(frame.select(text.alias("_message")).to_series())
    return polars_hash_digests(frame, text)


def has_polars_hash() -> bool:
    """Whether the optional ``polars-hash`` plugin is installed (digests computed inside Polars)."""
    return _polars_hash is not None


def digest_words(salt: bytes, columns: dict[str, np.ndarray]) -> np.ndarray:
    """The digests of the messages over ``columns`` (equal-length integer arrays, in order), one row of
    four big-endian 64-bit words (a ``uint64`` NumPy array of shape ``(n, 4)``) per entry."""
    words = pl.DataFrame([hex_digests(pl.DataFrame(columns), salt, list(columns))]).select(
        pl.col("_digest").str.slice(16 * i, 16).str.to_integer(base=16, dtype=pl.UInt64).alias(f"w{i}")
        for i in range(4))
    array: np.ndarray = words.to_numpy()
    return array
