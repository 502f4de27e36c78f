"""A privacy session: one budget, one random source, one audit trail, many releases.

``Session(epsilon=E)`` (pure DP) or ``Session(rho=R)`` (zCDP), plus
``rng=`` (default: the system CSPRNG), ``audit=`` (any object with
``.append(record: dict)``) and ``analyst_facing=`` (see *Who reads the
errors* below); or ``Session(budget=Budget(...))``, for instance a budget
kept in a budget file (:mod:`securedp.ledger.budget_file`). Every
release goes through :meth:`Session.release`, those of the command
``securedp release`` too (a session over its budget file):

1. its exact cost is computed (``prepare_*`` has already validated the
   input; a bad input raises before this point, so nothing is charged);
2. the cost, and the release's own delta if it has one (partition
   selection), are **charged under the budget's lock before any noise is
   drawn**; if either would overspend, :class:`BudgetExceeded` is raised and
   nothing is drawn or charged, so concurrent releases from several threads
   (or processes, on a budget file) never overspend;
3. the release is executed on the session's source (the salt that bounds
   contributions, the aggregates, the noise, the output);
4. ``audit.append(record)`` is called with ``release.record()`` plus the
   exact budget fields (``budget_kind``, ``charged``, ``spent``,
   ``remaining`` just after this charge, as ``"num/den"`` strings). A
   refused release never reaches the audit.

**The charge stands once the first random bit is read.** If step 3 or 4
raises before the release has consumed any randomness, the charge is
refunded and the budget is as it was; once it has read one bit (or taken
one pre-drawn value), the charge stands whatever fails next (building the
output, the audit hook, an interrupt) and the error propagates: a failure
after the draw can depend on the noise, and a refund would let an analyst
retry for free and learn from each failure. The rule lives in one place,
:meth:`securedp.ledger.budget.Budget.charging`, so the budget file of
the command line follows it too.

**Who reads the errors.** By default errors are written for the *data holder*, trusted with the data: a
bad record raises before anything is charged, naming it. A session whose releases are requested by an
**analyst** who must not see the data is created with ``analyst_facing=True``: its releases never raise
because of the data's values (unusable records are dropped or imputed by declared policy, undeclared
categories and keys dropped), and the errors that remain depend only on the public arguments and the
input's shape. The rule and the one place that enforces it are :mod:`securedp.session.boundary`.

Parallel composition: :meth:`Session.partition` splits the data by a
public key into disjoint parts, charges the parent once and gives every
part its own sub-session with that budget. With an audit, the parent's
charge is recorded too, as a ``{"kind": "partition", ...}`` record (see
:meth:`Session.partition`), so that every change of every ledger's
``spent`` has a line of its own in the log.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ParamSpec

import numpy as np

from securedp.bounding.contributions import check_max_contributions
from securedp.bounding.messages import draw_salt
from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import format_rational, positive_rational
from securedp.ledger.audit_record import (
    OUTCOME_LOST,
    BudgetFields,
    BudgetState,
    ChargedRelease,
    PartitionRecord,
    SessionPath,
    UnreleasedRecord,
)
from securedp.ledger.budget import RHO, Budget
from securedp.ledger.errors import InterruptedAfterAppend
from securedp.ledger.release import PreparedRelease, Release, jsonable
from securedp.ledger.release_record import Json
from securedp.mechanisms.exponential import prepare_exponential_mechanism
from securedp.mechanisms.noisy_max import prepare_report_noisy_max
from securedp.mechanisms.permute_and_flip import prepare_permute_and_flip
from securedp.mechanisms.record_rules import current_rules, rules_scope
from securedp.privacy.conversions import approx_dp_to_zcdp, zcdp_to_approx_dp
from securedp.privacy.cost import Cost
from securedp.session.boundary import data_boundary
from securedp.session.methods import session_method
from securedp.session.partition import Part, declared_parts, read_parts, select_rows
from securedp.session.recording import append_record, transaction, unreleased_on_failure
from securedp.tables import one_column
from securedp.tables.registry import Statistic
from securedp.tables.spec import STATISTICS
from securedp.tables.table import TableRelease, prepare_table

P = ParamSpec("P")



if TYPE_CHECKING:  # a method per statistic of one column as a static checker sees it (made below at run time)
    from securedp.tables.signatures import SessionStatistics
else:
    SessionStatistics = object


class Session(SessionStatistics):
    """Exact privacy accounting over a sequence of releases (see the module docstring).

    ``Session(..., analyst_facing=True)`` is for releases requested by an
    analyst who must not see the data: no exception then depends on the
    data's values (unusable records, undeclared categories or partition keys
    and rows without a usable person id are dropped, or imputed by declared
    policy), and the errors that remain name no row and count nothing. By
    default errors are written for the trusted data holder.
    """

    def __init__(
        self, epsilon: Any = None, rho: Any = None, *, delta: Any = None, budget: Budget | None = None,
        rng: RandomSource | None = None, audit: Any = None, analyst_facing: bool = False,
        _path: tuple[Any, ...] = (), _partition_id: str | None = None,
    ) -> None:
        """A budget of ``epsilon`` (pure DP) or ``rho`` (zCDP), and optionally ``delta``; or ``budget``.

        ``delta``: the total delta that releases with a delta (a table with
        private keys, selected by partition selection) may spend; without it
        such releases are refused. Deltas add up (basic composition), so the
        session guarantees (``epsilon``, ``delta``)-DP, or ``delta``-approximate
        ``rho``-zCDP.

        ``budget``: instead of ``epsilon``/``rho`` and ``delta``, a
        :class:`~securedp.ledger.budget.Budget` to charge, such as one
        kept in a budget file shared with other processes and with the
        command line (``Budget(kind, store=BudgetFile(path, ...))``,
        :mod:`securedp.ledger.budget_file`; its delta ledger is the
        file's). Every charge is made under the store's lock. For the audit
        records of such a session to be checked across invocations, give
        ``audit`` the file's ledger id as its writer
        (``AuditLog(log, writer=BudgetFile(...).ledger)``).

        ``rng``: the random source (default: the system CSPRNG). ``audit``:
        an object with ``.append(record)``. ``analyst_facing``: ``True`` when
        the releases are requested by someone who must not learn the data
        from error messages (see the module docstring): no error then
        depends on the values of the data.
        """
        if not isinstance(analyst_facing, (bool, np.bool_)):
            raise TypeError(f"analyst_facing must be True or False, not {type(analyst_facing).__name__}")
        if budget is None:
            cost = Cost.of(epsilon, rho)
            budget = Budget(cost.currency, cost.amount, delta=delta)
        elif not isinstance(budget, Budget):
            raise TypeError(f"budget must be a securedp Budget, not {type(budget).__name__}")
        elif epsilon is not None or rho is not None or delta is not None:
            raise TypeError("give a budget, or epsilon/rho (and delta), not both")
        self._budget = budget
        self._rng = resolve_source(rng)
        if audit is not None and not callable(getattr(audit, "append", None)):
            raise TypeError("audit must have an append(record) method")
        self._audit = audit
        self._analyst_facing = bool(analyst_facing)
        self._path = _path
        self._partition_id = _partition_id

    @classmethod
    def from_approx_dp(cls, epsilon: Any, delta: Any, *, selection_delta: Any = None, **options: Any) -> Session:
        """A zCDP session whose whole budget guarantees (``epsilon``, ``delta``)-DP.

        Its ``rho`` is :func:`~securedp.privacy.conversions.approx_dp_to_zcdp`,
        rounded down. Pure-epsilon releases are charged their proven zCDP (``Cost.in_currency``).

        ``selection_delta``: the part of ``delta`` that releases with a delta of their own may spend
        (tables with private keys, chosen by partition selection); the session's delta ledger. The
        conversion then uses the rest, ``delta - selection_delta``: ``selection_delta``-approximate
        ``rho``-zCDP gives (``epsilon``, ``delta``)-DP (see :meth:`approx_dp`). Without it, releases
        with a delta are refused.
        """
        if selection_delta is None:
            return cls(rho=approx_dp_to_zcdp(epsilon, delta), **options)
        total, reserved = positive_rational(delta, "delta"), positive_rational(selection_delta, "selection_delta")
        if reserved >= total:
            raise ValueError(f"selection_delta ({format_rational(reserved)}) must be below delta "
                             f"({format_rational(total)}): the rest pays for the conversion from zCDP")
        return cls(rho=approx_dp_to_zcdp(epsilon, total - reserved), delta=reserved, **options)

    # -- budget -----------------------------------------------------------
    @property
    def analyst_facing(self) -> bool:
        """Whether errors are withheld from the analyst (no error depends on the data's values)."""
        return self._analyst_facing

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

    @property
    def delta(self) -> Fraction | None:
        """The total delta of the session (``None``: releases with a delta are refused)."""
        return self._budget.delta_total

    @property
    def delta_spent(self) -> Fraction:
        """The exact sum of the deltas of the releases made so far."""
        return self._budget.delta_spent

    def approx_dp(self, delta: Any) -> Fraction:
        """For a rho session: an upper bound on the epsilon of (epsilon, ``delta``)-DP spent so far.

        ``delta`` is the **total** delta of the guarantee, including the delta the releases have spent
        themselves (:attr:`delta_spent`, partition selection): ``delta_spent``-approximate ``rho``-zCDP
        implies (``eps(d)``, ``delta_spent + d``)-DP (Bun and Steinke 2016, Def. 8.1 and Prop. 1.3), so
        the conversion is made at ``d = delta - delta_spent``, which must be positive.
        """
        if self.kind != RHO:
            raise ValueError("approx_dp applies to a rho (zCDP) session; an epsilon session's spent is its epsilon")
        total = positive_rational(delta, "delta")
        left = total - self.delta_spent
        if left <= 0:
            raise ValueError(f"delta {format_rational(total)} is not above the delta the releases already spent "
                             f"({format_rational(self.delta_spent)}): ask for a larger total delta")
        spent = self.spent
        return zcdp_to_approx_dp(spent, left) if spent > 0 else Fraction(0)

    # -- releases -----------------------------------------------------------
    def prepare(self, prepare: Callable[P, PreparedRelease], *args: P.args, **options: P.kwargs) -> PreparedRelease:
        """``prepare(*args, **options)`` in this session's error mode, behind the error boundary.

        Analyst-facing, an exception raised once the data has started to be read becomes
        :class:`~securedp.ledger.errors.DataRefused`; the public arguments are validated before that and their errors
        pass (:mod:`securedp.session.boundary`). In a ``rho`` budget quantiles draw by the exponential mechanism even
        priced in ``epsilon`` (bounded range: ``epsilon**2 / 8``, :mod:`securedp.mechanisms.quantile_draw`): the
        budget's pricing choice ``rho_budget`` of :class:`~securedp.mechanisms.record_rules.RecordRules`.
        """
        with rules_scope(dataclasses.replace(current_rules(), rho_budget=self._budget.currency == RHO)):
            return data_boundary(self._analyst_facing, lambda: prepare(*args, **options))

    def release(self, prepared: PreparedRelease, *, query: dict[str, Json] | None = None) -> Release:
        """Charge, draw, audit, and return the release (refunded only on a failure before the first random bit).

        The one pipeline of every release, of the sessions' methods and of the
        command ``securedp``: give it any prepared release (``securedp.prepare_sum(...)``,
        ``securedp.prepare_table(...)``). Its charges (its cost in the budget's currency,
        and its ``delta``, if it has one, to the delta ledger) are made at
        once under the budget's lock, refused before anything is drawn if
        either would overspend (:meth:`~securedp.ledger.budget.Budget.charging`).
        The record given to the audit is :class:`~securedp.ledger.audit_record.ChargedRelease` (or, for an
        execution that fails after its first random bit, :class:`~securedp.ledger.audit_record.UnreleasedRecord`
        with the same budget fields, ``charged`` always stated):

        * without ``query`` (a session's release): the budget fields of a
          session, ``budget_kind``, ``charged``, ``spent``, ``remaining``,
          ``partition`` (and ``partition_id`` inside a partition), then the
          ``delta_*`` fields if the release spent delta;
        * with ``query`` (the command's query, JSON-ready): ``query``, then,
          if the budget is stored with a ledger (a budget file), the
          command's budget fields ``budget_kind``, ``total``, ``spent`` and
          ``remaining`` (the command charges a release only to a budget of
          its own currency, so its charge is its own cost and is not
          written), then the ``delta_*`` fields if it spent delta; a budget
          without a ledger (the command's one-release session) writes none.

        **A release is a transaction.** Once its first random bit is read the charge stands, and its
        record is appended: an append that fails with an I/O error is tried again (three times in all);
        if it still fails, :class:`~securedp.ledger.errors.RecordNotAppended` is raised carrying the
        release (its value reaches the caller; ``None`` for an unreleased record) and its record, so that a
        charge is never left without a record anyone can keep; an interrupt meanwhile is raised once the
        record is durable (:mod:`securedp.session.recording`). A charge to a budget file keeps its record
        with it until its own is durable, and the next charge appends it if a kill left the log without it.
        """
        cost = prepared.cost
        amount, delta = cost.in_currency(self._budget.currency), cost.delta
        # The budget is held from the charge to the audit append, so a ledger's records reach the log in the order
        # of its charges, even from several processes. Both charges stand once the execution has read its first
        # random bit (Budget.charging); executing reads the data, so an analyst-facing failure is DataRefused.
        def unreleased(error: str, at: BudgetState | None = None) -> dict[str, Json]:  # a failure after the first bit
            fields = self._fields(state if at is None else at, amount, delta, query, charged=True)
            return UnreleasedRecord(prepared.statistic, cost, error, fields, query).to_json()

        self._check_appendable()
        kept = transaction(self._audit, lambda at: unreleased(OUTCOME_LOST, at))  # the record kept with the charge
        with self._budget.charging(amount, delta, **kept) as state, \
                unreleased_on_failure(self._audit, unreleased) as handing:
            release = data_boundary(self._analyst_facing, lambda: prepared.execute(self._rng), reading=True)
            if self._audit is not None:
                record = ChargedRelease.of(release, self._fields(state, amount, delta, query), query).to_json()
                handing.handed = True
                append_record(self._audit, release, record)
        return release

    def _check_appendable(self) -> None:
        """Refuse, before anything is charged or drawn, a release whose record the audit could not take now (an
        :class:`~securedp.audit.log.AuditLog` whose file, folder or signed head cannot be written, or whose last
        line is torn or altered: :meth:`~securedp.audit.log.AuditLog.check_appendable`); other audits (a list, a
        test double) are not asked."""
        check = getattr(self._audit, "check_appendable", None)
        if callable(check):
            check()

    def _fields(
        self, state: BudgetState, amount: Fraction, delta: Fraction | None, query: dict[str, Json] | None, *,
        charged: bool = False,
    ) -> BudgetFields | None:
        """The budget fields of a record charged ``amount`` (and ``delta``) to a budget now in ``state`` (see
        :meth:`release`); ``charged``: state the charge even in the command's fields (an unreleased charge)."""
        if query is None:
            fields = BudgetFields.charged_to(state, amount, SessionPath(self._path, self._partition_id))
        elif state.ledger is not None:
            fields = BudgetFields(state.spent, state.remaining, state.currency, amount if charged else None,
                                  total=state.total)
        else:
            return None
        return dataclasses.replace(fields, delta=state.delta_fields(delta))

    exponential_mechanism = session_method(prepare_exponential_mechanism)
    report_noisy_max = session_method(prepare_report_noisy_max)
    permute_and_flip = session_method(prepare_permute_and_flip)
    table = session_method(prepare_table, TableRelease)

    # -- parallel composition -------------------------------------------------
    def partition(
        self, data: Any, *, by: Any, parts: Any, budget: Any, ids: Any = None, max_partitions: Any = 1,
        unknown: str = "raise",
    ) -> dict[Any, Part]:
        """Split ``data`` into disjoint parts by a public key and give each part ``budget``: the parent is
        charged ``budget * max_partitions`` once, and each part gets its rows, their ids and a sub-session of
        this session's kind, source, audit and mode. The keys ``parts`` are declared, never read from the data;
        ``max_partitions`` bounds the parts one person's rows fall in, enforced when ``ids`` are given. The
        exact rule, the privacy argument and the audit record: :mod:`securedp.session.partition`.
        """
        if unknown not in ("raise", "drop"):
            raise ValueError("unknown must be 'raise' or 'drop'")
        k = check_max_contributions(max_partitions)
        share = Cost.of(**{self.kind: budget}).amount  # the given budget itself, in this session's currency
        keys = declared_parts(parts)
        position = {key: i for i, key in enumerate(keys)}
        records, id_rows, where, rule = data_boundary(
            self._analyst_facing, lambda: read_parts(data, by, ids, position, unknown, k))
        charge = share * k
        opens = os.urandom(16).hex()
        here = SessionPath(self._path, self._partition_id)
        # A failure hands out no part; it is refunded only before the salt is drawn, else recorded
        def unreleased(error: str, at: BudgetState | None = None) -> dict[str, Json]:  # once the salt is drawn
            fields = BudgetFields.charged_to(state if at is None else at, charge, here)
            return UnreleasedRecord("partition", Cost(self._budget.currency, charge), error, fields).to_json()

        self._check_appendable()
        interrupt: BaseException | None = None  # one that arrived once the record was durable
        kept = transaction(self._audit, lambda at: unreleased(OUTCOME_LOST, at))
        with self._budget.charging(charge, **kept) as state, unreleased_on_failure(self._audit, unreleased) as handing:
            fields = BudgetFields.charged_to(state, charge, here)
            if rule is not None:
                inside = np.flatnonzero(where >= 0)
                where[inside[~rule.kept(draw_salt(self._rng))]] = -1
            if self._audit is not None:
                record = PartitionRecord(fields, share, k, tuple(jsonable(key) for key in keys), opens).to_json()
                handing.handed = True
                if rule is None:  # nothing drawn yet: a failed append refunds the charge (and appended nothing)
                    try:
                        self._audit.append(record)
                    except InterruptedAfterAppend as late:  # the record is durable: so is its charge
                        interrupt = late.interrupt
                else:  # the salt is drawn: the charge stands, and its record is tried again like a release's
                    append_record(self._audit, None, record)
        if interrupt is not None:
            raise interrupt
        out: dict[Any, Part] = {}
        for i, key in enumerate(keys):
            mask = where == i
            out[key] = Part(
                key=key,
                data=select_rows(records, mask),
                ids=None if id_rows is None else select_rows(id_rows, mask),
                session=Session(
                    budget=Budget(self.kind, share), rng=self._rng, audit=self._audit,
                    analyst_facing=self._analyst_facing, _path=(*self._path, jsonable(key)), _partition_id=opens,
                ),
            )
        return out


def _statistic_method(entry: Statistic) -> None:
    """Give ``Session`` the method of a statistic of one column: :func:`session_method` of its ``prepare_NAME``."""
    if entry.signature is not None:
        setattr(Session, entry.name, session_method(getattr(one_column, f"prepare_{entry.name}")))


STATISTICS.subscribe(_statistic_method)
