"""The charge of an exponential mechanism in rho against the zCDP it loses, exactly on small instances (issue 42).

The worst instances of an ``epsilon``-bounded-range release are two-point laws (module docstring of
:mod:`securedp.privacy.bounded_range_zcdp`): an exponential mechanism choosing one of two candidates whose scores
move apart by the whole sensitivity. Each law is enumerated at 200 bits and its zCDP approached from below on a
fine grid of ``alpha`` (``tests/unit/privacy/test_proven_loss.py``), so "true <= charge" checks that no release
loses more than it is charged and "charge <= 1.01 true" that it is charged what it loses.
"""

from __future__ import annotations

from fractions import Fraction

import gmpy2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from securedp import AuditLog, Session, verify_log
from securedp.privacy.cost import Cost, Currency
from tests.unit.privacy.test_proven_loss import mp, zcdp_of

SENSITIVITY = 16


def two_candidates(epsilon: Fraction, gap: int) -> tuple[list, list]:
    """The exponential mechanism over scores ``(0, gap)`` and its neighbour ``(s, gap - s)``, sensitivity ``s``."""
    with gmpy2.context(precision=200):
        rate = mp(epsilon) / (2 * SENSITIVITY)
        laws = []
        for scores in ((0, gap), (SENSITIVITY, gap - SENSITIVITY)):
            weights = [gmpy2.exp(rate * s) for s in scores]
            laws.append([w / sum(weights) for w in weights])
        return laws[0], laws[1]


def worst_two_candidates(epsilon: Fraction) -> gmpy2.mpfr:
    """The largest zCDP of the two-candidate instances (every gap that can matter)."""
    return max(zcdp_of(*two_candidates(epsilon, gap)) for gap in range(-2 * SENSITIVITY, 4 * SENSITIVITY + 1))


def kullback_leibler_bound(epsilon: Fraction) -> gmpy2.mpfr:
    """``eps / (1 - e^-eps) - 1 - ln(eps / (1 - e^-eps))``: the sharp bound's value at ``alpha -> 1``."""
    with gmpy2.context(precision=200):
        ratio = mp(epsilon) / -gmpy2.expm1(-mp(epsilon))
        return ratio - 1 - gmpy2.log(ratio)


def charge(epsilon: Fraction) -> Fraction:
    return Cost.of(epsilon=epsilon, bounded_range=True).in_currency(Currency.RHO)


@pytest.mark.parametrize(("epsilon", "eighth_over_true"), [(Fraction(1, 10), "1.0001"), (Fraction(1, 2), "1.003"),
                                                           (Fraction(1), "1.013"), (Fraction(2), "1.05"),
                                                           (Fraction(4), "1.19")])
def test_the_exponential_mechanism_is_charged_within_one_percent_of_its_worst_instance(epsilon, eighth_over_true):
    worst = worst_two_candidates(epsilon)
    paid = charge(epsilon)
    assert worst <= mp(paid) <= worst * gmpy2.mpfr("1.01")
    assert paid <= epsilon * epsilon / 8
    assert mp(epsilon * epsilon / 8) > worst * gmpy2.mpfr(eighth_over_true)  # what the earlier rule gave away


@settings(max_examples=25, deadline=None)
@given(st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(2000), max_denominator=1 << 20))
def test_the_charge_is_a_certified_upper_bound_within_one_percent(epsilon: Fraction) -> None:
    paid = charge(epsilon)
    sharp = kullback_leibler_bound(epsilon)  # the sharp bound is at least its value at alpha -> 1
    assert sharp <= mp(paid) <= sharp * gmpy2.mpfr("1.01")
    assert paid <= epsilon * epsilon / 8
    assert paid.denominator <= 1 << 44 or paid == epsilon * epsilon / 8 or paid == epsilon  # bounded


@pytest.mark.parametrize("epsilon", [Fraction(3, 4), Fraction(1), Fraction(5, 2), Fraction(9)])
def test_the_renyi_bound_holds_every_two_point_law_of_that_range(epsilon: Fraction) -> None:
    from securedp.privacy.bounded_range_zcdp import renyi_upper

    for alpha in (1 + Fraction(1, 1 << 10), Fraction(3, 2), Fraction(4)):
        bound = renyi_upper(epsilon, alpha)
        with gmpy2.context(precision=200):
            e, a = mp(epsilon), mp(alpha)
            best = gmpy2.mpfr(0)
            for k in range(1, 400):  # losses -t and eps - t, Q-mean of exp(loss) one
                u = gmpy2.exp(-e * k / 400)
                q = (1 - u) / (u * gmpy2.expm1(e))
                best = max(best, gmpy2.log((1 - q) * u**a + q * (u * gmpy2.exp(e)) ** a) / (a - 1))
        assert best <= bound.hi and bound.hi - bound.lo < gmpy2.mpfr(2) ** -200
        assert best >= bound.lo * (1 - gmpy2.mpfr(2) ** -12)  # attained: the bound is the supremum


@pytest.mark.parametrize("depths", [2, 3, 4, 7])
def test_equal_shares_cost_no_more_than_the_whole(depths: int) -> None:
    for epsilon in (Fraction(1), Fraction(3), Fraction(12)):  # D rho(eps / D) <= rho(eps): the recursive split
        assert depths * kullback_leibler_bound(epsilon / depths) <= kullback_leibler_bound(epsilon) <= mp(
            charge(epsilon))


@pytest.mark.parametrize(("rho", "k"), [(Fraction(1, 8), 1), (Fraction(1, 2), 3), (Fraction(3, 7), 1),
                                        (Fraction(5), 2), (Fraction(1, 1000), 1)])
def test_a_rho_priced_selection_runs_at_the_epsilon_the_sharp_bound_allows(rho: Fraction, k: int) -> None:
    from securedp.mechanisms.record_rules import EIGHTH_ZCDP_CONVERSION, RecordRules, rules_scope
    from securedp.mechanisms.selection_price import selection_epsilon

    cell = selection_epsilon(Cost.of(rho=rho), k)
    assert k * charge(cell) <= rho
    assert mp(rho / k) <= kullback_leibler_bound(cell) * gmpy2.mpfr("1.003")  # loses nearly all it is charged
    with rules_scope(RecordRules(conversion=EIGHTH_ZCDP_CONVERSION)):
        eighth = selection_epsilon(Cost.of(rho=rho), k)
    assert cell >= eighth and (cell > eighth * Fraction(1001, 1000) or rho / k < Fraction(1, 16))


def test_a_record_charged_epsilon_squared_over_eight_still_verifies(tmp_path) -> None:
    from tests.audit.test_session_log import entries_of, rewrite

    path = tmp_path / "audit.jsonl"
    session = Session(rho=10, audit=AuditLog(path))
    session.exponential_mechanism([1, 2, 3], epsilon=2, sensitivity=1)
    session.median([1, 2, 3, 4], bounds=(0, 10), epsilon=2)
    assert session.spent == 2 * charge(Fraction(2)) < 1
    assert verify_log(path).ok, verify_log(path).problem
    entries = entries_of(path)
    entries[0]["record"].update(charged="1/2", spent="1/2", remaining="19/2")  # 2**2 / 8, as the earlier rule
    entries[1]["record"].update(charged="1/2", spent=1, remaining=9)
    rewrite(path, entries)
    assert verify_log(path).ok, verify_log(path).problem
    entries[1]["record"].update(charged="3/8", spent="7/8", remaining="73/8")  # no rule's charge
    rewrite(path, entries)
    problem = verify_log(path).problem
    assert problem is not None and problem.field == "record.charged"


def test_a_rho_split_records_the_conversion_it_ran_by_and_replay_reads_it_back() -> None:
    import securedp
    from securedp import ChaChaSource
    from securedp.mechanisms.record_rules import CONVERSIONS, RecordRules, rules_scope

    data = [v * 7 % 101 for v in range(300)]
    levels = [Fraction(k, 10) for k in range(1, 10)]  # the recursive split: 4 depths
    epsilons = []
    for conversion in CONVERSIONS:
        with rules_scope(RecordRules(conversion=conversion)):
            release = securedp.quantiles(data, levels, bounds=(0, 100), rho="1/2", rng=ChaChaSource(bytes(32)))
        record = release.record()
        parameters = record["parameters"]["data_quantiles"]
        assert parameters["selection"].startswith("recursive split") and parameters["depths"] == 4
        assert parameters["conversion"] == conversion and Fraction(parameters["rho_cells"]) <= Fraction(1, 2)
        assert RecordRules.stated(record["parameters"]).conversion == conversion
        assert RecordRules.stated([{"shares": {}}, {"x": parameters}]).conversion == conversion  # a table's cells
        epsilons.append(Fraction(parameters["epsilon_cell"]))
    assert epsilons[0] > epsilons[1] > epsilons[2]  # the sharp bound, epsilon**2 / 8, epsilon**2 / 2
    assert RecordRules.stated({"x": {"epsilon_cell": "1"}}).conversion == CONVERSIONS[0]  # none stated: this version's


@settings(max_examples=15, deadline=None)
@given(st.fractions(min_value=Fraction(1, 100), max_value=Fraction(50), max_denominator=1 << 16),
       st.integers(min_value=1, max_value=5))
def test_the_selection_epsilon_fits_its_share_and_loses_nearly_all_of_it(rho: Fraction, k: int) -> None:
    from securedp.mechanisms.selection_price import selection_epsilon

    cell = selection_epsilon(Cost.of(rho=rho), k)
    assert k * charge(cell) <= rho
    assert (cell * (1 << 32)).denominator == 1
    assert mp(rho / k) <= kullback_leibler_bound(cell) * gmpy2.mpfr("1.003") or rho / k < Fraction(1, 14)
