"""Data-dependent errors: the trust boundary between the data holder and the analyst.

Error messages are for the data holder: by default an undeclared category, a missing value or an
unknown partition key raises before any charge, naming the row and counting the offending rows.
Whoever reads those errors learns, for free, which values occur in the data. A
``Session(analyst_facing=True)`` must let no exception depend on the data's values: unusable records
and unknown keys are dropped (or imputed, by declared policy), and every error that remains depends
only on the public arguments and the input's shape, names no row and counts nothing. Each test below
that checks "no exception" comes with the data holder's mode raising on the same input, which shows
the probe is real (the leaky control).
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp
import securedp.privacy.noise as noise_module
from securedp import BudgetExceeded, ChaChaSource, Session

pd = pytest.importorskip("pandas")

SEED = bytes(range(32))
BASE = [1, 2, 3, 4]

# Records an adversary (a person in the data, or a sloppy loader) can put in a numeric column.
UNUSABLE: list[tuple[str, Any]] = [
    ("None", None), ("nan", float("nan")), ("np-nan", np.float64("nan")), ("pd-NA", pd.NA), ("pd-NaT", pd.NaT),
    ("decimal-nan", decimal.Decimal("NaN")), ("string", "abc"), ("comma-number", "1,5"), ("empty-string", ""),
    ("bool", True), ("bytes", b"7"), ("complex", 1j), ("object", object()), ("tuple", (1, 2)), ("list", [1]),
    ("ratio-by-zero", "1/0"),
]
# Records that are numbers, however absurd: clamped, never an error.
ABSURD: list[tuple[str, Any]] = [
    ("inf", float("inf")), ("-inf", float("-inf")), ("10**400", 10**400), ("-10**400", -(10**400)),
    ("huge-fraction", Fraction(10**5000, 3)), ("tiny-fraction", Fraction(1, 10**5000)),
    ("decimal-huge", decimal.Decimal("1e999999")), ("string-huge", "1e999999"), ("np-inf", np.float32("inf")),
]
ALL = UNUSABLE + ABSURD


def numeric_releases() -> dict[str, Callable[[Any, list[Any]], Any]]:
    return {
        "sum": lambda s, d: s.sum(d, bounds=(0, 5), epsilon="1/4"),
        "mean": lambda s, d: s.mean(d, bounds=(0, 5), epsilon="1/4"),
        "variance": lambda s, d: s.variance(d, bounds=(0, 5), epsilon="1/4"),
        "median": lambda s, d: s.median(d, bounds=(0, 5), epsilon="1/4"),
        "quantiles": lambda s, d: s.quantiles(d, ["1/4", "3/4"], bounds=(0, 5), epsilon="1/4"),
        "histogram-bins": lambda s, d: s.histogram(d, bins=[0, 2, 5], epsilon="1/4"),
    }


NUMERIC = numeric_releases()


def seeded(analyst_facing: bool = False) -> tuple[Session, ChaChaSource, list[dict[str, Any]]]:
    source = ChaChaSource(SEED)
    log: list[dict[str, Any]] = []
    return Session(epsilon=1, rng=source, audit=log, analyst_facing=analyst_facing), source, log


@pytest.mark.parametrize("release", sorted(NUMERIC))
@pytest.mark.parametrize(("kind", "value"), ALL, ids=[k for k, _ in ALL])
def test_adversarial_records_give_a_release_with_the_exact_charge(release: str, kind: str, value: Any) -> None:
    data = [*BASE[:2], value, *BASE[2:]]
    session, _, log = seeded(analyst_facing=True)
    got = NUMERIC[release](session, data)  # no exception, whatever the record
    assert session.spent == Fraction(1, 4) and len(log) == 1 and log[0]["charged"] == "1/4"
    # The standard mechanism on the records it keeps: an unusable record is dropped, an absurd one clamped.
    kept = BASE if (kind, value) in UNUSABLE else data
    reference, _, _ = seeded()
    assert got.value == NUMERIC[release](reference, kept).value
    assert got.parameters == NUMERIC[release](seeded()[0], kept).parameters


@pytest.mark.parametrize("release", sorted(NUMERIC))
@pytest.mark.parametrize(("kind", "value"), UNUSABLE, ids=[k for k, _ in UNUSABLE])
def test_control_the_data_holder_sees_the_row_and_the_count(release: str, kind: str, value: Any) -> None:
    """The same records raise for the data holder, before any charge, naming row 2 and counting 1."""
    session, source, log = seeded()
    with pytest.raises(ValueError) as info:
        NUMERIC[release](session, [*BASE[:2], value, *BASE[2:]])
    said = str(info.value)  # a blank cell is named where it is; a row-valued one as the first of its kind
    assert ("column 'data', row 2: " in said or "holds lists, not numbers (1 such cell(s), the first at row 2)" in said
            or "holds tuples, not numbers (1 such cell(s), the first at row 2)" in said) and "(1 " in said
    assert session.spent == 0 and source.bytes_served == 0 and log == []


@pytest.mark.parametrize(("kind", "value"), ALL, ids=[k for k, _ in ALL])
def test_count_counts_every_row_in_both_modes(kind: str, value: Any) -> None:
    if isinstance(value, (tuple, list)):
        pytest.skip("a row-valued record is the table error of the data holder's mode (test_one_column)")
    for analyst_facing in (False, True):
        session, _, _ = seeded(analyst_facing)
        reference, _, _ = seeded()
        assert session.count([*BASE, value], epsilon="1/4").value == reference.count([*BASE, 0], epsilon="1/4").value


def test_missing_values_are_imputed_by_declared_policy() -> None:
    session, _, _ = seeded(analyst_facing=True)
    got = session.sum([1, None, "x", float("nan"), 2], bounds=(0, 5), lattice=1, missing="impute", fill=4,
                      epsilon="1/4")
    reference, _, _ = seeded()
    assert got.value == reference.sum([1, 4, 4, 4, 2], bounds=(0, 5), lattice=1, epsilon="1/4").value


# --- enumerating the data's values through errors ------------------------------------------------


def probe(session: Session, data: list[Any], guess: Any) -> str:
    """What an analyst observes besides the noisy output: did the release raise, and with what."""
    try:
        session.histogram(data, categories=[guess], epsilon="1/100")
    except Exception as error:  # the observation is the exception itself
        return f"{type(error).__name__}: {error}"
    return "released"


@pytest.mark.parametrize("guess", ["alice", "carol", 42, None])
def test_an_analyst_cannot_learn_which_values_occur_from_errors(guess: Any) -> None:
    with_it = ["bob", guess, "dave"]
    without_it = ["bob", "eve", "dave"]
    analyst = Session(epsilon=1, analyst_facing=True)
    assert probe(analyst, with_it, guess) == probe(analyst, without_it, guess) == "released"
    assert analyst.spent == Fraction(2, 100)  # each probe pays
    holder = Session(epsilon=1)  # the leaky control: without the mode the probe works, for free
    assert probe(holder, with_it, guess) != probe(holder, without_it, guess)
    assert holder.spent == 0


def test_unknown_partition_keys_are_dropped_for_the_analyst_and_reported_to_the_holder() -> None:
    data, by = [1, 2, 3, 4], ["a", "zz", "b", ["unhashable"]]
    analyst = Session(epsilon=1, analyst_facing=True)
    parts = analyst.partition(data, by=by, parts=["a", "b"], budget="1/2")
    assert parts["a"].data == [1] and parts["b"].data == [3] and analyst.spent == Fraction(1, 2)
    assert parts["a"].session.analyst_facing and parts["a"].session.sum([None, 7], bounds=(0, 5), epsilon="1/2")
    holder = Session(epsilon=1)
    with pytest.raises(ValueError, match=r"row 1 has a key that is not a declared part \(2 such row"):
        holder.partition(data, by=by, parts=["a", "b"], budget="1/2")
    assert holder.spent == 0


def test_explicit_raise_policies_act_as_drop_for_the_analyst() -> None:
    session, _, _ = seeded(analyst_facing=True)
    got = session.sum([1, None, 2], bounds=(0, 5), missing="raise", epsilon="1/4")
    assert got.value == seeded()[0].sum([1, 2], bounds=(0, 5), epsilon="1/4").value
    session.histogram(["a", "z"], categories=["a"], unknown="raise", epsilon="1/4")
    session.partition(["a", "z"], by=["a", "z"], parts=["a"], budget="1/4", unknown="raise")
    assert session.spent == Fraction(3, 4)


# --- the errors that remain: public arguments only, nothing spent ---------------------------------

REFUSED: dict[str, Callable[[Session, list[Any]], Any]] = {
    "epsilon-zero": lambda s, d: s.sum(d, bounds=(0, 5), epsilon=0),
    "epsilon-nan": lambda s, d: s.mean(d, bounds=(0, 5), epsilon="nan"),
    "epsilon-and-rho": lambda s, d: s.count(d, epsilon=1, rho=1),
    "bounds-reversed": lambda s, d: s.sum(d, bounds=(5, 0), epsilon="1/2"),
    "bounds-missing": lambda s, d: s.median(d, epsilon="1/2"),
    "missing-policy": lambda s, d: s.sum(d, bounds=(0, 5), epsilon="1/2", missing="ignore"),
    "fill-without-impute": lambda s, d: s.sum(d, bounds=(0, 5), epsilon="1/2", fill=3),
    "impute-without-fill": lambda s, d: s.sum(d, bounds=(0, 5), epsilon="1/2", missing="impute"),
    "unknown-policy": lambda s, d: s.histogram(d, categories=[1], unknown="maybe", epsilon="1/2"),
    "max-contributions": lambda s, d: s.count(d, max_contributions=0, epsilon="1/2"),
    "budget-exhausted": lambda s, d: s.sum(d, bounds=(0, 5), epsilon=2),
    "table": lambda s, d: s.sum(np.array([d, d]).T, bounds=(0, 5), epsilon="1/2"),
    "dataframe": lambda s, d: s.count(pd.DataFrame({"a": d, "b": d}), epsilon="1/2"),
    "ids-length": lambda s, d: s.count(d, ids=[1], epsilon="1/2"),
    "by-length": lambda s, d: s.partition(d, by=["a"], parts=["a"], budget="1/2"),
    "partition-budget": lambda s, d: s.partition(d, by=["a"] * len(d), parts=["a"], budget=5),
    "rho-on-epsilon-budget": lambda s, d: s.sum(d, bounds=(0, 5), rho="1/2"),
}
DATASETS = [[1, 2, 3], [None, "x", float("nan"), 10**400, 7, 8, 9], [4.5] * 11]


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_remaining_errors_depend_only_on_public_arguments_and_spend_nothing(case: str) -> None:
    messages = set()
    for data in DATASETS:
        session, source, log = seeded(analyst_facing=True)
        with pytest.raises((ValueError, TypeError, BudgetExceeded)) as info:
            REFUSED[case](session, data)
        messages.add(f"{type(info.value).__name__}: {info.value}")
        assert session.spent == 0 and source.bytes_served == 0 and log == []
    assert len(messages) == 1, messages  # the same error whatever the data: no row, no count, no value


def test_the_mode_is_a_bool() -> None:
    with pytest.raises(TypeError, match="analyst_facing"):
        Session(epsilon=1, analyst_facing="yes")  # type: ignore[arg-type]
    assert not Session(epsilon=1).analyst_facing


# --- a release that fails half-way: refunded before its first random bit, charged after ------------
# (Issue 16.1: this test used to assert a refund after the first draw had been read; the rule is now that
# once the first random bit of a release is read, its charge stands. An analyst-facing session reports the
# failure as DataRefused, since an execution reads the data.)


@pytest.mark.parametrize("analyst_facing", [False, True], ids=["data-holder", "analyst"])
@pytest.mark.parametrize("release", ["mean", "variance", "histogram-bins"])
def test_a_failure_in_the_noise_step_is_refunded_only_before_the_first_bit(
        monkeypatch: pytest.MonkeyPatch, release: str, analyst_facing: bool) -> None:
    session, _, log = seeded(analyst_facing)
    session.count(BASE, epsilon="1/4")
    before, records = session.spent, len(log)
    real = noise_module.discrete_laplace
    fail_on = 1 if release == "histogram-bins" else 2  # a histogram makes one batch draw; mean and variance several
    calls: list[int] = []

    def fails_half_way(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == fail_on:
            raise RuntimeError("injected failure in the noise step")
        return real(*args, **kwargs)

    monkeypatch.setattr(noise_module, "discrete_laplace", fails_half_way)
    expected = securedp.DataRefused if analyst_facing else RuntimeError
    with pytest.raises(expected):
        NUMERIC[release](session, BASE)
    # every release draws its salt before its noise: the first bit is read before the noise step fails, so the
    # charge stands (a refund before the first bit: tests/security/test_charge_after_draw.py), and its record
    # says so: a charge with nothing released, naming the error the caller got (never its message)
    assert len(calls) == fail_on and len(log) == records + 1
    assert (log[-1]["kind"], log[-1]["error"], log[-1]["charged"]) == ("unreleased", expected.__name__, "1/4")
    assert "value" not in log[-1] and "injected" not in str(log[-1])
    assert session.spent == before + Fraction(1, 4)
    monkeypatch.setattr(noise_module, "discrete_laplace", real)
    after = session.spent
    NUMERIC["sum"](session, BASE)  # the session goes on, charged exactly
    assert session.spent == after + Fraction(1, 4) and len(log) == records + 2


# --- property: no record makes an analyst-facing release raise ------------------------------------

RECORDS = st.one_of(
    st.integers(-10, 10),
    st.floats(allow_nan=True, allow_infinity=True),
    st.fractions(max_denominator=10**6),
    st.sampled_from([v for _, v in ALL]),
    st.text(max_size=4),
)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(RECORDS, max_size=25))
def test_no_column_of_records_makes_an_analyst_facing_release_raise(data: list[Any]) -> None:
    log: list[dict[str, Any]] = []
    session = Session(epsilon="5/4", rng=ChaChaSource(SEED), audit=log, analyst_facing=True)
    for release in ("sum", "mean", "median", "histogram-bins"):
        NUMERIC[release](session, data)
    session.histogram(data, categories=[0, 1, "a"], epsilon="1/8")
    session.count(data, epsilon="1/8")
    assert session.spent == Fraction(5, 4) and len(log) == 6
    with pytest.raises(BudgetExceeded):
        session.count(data, epsilon="1/8")
    assert session.spent == Fraction(5, 4)
