"""One record schema: every producer writes the typed classes, the verifier parses them, and the JSON is pinned."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from securedp import AuditLog, ChaChaSource, Session, verify_log
from securedp.audit.log import GENESIS, canonical, entry_hash
from securedp.ledger.audit_record import (
    BudgetFields,
    ChargedRelease,
    Currency,
    PartitionRecord,
    SessionPath,
    parse_record,
)
from securedp.ledger.budget import Budget
from securedp.ledger.errors import BudgetExceeded, IncompatibleCost
from securedp.ledger.release import Release
from securedp.ledger.release_record import SchemaError
from securedp.privacy.cost import Cost

SEED = bytes(range(1, 33))


def a_release(**changes: object) -> Release:
    fields: dict[str, object] = {
        "value": Fraction(7, 2), "statistic": "mean", "mechanism": "discrete_laplace",
        "parameters": {"scale": Fraction(4, 3), "bounds": (0, 10), "lattice": "2**-4"},
        "epsilon": Fraction(1, 10), "rho": None, "max_contributions": 1,
        "source": ChaChaSource(SEED).substream("release-0").describe(),
    }
    fields.update(changes)
    return Release(**fields)  # type: ignore[arg-type]


def test_a_release_record_is_pinned_field_by_field_and_in_order() -> None:
    record = a_release(input_commitment={"scheme": "hmac-sha256/securedp-input/v1", "nonce": "0" * 32,
                                         "mac": "f" * 64}).record()
    assert list(record) == ["format", "statistic", "value", "labels", "mechanism", "parameters", "epsilon", "rho",
                            "max_contributions", "source", "input_commitment"]
    assert record == {
        "format": 2, "statistic": "mean", "value": "7/2", "labels": None, "mechanism": "discrete_laplace",
        "parameters": {"scale": "4/3", "bounds": [0, 10], "lattice": "2**-4"},
        "epsilon": "1/10", "rho": None, "max_contributions": 1,
        "source": {"kind": "chacha20", "reproducible": True, "seed_commitment": record["source"]["seed_commitment"],
                   "substream": ["release-0"]},
        "input_commitment": {"scheme": "hmac-sha256/securedp-input/v1", "nonce": "0" * 32, "mac": "f" * 64},
    }
    assert "input_commitment" not in a_release().record()
    assert a_release(labels=("a", Fraction(1, 3)), value=(1, 2)).record()["labels"] == ["a", "1/3"]


def test_budget_fields_keep_the_order_of_each_producer() -> None:
    session = BudgetFields(Fraction(1, 2), Fraction(1, 2), Currency.RHO, Fraction(1, 8), session=SessionPath())
    assert session.to_json() == {"budget_kind": "rho", "charged": "1/8", "spent": "1/2", "remaining": "1/2",
                                 "partition": None}
    path = SessionPath(("a", 1), "c" * 32)
    inner = BudgetFields(Fraction(1), Fraction(0), Currency.EPSILON, Fraction(1), session=path)
    assert list(inner.to_json())[-2:] == ["partition", "partition_id"] and inner.to_json()["partition"] == ["a", 1]
    command = BudgetFields(Fraction(3, 4), Fraction(1, 4), Currency.EPSILON, total=Fraction(1))
    assert list(command.to_json()) == ["budget_kind", "total", "spent", "remaining"]
    charged = ChargedRelease.of(a_release(), command, {"column": "age"}).to_json()
    assert list(charged)[10:] == ["query", "budget_kind", "total", "spent", "remaining"]


def session_log(path: Path) -> list[dict]:
    session = Session(epsilon=4, rng=ChaChaSource(SEED).substream("s"), audit=AuditLog(path))
    session.count([1, 2, 3], epsilon="1/4")
    parts = session.partition([1, 2, 3, 4], by=["a", "b", "a", "b"], parts=["a", "b"], budget="1/2", max_partitions=2)
    nested = parts["a"].session.partition(parts["a"].data, by=[0, 1], parts=[0, 1], budget="1/8")
    nested[1].session.mean(nested[1].data, bounds=(0, 10), epsilon="1/16")
    parts["b"].session.histogram(["x", "y"], categories=["x", "y"], epsilon="1/4")
    rho = Session(rho=1, rng=ChaChaSource(SEED).substream("r"), audit=AuditLog(path))
    rho.count([1, 2], rho="1/4")
    rho.count([1, 2], epsilon="1/2")
    return [json.loads(line)["record"] for line in path.read_text().splitlines()]


def test_every_record_a_session_writes_parses_and_round_trips_exactly(tmp_path: Path) -> None:
    records = session_log(tmp_path / "a.jsonl")
    assert verify_log(tmp_path / "a.jsonl").ok
    kinds = {type(parse_record(r)) for r in records}
    assert kinds == {ChargedRelease, PartitionRecord}
    for record in records:
        again = parse_record(record).to_json()
        assert again == record and canonical(again) == canonical(record)
    rho_epsilon = parse_record(records[-1])
    assert isinstance(rho_epsilon, ChargedRelease) and rho_epsilon.budget is not None
    assert rho_epsilon.budget.charged == Fraction(1, 8) and rho_epsilon.budget.currency is Currency.RHO


@pytest.mark.parametrize(
    "change, field",
    [
        ({"statistic": 3}, "statistic"),
        ({"epsilon": "1/10", "rho": "1/10"}, "epsilon"),
        ({"epsilon": "2/20"}, "epsilon"),
        ({"epsilon": True}, "epsilon"),
        ({"max_contributions": True}, "max_contributions"),
        ({"source": {"kind": "chacha20", "seed_commitment": "0" * 64, "substream": "s"}}, "source.substream"),
        ({"source": {"kind": "system", "key": "00"}}, "source.key"),
        ({"spent": "1/10"}, "remaining"),
        ({"spent": "1/10", "remaining": "-1/10"}, "remaining"),
        ({"spent": "1/10", "remaining": "9/10", "budget_kind": "delta"}, "budget_kind"),
        ({"spent": "1/10", "remaining": "9/10", "charged": "0"}, "charged"),
        ({"spent": "1/10", "remaining": "9/10", "partition": "a"}, "partition"),
        ({"spent": "1/10", "remaining": "9/10", "partition_id": {"a": 1}}, "partition_id"),
        ({"query": ["age"]}, "query"),
        ({"kind": "merge"}, "kind"),
    ],
)
def test_parsing_refuses_each_broken_rule_naming_its_field(change: dict, field: str) -> None:
    record = {**a_release().record(), **change}
    with pytest.raises(SchemaError) as refused:
        parse_record(record)
    assert refused.value.field == field


def test_a_log_with_an_unparseable_field_is_a_problem_named_after_it(tmp_path: Path) -> None:
    """Types the old hand checks never looked at (an object as partition id) are a Problem, not a crash."""
    path = tmp_path / "a.jsonl"
    AuditLog(path).append({**a_release().record(), "spent": "1/10", "remaining": "9/10"})
    entry = json.loads(path.read_text())
    entry["record"]["partition_id"] = {"a": 1}
    entry["prev"], entry["hash"] = GENESIS, entry_hash({**entry, "prev": GENESIS})
    path.write_bytes(canonical(entry) + b"\n")
    problem = verify_log(path).problem
    assert problem is not None and problem.field == "record.partition_id" and problem.line == 1


def test_currency_is_one_enum_with_plain_text_forms() -> None:
    assert [c.value for c in Currency] == ["epsilon", "rho"]
    assert f"{Currency.RHO}" == str(Currency.RHO) == "rho" == Currency.RHO
    assert json.dumps({"c": Currency.EPSILON}) == '{"c": "epsilon"}'
    record = {"budget_kind": "delta", "spent": "0", "remaining": "1"}
    with pytest.raises(SchemaError, match="must be 'epsilon' or 'rho'"):
        BudgetFields.from_json(record)
    assert Session(rho=1).kind == "rho" and type(Session(rho=1).kind) is str


def test_the_pricing_rule_is_the_conversion_module_s() -> None:
    assert Cost.of(epsilon="1/2").in_currency(Currency.RHO) == Fraction(1, 8)
    assert Cost.of(rho="1/3").in_currency(Currency.RHO) == Fraction(1, 3)
    assert Cost.of(epsilon="1/3").in_currency(Currency.EPSILON) == Fraction(1, 3)
    with pytest.raises(IncompatibleCost):
        Cost.of(rho="1/3").in_currency(Currency.EPSILON)


def test_a_memory_budget_charges_refunds_and_refuses_with_one_message() -> None:
    budget = Budget("epsilon", 1)
    assert budget.charge(Fraction(3, 4)).remaining == Fraction(1, 4)
    exhausted = r"^budget exhausted: this release needs epsilon 1/2 but only 1/4 of 1 remains$"
    with pytest.raises(BudgetExceeded, match=exhausted):
        budget.charge(Fraction(1, 2))
    with pytest.raises(RuntimeError, match="draw failed"), budget.charging(Fraction(1, 4)) as state:
        assert state.spent == 1 == budget.spent  # re-entrant: the body may read the budget it holds
        raise RuntimeError("draw failed")
    assert budget.spent == Fraction(3, 4)
    budget.refund(Fraction(3, 4))
    assert budget.remaining == 1
    with pytest.raises(ValueError, match="kind must be"):
        Budget("delta", 1)


def test_verification_parses_typed_records_and_recomputes_with_the_conversion_rule(tmp_path: Path) -> None:
    """A rho ledger's epsilon release must state epsilon**2 / 2 (from conversions), however the line is rewritten."""
    path = tmp_path / "a.jsonl"
    Session(rho=1, audit=AuditLog(path)).count([1, 2], epsilon="1/3")
    entry = json.loads(path.read_text())
    assert entry["record"]["charged"] == "1/18"
    entry["record"].update(charged="1/9", spent="1/9", remaining="8/9")
    entry["hash"] = entry_hash(entry)
    path.write_bytes(canonical(entry) + b"\n")
    problem = verify_log(path).problem
    assert problem is not None and problem.field == "record.charged" and "rho budget" in problem.message
