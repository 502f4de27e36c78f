"""Ledger checks of an audit log: per budget, the charges add up exactly to what each record says was spent.

A *ledger* is a writer (one :class:`~securedp.audit.log.AuditLog`, one
session or one budget file) and, within it, a sub-session opened by a
partition. Over the records of one ledger, in log order, for every record
with budget fields (:class:`~securedp.ledger.audit_record.BudgetFields`):

* its **charge** is the one its budget's currency implies, by the rule of
  :meth:`securedp.privacy.cost.Cost.in_currency` (``epsilon`` on an epsilon
  budget; on a rho budget ``rho``, or for a pure release the zCDP its
  mechanism is proven to have, from :mod:`securedp.privacy.conversions`:
  the sharp bounded-range bound for an exponential mechanism, else the sharp
  bound of every ``epsilon``-DP release; a rho release is never charged to an
  epsilon budget). A record that states ``charged`` must state exactly
  that, or ``epsilon**2 / 2``, the charge of a pure release in a rho budget
  before issue 42 (0.2.0), or for an exponential mechanism the smaller of
  ``epsilon**2 / 8`` and the pure charge, its charge before the sharp bound
  (:meth:`~securedp.privacy.cost.Cost.accepted_charges`:
  records carry what they were charged, and each rule is a proven bound); one without ``charged`` is charged its own
  ``epsilon`` or ``rho``, which must then be in the ``budget_kind``;
* ``spent`` is the previous ``spent`` of the ledger plus the charge, and
  ``spent + remaining`` (its total) and ``budget_kind`` are those of the
  ledger's earlier records. The first record of a top-level ledger has
  ``charge <= spent`` (a budget file may have been spent before the log
  began); a sub-session's ledger starts at ``spent = 0`` with the total its
  partition record declared;
* a release whose parameters state a ``delta`` (partition selection) has
  ``delta_charged`` equal to it, and ``delta_spent`` is the previous
  ``delta_spent`` of the ledger plus it, with a constant total;
* a :class:`~securedp.ledger.audit_record.PartitionRecord` is charged to its
  parent's ledger as above, then opens one ledger per part, of total its
  ``budget``, for the records whose ``partition_id`` is its ``opens`` and
  whose ``partition`` is the parent's path plus the part's key. A record of
  a sub-session whose ledger no earlier partition record opened is refused,
  and so is a partition id used twice;
* an :class:`~securedp.ledger.audit_record.UnreleasedRecord` (a charge that
  stood with nothing released) is charged like a release of its cost.
"""

from __future__ import annotations

import json
from fractions import Fraction

from securedp.audit.problem import Bad
from securedp.ledger.audit_record import (
    AuditRecord,
    BudgetFields,
    ChargedRelease,
    Currency,
    PartitionRecord,
    UnreleasedRecord,
)
from securedp.ledger.errors import IncompatibleCost
from securedp.ledger.release_record import SchemaError
from securedp.privacy.cost import Cost

_Ledger = tuple[str, "str | None", str]


def stated_charge(cost: Cost, fields: BudgetFields) -> Fraction:
    """The charge of a release costing ``cost`` to the budget of ``fields``, checked against its currency."""
    own = cost.currency
    if fields.charged is None:
        if fields.currency is not None and fields.currency is not own:
            raise Bad("record.budget_kind",
                      f"a {fields.currency} budget cannot be charged a {own} release without 'charged'")
        return cost.amount
    if fields.currency is not None:
        try:
            accepted = cost.accepted_charges(fields.currency)
        except IncompatibleCost:
            raise Bad("record.charged", "a rho (zCDP) release cannot be charged to an epsilon budget") from None
        if fields.charged not in accepted:
            raise Bad("record.charged", f"is not the charge of this release to a {fields.currency} budget")
    return fields.charged


def own_cost(record: ChargedRelease | UnreleasedRecord) -> Cost:
    """The cost ``record`` states (:attr:`~securedp.ledger.audit_record.ChargedRelease.cost`, or an unreleased
    charge's), or :class:`~securedp.audit.problem.Bad` naming the field that breaks its rule."""
    try:
        return record.cost
    except SchemaError as error:
        raise Bad("record." + error.field, error.message) from None


class Ledgers:
    """Running state per ledger (writer, partition id, partition path): spent, total and currency."""

    def __init__(self) -> None:
        self._state: dict[_Ledger, tuple[Fraction, Fraction, Currency | None]] = {}
        self._opened: set[tuple[str, str]] = set()
        self._delta: dict[_Ledger, tuple[Fraction, Fraction]] = {}

    def _check_delta(self, ledger: _Ledger, stated: Fraction | None, fields: BudgetFields) -> None:
        """A release's ``delta`` (``stated``) is charged to the ledger's delta, and the delta charges add up."""
        delta = fields.delta
        if delta is None:
            if stated is not None:
                raise Bad("record.delta_charged", "this release spends delta but its record charges none")
            return
        if stated is None or stated != delta.charged:
            raise Bad("record.delta_charged", "is not the delta of this release")
        total = delta.spent + delta.remaining
        before = self._delta.get(ledger)
        if before is None:
            if delta.spent < delta.charged:
                raise Bad("record.delta_spent", "smaller than this release's own delta")
        else:
            if total != before[1]:
                raise Bad("record.delta_remaining", "delta_spent + delta_remaining differs from the earlier total")
            if delta.spent != before[0] + delta.charged:
                raise Bad("record.delta_spent", "is not the previous delta_spent plus this record's delta")
        self._delta[ledger] = (delta.spent, total)

    def check(self, writer: str, record: AuditRecord) -> None:
        """Add ``record`` (written by ``writer``) to its ledger, or raise :class:`~securedp.audit.problem.Bad`."""
        if isinstance(record, PartitionRecord):
            fields = record.budget
            assert fields.charged is not None  # a partition record always states its charge
            charge = fields.charged
        elif record.budget is None:
            return
        else:
            fields = record.budget
            cost = own_cost(record)
            charge = stated_charge(cost, fields)
        path = list(fields.session.path) if fields.session is not None else []
        pid = fields.session.partition_id if fields.session is not None else None
        ledger = (writer, pid, json.dumps(path or None, sort_keys=True))
        total = fields.spent + fields.remaining
        before = self._state.get(ledger)
        if before is None:
            if path or pid is not None:
                raise Bad("record.partition_id",
                          "this sub-session's ledger was not opened by an earlier partition record")
            if fields.spent < charge:
                raise Bad("record.spent", "smaller than this release's own charge")
        else:
            last_spent, last_total, last_currency = before
            if total != last_total:
                raise Bad("record.remaining", "spent + remaining differs from this ledger's earlier total")
            if last_currency is not None and fields.currency is not last_currency:
                raise Bad("record.budget_kind",
                          f"differs from this ledger's earlier budget kind {last_currency.value!r}")
            if fields.spent != last_spent + charge:
                raise Bad("record.spent", "is not the previous spent plus this record's charge")
        self._state[ledger] = (fields.spent, total, fields.currency)
        if not isinstance(record, PartitionRecord):
            self._check_delta(ledger, cost.delta, fields)
        if isinstance(record, PartitionRecord):
            if (writer, record.opens) in self._opened:
                raise Bad("record.opens", "reuses the id of an earlier partition")
            self._opened.add((writer, record.opens))
            for key in record.parts:
                child = (writer, record.opens, json.dumps([*path, key], sort_keys=True))
                self._state[child] = (Fraction(0), record.share, fields.currency)
