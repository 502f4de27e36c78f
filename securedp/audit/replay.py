"""Replay: re-derive every release of an audit log from the seed and the data, and compare exactly.

For each record, :func:`replay_log` checks that the seed matches the
record's ``seed_commitment``, rebuilds the stream
``ChaChaSource(seed).substream(l1).substream(l2)...`` from the recorded
labels, re-runs the recorded :class:`~securedp.tables.query.Query` on the
given data file, and compares the resulting release record with the logged
one field by field (value, mechanism, parameters, epsilon/rho,
max_contributions, source). A wrong seed, altered data or an altered record
makes the comparison fail and names the first differing field. The log
itself must first pass :func:`~securedp.audit.verify.verify_log` (with the
reviewer's public key and signed head, when given).

**Input commitments.** A record with an ``input_commitment`` (every seeded
release since securedp 0.2) is also checked against the data itself: the
query's canonical input (the exact aggregate its noise step consumes, see
:func:`securedp.ledger.release.encode_input`) is recomputed from the
given data and MAC'd under the key the seed derives, with the recorded
nonce. A mismatch is reported as ``data differs`` even when the noise hides
the change and the replayed value is equal; a change in the output with
matching data is reported as ``<field> differs`` (output differs).

**Older records.** A record of format 1 (written by securedp 0.1, whose releases of one column had a
route and a record of their own) still verifies; this version re-derives it by the one route of every
release, which draws its salt before its noise. Where the output then differs, the result says that
the record is of an earlier format and names the version to replay it with (``Replayed.earlier``),
never that the data or the record was altered; where it is the same, it is reproduced.

**The selection rule.** A table query that names no partition selection rule takes the default of
the version that runs it, and the default has changed (securedp 0.2 thresholds a table's released
count; earlier releases selected on a separate count). The rule a table used is in its record
(``parameters["selection"]``), so replay re-runs such a query with that rule.

**The fallback.** A query that names no fallback probability takes the default of the version that runs
it, and the default has changed (the selections gained a fallback point of probability ``3/4`` in 0.2.0,
CHANGELOG "Quantiles: a fallback point"; records written before state none). The probability a selection used
is in its record (``"fallback"`` in each of its parameters; absent: none), so replay re-runs such a query with
that probability.

**The lattice.** A column statistic that names no lattice takes the default of the version that runs it, and the
default has changed (since issue 42 (0.2.0), securedp gives a column whose type is a decimal of scale ``s`` the
step ``10**-s``, :func:`~securedp.mechanisms.records.typed_lattice`; earlier versions the bounds' rule). The step
a statistic used is in its record (``"lattice_step"`` in its parameters), so replay re-runs such a query on that
step.

**The conversion.** A selection priced in ``rho`` runs at the ``epsilon`` its conversion allows, and the
conversion has changed (this version prices an exponential mechanism by the certified sharp bounded-range bound;
earlier ones ``epsilon**2 / 8``, by bounded range, and before them ``epsilon**2 / 2``). The conversion a selection
used is in its record (``"conversion"`` in its parameters), so replay re-runs a record that states an earlier one
by it.

**The draw.** An ``epsilon``-priced quantile selection over few candidates draws by permute-and-flip since
issue 42 (0.2.0) (:mod:`securedp.mechanisms.quantile_draw`), and its record says so (``"selection":
"permute_and_flip"`` in its parameters); earlier records drew every selection by the exponential mechanism
and state ``"exponential"``, so replay re-runs a record that states no permute-and-flip by the exponential
mechanism.

**The delta of a threshold.** A table that thresholds its private keys charges the ``delta`` its integer
threshold proves since issue 42 (0.2.0) (:mod:`securedp.mechanisms.threshold_delta`), recording the one asked as
``delta_asked``; earlier records state only the ``delta`` asked, which they charged, so replay re-runs a record
with a ``delta`` and no ``delta_asked`` charging the ``delta`` asked.

The conversion, the draw, the delta and the tie margin are the rules of the record's version: replay reads them
from the record (:meth:`~securedp.mechanisms.record_rules.RecordRules.stated`, their one reading) and re-runs it
within their :func:`~securedp.mechanisms.record_rules.rules_scope`.

**The tie margin.** A quantile's score gives a block of tied records a margin of ``c`` rows since issue 42 (0.2.0)
(:mod:`securedp.mechanisms.rank_utility`), and its record states it (``"tie_margin"``); earlier records state
none and were drawn at ``c = 0``, so replay re-runs a record that states no ``tie_margin`` by the rule
``tie_margin=False``.

A partition record (``"kind": "partition"``, the charge of
:meth:`securedp.Session.partition` to its parent) releases nothing (with
person ids it draws only the salt that chooses each person's parts), so
there is nothing to re-derive: it is reported as skipped
(``Replayed.skipped``, ``ok`` true) and not counted as a release. So is an
unreleased charge (``"kind": "unreleased"``: an execution that failed after
its first random bit, whose charge stands): it released nothing to compare.

**Not replayable.** A release drawn from the system source, and a release made by the Python API (a
:class:`~securedp.Session` over data in memory, whose record carries no query naming what to read from a file),
cannot be re-derived from a seed and a file: each is reported as *not replayable* with its reason
(``Replayed.replayable`` false), never as differing, since nothing was compared.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from securedp.audit.verify import verify_log
from securedp.hazmat.bits.chacha import ChaChaSource, seed_commitment
from securedp.ledger.release import PreparedRelease, commit_input
from securedp.ledger.release_record import FORMAT, ReleaseRecord
from securedp.mechanisms.record_rules import RecordRules, rules_scope
from securedp.reading.mode import analyst_facing_scope
from securedp.tables.spec import STATISTICS

NOT_REPLAYABLE = "not replayable"
"""How a record that cannot be re-derived is labelled (never as differing: nothing was compared)."""
NO_QUERY = (f"{NOT_REPLAYABLE}: made by the Python API from data in memory, so its record names no query (what to "
            "read from a file); release it with `securedp release` to replay it from the file")
"""Why a record without a query is not replayed (see the module docstring)."""
PLANNING = ("bounds", "contribution_histogram")
"""The statistics of :mod:`securedp.audit.planning_query` (``securedp bounds``, ``securedp analyze --epsilon``)."""
COMPARED = tuple(f.name for f in dataclasses.fields(ReleaseRecord) if f.name != "input_commitment")
"""The fields of a release record that a replay must reproduce (the input commitment's nonce is fresh)."""
EARLIER_COMPARED = ("statistic", "value", "labels", "epsilon", "rho", "max_contributions", "source")
"""What a record of an earlier format shares with this version's: its parameters are named otherwise."""


@dataclass(frozen=True)
class Replayed:
    """The outcome for one log line: ``ok``, or ``problem`` saying what differs.

    ``skipped`` is true for a record that is not a release (a partition
    charge, an unreleased charge): it is ``ok`` and its ``statistic`` is its kind.
    """

    line: int
    statistic: str
    ok: bool
    problem: str | None = None
    skipped: bool = False
    data_matches: bool | None = None
    """True when the input commitment matched the data, False when it did not, None without a commitment."""
    earlier: bool = False
    """The record is of an earlier format, which this version does not reproduce (see the module docstring)."""
    unchecked_commitment: bool = False
    """The record carries an input commitment of an earlier format (another input encoding), which this version
    cannot check: ``data_matches`` is then None although a commitment is there."""
    replayable: bool = True
    """False: the record cannot be re-derived, and ``problem`` says why (drawn from the system source, or made by
    the Python API from data in memory, which no logged query names): it is not reproduced, but nothing was found
    to differ (:data:`NOT_REPLAYABLE`)."""


def read_seed(path: str | Path) -> bytes:
    """A 32-byte seed from a file holding either the 32 raw bytes or 64 hex digits (whitespace ignored)."""
    data = Path(path).read_bytes()
    if len(data) == 32:
        return data
    text = data.decode("ascii", errors="replace").strip()
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        seed = b""
    if len(seed) != 32:
        raise ValueError(f"{path}: a seed file must hold 32 raw bytes or 64 hex digits")
    return seed


def _with_rule(query: Any, parameters: Any) -> Any:
    """A table query that names no selection rule, with the rule its record states (see the module docstring)."""
    if (isinstance(query, dict) and query.get("statistic") == "table" and query.get("selection") is None
            and isinstance(parameters, dict) and isinstance(parameters.get("selection"), str)):
        return {**query, "selection": parameters["selection"]}
    return query


def _stated(parameters: Any, field: str, name: str | None = None) -> Any:
    """The ``field`` recorded in ``parameters`` (under the aggregation ``name``, or in any statistic's parameters of
    a one-column release), or ``None`` when they state none."""
    if not isinstance(parameters, dict):
        return None
    cells = [parameters.get(name)] if name is not None else list(parameters.values())
    stated = [cell[field] for cell in cells if isinstance(cell, dict) and field in cell]
    return stated[0] if stated else None


def _aggregation_name(aggregation: dict[str, Any]) -> str | None:
    """The name of a recorded table aggregation (``income_median``), or ``None`` when it is malformed (its re-run
    says so)."""
    from securedp.tables.query import AggregationQuery

    try:
        return str(AggregationQuery.from_json(aggregation).build().name)
    except (ValueError, TypeError, KeyError):
        return None


def _with_stated(query: Any, option: str, takes: Callable[[dict[str, Any]], bool],
                 stated: Callable[[str | None], Any]) -> Any:
    """A query whose statistics that ``takes`` ``option`` name none (a table's aggregations, or one column's
    statistic), with the value ``stated(name)`` gives from their record (``None``: left as they are)."""
    if not isinstance(query, dict):
        return query
    if query.get("statistic") != "table":
        value = stated(None) if option not in query and takes(query) else None
        return query if value is None else {**query, option: value}
    aggregations = query.get("aggregations")
    if not isinstance(aggregations, list):
        return query
    filled = []
    for aggregation in aggregations:
        if isinstance(aggregation, dict) and option not in aggregation and takes(aggregation):
            value = stated(_aggregation_name(aggregation))
            aggregation = aggregation if value is None else {**aggregation, option: value}
        filled.append(aggregation)
    return {**query, "aggregations": filled}


def _with_fallback(query: Any, parameters: Any) -> Any:
    """A query whose selections name no fallback probability, with the one their record states, ``"0"`` when it
    states none: a release from before the fallback (see the module docstring)."""
    from securedp.tables.spec import KINDS

    def takes(statistic: dict[str, Any]) -> bool:
        if "kind" in statistic:  # a table's aggregation
            return "fallback" in getattr(KINDS.get(str(statistic.get("kind"))), "options", ())
        return statistic.get("statistic") in STATISTICS.taking("fallback")

    def stated(name: str | None) -> Any:
        value = _stated(parameters, "fallback", name)
        return "0" if value is None else value

    return _with_stated(query, "fallback", takes, stated)


def _with_lattice(query: Any, parameters: Any) -> Any:
    """A query whose column statistics (those with bounds) name no lattice, with the step their record states (see
    the module docstring)."""
    return _with_stated(query, "lattice", lambda statistic: statistic.get("bounds") is not None,
                        lambda name: _stated(parameters, "lattice_step", name))


def _prepared(query: Any, data: str | Path) -> PreparedRelease:
    """The recorded query (one statistic of one column, or a grouped table) prepared again on ``data``."""
    if isinstance(query, dict) and query.get("statistic") in PLANNING:
        from securedp.audit.planning_query import planning_query  # securedp bounds, securedp analyze --epsilon

        return planning_query(query).prepare(data)
    from securedp.tables.query import Query  # a table, or one column: the one query type, by its record's shape

    return Query.from_json(query).prepare(data)


def replay_entry(entry: dict[str, Any], line: int, seed: bytes, data: str | Path) -> Replayed:
    """Re-derive the release of one verified log entry and compare it with the record."""
    record = entry["record"]
    if record.get("kind") in ("partition", "unreleased"):
        return Replayed(line, str(record["kind"]), True, skipped=True)
    statistic = str(record.get("statistic"))
    source = record["source"]
    if source.get("kind") != "chacha20":
        return Replayed(line, statistic, False, f"{NOT_REPLAYABLE}: drawn from a {source.get('kind')!r} source, "
                        "whose noise no seed re-derives (by design)", replayable=False)
    if source.get("seed_commitment") != seed_commitment(seed):
        return Replayed(line, statistic, False, "the seed does not match the record's seed commitment (wrong seed)")
    if "query" not in record:
        return Replayed(line, statistic, False, NO_QUERY, replayable=False)
    stream = ChaChaSource(seed)
    for label in source["substream"]:
        stream = stream.substream(label)
    written = record.get("format", 1)
    stated = record.get("parameters")
    query = _with_lattice(_with_fallback(_with_rule(record["query"], stated), stated), stated)
    mode = isinstance(query, dict) and query.get("analyst_facing") is True  # read the data as the release did
    try:
        with analyst_facing_scope(mode), rules_scope(RecordRules.stated(stated)):
            executed = _prepared(query, data).executed(stream)
            again = executed.release.record()
        committed = record.get("input_commitment") if written == FORMAT else None  # an earlier input encoding
        data_matches = None
        if committed is not None and executed.input_bytes is not None:  # this execution's input: an aggregate
            # may depend on the salt it draws; the commitment key does not depend on the stream's position
            again_commitment = commit_input(stream, executed.input_bytes(), bytes.fromhex(committed["nonce"]))
            data_matches = again_commitment == committed
    except (ValueError, TypeError) as exc:
        return Replayed(line, statistic, False, f"cannot re-run the release: {exc}")
    except Exception as exc:  # a record (forged, or of another version) may ask for anything: this line is not
        # reproduced, and the replay goes on to the next (an unknown encoding raised LookupError)
        return Replayed(line, statistic, False, f"cannot re-run the release: {type(exc).__name__}: {exc}")
    unchecked = written != FORMAT and record.get("input_commitment") is not None
    compared = COMPARED if written == FORMAT else EARLIER_COMPARED
    output = next(
        (f"{name} differs: logged {record.get(name)!r}, replayed {again.get(name)!r}"
         for name in compared if again.get(name) != record.get(name)),
        None,
    )
    if output is not None and written != FORMAT:
        problem = (f"a record of format {written} (securedp 0.1), which this version derives by another route "
                   f"(CHANGELOG 0.2.0, Seeded output): replay it with securedp 0.1 ({output})")
        return Replayed(line, statistic, False, problem, earlier=True, unchecked_commitment=unchecked)
    if data_matches is False:
        hidden = "the output is reproduced all the same (the noise hides the change)" if output is None else output
        problem = f"data differs: the input commitment does not match this data; {hidden}"
        return Replayed(line, statistic, False, problem, data_matches=False)
    if output is not None:
        return Replayed(line, statistic, False, output, data_matches=data_matches)
    return Replayed(line, statistic, True, data_matches=data_matches, unchecked_commitment=unchecked)


def replay_log(
    log: str | Path, seed: bytes, data: str | Path, *, public_key: Any = None, head: Any = None,
    expected_head: str | None = None,
) -> list[Replayed]:
    """Replay every record of ``log``; raises :class:`ValueError` if the log does not verify.

    ``public_key``, ``head`` and ``expected_head`` are passed to :func:`~securedp.audit.verify.verify_log`.
    """
    report = verify_log(log, expected_head, public_key=public_key, head=head)
    if not report.ok:
        raise ValueError(f"{log} does not verify: {report.problem}")
    return [replay_entry(entry, i + 1, seed, data) for i, entry in enumerate(report.entries)]
