"""Text that is not valid Unicode, read by one rule wherever it enters.

Two kinds of cell look like text and are not:

* an **Arrow string cell whose bytes are not UTF-8** (plain or dictionary-encoded). Arrow checks
  them only when asked, and Polars takes Arrow buffers as they are (a Parquet file written by
  another tool, a pyarrow table built from raw buffers), then hashes, compares and prints invalid
  strings;
* a **Python string holding a lone surrogate** (U+D800..U+DFFF), which is what
  ``errors="surrogateescape"`` makes of undecodable bytes, and which no UTF-8 encoder accepts.

Such a cell is read as its **lossy decoding**: each undecodable byte or surrogate becomes U+FFFD,
the character a lossy decoder writes, so the one rule of :mod:`securedp.reading.cells`
(:data:`~securedp.reading.cells.UNUSABLE_TEXT`) makes it no id, key or number, in every engine: the
data holder's release is refused naming the column, an analyst-facing one drops the row. Valid
text is returned unchanged (Arrow arrays are validated in one pass, about 6 ns per cell), so two
distinct byte strings never become one id, and no reader raises a decoder's exception.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["arrow_text", "python_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def python_text(text: str) -> str:
    """``text`` itself, or (holding a lone surrogate) with each surrogate replaced by U+FFFD."""
    return text if text.isascii() or not _SURROGATE.search(text) else _SURROGATE.sub("\ufffd", text)


def _is_text(dtype: Any) -> bool:
    import pyarrow as pa  # loaded already: ``dtype`` is an Arrow type

    return bool(pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype))


def arrow_text(column: Any) -> Any:
    """A pyarrow ``Array`` or ``ChunkedArray``: itself if it is not text (nor dictionary-encoded text) or
    its text is valid UTF-8, else the same text with each invalid cell decoded lossily (U+FFFD for each
    undecodable byte; a dictionary-encoded column is then decoded to its plain text type)."""
    if not type(column).__module__.startswith("pyarrow"):
        return column  # an object that only lists its values like an Arrow column
    import pyarrow as pa  # loaded already: ``column`` is a pyarrow column

    kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
    if not _is_text(kind):
        return column
    try:
        column.validate(full=True)
    except pa.ArrowInvalid:
        raw = column.cast(kind).cast(pa.binary_view() if pa.types.is_string_view(kind) else pa.large_binary())
        cells = [None if b is None else b.decode("utf-8", "replace") for b in raw.to_pylist()]
        return pa.array(cells, type=kind)
    return column
