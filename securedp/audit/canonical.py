"""The canonical bytes of an audit line, and the strict parser that accepts nothing else.

A line of an audit log (and a signed head statement) is the canonical JSON
text of an object: keys sorted, no spaces, UTF-8 without ``\\u`` escapes of
printable characters, no floats, no ``NaN``/``Infinity``. Hashes and
signatures are computed over exactly these bytes, so a verifier must check
the bytes *as written*, not a parsed value: a line with a duplicate key, a
number written two ways or an extra space parses to the same value as some
other text, and would otherwise verify with content the hash never saw.

:func:`parse_canonical` therefore parses with duplicate keys, the constants
``NaN``/``Infinity`` and float literals refused, after bounding the nesting
depth *before* parsing (deep nesting makes :func:`json.loads` recurse), and
then requires ``canonical(parsed) == line`` byte for byte. Every failure is a
:class:`NotCanonical` (a :class:`ValueError`) with a one-line reason; nothing
else escapes.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects accepted (records nest about 5 deep)."""

# A string (closed, or running to the end of the text) or one bracket: one linear left-to-right pass.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|[\[\]{}]', re.S)
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class NotCanonical(ValueError):
    """A line that is not the canonical JSON text of an object; the message says why."""


def canonical(obj: Any) -> bytes:
    """The canonical UTF-8 JSON text of ``obj`` (sorted keys, no spaces, no escapes of non-ASCII)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in JSON ``text``, outside strings (for text that lexes as JSON)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return text.count("[") + text.count("{")
    steps = (_STEP.get(token, 0) for token in _TOKEN.findall(text))
    return max(itertools.accumulate(steps, initial=0))


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        duplicate = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise NotCanonical(f"duplicate key {duplicate!r} (a parser would keep only one of its values)")
    return obj


def _constant(name: str) -> Any:
    raise NotCanonical(f"the literal {name} is not a number a record may hold")


def _float(text: str) -> Any:
    raise NotCanonical(f"the float literal {text[:20]} (records hold exact integers and \"num/den\" strings only)")


def parse_canonical(raw: bytes) -> dict[str, Any]:
    """The object whose canonical bytes are exactly ``raw``; raises :class:`NotCanonical` otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise NotCanonical("not valid UTF-8 text") from None
    try:
        depth = nesting_depth(text)
    except (ValueError, TypeError):
        depth = 0
    if depth > MAX_DEPTH:
        raise NotCanonical(f"nested {depth} levels deep (at most {MAX_DEPTH})")
    try:
        obj = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float)
    except NotCanonical:
        raise
    except json.JSONDecodeError as exc:
        raise NotCanonical(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise NotCanonical(f"not valid JSON ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    if not isinstance(obj, dict):
        raise NotCanonical("not a JSON object")
    try:
        again = canonical(obj)
    except (ValueError, UnicodeError, RecursionError):
        raise NotCanonical("holds text that has no canonical UTF-8 form (an unpaired surrogate)") from None
    if again != raw:
        raise NotCanonical(
            "not in canonical form (sorted keys, no spaces, UTF-8 without escapes): "
            "the bytes written are not the bytes hashed and signed"
        )
    return obj
