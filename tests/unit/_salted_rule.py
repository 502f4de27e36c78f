"""The salted contribution rule written again from its specification, with hashlib: the tests' reference.

A person with more than ``m`` rows keeps the ``m`` rows whose digests
``SHA-256(hex(salt) || field(person) || field(value))`` are smallest, a field
being the netstring ``<UTF-8 byte length>:<decimal text>,`` (see
``securedp/bounding/digest.py``); rows with equal digests are kept in row order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def field(value: int) -> str:
    text = str(value)
    return f"{len(text.encode('utf-8'))}:{text},"


def row_digest(salt: bytes, person: int, value: int) -> bytes:
    return hashlib.sha256((salt.hex() + field(person) + field(value)).encode("utf-8")).digest()


def kept_rows(salt: bytes, persons: Sequence[int], values: Sequence[int], m: int) -> list[int]:
    """The indices of the rows kept, ascending."""
    rows_of: dict[int, list[int]] = {}
    for i, person in enumerate(persons):
        rows_of.setdefault(person, []).append(i)
    kept: list[int] = []
    for person, rows in rows_of.items():
        kept += sorted(rows, key=lambda i: (row_digest(salt, person, values[i]), i))[:m]
    return sorted(kept)
