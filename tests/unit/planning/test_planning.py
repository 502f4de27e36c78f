"""securedp.planning: contribution analysis (exact and private) and private bounds."""

from __future__ import annotations

import pathlib
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

import securedp
from securedp import ChaChaSource, Session
from securedp.planning import analyze_contributions, prepare_contribution_histogram, prepare_private_bounds
from securedp.reading.mode import analyst_facing_scope


def seed(n: int) -> ChaChaSource:
    return ChaChaSource(n.to_bytes(32, "big"))


def grid(persons: int, k: int, m: int, cells: int = 12, extra: int = 0) -> pl.DataFrame:
    """Every person in exactly ``k`` of ``cells`` groups with exactly ``m`` rows each (``extra`` persons in
    ``2 k`` groups with ``2 m`` rows)."""
    rng = np.random.default_rng(7)
    pid, group, value = [], [], []
    for p in range(persons + extra):
        kk, mm = (k, m) if p < persons else (2 * k, 2 * m)
        for g in rng.choice(cells, kk, replace=False):
            pid += [p] * mm
            group += [f"g{g}"] * mm
            value += [float(p % 10)] * mm
    return pl.DataFrame({"pid": pid, "region": group, "v": value})


@pytest.mark.parametrize(("k", "m"), [(1, 1), (3, 4), (2, 7)])
def test_exact_analysis_recommends_the_true_bounds(k: int, m: int) -> None:
    report = analyze_contributions(grid(600, k, m), id_column="pid", group_by="region")
    assert not report.private and "not private" in report.label
    assert (report.recommended.max_groups, report.recommended.max_rows) == (k, m)
    assert report.groups_per_person == {k: 600} and report.rows_per_pair == {m: 600 * k}
    assert report.rows == 600 * k * m and report.persons == 600 and report.cells == 12
    best = report.recommended
    assert best.rows_kept == 1 and best.persons_whole == 1 and best.count_bias == 0
    assert best.count_halfwidth == securedp.privacy.accuracy.laplace_halfwidth(k * m, "0.05")


def test_exact_fractions_follow_the_random_function_model() -> None:
    report = analyze_contributions(grid(100, 2, 3, extra=10), id_column="pid", group_by="region",
                                   candidates=[(2, 3), (1, 1)])
    by_pair = {(c.max_groups, c.max_rows): c for c in report.candidates}
    rows = 100 * 6 + 10 * 24
    # (2, 3): the 10 heavy persons keep 2 of their 4 groups and 3 of 6 rows in each
    assert by_pair[2, 3].rows_kept == Fraction(100 * 6 + 10 * 6, rows)
    assert by_pair[2, 3].persons_whole == Fraction(100, 110)
    assert by_pair[2, 3].count_bias == Fraction(rows - 660, 12)
    assert by_pair[1, 1].rows_kept == Fraction(110, rows)


def test_sum_prediction_and_column_check() -> None:
    data = grid(200, 2, 2)
    report = analyze_contributions(data, id_column="pid", group_by="region", column="v", bounds=(0, 10))
    c = report.recommended
    assert c.sum_error is not None and c.sum_bias == 10 * c.count_bias
    assert report.record()["candidates"][0]["sum_error"] is not None
    with pytest.raises(ValueError, match="both column= and bounds="):
        analyze_contributions(data, id_column="pid", group_by="region", column="v")
    with pytest.raises(ValueError, match="not in the table"):
        analyze_contributions(data, id_column="pid", group_by="region", column="nope", bounds=(0, 1))


def test_exact_analysis_is_refused_analyst_facing() -> None:
    data = grid(50, 1, 1)
    with analyst_facing_scope(), pytest.raises(ValueError, match="not private"):
        analyze_contributions(data, id_column="pid", group_by="region")
    with pytest.raises(ValueError, match="not private"):
        analyze_contributions(data, id_column="pid", group_by="region", session=Session(epsilon=1,
                                                                                          analyst_facing=True))


def test_private_analysis_is_charged_its_epsilon_and_audited() -> None:
    log: list[dict[str, object]] = []
    session = Session(epsilon=2, rng=seed(1), audit=log, analyst_facing=True)
    report = analyze_contributions(grid(3000, 3, 4), id_column="pid", group_by="region", epsilon="1/2",
                                   session=session)
    assert session.spent == Fraction(1, 2)
    assert report.private and report.release is not None and report.release.epsilon == Fraction(1, 2)
    assert (report.recommended.max_groups, report.recommended.max_rows) == (3, 4)
    assert len(log) == 1 and log[0]["statistic"] == "contribution_histogram" and log[0]["charged"] == "1/2"


def test_private_histogram_replays_from_a_seed_and_prices_exactly() -> None:
    prepared = prepare_contribution_histogram(grid(100, 2, 2), id_column="pid", group_by=["region"], epsilon=1,
                                              groups_cap=4, rows_cap=3)
    assert prepared.epsilon == 1 and prepared.rho is None
    first, again = prepared.execute(seed(5)), prepared.execute(seed(5))
    assert first.value == again.value and len(first.value) == 4 + 3 + 1
    assert first.labels is not None and first.labels[3] == "groups>=4" and first.labels[-1] == "cells"
    assert first.parameters["sensitivities"] == [1, 4, 4]
    assert first.parameters["scales"] == [3, 12, 12]


def test_public_arguments_are_checked_before_reading() -> None:
    with pytest.raises(ValueError, match="id_column"):
        analyze_contributions("no-such-file.csv", id_column="", group_by="g")
    with pytest.raises(ValueError, match="candidate"):
        analyze_contributions("no-such-file.csv", id_column="p", group_by="g", candidates=[(1, 2, 3)])
    with pytest.raises(ValueError, match="release_epsilon"):
        analyze_contributions("no-such-file.csv", id_column="p", group_by="g", release_epsilon=0)


@pytest.mark.parametrize("method", ["histogram", "quantiles"])
def test_private_bounds_release(method: str) -> None:
    x = np.random.default_rng(3).lognormal(10, 1, 20_000).round(2)
    log: list[dict[str, object]] = []
    session = Session(epsilon=3, rng=seed(2), audit=log)
    release = securedp.private_bounds(x, epsilon=1, method=method, session=session)
    lo, hi = release.value
    assert release.statistic == "bounds" and release.epsilon == 1 and session.spent == 1
    assert log[0]["value"] == [securedp.ledger.release.jsonable(v) for v in (lo, hi)]
    assert lo < hi
    if method == "histogram":  # nonnegative data: lo >= 0; hi a power of two above half the largest value
        assert lo >= 0 and Fraction(hi) >= Fraction(float(x.max())) / 2 and Fraction(hi).numerator & (
            Fraction(hi).numerator - 1) == 0
    prepared = prepare_private_bounds(x, epsilon=1, method=method)
    assert prepared.execute(seed(9)).value == prepared.execute(seed(9)).value


def test_private_bounds_symmetric_data_and_ids() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(0, 1000, 20_000)
    ids = np.repeat(np.arange(10_000), 2)
    release = securedp.private_bounds(x, epsilon=1, ids=ids, max_contributions=2, rng=seed(4))  # a seed in the
    # 1 - beta event: no empty bin above the threshold (seed 3 is in the other, where lo is -2**40)
    lo, hi = release.value
    assert lo < 0 < hi and {abs(lo), hi} <= {2048, 4096, 8192}  # the largest |x| is near 4000
    assert release.max_contributions == 2
    assert release.parameters["threshold"] > 0 and len(release.parameters["noisy_counts"]) == 2 * 48 + 2


def test_private_bounds_rejects_bad_options() -> None:
    with pytest.raises(ValueError, match="method"):
        prepare_private_bounds([1.0], epsilon=1, method="tumult")
    with pytest.raises(ValueError, match="exponents"):
        prepare_private_bounds([1.0], epsilon=1, exponents=(4, 2))
    with pytest.raises(ValueError, match="two levels"):
        prepare_private_bounds([1.0], epsilon=1, method="quantiles", quantiles=("0.9", "0.1"))


def test_planning_releases_in_a_verified_audit_log(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=2, rng=seed(6), audit=securedp.AuditLog(path))
    x = np.random.default_rng(5).normal(0, 10, 2000)
    bounds = securedp.private_bounds(x, epsilon="1/2", session=session)
    report = analyze_contributions(grid(500, 2, 2), id_column="pid", group_by="region", epsilon="1/2",
                                   session=session)
    assert session.spent == 1 and report.release is not None
    report_check = securedp.verify_log(path)
    assert report_check.ok and report_check.valid == 2
    records = [entry["record"] for entry in report_check.entries]
    assert records[0]["statistic"] == "bounds" and records[0]["value"] == list(
        securedp.ledger.release.jsonable(bounds.value))
    assert records[1]["statistic"] == "contribution_histogram" and records[1]["spent"] == 1


def test_private_report_is_computed_from_the_noisy_counts_alone() -> None:
    from securedp.planning import ReportPlan

    # persons by groups (caps 3): 100 with 1 group, 50 with 2; pairs by rows (cap 2): 150 with 1, 50 with 2;
    # 10 cells; a noisy count at most its threshold (4 at scale 1) reads as 0: the 3 persons with 3 groups
    release = securedp.Release(value=(100, 50, 3, 150, 50, 10), statistic="contribution_histogram",
                               mechanism="discrete_laplace", parameters={"groups_cap": 3, "rows_cap": 2,
                                                                         "scales": [1, 1, 1]},
                               epsilon=Fraction(1), rho=None, max_contributions=1)
    report = ReportPlan.of(candidates=[(1, 1), (2, 2)]).from_histogram(release)
    assert report.groups_per_person == {1: 100, 2: 50, 3: 0} and report.rows_per_pair == {1: 150, 2: 50}
    per_pair = Fraction(150 + 2 * 50, 200)  # E_B[min(r, 2)]
    assert report.rows == (100 + 2 * 50) * per_pair and report.cells == 10
    one, two = report.candidates
    assert one.rows_kept == Fraction(150, 200 * per_pair)  # 150 persons keep one group, one row in it
    assert one.persons_whole == Fraction(100, 150) * Fraction(150, 200)  # g = 1 and P_B(r <= 1)
    assert two.rows_kept == 1 and two.persons_whole == 1
    assert report.recommended == two and report.label.startswith("private")


def test_a_missing_id_is_refused_for_the_data_holder_and_dropped_analyst_facing() -> None:
    data = pl.DataFrame({"pid": [1, 1, None, 2], "region": ["a", "b", "a", "a"]})
    with pytest.raises(ValueError, match="column 'pid', row 2: blank id"):
        analyze_contributions(data, id_column="pid", group_by="region")
    session = Session(epsilon=1, rng=seed(8), analyst_facing=True)
    report = analyze_contributions(data, id_column="pid", group_by="region", epsilon=1, session=session)
    assert report.release is not None and session.spent == 1


class ExplodingColumn:
    def __iter__(self) -> object:
        raise RuntimeError("secret 4242")

    def __len__(self) -> int:
        return 3


@pytest.mark.parametrize("path", ["analyze", "bounds"])
def test_a_reading_failure_is_one_fixed_error_analyst_facing(path: str) -> None:
    import pandas as pd

    class ExplodingFrame(pd.DataFrame):  # its id column cannot be read (a cell always can: it is unusable, dropped)
        @property
        def _constructor(self) -> type:
            return ExplodingFrame

        def __getitem__(self, key: object) -> object:
            if key == "id":
                raise RuntimeError("secret 4242")
            return super().__getitem__(key)

    table = ExplodingFrame({"id": [1, 2, 3], "g": ["a", "b", "a"]})

    def run(session: Session) -> object:
        if path == "analyze":
            return analyze_contributions(table, id_column="id", group_by="g", epsilon=1, session=session)
        return securedp.private_bounds(ExplodingColumn(), epsilon=1, session=session)

    guarded = Session(epsilon=2, analyst_facing=True)
    with pytest.raises(securedp.DataRefused) as info:
        run(guarded)
    assert "4242" not in repr(info.value) and info.value.__cause__ is None and guarded.spent == 0
    with pytest.raises(Exception) as shown:  # the data holder's mode lets the original through
        run(Session(epsilon=2))
    assert not isinstance(shown.value, securedp.DataRefused)


@pytest.mark.parametrize(("k", "m", "epsilon"), [(1, 1, "1"), (2, 3, "1/2"), (4, 7, "3")])
def test_predicted_noise_is_the_table_plans(k: int, m: int, epsilon: str) -> None:
    from securedp.tables import Count, Sum

    data = grid(20, 2, 2)
    report = analyze_contributions(data, id_column="pid", group_by="region", column="v", bounds=(0, 10),
                                   candidates=[(k, m)], release_epsilon=epsilon)
    planned = [securedp.prepare_table(data, group_by="region", keys=["g0"], id_column="pid", aggregations=[agg],
                                      max_groups=k, max_rows=m, epsilon=epsilon).plan.outputs[0].halfwidths[""]
               for agg in (Count(), Sum("v", (0, 10)))]
    assert [report.candidates[0].count_halfwidth, report.candidates[0].sum_halfwidth] == planned
