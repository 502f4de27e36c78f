"""The budget file of the command: strict validation of what it reads, locked and atomic writes."""

from __future__ import annotations

import json
import multiprocessing
import os
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from securedp.cli.budget import BudgetError, BudgetFile
from securedp.cli.example_data import PATH as EXAMPLE
from securedp.cli.main import main
from securedp.hazmat.exact.bounds import BUDGET_FILE_BYTES
from securedp.hazmat.exact.rational import format_rational
from securedp.privacy.cost import Cost

LEDGER = "ab" * 16


def write(path: Path, **fields: object) -> None:
    state = {"format": "securedp-budget/1", "currency": "epsilon", "total": "1", "spent": "1/4", "ledger": LEDGER}
    state.update(fields)
    path.write_text(json.dumps({k: v for k, v in state.items() if v is not DROP}), encoding="utf-8")


DROP = object()


def charge(path: Path, cost: str = "1/8", currency: str = "epsilon") -> Fraction:
    with BudgetFile(path, currency=currency).charge(Fraction(cost)) as state:
        return state.spent


def test_a_valid_file_is_charged_exactly(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    write(path)
    assert charge(path) == Fraction(3, 8)
    assert json.loads(path.read_text())["spent"] == "3/8"


@pytest.mark.parametrize(
    "fields, fragment",
    [
        ({"spent": "-1/4"}, "'spent' must be >= 0, got -1/4"),
        ({"spent": "-1"}, "'spent' must be >= 0"),
        ({"spent": "3/2"}, "'spent' 3/2 exceeds 'total' 1"),
        ({"spent": "abc"}, "'spent' must be an exact rational"),
        ({"spent": "0.25"}, "'spent' must be an exact rational"),
        ({"spent": "1e-1"}, "'spent' must be an exact rational"),
        ({"spent": " 1/4"}, "'spent' must be an exact rational"),
        ({"spent": "1/-4"}, "'spent' must be an exact rational"),
        ({"spent": "01/4"}, "'spent' must be an exact rational"),
        ({"spent": "2/8"}, "'spent' is not canonical: '2/8' must be written '1/4'"),
        ({"spent": "1/1"}, "must be written '1'"),
        ({"spent": "-0"}, "must be written '0'"),
        ({"spent": "nan"}, "'spent' must be an exact rational"),
        ({"spent": "inf"}, "'spent' must be an exact rational"),
        ({"spent": 0}, "'spent' must be an exact rational string"),
        ({"spent": 0.25}, "'spent' must be an exact rational string"),
        ({"spent": None}, "'spent' must be an exact rational string"),
        ({"spent": ["1/4"]}, "'spent' must be an exact rational string"),
        ({"spent": "1" * 1200}, "'spent' must be an exact rational"),
        ({"spent": DROP}, "missing field 'spent'"),
        ({"total": "0"}, "'total' must be > 0"),
        ({"total": "-1", "spent": "0"}, "'total' must be > 0"),
        ({"total": "1/0"}, "'total' must be an exact rational"),
        ({"total": "x"}, "'total' must be an exact rational"),
        ({"total": 1}, "'total' must be an exact rational string"),
        ({"total": DROP}, "missing field 'total'"),
        ({"currency": "delta"}, "'currency' must be 'epsilon' or 'rho'"),
        ({"currency": None}, "'currency' must be 'epsilon' or 'rho'"),
        ({"format": "securedp-budget/2"}, "'format' must be"),
        ({"ledger": "xyz"}, "'ledger' must be 32 lowercase hex"),
        ({"ledger": 7}, "'ledger' must be 32 lowercase hex"),
        ({"ledger": "AB" * 16}, "'ledger' must be 32 lowercase hex"),
        ({"extra": 1}, "unknown field 'extra'"),
    ],
)
def test_a_malformed_file_is_refused_before_anything_is_charged(tmp_path: Path, fields: dict, fragment: str) -> None:
    path = tmp_path / "b.json"
    write(path, **fields)
    before = path.read_bytes()
    with pytest.raises(BudgetError) as refused:
        charge(path)
    message = str(refused.value)
    assert message.startswith(f"{path} is not a valid budget file") and fragment in message, message
    assert "\n" not in message
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "text, fragment",
    [
        (f'{{"format": "securedp-budget/1", "total": "1", "spent": "0", "spent": "-5", "ledger": "{LEDGER}"}}',
         "duplicate field 'spent'"),
        (f'{{"format": "securedp-budget/1", "total": NaN, "spent": "0", "ledger": "{LEDGER}"}}', "NaN"),
        (f'{{"format": "securedp-budget/1", "total": Infinity, "spent": "0", "ledger": "{LEDGER}"}}', "Infinity"),
        ("[1, 2]", "not a JSON object"),
        (" " * BUDGET_FILE_BYTES + "{}", "larger than"),  # the declared bound of a budget file (64 MiB)
        ("[" * 30_000 + "]" * 30_000, "recursion"),
        ("{not json", "Expecting property name"),
        ("", "Expecting value"),
    ],
)
def test_malformed_json_is_refused(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BudgetError, match="not a valid budget file") as refused:
        charge(path)
    assert fragment in str(refused.value)


def test_non_utf8_and_directory_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(BudgetError, match="not a valid budget file"):
        charge(path)
    (tmp_path / "d.json").mkdir()
    with pytest.raises(BudgetError, match="not a valid budget file"):
        charge(tmp_path / "d.json")


def test_wrong_currency_and_total_mismatch_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    write(path, currency="rho")
    with pytest.raises(BudgetError, match="counts rho but this release is priced in epsilon"):
        charge(path)
    assert charge(path, currency="rho") == Fraction(3, 8)
    with (
        pytest.raises(BudgetError, match="does not match"),
        BudgetFile(path, total="2", currency="rho").charge(Fraction(1, 8)),
    ):
        pass


def test_the_cost_must_be_a_positive_fraction(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    write(path)
    for cost in (Fraction(-1, 8), Fraction(0), 0.125):
        with (
            pytest.raises(ValueError, match="positive Fraction"),
            BudgetFile(path).charge(cost),  # type: ignore[arg-type]
        ):
            pass
    assert json.loads(path.read_text())["spent"] == "1/4"


@settings(max_examples=200, deadline=None)
@given(st.fractions(min_value=Fraction(-10), max_value=Fraction(10)), st.integers(1, 5))
def test_canonical_rationals_round_trip_and_only_they_are_read(tmp_path_factory: pytest.TempPathFactory,
                                                              spent: Fraction, scale: int) -> None:
    path = tmp_path_factory.mktemp("h") / "b.json"
    total = Fraction(10)
    write(path, total="10", spent=format_rational(spent))
    if spent < 0:
        with pytest.raises(BudgetError, match="'spent' must be >= 0"):
            charge(path, "1/8")
    elif spent + Fraction(1, 8) > total:
        with pytest.raises(BudgetError, match="budget exhausted"):
            charge(path, "1/8")
    else:
        assert charge(path, "1/8") == spent + Fraction(1, 8)
    if spent.denominator > 1 and scale > 1:  # the same value, not in lowest terms
        write(path, total="10", spent=f"{spent.numerator * scale}/{spent.denominator * scale}")
        with pytest.raises(BudgetError, match="is not canonical"):
            charge(path, "1/8")


def test_command_refuses_a_negative_spent_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "b.json"
    write(path, spent="-100")
    status = main(["release", str(EXAMPLE), "--column", "age", "--stat", "count", "--epsilon", "1/2",
                   "--id-column", "person_id", "--budget-file", str(path)])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1
    assert "not a valid budget file ('spent' must be >= 0, got -100)" in err
    assert json.loads(path.read_text())["spent"] == "-100"  # untouched


def _charge_many(path: str, times: int) -> None:
    for _ in range(times):
        with BudgetFile(path).charge(Fraction(1, 1000)):
            pass


def test_concurrent_charges_are_serialized_and_writes_atomic(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    with BudgetFile(path, total="1").charge(Fraction(1, 1000)):
        pass
    context = multiprocessing.get_context("spawn" if os.name == "nt" else "fork")
    workers = [context.Process(target=_charge_many, args=(str(path), 25)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert json.loads(path.read_text())["spent"] == format_rational(Fraction(101, 1000))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json", "b.json.lock"]  # no temporary file left


def test_a_failing_body_restores_the_previous_state(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    write(path)
    with pytest.raises(RuntimeError), BudgetFile(path).charge(Fraction(1, 8)):
        assert json.loads(path.read_text())["spent"] == "3/8"  # charged before the body runs
        raise RuntimeError("draw failed")
    assert json.loads(path.read_text())["spent"] == "1/4"


@pytest.mark.parametrize("when", ["before the replace", "after the replace"])
def test_an_interrupted_save_leaves_the_state_before_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        when: str) -> None:
    """A Ctrl-C that lands just after the atomic replace made the save raise with the charge in place: the body
    never ran, so nothing refunded it and nothing recorded it (a fourth review: the budget file charged without a
    record, and the next record failing ``verify``). The state before the charge is put back."""
    import securedp.ledger.budget_file as backend

    path = tmp_path / "b.json"
    write(path)
    real, calls = os.replace, []

    def interrupted(src: str, dst: object) -> None:  # the first replace only: one Ctrl-C
        calls.append(src)
        if when == "after the replace" or len(calls) > 1:
            real(src, dst)
        if len(calls) == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(backend.os, "replace", interrupted)
    ran = []
    with pytest.raises(KeyboardInterrupt), BudgetFile(path).charge(Fraction(1, 8)):
        ran.append(True)
    monkeypatch.undo()
    assert not ran and json.loads(path.read_text())["spent"] == "1/4"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json", "b.json.lock"]  # no temporary file left


def test_the_file_is_a_store_of_the_one_budget_implementation(tmp_path: Path) -> None:
    """The charging rules are the session's: the same price (epsilon**2 / 2 on rho), refusal message and refund."""
    from securedp.cli import budget as cli_budget
    from securedp.ledger.budget import Budget
    from securedp.ledger.budget_file import BudgetFile as Backend
    from securedp.ledger.errors import BudgetExceeded

    assert cli_budget.BudgetFile is Backend and issubclass(cli_budget.BudgetError, ValueError)
    path = tmp_path / "b.json"
    write(path, currency="rho", total="1", spent="0")
    stored = Budget("rho", store=Backend(path, currency="rho"))
    memory = Budget("rho", 1)
    for budget in (stored, memory):
        cost = Cost.of(epsilon=Fraction(1, 2)).in_currency(budget.currency)
        assert cost == Fraction(1, 8)
        assert budget.charge(cost).spent == Fraction(1, 8) == budget.spent
        with pytest.raises(BudgetExceeded) as refused:
            budget.charge(Fraction(1))
        assert str(refused.value) == "budget exhausted: this release needs rho 1 but only 7/8 of 1 remains"
        budget.refund(cost)
        assert budget.remaining == 1
    assert json.loads(path.read_text())["spent"] == "0"
    with pytest.raises(ValueError, match="takes its currency and total from its store"):
        Budget("epsilon", store=Backend(path, currency="rho"))
