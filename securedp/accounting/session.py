"""A privacy session: one budget, one random source, one audit trail, many releases.

``Session(epsilon=E)`` (pure DP) or ``Session(rho=R)`` (zCDP), plus
``rng=`` (default: the system CSPRNG) and ``audit=`` (any object with
``.append(record: dict)``). Every release goes through :meth:`Session._release`:

1. its exact cost is computed (``prepare_*`` has already validated the
   input; a bad input raises before this point, so nothing is charged);
2. the cost is **charged under a lock before any noise is drawn**; if it
   would overspend, :class:`BudgetExceeded` is raised and nothing is drawn
   or charged, so concurrent releases from several threads never overspend;
3. the noise is drawn from the session's source; if that raises, the charge
   is refunded and the budget is as it was;
4. ``audit.append(record)`` is called with ``release.record()`` plus the
   exact budget fields (``budget_kind``, ``charged``, ``spent``,
   ``remaining`` just after this charge, as ``"num/den"`` strings). A
   refused release never reaches the audit. If the audit hook itself
   raises, the charge stands (the noise was drawn) and the error propagates.

Parallel composition: :meth:`Session.partition` splits the data by a
public key into disjoint parts, charges the parent once and gives every
part its own sub-session with that budget. With an audit, the parent's
charge is recorded too, as a ``{"kind": "partition", ...}`` record (see
:meth:`Session.partition`), so that every change of every ledger's
``spent`` has a line of its own in the log.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.accounting.budget import EPSILON, RHO, Budget
from securedp.accounting.conversions import approx_dp_to_zcdp, zcdp_to_approx_dp
from securedp.accounting.selection_methods import SelectionMethods
from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.lattice.screen import as_records
from securedp.mechanisms.contributions import check_max_contributions, first_parts_per_person, person_ids
from securedp.mechanisms.count import prepare_count
from securedp.mechanisms.histogram import prepare_histogram
from securedp.mechanisms.mean import prepare_mean
from securedp.mechanisms.noise import privacy_cost
from securedp.mechanisms.release import PreparedRelease, Release, jsonable
from securedp.mechanisms.sum import prepare_sum
from securedp.mechanisms.variance import prepare_variance


@dataclass(frozen=True)
class Part:
    """One part of a partition: its rows, their person ids (or None) and its own sub-session."""

    key: Any
    data: Any
    ids: Any
    session: "Session"


class Session(SelectionMethods):
    """Exact privacy accounting over a sequence of releases (see the module docstring)."""

    def __init__(
        self, epsilon: Any = None, rho: Any = None, *, rng: RandomSource | None = None, audit: Any = None,
        _path: tuple[Any, ...] = (), _partition_id: str | None = None,
    ) -> None:
        eps, rho_q = privacy_cost(epsilon, rho)
        self._budget = Budget(EPSILON, eps) if eps is not None else Budget(RHO, rho_q)
        self._rng = resolve_source(rng)
        if audit is not None and not callable(getattr(audit, "append", None)):
            raise TypeError("audit must have an append(record) method")
        self._audit = audit
        self._path = _path
        self._partition_id = _partition_id

    @classmethod
    def from_approx_dp(cls, epsilon: Any, delta: Any, **options: Any) -> "Session":
        """A zCDP session whose whole budget guarantees (``epsilon``, ``delta``)-DP.

        Its ``rho`` is :func:`~securedp.accounting.conversions.approx_dp_to_zcdp`,
        rounded down. Pure-epsilon releases are charged ``epsilon**2 / 2``.
        """
        return cls(rho=approx_dp_to_zcdp(epsilon, delta), **options)

    # -- budget -----------------------------------------------------------
    @property
    def kind(self) -> str:
        """``"epsilon"`` or ``"rho"``: what the budget counts."""
        return self._budget.kind

    @property
    def total(self) -> Fraction:
        """The whole budget, in epsilon or rho (see :attr:`kind`), as an exact rational."""
        return self._budget.total

    @property
    def spent(self) -> Fraction:
        """The exact sum of the charges of every release made so far (refused releases cost nothing)."""
        return self._budget.spent

    @property
    def remaining(self) -> Fraction:
        """``total - spent``, exactly: a release costing more than this is refused with :class:`BudgetExceeded`."""
        return self._budget.remaining

    def approx_dp(self, delta: Any) -> Fraction:
        """For a rho session: an upper bound on the epsilon of (epsilon, ``delta``)-DP spent so far."""
        if self.kind != RHO:
            raise ValueError("approx_dp applies to a rho (zCDP) session; an epsilon session's spent is its epsilon")
        spent = self.spent
        return zcdp_to_approx_dp(spent, delta) if spent > 0 else Fraction(0)

    # -- releases -----------------------------------------------------------
    def _release(self, prepared: PreparedRelease) -> Release:
        """Charge, draw (refunding on failure), audit, and return the release."""
        amount = self._budget.cost(prepared.epsilon, prepared.rho)
        spent, remaining = self._budget.charge(amount)
        try:
            release = prepared.execute(self._rng)
        except BaseException:
            self._budget.refund(amount)
            raise
        if self._audit is not None:
            record = release.record()
            record.update(
                jsonable(
                    {
                        "budget_kind": self.kind,
                        "charged": amount,
                        "spent": spent,
                        "remaining": remaining,
                        "partition": list(self._path) if self._path else None,
                        **({"partition_id": self._partition_id} if self._partition_id else {}),
                    }
                )
            )
            self._audit.append(record)
        return release

    def count(self, data: Any, **options: Any) -> Release:
        """:func:`securedp.count`, charged to this session."""
        return self._release(prepare_count(data, **options))

    def sum(self, data: Any, **options: Any) -> Release:  # noqa: A003
        """:func:`securedp.sum`, charged to this session."""
        return self._release(prepare_sum(data, **options))

    def mean(self, data: Any, **options: Any) -> Release:
        """:func:`securedp.mean`, charged to this session."""
        return self._release(prepare_mean(data, **options))

    def variance(self, data: Any, **options: Any) -> Release:
        """:func:`securedp.variance`, charged to this session."""
        return self._release(prepare_variance(data, **options))

    def histogram(self, data: Any, **options: Any) -> Release:
        """:func:`securedp.histogram`, charged to this session."""
        return self._release(prepare_histogram(data, **options))

    # -- parallel composition -------------------------------------------------
    def partition(
        self, data: Any, *, by: Any, parts: Any, budget: Any, ids: Any = None, max_partitions: Any = 1,
        unknown: str = "raise",
    ) -> dict[Any, Part]:
        """Split ``data`` into disjoint parts by a public key and give each part ``budget``.

        ``by`` holds one key per row; ``parts`` declares the keys (never taken
        from the data); rows whose key is not declared raise (``unknown="raise"``)
        or are dropped (``unknown="drop"``). The parent is charged
        ``budget * max_partitions`` once, where ``max_partitions`` bounds how
        many parts one person's rows can fall in (default 1: the key is an
        attribute of the person). With ``ids`` (integer person ids, one per
        row) the bound is enforced, not assumed: in data order each person
        keeps their rows in the first ``max_partitions`` distinct parts where
        they appear, and their rows in other parts are discarded
        (:func:`~securedp.mechanisms.contributions.first_parts_per_person`).
        **Privacy:** adding or removing a person
        changes at most ``max_partitions`` parts, each by that person's rows,
        and every part's releases are ``budget``-private for its own rows, so
        the whole is ``budget * max_partitions``-private. Every sub-session
        has the parent's kind (epsilon or rho), source and audit.

        **Audit.** With an audit, the parent's charge is appended as one
        record before the parts are returned: ``kind`` ``"partition"``,
        ``budget_kind``, ``charged`` (exactly ``budget * max_partitions``),
        ``budget`` (each part's total), ``max_partitions``, ``parts`` (the
        declared keys, JSON-ready), ``spent`` and ``remaining`` of the parent
        just after the charge, ``partition`` (the parent's own path, or
        ``None``), and ``opens``: a fresh random id that every record of the
        sub-sessions carries as ``partition_id``, so two partitions with the
        same keys keep separate ledgers. If that append raises, the charge is
        refunded and the error propagates (no part was handed out).
        """
        if unknown not in ("raise", "drop"):
            raise ValueError("unknown must be 'raise' or 'drop'")
        k = check_max_contributions(max_partitions)
        epsilon, rho = privacy_cost(budget, None) if self.kind == EPSILON else privacy_cost(None, budget)
        share = self._budget.cost(epsilon, rho)  # the given budget itself: it has this session's kind
        keys = list(dict.fromkeys(parts))
        if len(keys) != len(list(parts)):
            raise ValueError("partition keys must be distinct")
        records = as_records(data)
        labels = as_records(by)
        if len(labels) != len(records):
            raise ValueError(f"by has {len(labels)} entries but the data has {len(records)} rows")
        id_rows = None if ids is None else as_records(ids)
        person = None if ids is None else person_ids(ids, len(records))
        position = {key: i for i, key in enumerate(keys)}
        label_list = labels.tolist() if isinstance(labels, np.ndarray) else labels
        where = np.fromiter((position.get(v, -1) for v in label_list), dtype=np.int64, count=len(label_list))
        if unknown == "raise" and (where < 0).any():
            first = int(np.flatnonzero(where < 0)[0])
            raise ValueError(f"row {first} has a key that is not a declared part; declare it or pass unknown='drop'")
        if person is not None:
            declared = np.flatnonzero(where >= 0)
            outside = declared[~first_parts_per_person(person[declared], where[declared], k)]
            where[outside] = -1
        charge = share * k
        spent, remaining = self._budget.charge(charge)
        opens = os.urandom(16).hex()
        if self._audit is not None:
            record = {
                "kind": "partition",
                "budget_kind": self.kind,
                "charged": charge,
                "budget": share,
                "max_partitions": k,
                "parts": [jsonable(key) for key in keys],
                "spent": spent,
                "remaining": remaining,
                "partition": list(self._path) if self._path else None,
                **({"partition_id": self._partition_id} if self._partition_id else {}),
                "opens": opens,
            }
            try:
                self._audit.append(jsonable(record))
            except BaseException:
                self._budget.refund(charge)
                raise
        out: dict[Any, Part] = {}
        for i, key in enumerate(keys):
            mask = where == i
            out[key] = Part(
                key=key,
                data=_select(records, mask),
                ids=None if id_rows is None else _select(id_rows, mask),
                session=Session(
                    **{self.kind: share}, rng=self._rng, audit=self._audit, _path=self._path + (jsonable(key),),
                    _partition_id=opens,
                ),
            )
        return out


def _select(rows: Any, mask: np.ndarray) -> Any:
    if isinstance(rows, np.ndarray):
        return rows[mask]
    return [r for r, keep in zip(rows, mask) if keep]
