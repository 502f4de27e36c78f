"""Tables in a Session: one charge for the whole table, a delta ledger for private keys, audited and verified."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

import securedp
from securedp import AuditLog, BudgetExceeded, ChaChaSource, verify_log
from securedp.tables import Count, Sum


def people(n: int = 2000) -> pl.DataFrame:
    rng = np.random.default_rng(8)  # test data only
    return pl.DataFrame({"pid": rng.integers(0, 300, n), "region": rng.choice(["n", "s", "e"], n),
                         "x": rng.uniform(0, 10, n)})


QUERY = {"group_by": ["region"], "aggregations": [Count(), Sum("x", (0, 10))], "id_column": "pid"}


def test_a_table_is_charged_once_and_its_delta_goes_to_the_delta_ledger(tmp_path):
    log = tmp_path / "log.jsonl"
    session = securedp.Session(epsilon=3, delta="1e-6", rng=ChaChaSource(bytes(32)), audit=AuditLog(log))
    private = session.table(people(), **QUERY, epsilon=1, delta="1e-7")
    session.table(people(), **QUERY, keys=["n", "w"], epsilon="1/2")
    assert (session.spent, session.delta_spent) == (Fraction(3, 2), private.delta)
    assert private.delta < Fraction(1, 10**7)  # the delta its threshold proves
    assert verify_log(log).ok
    record = json.loads(log.read_text().splitlines()[0])["record"]
    assert (record["delta_charged"], record["delta_spent"], record["delta_remaining"]) == \
        (str(private.delta), str(private.delta), str(Fraction(1, 10**6) - private.delta))


def test_delta_overspend_and_missing_delta_are_refused_and_refunded():
    session = securedp.Session(epsilon=3, delta="1e-7")
    with pytest.raises(BudgetExceeded, match="delta"):
        session.table(people(), **QUERY, epsilon=1, delta="2e-7")
    assert (session.spent, session.delta_spent) == (0, 0)
    with pytest.raises(ValueError, match="delta"):
        securedp.Session(epsilon=3).table(people(), **QUERY, epsilon=1, delta="1e-9")
    with pytest.raises(ValueError, match="delta"):
        securedp.Session(epsilon=3, delta=1)


def test_a_forged_delta_ledger_fails_verification(tmp_path):
    log = tmp_path / "log.jsonl"
    session = securedp.Session(epsilon=3, delta="1e-6", rng=ChaChaSource(bytes(32)), audit=AuditLog(log))
    for _ in range(2):
        session.table(people(), **QUERY, epsilon=1, delta="1e-7")
    lines = log.read_text().splitlines()
    second = json.loads(lines[1])
    second["record"]["delta_spent"] = "1/10000000"  # hides the second delta
    second["record"]["delta_remaining"] = "9/10000000"
    from securedp.audit.log import canonical, entry_hash  # a forger who re-hashes the chain

    second["hash"] = entry_hash(second)
    log.write_text(lines[0] + "\n" + canonical(second).decode() + "\n")
    report = verify_log(log)
    assert not report.ok and "delta_spent" in str(report.problem)


def test_analyst_facing_tables_drop_blank_keys_instead_of_raising():
    frame = pl.DataFrame({"pid": [1, 2, 3, None], "region": ["n", " ", None, "n"], "x": [1.0, None, 2.0, 3.0]})
    session = securedp.Session(epsilon=2, analyst_facing=True, rng=ChaChaSource(bytes(32)))
    release = session.table(frame, **QUERY, keys=["n"], epsilon=1)
    assert [row[0] for row in release.value] == ["n"]
    with pytest.raises(ValueError, match="region"):
        securedp.Session(epsilon=2).table(frame, **QUERY, keys=["n"], epsilon=1)
