"""Once the first random bit of a release is read, its charge stands, whatever fails next (issue 16.1).

Fault injection: every step after the draw is made to fail in turn (the output frame, its conversion
to the caller's kind, the release record, the audit append) for one-column releases, tables with
public and private keys and a partition with person ids; the budget (and the delta ledger) must stay
charged and the failure must propagate. A failure before the first bit (a source that cannot give
one, an engine that fails before its salt) refunds. The rule lives in Budget.charging, so the
command line's budget file follows it too.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pandas as pd
import pytest

import securedp
from securedp import ChaChaSource, Session
from securedp.hazmat.bits.source import RandomSource, watching_draws
from securedp.ledger.errors import RecordNotAppended
from securedp.tables import Count, Sum


class Boom(Exception):
    """The injected fault."""


def _raise(*_args: Any, **_kwargs: Any) -> Any:
    raise Boom("injected")


class FailingAudit:
    def append(self, record: dict[str, Any]) -> None:
        raise Boom("audit down")


class NoBits(RandomSource):
    """A source that cannot give a single bit."""

    def _generate(self, n: int) -> bytes:
        raise OSError("no entropy")

    def describe(self) -> dict[str, Any]:
        return {"kind": "broken"}


FRAME = pd.DataFrame({"p": [1, 1, 2, 3, 4], "g": ["a", "b", "a", "b", "a"], "x": [1.0, 2.0, 3.0, 4.0, 5.0]})


def _table(session: Session, private: bool) -> Any:
    options: dict[str, Any] = {"delta": "1e-6"} if private else {"keys": ["a", "b"]}
    return session.table(FRAME, group_by=["g"], id_column="p", aggregations=[Count(), Sum("x", (0, 10))],
                         epsilon="1/2", **options)


def _private_delta() -> Fraction:
    """The delta the private-key table charges: what its threshold proves, below the 1e-6 asked."""
    delta = securedp.prepare_table(FRAME, group_by=["g"], id_column="p", aggregations=[Count(), Sum("x", (0, 10))],
                                   epsilon="1/2", delta="1e-6").delta
    assert delta is not None and 0 < delta < Fraction(1, 10**6)
    return delta


RELEASES: dict[str, Callable[[Session], Any]] = {
    "count": lambda s: s.count([1, 2, 3], epsilon="1/2"),
    "sum with ids": lambda s: s.sum([1, 2, 3, 4], bounds=(0, 5), ids=[1, 1, 1, 2], epsilon="1/2"),
    "median": lambda s: s.median([1, 2, 3], bounds=(0, 5), epsilon="1/2"),
    "table, public keys": lambda s: _table(s, private=False),
    "table, private keys": lambda s: _table(s, private=True),
}

AFTER_THE_DRAW: dict[str, str] = {
    "the output frame": "securedp.engines.polars.engine.exact_frame",
    "the release record": "securedp.ledger.audit_record.ChargedRelease.of",
}


@pytest.mark.parametrize("name", list(RELEASES))
def test_an_audit_that_fails_after_the_draw_leaves_the_charge(name: str) -> None:
    """The charge stands and the release and its record reach the caller (never a charge without a record)."""
    session = Session(epsilon=4, delta="1e-3", rng=ChaChaSource(bytes(32)), audit=FailingAudit())
    with pytest.raises(RecordNotAppended) as failed:
        RELEASES[name](session)
    assert isinstance(failed.value.__cause__, Boom)
    assert failed.value.release.value is not None and failed.value.record["value"] is not None
    assert session.spent == Fraction(1, 2)
    assert session.delta_spent == (_private_delta() if "private" in name else 0)


@pytest.mark.parametrize("step", list(AFTER_THE_DRAW))
@pytest.mark.parametrize("name", [n for n in RELEASES if n.startswith("table")])
def test_a_table_that_fails_after_the_draw_leaves_the_charge(name: str, step: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(AFTER_THE_DRAW[step], _raise)
    log: list[dict[str, Any]] = []
    session = Session(epsilon=4, delta="1e-3", rng=ChaChaSource(bytes(32)), audit=log)
    if step == "the output frame":  # built when first read: the release, its value and its record come first
        release = RELEASES[name](session)
        assert release.value is not None and len(log) == 1 and log[0]["value"] is not None
        with pytest.raises(Boom):
            release.frame  # noqa: B018 - the failure reaches whoever reads the frame
    else:
        with pytest.raises(Boom):
            RELEASES[name](session)
    assert session.spent == Fraction(1, 2)
    assert session.delta_spent == (_private_delta() if "private" in name else 0)


@pytest.mark.parametrize("kind", ["pandas", "pyarrow"])
def test_a_failing_frame_conversion_leaves_the_charge(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import polars as pl

    monkeypatch.setattr(pl.DataFrame, "to_pandas" if kind == "pandas" else "to_arrow", _raise)
    session = Session(epsilon=4, rng=ChaChaSource(bytes(32)))
    data = FRAME if kind == "pandas" else __import__("pyarrow").Table.from_pandas(FRAME)
    release = session.table(data, group_by=["g"], id_column="p", keys=["a", "b"], epsilon="1/2")
    assert session.spent == Fraction(1, 2) and len(release.value) == 2  # the exact rows reach the caller
    with pytest.raises(Boom):
        release.frame  # noqa: B018 - the frame of the caller's kind fails when read, after the charge


def test_a_scalar_draw_served_from_a_pool_counts_as_a_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pre-drawn value taken from a pool (a scalar sampler call, as the drop-in generator makes) is
    randomness consumed, though no byte is read now."""
    from securedp.hazmat.samplers import discrete_laplace

    source = ChaChaSource(bytes(32))
    discrete_laplace(2, rng=source)  # fills the pool of this law
    before = source.bytes_served
    with watching_draws() as draws:
        discrete_laplace(2, rng=source)
    assert source.bytes_served == before and draws.used


def test_a_failure_before_the_first_bit_refunds() -> None:
    session = Session(epsilon=1, delta="1e-3", rng=NoBits())
    for name, release in RELEASES.items():
        with pytest.raises(OSError):
            release(session)
        assert session.spent == 0 and session.delta_spent == 0, name


def test_partition_with_ids_keeps_the_charge_once_the_salt_is_drawn() -> None:
    session = Session(epsilon=1, rng=ChaChaSource(bytes(32)), audit=FailingAudit())
    with pytest.raises(RecordNotAppended) as raised:  # as a drawn release's: the record it could not append
        session.partition([1, 2, 3], by=["a", "b", "a"], parts=["a", "b"], budget="1/4", ids=[1, 2, 1])
    assert isinstance(raised.value.__cause__, Boom) and raised.value.record["kind"] == "partition"
    assert session.spent == Fraction(1, 4)
    with pytest.raises(Boom):  # without ids nothing random happens before the audit: refunded
        session.partition([1, 2, 3], by=["a", "b", "a"], parts=["a", "b"], budget="1/4")
    assert session.spent == Fraction(1, 4)


@pytest.mark.parametrize("table", [False, True])
def test_the_budget_file_keeps_the_charge_when_the_audit_log_fails(table: bool, tmp_path: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from securedp.audit.log import AuditLog
    from securedp.cli.main import main

    data = tmp_path / "d.csv"
    data.write_text("g,x\na,1\nb,2\na,3\n", encoding="utf-8")
    budget = tmp_path / "budget.json"
    monkeypatch.setattr(AuditLog, "append", _raise)  # the log fails once the release is drawn
    query = ["--group-by", "g", "--keys", "a,b", "--count"] if table else ["--column", "x", "--stat", "count"]
    status = main(["release", str(data), *query, "--epsilon", "1/4", "--budget-file", str(budget), "--budget", "1",
                   "--audit-log", str(tmp_path / "log.jsonl")])
    assert status == 1
    assert json.loads(budget.read_text(encoding="utf-8"))["spent"] == "1/4"
    kept = (tmp_path / "log.jsonl.unappended").read_text(encoding="utf-8").splitlines()  # the record, beside the log
    assert len(kept) == 1 and json.loads(kept[0])["spent"] == "1/4"
