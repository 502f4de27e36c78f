"""Releases and sessions: values, records, bad input before any draw, ids rule, accounting, conversions."""

import math
import threading
from fractions import Fraction

import numpy as np
import pytest
from _salted_rule import kept_rows

import securedp
from securedp import BudgetExceeded, ChaChaSource, Lattice, Session
from securedp.bounding.messages import draw_salt
from securedp.privacy.conversions import approx_dp_to_zcdp, pure_to_zcdp, zcdp_to_approx_dp


def rng(label="t"):
    return ChaChaSource(b"\x07" * 32).substream(label)


RELEASES = [
    ("count", {}),
    ("sum", {"bounds": (0, 10)}),
    ("mean", {"bounds": (0, 10)}),
    ("variance", {"bounds": (0, 10)}),
    ("histogram", {"bins": [0, 5, 10]}),
]


@pytest.mark.parametrize("name,options", RELEASES)
@pytest.mark.parametrize("cost", [{"epsilon": "0.5"}, {"rho": "0.25"}])
def test_release_shape_and_record(name, options, cost):
    release = getattr(securedp, name)([1, 2.5, "3", Fraction(7, 2)], **options, **cost, rng=rng())
    assert release.statistic == name
    assert release.mechanism == ("discrete_laplace" if "epsilon" in cost else "discrete_gaussian")
    assert (release.epsilon, release.rho) == ((Fraction(1, 2), None) if "epsilon" in cost else (None, Fraction(1, 4)))
    values = release.value if isinstance(release.value, tuple) else (release.value,)
    assert all(isinstance(v, (int, Fraction)) for v in values)
    record = release.record()
    assert record["statistic"] == name and record["max_contributions"] == 1
    if name != "histogram":
        float(release)


@pytest.mark.parametrize("name,options", RELEASES)
def test_empty_data_is_valid(name, options):
    release = getattr(securedp, name)([], **options, epsilon=1, rng=rng())
    assert release.value is not None
    getattr(securedp, name)(np.array([], dtype=float), **options, epsilon=1, rng=rng())


def test_sum_output_lattice_and_integer_lattice():
    r = securedp.sum([0.1, 0.2], bounds=(0, 1), epsilon=1, lattice="0.01", rng=rng())
    assert (r.value / Fraction(1, 100)).denominator == 1
    assert isinstance(securedp.sum([1, 2], bounds=(0, 5), epsilon=1, lattice=1, rng=rng()).value, int)
    law = r.parameters["data_sum"]["noise"][0]  # a release of one column is the one-cell table: its record
    assert law["cell_sensitivity_units"] == 100 and law["scale_units"] == 100


def test_mean_and_variance_are_clamped_and_accurate():
    data = np.linspace(2, 8, 10_000)
    m = securedp.mean(data, bounds=(0, 10), epsilon=10, rng=rng())
    v = securedp.variance(data, bounds=(0, 10), epsilon=10, rng=rng())
    assert 0 <= m.value <= 10 and abs(float(m) - 5) < 0.05
    assert 0 <= v.value <= 25 and abs(float(v) - float(np.var(data))) < 0.2
    assert m.parameters["data_mean"]["budget_split"].startswith("count 1/2")


def test_histogram_categories_and_unknown():
    r = securedp.histogram(["a", "b", "a"], categories=["a", "b", "c"], epsilon=50, rng=rng())
    assert r.labels == ("a", "b", "c") and len(r.value) == 3
    with pytest.raises(ValueError, match="not a declared category"):
        securedp.histogram(["a", "z"], categories=["a", "b"], epsilon=1, rng=rng())
    r = securedp.histogram(["a", "z", [1]], categories=["a"], unknown="drop", epsilon=50, rng=rng())
    assert len(r.value) == 1
    with pytest.raises(ValueError, match="twice"):
        securedp.histogram([], categories=["a", "a"], epsilon=1)
    with pytest.raises(ValueError, match="increasing"):
        securedp.histogram([], bins=[0, 0, 1], epsilon=1)


def test_histogram_bins_edges_are_exact():
    src = rng()
    r = securedp.histogram([0.1, "0.1", 0.2, -5, 99], bins=[0, "0.1", "0.2", 1], epsilon=10**6, rng=src)
    # float 0.1 is just above 1/10, "0.1" is exactly the edge, float 0.2 just above 1/5 -> within 1/2 step
    assert r.value == (1, 2, 2) or sum(r.value) == 5


BAD = [
    (lambda: securedp.sum([1, None], bounds=(0, 1), epsilon=1), ValueError),
    (lambda: securedp.sum([1, float("nan")], bounds=(0, 1), epsilon=1), ValueError),
    (lambda: securedp.sum(["one"], bounds=(0, 1), epsilon=1), ValueError),
    (lambda: securedp.sum([1], bounds=(1, 0), epsilon=1), ValueError),
    (lambda: securedp.sum([1], bounds=(0, 1), epsilon=0), ValueError),
    (lambda: securedp.sum([1], bounds=(0, 1), epsilon=-1), ValueError),
    (lambda: securedp.sum([1], epsilon=1), TypeError),
    (lambda: securedp.sum([1], bounds=(0, 1), epsilon=1, rho=1), TypeError),
    (lambda: securedp.count([1], epsilon="nan"), ValueError),
    (lambda: securedp.count([1, 2], ids=[1, b"x"], epsilon=1), ValueError),  # an unusable id: its row is named
    (lambda: securedp.count([1, 2], ids=[1.5, 2.0], epsilon=1), ValueError),
    (lambda: securedp.count([1, 2], ids=[1], epsilon=1), ValueError),
    (lambda: securedp.count([1], max_contributions=0, epsilon=1), ValueError),
    (lambda: securedp.mean([1], bounds=(0, 1), epsilon=1, missing="impute"), ValueError),
]


@pytest.mark.parametrize("call,error", BAD)
def test_bad_input_raises_before_drawing_or_charging(call, error):
    with pytest.raises(error):
        call()


def test_bad_input_in_session_draws_and_charges_nothing():
    src = rng()
    log = []
    s = Session(epsilon=1, rng=src, audit=log)
    before = src.bytes_served
    for data in ([1, None], [float("nan")], ["x"]):
        with pytest.raises(ValueError):
            s.sum(data, bounds=(0, 1), epsilon="0.5")
    assert s.spent == 0 and src.bytes_served == before and log == []


def test_missing_drop_and_impute():
    r = securedp.sum([1, None, 2], bounds=(0, 5), epsilon=10**9, lattice=1, missing="drop", rng=rng())
    assert r.value == 3
    r = securedp.sum([1, None, 2], bounds=(0, 5), epsilon=10**9, lattice=1, missing="impute", fill=4, rng=rng())
    assert r.value == 7


def test_salted_rows_per_person_rule():
    salt = draw_salt(rng())  # the release draws its salt first, from its own source
    r = securedp.sum([1, 2, 3, 4], bounds=(0, 10), ids=[1, 1, 1, 2], max_contributions=2, lattice=1,
                     epsilon=10**9, rng=rng())
    assert r.value == sum(1 + i for i in kept_rows(salt, [1, 1, 1], [1, 2, 3], 2)) + 4
    assert r.max_contributions == 2 and r.parameters["data_sum"]["noise"][0]["cell_sensitivity_units"] == 20
    # the rows kept for person 1 do not depend on person 2's rows
    r2 = securedp.sum([1, 2, 3, 4, 4, 4], bounds=(0, 10), ids=[1, 1, 1, 2, 2, 2], max_contributions=2,
                      lattice=1, epsilon=10**9, rng=rng())
    assert r2.value == sum(1 + i for i in kept_rows(salt, [1, 1, 1], [1, 2, 3], 2)) + 8
    # a count keeps min(rows, m) per person whichever rows
    c = securedp.count([1, 2, 3, 4], ids=[1, 1, 1, 2], max_contributions=2, epsilon=10**9, rng=rng())
    assert c.value == 3


def test_session_budget_refusal_refund_and_audit():
    src = rng()
    log = []
    s = Session(epsilon=1, rng=src, audit=log)
    s.count([1, 2], epsilon="0.75")
    served = src.bytes_served
    with pytest.raises(BudgetExceeded):
        s.mean([1], bounds=(0, 1), epsilon="0.5")
    assert s.spent == Fraction(3, 4) and src.bytes_served == served and len(log) == 1
    assert log[0]["spent"] == "3/4" and log[0]["remaining"] == "1/4" and log[0]["charged"] == "3/4"
    with pytest.raises(securedp.IncompatibleCost):
        s.count([1], rho="0.01")
    boom = securedp.prepare_count([1], epsilon="0.25")
    failing = type(boom)(boom.statistic, boom.epsilon, boom.rho, lambda source: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        s.release(failing)
    assert s.spent == Fraction(3, 4) and len(log) == 1
    s.count([1], epsilon="0.25")
    assert s.remaining == 0


def test_rho_session_charges_pure_releases_as_epsilon_squared_over_two():
    s = Session(rho=1, rng=rng())
    s.count([1], epsilon="0.5")
    s.sum([1], bounds=(0, 1), rho="0.5")
    assert s.spent == Fraction(1, 8) + Fraction(1, 2)
    assert s.approx_dp("1e-6") >= Fraction(5, 8)


def test_concurrent_spending_never_overspends():
    s = Session(epsilon=1, rng=rng())
    ok, refused = [], []

    def worker():
        for _ in range(10):
            try:
                ok.append(s.count([1, 2, 3], epsilon="0.01"))
            except BudgetExceeded:
                refused.append(1)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ok) == 100 and len(refused) == 60 and s.spent == 1


def test_partition_parallel_composition():
    log = []
    s = Session(epsilon=2, rng=rng(), audit=log)
    parts = s.partition([1, 2, 3, 4, 5], by=["a", "b", "a", "b", "c"], parts=["a", "b", "c"], budget=1)
    assert s.spent == 1 and parts["a"].data == [1, 3] and parts["c"].data == [5]
    for part in parts.values():
        part.session.sum(part.data, bounds=(0, 5), epsilon=1)
        with pytest.raises(BudgetExceeded):
            part.session.count(part.data, epsilon="0.1")
    assert log[0]["kind"] == "partition" and log[0]["charged"] == 1 and log[0]["parts"] == ["a", "b", "c"]
    releases = [r for r in log if r.get("kind") != "partition"]
    assert s.spent == 1 and [r["partition"] for r in releases] == [["a"], ["b"], ["c"]]
    assert {r["partition_id"] for r in releases} == {log[0]["opens"]}
    with pytest.raises(ValueError, match="declared"):
        s.partition([1], by=["z"], parts=["a"], budget="0.1")
    assert s.spent == 1
    s.partition(np.arange(4), by=np.array([0, 1, 0, 1]), parts=[0, 1], budget="0.5", max_partitions=2)
    assert s.remaining == 0


def test_conversions_are_conservative():
    assert pure_to_zcdp("0.5") == Fraction(1, 8)
    for rho, delta in ((Fraction(1, 10), Fraction(1, 10**6)), (Fraction(2), Fraction(1, 100))):
        eps = zcdp_to_approx_dp(rho, delta)  # Canonne-Kamath-Steinke, below Bun-Steinke (tests/unit/privacy)
        bun_steinke = float(rho) + 2 * math.sqrt(float(rho) * math.log(1 / float(delta)))
        assert eps < Fraction(bun_steinke) and eps > Fraction(bun_steinke) * Fraction(3, 4)
    for eps, delta in ((Fraction(1), Fraction(1, 10**6)), (Fraction(3), Fraction(1, 10**9))):
        rho = approx_dp_to_zcdp(eps, delta)
        L = math.log(1 / float(delta))
        bun_steinke = (math.sqrt(L + float(eps)) - math.sqrt(L)) ** 2
        assert float(rho) > bun_steinke
        assert zcdp_to_approx_dp(rho, delta) <= eps
    assert Session.from_approx_dp(1, "1e-6").kind == "rho"
    with pytest.raises(ValueError):
        zcdp_to_approx_dp(1, 0)


def test_lattice_exported():
    assert securedp.Lattice is Lattice and "BudgetExceeded" in securedp.__all__
