"""What a missing cell is, defined once for every reader of ids, keys and values.

A cell is **missing** when it is ``None``, pandas ``NA`` or ``NaT``, a float NaN (any width) or a
``Decimal`` NaN; it is **blank** when it is missing or a string of whitespace only, whitespace being
exactly the characters of :data:`WHITESPACE` (those of Python's ``str.isspace``). Neither is ever an
id or a key: a missing or blank id would merge every row without an id into one person. Text holding
U+FFFD, the character a lossy decoder writes for bytes it could not read
(:mod:`securedp.reading.files`), is no id or key either: two different ids could read alike.

**One definition for every engine.** :data:`UNUSABLE_TEXT` is a regular expression, in the syntax
that Python's ``re``, Rust's ``regex`` (Polars ``str.contains``) and Java's ``java.util.regex``
(Spark ``rlike``) read alike, that finds a match in exactly the texts that are no id or key; each
engine applies it, so that no engine trims "whitespace" by its own rule (Spark's ``trim`` strips
spaces only, Rust's ``trim`` not U+001C..U+001F, Python's ``strip`` both).
"""

from __future__ import annotations

import decimal
import numbers
import re
from typing import Any

import numpy as np

from securedp.reading.text import python_text

_MISSING_TYPE_NAMES = frozenset({"NAType", "NaTType"})

WHITESPACE = "\t\n\x0b\x0c\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""The whitespace characters, as the body of a regular-expression class of literal characters and
ranges: exactly those for which Python's ``str.isspace`` is true (Unicode's White_Space and the
separators U+001C..U+001F; a test checks every code point)."""

REPLACEMENT = "\ufffd"
"""The character a lossy decoder writes for bytes it cannot decode (never part of an id or key)."""

UNUSABLE_TEXT = f"^[{WHITESPACE}]*$|{REPLACEMENT}"
"""Finds a match in text that is no id or key: empty or whitespace only, or holding U+FFFD. ``^`` and
``$`` anchor the whole text in all three syntaxes here: where ``$`` may also match before a final line
break (Python, Java), that line break is whitespace, so the verdict is the same."""

_UNUSABLE = re.compile(UNUSABLE_TEXT)


def is_missing(value: Any) -> bool:
    """Whether ``value`` is ``None``, pandas ``NA``/``NaT``, a float NaN or a ``Decimal`` NaN."""
    if value is None or type(value).__name__ in _MISSING_TYPE_NAMES:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(value != value)
    return isinstance(value, decimal.Decimal) and value.is_nan()


def is_blank(value: Any) -> bool:
    """Whether ``value`` is missing or a string of whitespace only."""
    return is_missing(value) or (isinstance(value, str) and not value.strip())


def is_unusable_text(text: str) -> bool:
    """Whether ``text`` is no id or key: blank, or holding U+FFFD (:data:`UNUSABLE_TEXT`) once read
    by :func:`securedp.reading.text.python_text` (a lone surrogate is undecodable text)."""
    return _UNUSABLE.search(python_text(text)) is not None


def shown(value: Any) -> str:
    """A cell as the data holder's messages write it: its ``repr``, except that an integer or ratio of more than
    4,096 bits is named by its size (``repr`` refuses more than 4,300 digits, and takes time that grows with them)."""
    if isinstance(value, numbers.Rational) and not isinstance(value, (bool, np.generic)):
        bits = max(abs(int(value.numerator)).bit_length(), int(value.denominator).bit_length())
        if bits > 4096:
            return f"<{type(value).__name__} of {bits:,} bits>"
    return repr(value)
