"""The file storage backend of :class:`~securedp.accounting.budget.Budget`: a budget kept across processes.

The file is JSON: ``{"format": "securedp-budget/1", "currency": "epsilon",
"total": "1", "spent": "1/4", "ledger": "<32 hex>"}`` with exact rationals
as ``"num/den"`` strings. ``currency`` is ``"epsilon"`` (pure DP, costs add)
or ``"rho"`` (zCDP, costs add): the unit of ``total`` and ``spent``, fixed by
the release that creates the file; a release priced in the other unit is
refused when the file is opened (the command opens it in the unit of the
release; the charge itself follows the rules of
:mod:`securedp.accounting.budget`, written once). A file without ``currency`` (written
before rho releases existed) counts ``epsilon``. ``ledger`` names the budget in audit records (it is the audit
log's ``writer`` for every release charged to this file), so that
``securedp audit verify`` checks the spending across invocations.

**Validation.** A file is read strictly and any deviation is refused with
one line naming the file and the field, before anything is charged or
drawn: the text must be one JSON object (no duplicate keys, no ``NaN`` or
``Infinity``) with exactly the fields above (``currency`` may be absent);
``format`` must be ``"securedp-budget/1"``; ``currency`` one of
``"epsilon"``, ``"rho"``; ``total`` and ``spent`` strings in the canonical
form the writer uses (``"3"``, ``"1/4"``: lowest terms, positive
denominator other than 1, no sign on zero, no leading zeros, no spaces, no
decimals), with ``total > 0`` and ``0 <= spent <= total``; ``ledger`` 32
lowercase hex digits. A file that needs a hand edit to be read is thus
never silently reinterpreted (for example a negative ``spent`` that would
grant extra budget).

**Locking and atomic writes.** :meth:`BudgetFile.hold` holds an exclusive
lock on ``FILE.lock`` (``flock`` on POSIX, ``msvcrt.locking`` on Windows:
:mod:`securedp.hazmat.bits.filelock`) while it reads the file;
:meth:`BudgetFile.charge` charges under it (:meth:`Budget.charging`), refusing a
charge that would overspend before anything is drawn, and
:meth:`BudgetFile.save` writes the new state atomically: a temporary file in the same directory, ``fsync``, then
``os.replace``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

from securedp.accounting.budget import Budget
from securedp.accounting.errors import BudgetExceeded
from securedp.accounting.schema import BudgetState, Currency
from securedp.hazmat.bits.filelock import locked
from securedp.hazmat.exact.rational import format_rational, positive_rational

FORMAT = "securedp-budget/1"
FIELDS = frozenset({"format", "currency", "total", "spent", "ledger"})
_RATIONAL = re.compile(r"-?(0|[1-9][0-9]{0,999})(/[1-9][0-9]{0,999})?")
_LEDGER = re.compile(r"[0-9a-f]{32}")
_MAX_BYTES = 1 << 16


class BudgetError(ValueError):
    """The budget file is missing, malformed, does not match ``--budget``, or would be overspent."""


class BudgetFile:
    """The budget at ``path``, a :class:`~securedp.accounting.budget.BudgetStore`; ``total`` (from
    ``--budget``) creates it or must match it.

    ``currency`` (``"epsilon"`` or ``"rho"``) is the unit of the releases to
    be charged: it becomes the file's currency when ``total`` creates the
    file, and must equal the recorded currency of an existing file.
    """

    def __init__(self, path: str | os.PathLike[str], total: object | None = None, currency: str = "epsilon") -> None:
        if currency not in (Currency.EPSILON.value, Currency.RHO.value):
            raise ValueError(f"currency must be 'epsilon' or 'rho', got {currency!r}")
        self.path = Path(path)
        self.total = None if total is None else positive_rational(total, "budget")
        self.currency = Currency(currency)

    @contextlib.contextmanager
    def hold(self) -> Iterator[BudgetState]:
        """The stored state (a new one if ``total`` creates the file), under the exclusive lock on ``FILE.lock``."""
        lock_path = self.path.with_name(self.path.name + ".lock")
        with open(lock_path, "a") as lock, locked(lock.fileno()):
            yield self._read()

    def save(self, state: BudgetState) -> None:
        """Replace the stored state atomically (call only inside :meth:`hold`)."""
        self._write(state)

    @contextlib.contextmanager
    def charge(self, cost: Fraction) -> Iterator[BudgetState]:
        """Charge ``cost`` and yield the new state, under the lock (:meth:`Budget.charging`).

        Raises :class:`BudgetError` before yielding if the charge would make
        ``spent`` exceed ``total``. The new state is written before the
        body runs (so a crash never under-counts); if the body raises, the
        previous state is written back.
        """
        if not isinstance(cost, Fraction) or cost <= 0:
            raise ValueError(f"the cost charged to a budget file must be a positive Fraction, got {cost!r}")
        with contextlib.ExitStack() as held:
            try:
                state = held.enter_context(Budget(self.currency, store=self).charging(cost))
            except BudgetExceeded as exhausted:
                raise BudgetError(str(exhausted)) from None
            yield state

    def _read(self) -> BudgetState:
        if not self.path.exists():
            if self.total is None:
                raise BudgetError(f"{self.path} does not exist; create it by passing --budget TOTAL")
            return BudgetState(self.total, Fraction(0), os.urandom(16).hex(), self.currency)
        state = _parse(self.path)
        if state.currency is not self.currency:
            flag = "--epsilon" if state.currency is Currency.EPSILON else "--rho"
            raise BudgetError(
                f"{self.path} counts {state.currency} but this release is priced in {self.currency}: "
                f"use {flag}, or a separate budget file"
            )
        if self.total is not None and self.total != state.total:
            raise BudgetError(
                f"--budget {format_rational(self.total)} does not match the total {state.currency} "
                f"{format_rational(state.total)} recorded in {self.path}"
            )
        return state

    def _write(self, state: BudgetState) -> None:
        text = json.dumps(
            {
                "format": FORMAT,
                "currency": state.currency.value,
                "total": format_rational(state.total),
                "spent": format_rational(state.spent),
                "ledger": state.ledger,
            },
            indent=1,
        )
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", dir=self.path.parent or ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate field {key!r}")
        result[key] = value
    return result


def _canonical_rational(data: dict[str, Any], field: str) -> Fraction:
    """``data[field]``: a string in the canonical ``"num/den"`` form of :func:`format_rational`."""
    text = data[field]
    if not isinstance(text, str):
        raise ValueError(f"{field!r} must be an exact rational string such as \"1/4\", got {text!r}")
    if _RATIONAL.fullmatch(text) is None:
        raise ValueError(f"{field!r} must be an exact rational such as \"3\" or \"1/4\", got {text[:40]!r}")
    value = Fraction(text)
    if format_rational(value) != text:
        raise ValueError(f"{field!r} is not canonical: {text!r} must be written {format_rational(value)!r}")
    return value


def _parse(path: Path) -> BudgetState:
    """The budget stored at ``path``, checked strictly; :class:`BudgetError` naming the field otherwise."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(_MAX_BYTES + 1)
        if len(raw) > _MAX_BYTES:
            raise ValueError(f"larger than {_MAX_BYTES} bytes")
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        unknown = sorted(set(data) - FIELDS)
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}")
        missing = sorted(FIELDS - {"currency"} - set(data))
        if missing:
            raise ValueError(f"missing field {missing[0]!r}")
        if data["format"] != FORMAT:
            raise ValueError(f"'format' must be {FORMAT!r}, got {data['format']!r}")
        currency = data.get("currency", Currency.EPSILON.value)
        if currency not in (Currency.EPSILON.value, Currency.RHO.value):
            raise ValueError(f"'currency' must be 'epsilon' or 'rho', got {currency!r}")
        total = _canonical_rational(data, "total")
        spent = _canonical_rational(data, "spent")
        if total <= 0:
            raise ValueError(f"'total' must be > 0, got {format_rational(total)}")
        if spent < 0:
            raise ValueError(f"'spent' must be >= 0, got {format_rational(spent)}")
        if spent > total:
            raise ValueError(f"'spent' {format_rational(spent)} exceeds 'total' {format_rational(total)}")
        ledger = data["ledger"]
        if not isinstance(ledger, str) or _LEDGER.fullmatch(ledger) is None:
            raise ValueError(f"'ledger' must be 32 lowercase hex digits, got {str(ledger)[:40]!r}")
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        raise BudgetError(f"{path} is not a valid budget file ({exc})") from None
    return BudgetState(total, spent, ledger, Currency(currency))
