"""Issue 18.1: a prepared table states its accuracy before anything is drawn, and the release keeps it.

* the half-width stated by ``prepared.plan`` is the one released: for counts and sums every cell's
  interval is ``value -/+`` it, exactly, in the column's units;
* empirical coverage: over 300 seeded releases of a table whose true counts are known, the planned
  intervals cover the truth at least ``1 - alpha`` of the time (binomial lower tail, false-failure
  rate below ``1e-6``);
* private keys: the stated release probability encloses the empirical release rate of a key with
  ``n`` persons (binomial, false-failure rate below ``1e-6``), for the Laplace and the Gaussian rule;
* the plan reads nothing: it is the same for two tables of different data, and a session is charged
  nothing by preparing.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from scipy import stats

import securedp
from securedp import ChaChaSource
from securedp.tables import Count, Mean, Median, Sum
from securedp.tables.pricing import TableParameters

ALPHA = Fraction(1, 10)


def people(n: int = 600, seed: int = 3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)  # test data only
    return pl.DataFrame({"p": rng.integers(0, 200, n), "g": rng.choice(["a", "b", "c"], n),
                         "v": rng.integers(0, 50, n)})


QUERY = {"group_by": ["g"], "keys": ["a", "b", "c"], "id_column": "p", "max_groups": 2, "max_rows": 2,
         "aggregations": [Count(), Sum("v", (0, 50), "0.5"), Mean("v", (0, 50)), Median("v", (0, 50))],
         "epsilon": 1, "alpha": ALPHA}


def test_the_stated_half_width_is_the_released_one() -> None:
    prepared = securedp.prepare_table(people(), **QUERY)
    plan = {o.name: o for o in prepared.plan.outputs}
    release = prepared.execute(ChaChaSource(bytes(32)))
    frame = release.frame
    for name in ("count", "v_sum"):
        width = plan[name].halfwidths[""]
        assert width > 0
        for value, low, high in zip(frame[name], frame[f"{name}_low"], frame[f"{name}_high"], strict=True):
            assert Fraction(str(value)) - Fraction(str(low)) == width == Fraction(str(high)) - Fraction(str(value))
    assert plan["v_median"].rank_error_bound == release.parameters["v_median"]["rank_error_bound"]
    assert set(plan["v_mean"].halfwidths) == {"count", "centred_sum"}


def test_the_plan_reads_no_data_and_charges_nothing() -> None:
    session = securedp.Session(epsilon=1)
    one = securedp.prepare_table(people(seed=1), **QUERY).plan
    two = securedp.prepare_table(people(300, seed=9), **QUERY).plan
    assert one == two
    assert session.spent == 0 and "nothing drawn, nothing charged" in "\n".join(one.lines())


def test_the_planned_intervals_cover_the_truth() -> None:
    data = pl.DataFrame({"p": list(range(90)), "g": ["a", "b", "c"] * 30})  # 30 persons per key, one row each
    prepared = securedp.prepare_table(data, group_by=["g"], keys=["a", "b", "c"], id_column="p",
                                      aggregations=[Count()], epsilon="1/2", alpha=ALPHA)
    width = prepared.plan.outputs[0].halfwidths[""]
    source = ChaChaSource(b"coverage".ljust(32, b"\0"))
    runs = 300
    covered = sum(abs(value - 30) <= width for _ in range(runs) for value in prepared.execute(source).frame["count"])
    trials = 3 * runs
    # covered >= (1 - alpha) * trials in law; refuse only if that is implausible at 1e-6
    assert stats.binom.cdf(covered, trials, 1 - float(ALPHA)) > 1e-6


@pytest.mark.parametrize("currency, selection", [("epsilon", None), ("rho", None), ("epsilon", "laplace"),
                                                  ("rho", "gaussian")])
def test_the_stated_release_probability_encloses_the_rate(currency: str, selection: str | None) -> None:
    query = {"group_by": ["g"], "id_column": "p", "aggregations": [Count()], "delta": "1e-3", currency: 1,
             "selection": selection}
    prepared = securedp.prepare_table(people(), **query)
    stated = prepared.plan.selection
    assert stated is not None and stated.threshold is not None
    assert stated.rule == (selection or "count") and stated.delta_per_key == stated.delta < Fraction(1, 1000)
    assert stated.delta == prepared.delta and stated.delta_asked == Fraction(1, 1000)  # k = 1
    n = stated.threshold  # the steepest point: P near 1/2
    data = pl.DataFrame({"p": list(range(n)), "g": ["only"] * n})
    again = securedp.prepare_table(data, **query)
    source = ChaChaSource(b"rates".ljust(32, b"\0"))
    runs = 600
    released = sum(len(again.execute(source).value) for _ in range(runs))
    public = {k: v for k, v in query.items() if k != "id_column"}
    priced = securedp.tables.pricing.price_table(TableParameters(**public))
    assert priced.selection is not None
    low, high = (float(b) for b in securedp.tables.plan.selection_plan(
        stated.rule, priced.selection, stated.delta, [n]).release_probability[n])
    assert 0 < low <= high < 1
    assert stats.binom.cdf(released, runs, high) > 1e-6 and stats.binom.sf(released - 1, runs, low) > 1e-6


@pytest.mark.parametrize("currency", ["epsilon", "rho"])
def test_the_persons_a_key_needs_are_proven_least(currency: str) -> None:
    """The plan states, for 1/2 and 19/20, the least n whose release probability is proven to reach it."""
    stated = securedp.prepare_table(people(), group_by=["g"], id_column="p", aggregations=[Count()],
                                    delta="1e-6", max_groups=2, **{currency: 1}).plan.selection
    assert stated is not None and set(stated.needed) == {Fraction(1, 2), Fraction(19, 20)}
    priced = securedp.tables.pricing.price_table(TableParameters(group_by=["g"], aggregations=[Count()],
                                                                 delta="1e-6", max_groups=2, **{currency: 1}))
    assert priced.selection is not None
    for level, n in stated.needed.items():
        assert securedp.tables.plan.release_probability(priced.selection, n)[0] >= level
        assert securedp.tables.plan.release_probability(priced.selection, n - 1)[1] < level
    if currency == "epsilon":  # docs/benchmarks.md: the released count thresholded at epsilon 1, k = 2
        assert (stated.threshold, stated.needed[Fraction(1, 2)], stated.needed[Fraction(19, 20)]) == (30, 30, 35)
    text = "\n".join(prepared_lines(currency))
    assert "selected by thresholding the released count at" in text and "a key needs" in text


def prepared_lines(currency: str) -> list[str]:
    return securedp.prepare_table(people(), group_by=["g"], id_column="p", aggregations=[Count()], delta="1e-6",
                                  max_groups=2, **{currency: 1}).plan.lines()
