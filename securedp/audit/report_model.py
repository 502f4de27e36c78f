"""What a reviewer's report says about an audit log, as plain data (rendered by :mod:`securedp.audit.report`).

:func:`build_report` verifies the log (:func:`~securedp.audit.verify.verify_log`, with the reviewer's
public key and signed head when given), optionally replays it from a seed and the data
(:func:`~securedp.audit.replay.replay_log`), and reads every verified record into an :class:`Entry`:

* the **budget** after it, per ledger (a writer, and within it each sub-session opened by a
  partition): ``spent`` and ``remaining`` exactly as recorded, and the delta ledger when the
  record spends delta;
* its **charge** (:class:`Charge`): the record's ``charged``, or, for a record that states none (the
  command's), the charge the verifier checks it against (:func:`~securedp.audit.check_ledger.stated_charge`:
  its own ``epsilon`` or ``rho``, in the budget's currency), and the delta it charged;
* its **noise laws** and their level (:mod:`securedp.audit.report_noise`; a record of format 2 states
  them per aggregation, one of format 1 flat), each mean's half-width in the column's units and each
  selection's rank error bound (:mod:`securedp.audit.report_widths`);
* its parameters, value, input commitment and random source, as recorded.

Nothing here is recomputed from data except by replay, and every number shown is the record's own
exact rational or a bound proven from it. A record's ``parameters`` are free-form JSON to the verifier,
so the report reads them without trusting their types: a log that verifies always gets a report.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from securedp.audit.check_ledger import own_cost, stated_charge
from securedp.audit.problem import Bad
from securedp.audit.replay import Replayed, replay_log
from securedp.audit.report_noise import DEFAULT_ALPHA, Level, NoiseLaw, Part, level_of, noise_laws, parts, rational
from securedp.audit.report_widths import MeanWidth, Selection, Unstated, mean_widths, selections
from securedp.audit.verify import Report, verify_log
from securedp.ledger.audit_record import PartitionRecord, parse_record
from securedp.ledger.release_record import SchemaError

__all__ = ["DEFAULT_ALPHA", "Charge", "Entry", "MeanWidth", "NoiseLaw", "Part", "ReviewReport", "Selection",
           "Unstated", "build_report", "mean_widths", "noise_laws", "selections"]


@dataclass(frozen=True)
class Charge:
    """What a record charged its budget: ``amount`` in ``currency`` (``None`` without a budget), and how it is known."""

    amount: Fraction | None
    currency: str | None
    how: str
    """A sentence: recorded, derived (and from what), or why there is no charge."""
    delta: Fraction | None = None
    """The delta charged to the ledger's delta budget, or spent without a budget (``None`` if no delta)."""


def charge_of(record: dict[str, Any]) -> Charge:
    """The charge of ``record`` by the rule the verifier checks (see the module docstring)."""
    try:
        parsed = parse_record(record)
    except SchemaError as error:  # a verified record always parses: stated for completeness
        return Charge(None, None, f"not read: {error}")
    if isinstance(parsed, PartitionRecord):
        kind = None if parsed.budget.currency is None else parsed.budget.currency.value
        return Charge(parsed.budget.charged, kind, "as recorded: the partition's budget times max_partitions")
    fields = parsed.budget
    try:
        cost = own_cost(parsed)
    except Bad as error:
        return Charge(None, None, f"not derived: {error.message}")
    own = cost.currency.value
    if fields is None:
        return Charge(None, own, f"not charged to any budget in this log; the release costs {own} {cost.amount}",
                      cost.delta)
    try:
        amount: Fraction | None = stated_charge(cost, fields)
    except Bad as error:
        amount = None
        how = f"not derived: {error.message}"
    else:
        how = ("as recorded" if fields.charged is not None else
               f"derived from the record's {own}: the record states no 'charged', and the command charges a "
               f"release its own {own}, to a budget of that currency")
    currency = own if fields.currency is None else fields.currency.value
    return Charge(amount, currency, how, None if fields.delta is None else fields.delta.charged)


@dataclass(frozen=True)
class Entry:
    """One verified line of the log, read for the report."""

    line: int
    seq: int
    time: str
    writer: str
    signed: bool
    record: dict[str, Any]
    ledger: str
    charge: Charge = field(default_factory=lambda: Charge(None, None, "not read"))
    level: Level = field(default_factory=lambda: Level(DEFAULT_ALPHA, False))
    parts: list[Part] = field(default_factory=list)
    """Its aggregations, each with its own record (a table's, or the one cell of a release of one column)."""
    noise: list[NoiseLaw] = field(default_factory=list)
    widths: list[MeanWidth | Unstated] = field(default_factory=list)
    selections: list[Selection] = field(default_factory=list)
    replay: Replayed | None = None
    trouble: str | None = None
    """Why part of this record could not be read for the report (``None``: all of it was)."""

    @property
    def kind(self) -> str:
        """``"partition"`` for a partition's charge, ``"unreleased <statistic>"`` for a charge that stood with
        nothing released, else the released statistic."""
        kind, statistic = self.record.get("kind"), str(self.record.get("statistic"))
        return "partition" if kind == "partition" else f"unreleased {statistic}" if kind == "unreleased" else statistic

    def budget(self, name: str) -> Fraction | None:
        """``spent``, ``remaining`` or ``charged`` after this record, exactly (``None`` if absent)."""
        return rational(self.record.get(name))

    def delta(self, name: str) -> Fraction | None:
        """The delta ledger's ``charged``, ``spent`` or ``remaining`` after this record (``None`` if none)."""
        return rational(self.record.get(f"delta_{name}"))


@dataclass(frozen=True)
class ReviewReport:
    """The whole report: the verification outcome, every verified entry in log order, and the replay."""

    log: str
    verification: Report
    entries: list[Entry]
    replayed: bool
    replay_error: str | None = None

    @property
    def releases_replayed(self) -> list[Replayed]:
        """The replay outcome of every release (partition charges, which draw nothing, left out)."""
        return [e.replay for e in self.entries if e.replay is not None and not e.replay.skipped]

    @property
    def not_reproduced(self) -> list[int]:
        """The lines of the releases that a replay re-ran and did not reproduce exactly."""
        return [r.line for r in self.releases_replayed if not r.ok and r.replayable]

    @property
    def not_replayable(self) -> list[int]:
        """The lines of the releases that cannot be re-derived (each says why): nothing compared, nothing differs."""
        return [r.line for r in self.releases_replayed if not r.replayable]

    @property
    def ok(self) -> bool:
        """True when every line verifies, no kept record is missing from the log and, if the log was replayed, every
        release reproduced exactly (a release that is not replayable is not reproduced: the page then says so, in amber
        rather than red)."""
        return (self.verification.ok and self.replay_error is None and not self.not_reproduced
                and not self.not_replayable and not self.verification.kept)

    @property
    def headline(self) -> str:
        """The report's outcome in one sentence (shown red on the page unless :attr:`ok`), and the records kept
        beside the log that are not in it (charges whose append failed: the log misses them)."""
        kept = len(self.verification.kept)
        return self._outcome + ("" if not kept else f"; but {kept} record{'s' * (kept != 1)} kept beside the log "
                                f"({Path(self.log).name}.unappended: charges whose append failed) not in it")

    @property
    def _outcome(self) -> str:
        v = self.verification
        if not v.ok:
            return f"the log does not verify ({v.valid} lines before the problem do); problem: {v.problem}"
        if not self.replayed:
            return "every line verifies"
        if self.replay_error is not None:
            return f"every line verifies, but the replay could not run: {self.replay_error}"
        done, failed = self.releases_replayed, self.not_reproduced
        if failed:
            lines = ", ".join(map(str, failed[:12])) + (", ..." if len(failed) > 12 else "")
            return f"every line verifies, but {len(failed)} of {len(done)} releases do not reproduce (lines {lines})"
        if self.not_replayable:
            unreplayable = self.not_replayable
            lines = ", ".join(map(str, unreplayable[:12])) + (", ..." if len(unreplayable) > 12 else "")
            return (f"every line verifies; {len(done) - len(unreplayable)} of {len(done)} releases reproduced exactly "
                    f"from the seed and the data, {len(unreplayable)} not replayable (lines {lines}: each says why), "
                    "nothing differs")
        return f"every line verifies; {len(done)} of {len(done)} releases reproduced exactly from the seed and the data"


def _ledger(entry: dict[str, Any]) -> str:
    """The ledger a record is charged to: its writer, and the partition path of its sub-session."""
    record = entry["record"]
    path = record.get("partition") if record.get("kind") != "partition" else None
    inside = "" if not path else " / part " + " / ".join(map(str, path if isinstance(path, list) else [path]))
    return f"writer {str(entry.get('writer', ''))[:8]}{inside}"


def read_entry(raw: dict[str, Any], line: int, replay: Replayed | None) -> Entry:
    """One verified log line read for the report; never raises (a failure is kept in :attr:`Entry.trouble`)."""
    record = raw.get("record") or {}
    entry = Entry(line=line, seq=int(raw.get("seq", line - 1)), time=str(raw.get("time", "")),
                  writer=str(raw.get("writer", "")), signed="sig" in raw, record=record, ledger=_ledger(raw),
                  replay=replay)
    try:
        parameters = record.get("parameters")
        level = level_of(parameters) if isinstance(parameters, dict) else entry.level
        return replace(entry, charge=charge_of(record), level=level, parts=parts(record), noise=noise_laws(record),
                       widths=mean_widths(record), selections=selections(record))
    except Exception as error:  # a last resort: a log that verifies always gets a report
        return replace(entry, trouble=f"{type(error).__name__}: {error}")


def build_report(
    log: str | Path, *, public_key: Any = None, head: Any = None, seed: bytes | None = None,
    data: str | Path | None = None,
) -> ReviewReport:
    """Verify ``log`` (and replay it when ``seed`` and ``data`` are given) and read it for the report.

    Never raises on the log's content: a log that does not verify gives a report of its valid lines
    with the problem stated, and a replay that cannot run is stated as such. ``public_key`` and
    ``head`` are those of :func:`verify_log`.
    """
    verification = verify_log(log, public_key=public_key, head=head)
    replays: dict[int, Replayed] = {}
    replay_error = None
    if seed is not None and data is not None:
        try:
            replays = {r.line: r for r in replay_log(log, seed, data, public_key=public_key, head=head)}
        except Exception as error:  # the page states why the replay could not run
            replay_error = str(error) or type(error).__name__
    entries = [read_entry(raw, i + 1, replays.get(i + 1)) for i, raw in enumerate(verification.entries)]
    return ReviewReport(str(log), verification, entries, seed is not None and data is not None, replay_error)
