"""What a reviewer's report says about an audit log, as plain data (rendered by :mod:`securedp.audit.report`).

:func:`build_report` verifies the log (:func:`~securedp.audit.verify.verify_log`, with the reviewer's
public key and signed head when given), optionally replays it from a seed and the data
(:func:`~securedp.audit.replay.replay_log`), and reads every verified record into a :class:`Entry`:

* the **budget** after it, per ledger (a writer, and within it each sub-session opened by a
  partition): ``spent`` and ``remaining`` exactly as recorded, and the delta ledger when the
  record spends delta;
* its **noise laws**: every additive noise the record declares (``scale_units`` of a discrete
  Laplace, ``variance_units`` of a discrete Gaussian, for one-column releases and for every
  aggregation of a table), each with the half-width of its interval at level ``1 - alpha``
  (:func:`~securedp.mechanisms.accuracy.laplace_halfwidth`,
  :func:`~securedp.mechanisms.accuracy.gaussian_halfwidth`: the smallest proven one, by directed
  rounding) in the column's own units (``units * lattice_step``);
* its parameters, value, input commitment and random source, as recorded.

Nothing here is recomputed from data except by replay, and every number shown is the record's own
exact rational or a bound proven from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from securedp.audit.replay import Replayed, replay_log
from securedp.audit.verify import Report, verify_log
from securedp.mechanisms.accuracy import gaussian_halfwidth, laplace_halfwidth

DEFAULT_ALPHA = Fraction(1, 20)
"""The level of the half-widths shown for records that state no ``alpha`` of their own."""


@dataclass(frozen=True)
class NoiseLaw:
    """One additive noise of a release: its law, parameter (in lattice units) and proven half-width."""

    label: str
    mechanism: str
    parameter: Fraction
    """``scale`` of a discrete Laplace, ``sigma**2`` of a discrete Gaussian, in lattice units."""
    step: Fraction | None
    """The value of one unit in the column's own units, or ``None`` for a moment of a mean or variance."""
    halfwidth_units: int
    alpha: Fraction

    @property
    def halfwidth(self) -> Fraction | None:
        """The half-width in the column's own units (``units * step``), or ``None`` for a moment."""
        return None if self.step is None else self.halfwidth_units * self.step


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
    noise: list[NoiseLaw] = field(default_factory=list)
    replay: Replayed | None = None

    @property
    def kind(self) -> str:
        """``"partition"`` for a partition's charge, else the released statistic."""
        return "partition" if self.record.get("kind") == "partition" else str(self.record.get("statistic"))

    def budget(self, name: str) -> Fraction | None:
        """``spent``, ``remaining`` or ``charged`` after this record, exactly (``None`` if absent)."""
        value = self.record.get(name)
        return None if value is None else Fraction(str(value))

    def delta(self, name: str) -> Fraction | None:
        """The delta ledger's ``charged``, ``spent`` or ``remaining`` after this record (``None`` if none)."""
        value = self.record.get(f"delta_{name}")
        return None if value is None else Fraction(str(value))


@dataclass(frozen=True)
class ReviewReport:
    """The whole report: the verification outcome and every verified entry, in log order."""

    log: str
    verification: Report
    entries: list[Entry]
    replayed: bool
    replay_error: str | None = None


def _ledger(entry: dict[str, Any]) -> str:
    """The ledger a record is charged to: its writer, and the partition path of its sub-session."""
    record = entry["record"]
    path = record.get("partition") if record.get("kind") != "partition" else None
    inside = "" if not path else " / part " + " / ".join(map(str, path if isinstance(path, list) else [path]))
    return f"writer {str(entry.get('writer', ''))[:8]}{inside}"


def _law(label: str, mechanism: str, parameter: Any, step: Any, alpha: Fraction) -> NoiseLaw | None:
    try:
        value = Fraction(str(parameter))
        lattice = None if step is None else Fraction(str(step))
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if value <= 0:
        return None
    if mechanism == "discrete_laplace":
        return NoiseLaw(label, mechanism, value, lattice, laplace_halfwidth(value, alpha), alpha)
    if mechanism == "discrete_gaussian":
        return NoiseLaw(label, mechanism, value, lattice, gaussian_halfwidth(value, alpha), alpha)
    return None


def noise_laws(record: dict[str, Any]) -> list[NoiseLaw]:
    """Every additive noise ``record`` declares, with its proven half-width (see the module docstring)."""
    parameters = record.get("parameters") or {}
    if not isinstance(parameters, dict):
        return []
    alpha = Fraction(str(parameters.get("alpha", DEFAULT_ALPHA)))
    laws: list[NoiseLaw] = []
    mechanism = str(record.get("mechanism"))
    step = parameters.get("lattice_step", 1)
    for name, value in parameters.items():
        for suffix, law in (("scale_units", "discrete_laplace"), ("variance_units", "discrete_gaussian")):
            if name.endswith(suffix) and mechanism == law:
                label = name.removesuffix(suffix).rstrip("_") or str(record.get("statistic"))
                unit = 1 if label == "count" else step if label in ("sum", str(record.get("statistic"))) else None
                found = _law(label, law, value, unit, alpha)
                if found is not None:
                    laws.append(found)
        if isinstance(value, dict) and isinstance(value.get("noise"), list):  # one aggregation of a table
            for i, noise in enumerate(value["noise"]):
                if not isinstance(noise, dict):
                    continue
                parameter = noise.get("scale_units", noise.get("variance_units"))
                single = len(value["noise"]) == 1
                label = name if single else f"{name} (moment {i})"
                found = _law(label, str(noise.get("mechanism")), parameter,
                             value.get("lattice_step", 1) if single else None, alpha)
                if found is not None:
                    laws.append(found)
    return laws


def build_report(
    log: str | Path, *, public_key: Any = None, head: Any = None, seed: bytes | None = None,
    data: str | Path | None = None,
) -> ReviewReport:
    """Verify ``log`` (and replay it when ``seed`` and ``data`` are given) and read it for the report.

    Never raises on the log's content: a log that does not verify gives a report of its valid lines
    with the problem stated. ``public_key`` and ``head`` are those of :func:`verify_log`.
    """
    verification = verify_log(log, public_key=public_key, head=head)
    replays: dict[int, Replayed] = {}
    replay_error = None
    if seed is not None and data is not None:
        try:
            replays = {r.line: r for r in replay_log(log, seed, data, public_key=public_key, head=head)}
        except (OSError, ValueError) as error:
            replay_error = str(error)
    entries = []
    for i, raw in enumerate(verification.entries):
        record = raw.get("record") or {}
        entries.append(Entry(
            line=i + 1, seq=int(raw.get("seq", i)), time=str(raw.get("time", "")), writer=str(raw.get("writer", "")),
            signed="sig" in raw, record=record, ledger=_ledger(raw),
            noise=noise_laws(record) if record.get("kind") != "partition" else [], replay=replays.get(i + 1),
        ))
    return ReviewReport(str(log), verification, entries, seed is not None and data is not None, replay_error)
