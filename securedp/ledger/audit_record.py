"""The budget unit and the budget fields of audit records: one typed schema for every producer and the verifier.

:class:`~securedp.privacy.noise.Currency` (defined with the cost type it counts) is the unit a
budget counts: ``epsilon`` (pure DP) or ``rho`` (zCDP). Records name it ``budget_kind``; budget files
``currency``.

A record of the audit log is one of

* a :class:`ChargedRelease`: the release's fields
  (:class:`~securedp.ledger.release_record.ReleaseRecord`), then the
  command's ``query`` (an object, when written by ``securedp release``),
  then the :class:`BudgetFields` of the budget it was charged to, if any;
* a :class:`PartitionRecord` (``"kind": "partition"``), the charge of a
  :meth:`securedp.Session.partition` to its parent, which opens one ledger
  per part;
* an :class:`UnreleasedRecord` (``"kind": "unreleased"``), a charge that
  stands with no release: the execution read its first random bit, then
  failed (an interrupt, an error building the output), so the charge is kept
  and written, and the ledger's next record still adds up.

:class:`BudgetFields` are, in this order: ``budget_kind`` (optional),
``charged`` (the exact charge to the budget, > 0; a session writes it),
``total`` (the command writes it), ``spent`` and ``remaining`` just after
the charge (``remaining >= 0``, and ``spent + remaining == total`` when
``total`` is written), then, from a session, ``partition`` (the sub-session's
path of part keys, ``null`` at the top) and ``partition_id`` (the 32-hex id
of the partition that opened the sub-session, only inside one). Rationals are
JSON integers or canonical ``"num/den"`` strings.

Parsing is verification: :func:`parse_record` returns a typed record only
for an object that satisfies these rules, else raises
:class:`~securedp.ledger.release_record.SchemaError` naming the field.
Whether the charges of a ledger add up is a check across records, made by
:mod:`securedp.audit.check_ledger`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeAlias

from securedp.ledger.release import jsonable
from securedp.ledger.release_record import (
    Json,
    ReleaseRecord,
    SchemaError,
    bounded_range,
    hex_digits,
    nonempty_text,
    parse_cost,
    parse_delta,
    parse_rational,
    positive_int,
    require,
)
from securedp.privacy.cost import Cost
from securedp.privacy.cost import Currency as Currency  # the budget unit, defined with the cost type

if TYPE_CHECKING:
    from securedp.ledger.release import Release


@dataclass(frozen=True)
class BudgetState:
    """A budget at one moment: exact ``total`` and ``spent`` in ``currency``; ``ledger`` names a stored budget.

    ``delta_total`` and ``delta_spent``: its delta ledger (the delta that releases selected by partition
    selection may spend, and have spent); ``delta_total`` is ``None`` for a budget without one. ``pending``: the
    record of the last charge while that record is not known to be in its audit log (:class:`Pending`).
    """

    total: Fraction
    spent: Fraction
    ledger: str | None = None
    currency: Currency = Currency.EPSILON
    delta_total: Fraction | None = None
    delta_spent: Fraction = Fraction(0)
    pending: Pending | None = None

    @property
    def remaining(self) -> Fraction:
        return self.total - self.spent

    def delta_fields(self, charged: Fraction | None) -> DeltaFields | None:
        """The record's :class:`DeltaFields` just after a release that spent ``charged`` delta, or ``None`` if it
        spent none (``charged`` is ``None``); a charged delta implies a delta ledger."""
        if charged is None:
            return None
        assert self.delta_total is not None  # a budget without a delta ledger refuses a delta charge
        return DeltaFields(charged, self.delta_spent, self.delta_total - self.delta_spent)


@dataclass(frozen=True)
class Pending:
    """The record a stored budget keeps with a charge until that charge's own record is in the audit log.

    Written in the same atomic replacement as the charge, before the first random bit; cleared once the
    release's record is durable. ``record`` is the :class:`UnreleasedRecord` (error :data:`OUTCOME_LOST`)
    that recovery appends if the process died first (or the release's own record, once its append failed);
    ``writer`` is the audit log writer that was to record it.
    """

    writer: str
    record: dict[str, Json]


@dataclass(frozen=True)
class SessionPath:
    """Where a session's record sits: the path of part keys from the top session, and the opening partition's id."""

    path: tuple[Json, ...] = ()
    partition_id: str | None = None


@dataclass(frozen=True)
class DeltaFields:
    """A session's delta ledger just after a release that spent ``charged > 0`` of it.

    Written as ``delta_charged``, ``delta_spent`` and ``delta_remaining``
    (``delta_remaining >= 0``); the ledger check adds the charges up.
    """

    charged: Fraction
    spent: Fraction
    remaining: Fraction

    def to_json(self) -> dict[str, Json]:
        return {"delta_charged": jsonable(self.charged), "delta_spent": jsonable(self.spent),
                "delta_remaining": jsonable(self.remaining)}

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> DeltaFields | None:
        names = ("delta_charged", "delta_spent", "delta_remaining")
        if not any(n in record for n in names):
            return None
        require(record, names)
        charged, spent, remaining = (parse_rational(record[n], n) for n in names)
        if charged <= 0:
            raise SchemaError("delta_charged", "must be > 0")
        if remaining < 0:
            raise SchemaError("delta_remaining", "negative: delta was overspent")
        return cls(charged, spent, remaining)


@dataclass(frozen=True)
class BudgetFields:
    """The budget a record was charged to, just after the charge (see the module docstring)."""

    spent: Fraction
    remaining: Fraction
    currency: Currency | None = None
    charged: Fraction | None = None
    total: Fraction | None = None
    session: SessionPath | None = None
    """``None`` for a budget outside any session (the command's budget file)."""
    delta: DeltaFields | None = None
    """The session's delta ledger just after a release that spent delta, else ``None``."""

    @classmethod
    def charged_to(cls, state: BudgetState, amount: Fraction, session: SessionPath) -> BudgetFields:
        """The fields a session writes: ``amount`` charged to a budget now in ``state``."""
        return cls(state.spent, state.remaining, state.currency, amount, session=session)

    def to_json(self) -> dict[str, Json]:
        fields: dict[str, Json] = {}
        if self.currency is not None:
            fields["budget_kind"] = self.currency.value
        if self.charged is not None:
            fields["charged"] = jsonable(self.charged)
        if self.total is not None:
            fields["total"] = jsonable(self.total)
        fields["spent"] = jsonable(self.spent)
        fields["remaining"] = jsonable(self.remaining)
        if self.session is not None:
            fields["partition"] = list(self.session.path) if self.session.path else None
            if self.session.partition_id is not None:
                fields["partition_id"] = self.session.partition_id
        if self.delta is not None:
            fields.update(self.delta.to_json())
        return fields

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> BudgetFields | None:
        """The budget fields of ``record``, or ``None`` if it has neither ``spent`` nor ``remaining``."""
        if "spent" not in record and "remaining" not in record:
            return None
        require(record, ("spent", "remaining"))
        currency = _currency(record["budget_kind"]) if "budget_kind" in record else None
        charged = None
        if "charged" in record:
            charged = parse_rational(record["charged"], "charged")
            if charged <= 0:
                raise SchemaError("charged", "must be > 0")
        spent = parse_rational(record["spent"], "spent")
        remaining = parse_rational(record["remaining"], "remaining")
        if remaining < 0:
            raise SchemaError("remaining", "negative: the budget was overspent")
        total = None
        if "total" in record:
            total = parse_rational(record["total"], "total")
            if total != spent + remaining:
                raise SchemaError("total", "differs from spent + remaining")
        return cls(spent, remaining, currency, charged, total, _session_path(record), DeltaFields.from_json(record))


def _session_path(record: Mapping[str, Any]) -> SessionPath | None:
    if "partition" not in record and "partition_id" not in record:
        return None
    path = record.get("partition")
    if path is not None and not isinstance(path, list):
        raise SchemaError("partition", "must be a list of keys or null")
    pid = None if "partition_id" not in record else hex_digits(record["partition_id"], 32, "partition_id")
    return SessionPath(tuple(path or ()), pid)


@dataclass(frozen=True)
class ChargedRelease:
    """A release record with what its producer adds: the command's ``query`` and the budget charged."""

    release: ReleaseRecord
    budget: BudgetFields | None = None
    query: dict[str, Json] | None = None

    @classmethod
    def of(
        cls, release: Release, budget: BudgetFields | None = None, query: dict[str, Json] | None = None
    ) -> ChargedRelease:
        """The record of ``release``, charged to ``budget``, made by ``query``."""
        return cls(ReleaseRecord.of(release), budget, query)

    def to_json(self) -> dict[str, Json]:
        record = self.release.to_json()
        if self.query is not None:
            record["query"] = self.query
        if self.budget is not None:
            record.update(self.budget.to_json())
        return record

    @property
    def cost(self) -> Cost:
        """The release's exact cost: its ``epsilon`` or ``rho``, and the ``delta`` among its parameters (or
        :class:`~securedp.ledger.release_record.SchemaError` naming ``parameters.delta``)."""
        release = self.release
        return Cost(release.currency, release.cost, parse_delta(release.parameters.get("delta"), "parameters.delta"),
                    release.epsilon is not None and bounded_range(release.statistic, release.mechanism))

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> ChargedRelease:
        return cls(ReleaseRecord.from_json(record), BudgetFields.from_json(record), _query(record))


PARTITION_FIELDS = (
    "budget_kind", "charged", "budget", "max_partitions", "parts", "spent", "remaining", "partition", "opens"
)


@dataclass(frozen=True)
class PartitionRecord:
    """A partition's charge to its parent: ``budget`` (each part's total) times ``max_partitions``.

    ``budget`` holds the parent's fields (``charged == share * max_partitions``,
    exactly); ``parts`` the declared keys (distinct); ``opens`` the fresh
    32-hex id that every record of the parts' sub-sessions carries as
    ``partition_id``.
    """

    budget: BudgetFields
    share: Fraction
    max_partitions: int
    parts: tuple[Json, ...]
    opens: str

    def to_json(self) -> dict[str, Json]:
        return {
            "kind": "partition",
            **self.budget.to_json(),
            "budget": jsonable(self.share),
            "max_partitions": self.max_partitions,
            "parts": list(self.parts),
            "opens": self.opens,
        }

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> PartitionRecord:
        require(record, PARTITION_FIELDS)
        budget = BudgetFields.from_json(record)
        assert budget is not None and budget.currency is not None and budget.charged is not None  # required above
        share = parse_rational(record["budget"], "budget")
        if share <= 0:
            raise SchemaError("budget", "must be > 0")
        k = positive_int(record["max_partitions"], "max_partitions")
        if budget.charged != share * k:
            raise SchemaError("charged", "is not budget * max_partitions")
        parts = record["parts"]
        if not isinstance(parts, list) or len({json.dumps(p, sort_keys=True) for p in parts}) != len(parts):
            raise SchemaError("parts", "must be a list of distinct keys")
        return cls(budget, share, k, tuple(parts), hex_digits(record["opens"], 32, "opens"))


UNRELEASED_FIELDS = ("statistic", "epsilon", "rho", "error")
OUTCOME_LOST = "OutcomeLost"
"""The ``error`` of the unreleased record that recovery appends for a charge whose own record never reached the
log (the process died after the charge, or its record could not be appended and was not kept)."""


@dataclass(frozen=True)
class UnreleasedRecord:
    """A charge that stands although nothing was released (see :meth:`securedp.Session.release`).

    ``statistic`` and the exact cost (``epsilon`` or ``rho``, and ``delta`` for a release that spends one)
    are the prepared release's; ``error`` names the exception the caller received (its type only: its
    message could depend on what was drawn); ``query`` is the command's, when it wrote the record; the
    budget fields are those just after the charge, with ``charged`` always stated (``None``: a budget
    without a ledger, the command's one-release session).
    """

    statistic: str
    cost: Cost
    error: str
    budget: BudgetFields | None = None
    query: dict[str, Json] | None = None

    def to_json(self) -> dict[str, Json]:
        record: dict[str, Json] = {
            "kind": "unreleased", "statistic": self.statistic, "epsilon": jsonable(self.cost.epsilon),
            "rho": jsonable(self.cost.rho),
        }
        if self.cost.delta is not None:
            record["delta"] = jsonable(self.cost.delta)
        if self.cost.bounded_range:
            record["bounded_range"] = True
        record["error"] = self.error
        if self.query is not None:
            record["query"] = self.query
        if self.budget is not None:
            record.update(self.budget.to_json())
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> UnreleasedRecord:
        require(record, UNRELEASED_FIELDS)
        error = record["error"]
        if not isinstance(error, str) or not error.isidentifier():
            raise SchemaError("error", "must name an exception type")
        cost = parse_cost(record, parse_delta(record.get("delta")))
        if record.get("bounded_range", False) is not False:
            if record["bounded_range"] is not True or cost.epsilon is None:
                raise SchemaError("bounded_range", "is true (an epsilon release's) or absent")
            cost = dataclasses.replace(cost, bounded_range=True)
        budget = BudgetFields.from_json(record)
        if budget is not None and budget.charged is None:
            raise SchemaError("charged", "an unreleased charge states what it charged")
        return cls(nonempty_text(record["statistic"], "statistic"), cost, error, budget, _query(record))


AuditRecord: TypeAlias = ChargedRelease | PartitionRecord | UnreleasedRecord


def parse_record(record: object) -> AuditRecord:
    """The typed form of one audit record, or :class:`SchemaError` naming the first field that breaks a rule."""
    if not isinstance(record, dict):
        raise SchemaError("", "not a JSON object")
    if "kind" in record:
        if record["kind"] == "partition":
            return PartitionRecord.from_json(record)
        if record["kind"] == "unreleased":
            return UnreleasedRecord.from_json(record)
        raise SchemaError("kind", f"unknown record kind {record['kind']!r}")
    return ChargedRelease.from_json(record)


def _query(record: Mapping[str, Any]) -> dict[str, Json] | None:
    """The command's ``query`` of ``record`` (an object), or ``None`` without one."""
    query = record.get("query")
    if "query" in record and not isinstance(query, dict):
        raise SchemaError("query", "must be an object")
    return query


def _currency(value: object) -> Currency:
    """A record's ``budget_kind`` (``"epsilon"`` or ``"rho"``) as a :class:`Currency`."""
    if isinstance(value, str) and value in (Currency.EPSILON.value, Currency.RHO.value):
        return Currency(value)
    raise SchemaError("budget_kind", f"must be 'epsilon' or 'rho', got {value!r}")
