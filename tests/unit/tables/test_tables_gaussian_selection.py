"""Private keys in rho (zCDP) tables: Gaussian thresholding wired into prepare_table, Session and the CLI."""

from __future__ import annotations

import io
import json
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

import securedp
from securedp import AuditLog, BudgetExceeded, ChaChaSource, verify_log
from securedp.cli.main import main
from securedp.mechanisms.gaussian_threshold import gaussian_threshold
from securedp.privacy.accuracy import gaussian_halfwidth
from securedp.tables import Count, Mean, prepare_table


def people(n: int = 3000) -> pl.DataFrame:
    rng = np.random.default_rng(3)  # test data only
    frame = pl.DataFrame({"pid": rng.integers(0, 400, n), "region": rng.choice(["north", "south", "east"], n),
                          "age": rng.integers(0, 100, n)})
    rare = pl.DataFrame({"pid": [10**6], "region": ["rare"], "age": [30]})
    return pl.concat([frame, rare.cast(frame.schema)])


QUERY = {"group_by": ["region"], "aggregations": [Count(), Mean("age", (0, 120))], "id_column": "pid",
         "max_groups": 2, "rho": "1/2", "delta": "1e-9"}


def seeded(**change):
    return prepare_table(people(), **{**QUERY, **change}).execute(ChaChaSource(bytes(range(32))))


def test_a_rho_table_thresholds_the_count_it_releases():
    """The default: the released count (rho 1/4, half of 1/2) selects the keys; it is at least the threshold."""
    r = seeded()
    plan = gaussian_threshold(Fraction(1, 4), "1e-9", 2)  # max_rows 1: the count's sensitivity is 1
    p = r.parameters
    assert (p["selection"], p["selection_count"], p["threshold"], p["delta"], p["delta_per_key"]) == \
        ("count", "count", plan.threshold, plan.delta_spent, plan.delta_spent / 2)
    assert plan.delta_spent < Fraction(1, 10**9)
    assert "selection_rho" not in p and "rho-zCDP" in p["guarantee"]
    assert r.labels[:4] == ("region", "count", "count_low", "count_high")
    assert p["count"]["noise"][0]["variance_units"] == plan.variance == Fraction(4)
    rows = [dict(zip(r.labels, row, strict=True)) for row in r.value]
    assert {row["region"] for row in rows} == {"north", "south", "east"}  # "rare" (one person) is not
    t = gaussian_halfwidth(Fraction(4), Fraction(1, 20))
    for row in rows:
        assert row["count"] >= plan.threshold and (row["count_low"], row["count_high"]) == \
            (row["count"] - t, row["count"] + t)


def test_a_separate_gaussian_selection_spends_its_share():
    r = seeded(selection="gaussian")
    plan = gaussian_threshold(Fraction(1, 4), "1e-9", 2)  # half of rho goes to selection by default
    p = r.parameters
    assert (p["selection"], p["threshold"], p["delta"]) == ("gaussian", plan.threshold, plan.delta_spent)
    assert (p["selection_rho"], p["selection_variance"]) == (Fraction(1, 4), Fraction(4))
    assert "rho-zCDP" in p["guarantee"]
    assert (r.rho, r.epsilon, r.delta, r.mechanism) == (Fraction(1, 2), None, plan.delta_spent, "discrete_gaussian")
    rows = [dict(zip(r.labels, row, strict=True)) for row in r.value]
    assert {row["region"] for row in rows} == {"north", "south", "east"}  # "rare" (one person) is not
    t = gaussian_halfwidth(Fraction(4), Fraction(1, 20))
    for row in rows:
        assert row["selection_persons"] >= plan.threshold
        assert (row["selection_persons_low"], row["selection_persons_high"]) == \
            (row["selection_persons"] - t, row["selection_persons"] + t)
    assert seeded(selection="gaussian").value == r.value


def test_the_selection_share_sets_rho_and_variance():
    r = seeded(selection_share="1/10")
    assert (r.parameters["selection_rho"], r.parameters["selection_variance"]) == (Fraction(1, 20), Fraction(20))
    assert r.parameters["threshold"] == gaussian_threshold(Fraction(1, 20), "1e-9", 2).threshold


def test_public_keys_in_a_rho_table_ignore_the_selection_rule():
    r = seeded(keys=["north", "rare"], delta=None, selection="laplace")
    assert [row[0] for row in r.value] == ["north", "rare"] and "threshold" not in r.parameters


def test_a_rho_session_charges_rho_and_delta_once_and_refuses_overspending(tmp_path):
    log = tmp_path / "log.jsonl"
    session = securedp.Session(rho=1, delta="1e-8", rng=ChaChaSource(bytes(32)), audit=AuditLog(log))
    query = {k: v for k, v in QUERY.items() if k != "rho"}
    first = session.table(people(), **query, rho="1/2")
    assert (session.spent, session.delta_spent) == (Fraction(1, 2), first.delta)
    assert first.delta < Fraction(1, 10**9)  # the delta its threshold proves
    with pytest.raises(BudgetExceeded, match="delta"):
        session.table(people(), **{**query, "delta": "1e-5"}, rho="1/4")  # its threshold proves more than is left
    with pytest.raises(BudgetExceeded):
        session.table(people(), **query, rho="3/4")
    assert (session.spent, session.delta_spent) == (Fraction(1, 2), first.delta)
    assert verify_log(log).ok and len(log.read_text().splitlines()) == 1
    record = json.loads(log.read_text())["record"]
    assert (record["delta_charged"], record["delta_remaining"]) == (str(first.delta),
                                                                     str(Fraction(1, 10**8) - first.delta))


@pytest.mark.parametrize("change, message", [
    ({"delta": None}, "delta"),
    ({"delta": 1}, "delta"),
    ({"delta": "3/2"}, "delta"),
    ({"selection": "laplace"}, "Gaussian thresholding"),
    ({"selection": "optimal"}, "Gaussian thresholding"),
    ({"rho": None, "epsilon": 1, "selection": "gaussian"}, "priced in rho"),
    ({"rho": "1e-9"}, "sigma"),  # the selection's variance exceeds MAX_VARIANCE
])
def test_bad_rho_selection_is_refused_before_anything_is_charged(change, message):
    session = securedp.Session(rho=1, epsilon=None, delta="1e-6")
    with pytest.raises(ValueError, match=message):
        session.table(people(), **{**QUERY, **change})
    assert (session.spent, session.delta_spent) == (0, 0)


def test_the_cli_releases_a_rho_table_with_private_keys_and_replays_it(tmp_path, capsys):
    people().write_parquet(tmp_path / "t.parquet")
    (tmp_path / "seed").write_text("33" * 32)
    log = tmp_path / "log.jsonl"
    argv = ["release", str(tmp_path / "t.parquet"), "--group-by", "region", "--count", "--id-column", "pid",
            "--max-groups", "2", "--rho", "1/2", "--delta", "1e-9", "--seed-file", str(tmp_path / "seed"),
            "--audit-log", str(log)]
    capsys.readouterr()
    assert main(argv) == 0, capsys.readouterr().err
    frame = pl.read_csv(io.StringIO(capsys.readouterr().out))
    assert frame.columns[:2] == ["region", "count"] and set(frame["region"]) <= {"north", "south", "east"}
    assert main([*argv, "--selection", "gaussian"]) == 0, capsys.readouterr().err
    frame = pl.read_csv(io.StringIO(capsys.readouterr().out))
    assert frame.columns[:2] == ["region", "selection_persons"]
    records = [json.loads(line)["record"] for line in log.read_text().splitlines()]
    assert [r["parameters"]["selection"] for r in records] == ["count", "gaussian"]
    assert main(["audit", "replay", str(log), "--seed-file", str(tmp_path / "seed"),
                 "--data", str(tmp_path / "t.parquet")]) == 0
    assert capsys.readouterr().out.count(": table: reproduced exactly") == 2
    assert main([*argv[:-2], "--selection", "optimal"]) == 1
    assert "Gaussian thresholding" in capsys.readouterr().err
