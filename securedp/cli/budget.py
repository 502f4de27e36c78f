"""A privacy budget persisted in a file across invocations of the command.

The file is JSON: ``{"format": "securedp-budget/1", "currency": "epsilon",
"total": "1", "spent": "1/4", "ledger": "<32 hex>"}`` with exact rationals
as ``"num/den"`` strings. ``currency`` is ``"epsilon"`` (pure DP, costs add)
or ``"rho"`` (zCDP, costs add): the unit of ``total`` and ``spent``, fixed by
the release that creates the file; a release priced in the other unit is
refused (no conversion is applied). A file without ``currency`` (written
before rho releases existed) counts ``epsilon``. ``ledger`` names the budget in audit records (it is the audit
log's ``writer`` for every release charged to this file), so that
``securedp audit verify`` checks the spending across invocations.

:meth:`BudgetFile.charge` holds an exclusive ``flock`` on ``FILE.lock``
while it reads the file, refuses a charge that would overspend (before
anything is drawn), and writes the new state atomically: a temporary file in
the same directory, ``fsync``, then ``os.replace``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Iterator

from securedp.hazmat.exact.rational import format_rational, positive_rational, to_rational

FORMAT = "securedp-budget/1"
EPSILON = "epsilon"
RHO = "rho"
CURRENCIES = (EPSILON, RHO)


class BudgetError(ValueError):
    """The budget file is missing, malformed, does not match ``--budget``, or would be overspent."""


@dataclass(frozen=True)
class Budget:
    """The state of a budget file: exact ``total`` and ``spent`` in ``currency``, and its ledger id."""

    total: Fraction
    spent: Fraction
    ledger: str
    currency: str = EPSILON

    @property
    def remaining(self) -> Fraction:
        return self.total - self.spent


class BudgetFile:
    """The budget at ``path``; ``total`` (from ``--budget``) creates it or must match it.

    ``currency`` (``"epsilon"`` or ``"rho"``) is the unit of the releases to
    be charged: it becomes the file's currency when ``total`` creates the
    file, and must equal the recorded currency of an existing file.
    """

    def __init__(self, path: str | os.PathLike[str], total: object | None = None, currency: str = EPSILON) -> None:
        if currency not in CURRENCIES:
            raise ValueError(f"currency must be 'epsilon' or 'rho', got {currency!r}")
        self.path = Path(path)
        self.total = None if total is None else positive_rational(total, "budget")
        self.currency = currency

    @contextlib.contextmanager
    def charge(self, cost: Fraction) -> Iterator[Budget]:
        """Charge ``cost`` and yield the new state, under the lock.

        Raises :class:`BudgetError` before yielding if the charge would make
        ``spent`` exceed ``total``. The new state is written before the
        body runs (so a crash never under-counts); if the body raises, the
        previous state is written back.
        """
        lock_path = self.path.with_name(self.path.name + ".lock")
        with open(lock_path, "a") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            before = self._read()
            after = Budget(before.total, before.spent + cost, before.ledger, before.currency)
            if after.spent > after.total:
                raise BudgetError(
                    f"budget exhausted: this release needs {self.currency} {format_rational(cost)} but only "
                    f"{format_rational(before.remaining)} of {format_rational(before.total)} remains"
                )
            self._write(after)
            try:
                yield after
            except BaseException:
                self._write(before)
                raise

    def _read(self) -> Budget:
        if not self.path.exists():
            if self.total is None:
                raise BudgetError(f"{self.path} does not exist; create it by passing --budget TOTAL")
            return Budget(self.total, Fraction(0), os.urandom(16).hex(), self.currency)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                raise ValueError("wrong format")
            currency = data.get("currency", EPSILON)
            if currency not in CURRENCIES:
                raise ValueError(f"unknown currency {currency!r}")
            state = Budget(
                positive_rational(data["total"], "total"), to_rational(data["spent"], "spent"), str(data["ledger"]), currency
            )
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise BudgetError(f"{self.path} is not a valid budget file ({exc})") from None
        if state.currency != self.currency:
            flag = "--epsilon" if state.currency == EPSILON else "--rho"
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

    def _write(self, state: Budget) -> None:
        text = json.dumps(
            {
                "format": FORMAT,
                "currency": state.currency,
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
