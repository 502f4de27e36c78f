"""Private keys selected by the count a table releases (the rule ``"count"``, issue 26 item 4).

* the default: a table that releases a count (its ``Persons``, else its ``Count``) thresholds it, at the
  count's whole share: no ``partition_selection`` share, no ``selection_persons`` column;
* the released count of a kept key is the very noisy count that passed the threshold: replayed here
  from the same seeded stream by the plan alone (salt, then one batch of the count's noise over every
  data key), so it is at least the threshold, and no other noise is drawn for it;
* a count of rows thresholds at its sensitivity ``max_rows``; the record states the rule, the count,
  ``tau``, ``delta`` and ``delta / k``;
* a separate selection only when asked (``selection=`` a separate rule, or ``selection_share=``), or
  when the table releases no count; a bad request is refused before anything is charged;
* an audit log written before the default changed (a query naming no rule) replays with the rule its
  record states.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import securedp
from securedp import ChaChaSource
from securedp.bounding.messages import draw_salt
from securedp.cli.main import main
from securedp.hazmat.samplers import discrete_laplace
from securedp.mechanisms.gaussian_threshold import gaussian_threshold
from securedp.mechanisms.partition_selection import laplace_threshold
from securedp.tables import Count, Mean, Persons, Sum, prepare_table
from securedp.tables.query import Query as TableQuery


def people(n: int = 4000, seed: int = 2) -> pl.DataFrame:
    rng = np.random.default_rng(seed)  # test data only
    common = pl.DataFrame({"pid": rng.integers(0, 600, n), "g": rng.choice(["a", "b", "c", "d"], n,
                                                                             p=[0.5, 0.3, 0.19, 0.01]),
                           "v": rng.integers(0, 10, n)})
    rare = pl.DataFrame({"pid": [10**6, 10**6 + 1], "g": ["rare1", "rare2"], "v": [1, 2]})
    return pl.concat([common, rare.cast(common.schema)])


QUERY = {"group_by": ["g"], "id_column": "pid", "max_groups": 2, "max_rows": 3, "epsilon": 1, "delta": "1e-6"}


def released(**query):
    return prepare_table(people(), **{**QUERY, **query}).execute(ChaChaSource(bytes(range(32))))


@pytest.mark.parametrize("aggregations, counted, sensitivity", [
    ([Count()], "count", 3),  # rows: max_rows
    ([Count(), Persons(), Sum("v", (0, 10))], "persons", 1),  # persons first: sensitivity 1
    ([Mean("v", (0, 10)), Count(share="1/4")], "count", 3),
])
def test_the_released_count_selects_the_keys_at_its_whole_share(aggregations, counted, sensitivity):
    prepared = prepare_table(people(), **QUERY, aggregations=aggregations)
    assert "partition_selection" not in prepared.shares and sum(prepared.shares.values()) == 1
    epsilon = prepared.shares[counted]
    plan = laplace_threshold(epsilon, "1e-6", 2, sensitivity)
    r = prepared.execute(ChaChaSource(bytes(range(32))))
    p = r.parameters
    assert (p["selection"], p["selection_count"], p["threshold"], p["delta"], p["delta_per_key"]) == \
        ("count", counted, plan.threshold, plan.delta_spent, plan.delta_spent / 2)
    assert p["delta_asked"] == Fraction(1, 10**6) and plan.delta_spent < Fraction(1, 10**6)
    assert p[counted]["noise"][0]["scale_units"] == plan.scale == Fraction(2 * sensitivity) / epsilon
    assert "selection_persons" not in r.labels
    rows = [dict(zip(r.labels, row, strict=True)) for row in r.value]
    assert rows and {row["g"] for row in rows} <= {"a", "b", "c", "d"}
    assert all(row[counted] >= plan.threshold for row in rows)
    stated = prepared.plan.selection
    assert stated is not None and (stated.rule, stated.counted, stated.threshold) == ("count", counted, plan.threshold)
    assert stated.unit == ("persons" if sensitivity == 1 else "rows")


def test_a_kept_count_is_the_noisy_count_that_passed():
    """Replayed by hand from the same stream: the salt, then one batch of discrete Laplace noise of the count's
    scale over every data key (bounds that keep every row, so the exact counts are the raw ones)."""
    data = people()
    query = {**QUERY, "max_groups": 6, "max_rows": 50, "epsilon": 1000}
    prepared = prepare_table(data, **query, aggregations=[Count(), Sum("v", (0, 10))])
    r = prepared.execute(ChaChaSource(bytes(range(32))))
    exact = data.group_by("g").len().sort("g")
    assert data.group_by(["pid", "g"]).len()["len"].max() <= 50 and data.group_by("pid").agg(
        pl.col("g").n_unique())["g"].max() <= 6  # bounding keeps every row
    again = ChaChaSource(bytes(range(32)))
    draw_salt(again)
    scale = Fraction(6 * 50) / 500  # k m / epsilon of the count, at half of epsilon
    noisy = exact["len"].to_numpy() + discrete_laplace(scale, size=exact.height, rng=again)
    tau = r.parameters["threshold"]
    assert tau == laplace_threshold(500, "1e-6", 6, 50).threshold
    expected = {g: int(v) for g, v in zip(exact["g"], noisy, strict=True) if v >= tau}
    assert {row[0]: row[1] for row in r.value} == expected and set(expected) == {"a", "b", "c"}


def test_a_separate_selection_only_when_asked_or_without_a_count():
    for query, rule in (({"selection": "laplace"}, "laplace"), ({"selection_share": "1/3"}, "laplace"),
                        ({"selection": "optimal"}, "optimal"),
                        ({"aggregations": [Sum("v", (0, 10))]}, "laplace"),
                        ({"aggregations": [Sum("v", (0, 10))], "epsilon": None, "rho": 1}, "gaussian"),
                        ({"selection": "count"}, "count"), ({"epsilon": None, "rho": 1}, "count")):
        r = released(**{"aggregations": [Count()], **query})
        assert r.parameters["selection"] == rule
        separate = rule != "count"
        assert ("partition_selection" in r.parameters["shares"]) == separate
        assert ("selection_persons" in r.labels) == (rule != "optimal" and separate)


def test_a_separate_rule_keeps_its_earlier_seeded_output():
    """The explicit separate rule is the earlier default: the same draws in the same order."""
    r = released(aggregations=[Count()], selection="laplace")
    shares = r.parameters["shares"]
    assert shares == {"partition_selection": Fraction(1, 2), "count": Fraction(1, 2)}
    assert r.parameters["threshold"] == laplace_threshold(Fraction(1, 2), "1e-6", 2).threshold
    assert "selection_count" not in r.parameters and "delta_per_key" not in r.parameters


@pytest.mark.parametrize("query, message", [
    ({"selection": "count", "aggregations": [Sum("v", (0, 10))]}, "add Count"),
    ({"selection": "count", "selection_share": "1/2"}, "no separate share"),
    ({"selection": "counts"}, "selection must be one of"),
    ({"epsilon": None, "rho": "1e-9", "max_rows": 3}, "separate count of persons"),  # sigma**2 above the cap
])
def test_a_bad_selection_is_refused_before_anything_is_charged(query, message):
    session = securedp.Session(epsilon=5, rho=None, delta="1e-3") if query.get("rho") is None else \
        securedp.Session(rho=5, delta="1e-3")
    with pytest.raises(ValueError, match=message):
        session.table(people(), **{**QUERY, "aggregations": [Count()], **query})
    assert (session.spent, session.delta_spent) == (0, 0)


def test_a_rho_count_of_rows_thresholds_at_its_sensitivity():
    r = released(aggregations=[Count()], epsilon=None, rho="1/2")
    plan = gaussian_threshold("1/2", "1e-6", 2, 3)
    assert plan.variance == Fraction(2 * 9, 1) and r.parameters["threshold"] == plan.threshold
    assert r.parameters["count"]["noise"][0]["variance_units"] == plan.variance
    assert all(row[1] >= plan.threshold for row in r.value)


def test_a_log_written_before_the_default_changed_replays_with_its_rule(tmp_path: Path, monkeypatch, capsys):
    """A query naming no rule, whose record says ``laplace`` (the earlier default), replays as ``laplace``."""
    people().write_parquet(tmp_path / "t.parquet")
    (tmp_path / "seed").write_text("44" * 32)
    log = tmp_path / "log.jsonl"
    argv = ["release", str(tmp_path / "t.parquet"), "--group-by", "g", "--count", "--id-column", "pid",
            "--max-groups", "2", "--epsilon", "1", "--delta", "1e-6", "--seed-file", str(tmp_path / "seed"),
            "--audit-log", str(log)]
    written = TableQuery.to_json

    def earlier(self: TableQuery) -> dict:
        return {**written(self), "selection": None}  # what a query naming no rule recorded

    monkeypatch.setattr(TableQuery, "to_json", earlier)
    assert main([*argv, "--selection", "laplace"]) == 0
    monkeypatch.undo()
    record = json.loads(log.read_text().splitlines()[0])["record"]
    assert record["query"]["selection"] is None and record["parameters"]["selection"] == "laplace"
    capsys.readouterr()
    assert main(["audit", "replay", str(log), "--seed-file", str(tmp_path / "seed"),
                 "--data", str(tmp_path / "t.parquet")]) == 0
    assert "line 1: table: reproduced exactly" in capsys.readouterr().out
