"""``--fallback``: the selections' fallback probability on the command line, recorded and replayed; refused where
it means nothing; and a record from before the fallback (its parameters state none) still replays exactly."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from _seeded_cli import SEED, records, release, replayed

from securedp.audit.log import AuditLog
from securedp.cli.main import main


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "seed").write_bytes(SEED)
    rows = "".join(f"{i},{'ab'[i % 2]}\n" for i in range(1, 9))  # 8 rows: small cells, where the fallback acts
    (tmp_path / "data.csv").write_text("v,g\n" + rows, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("stat, name", [("median", "v_median"), ("iqr", "v_iqr"),
                                        ("trimmed_mean", "v_trimmed_mean")])
def test_one_column_fallback_is_used_recorded_and_replayed(work: Path, capsys: pytest.CaptureFixture[str],
                                                           stat: str, name: str) -> None:
    assert release(work, "--column", "v", "--stat", stat, "--bounds", "0,10", "--fallback", "0.2") == 0
    (record,) = records(work)
    assert record["query"]["fallback"] == "1/5" and Fraction(record["parameters"][name]["fallback"]) == Fraction(1, 5)
    assert "reproduced exactly" in replayed(work, capsys)


def test_the_default_fallback_is_recorded_in_the_parameters_not_the_query(work: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert release(work, "--column", "v", "--stat", "median", "--bounds", "0,10") == 0
    (record,) = records(work)
    assert "fallback" not in record["query"] and Fraction(record["parameters"]["v_median"]["fallback"]) == \
        Fraction(3, 4)
    assert "reproduced exactly" in replayed(work, capsys)


def test_table_fallback_applies_to_every_selection(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert release(work, "--group-by", "g", "--keys", "a,b", "--median", "v:0,10", "--quantile", "v:0.9:0,10",
                   "--sum", "v:0,10", "--fallback", "0") == 0
    (record,) = records(work)
    kinds = {a["kind"]: a for a in record["query"]["aggregations"]}
    assert Fraction(kinds["median"]["fallback"]) == Fraction(kinds["quantile"]["fallback"]) == 0
    assert "fallback" not in kinds["sum"]
    assert "fallback_weight" not in record["parameters"]["v_median"]  # the plain law's record, as ever
    assert "reproduced exactly" in replayed(work, capsys)


@pytest.mark.parametrize("args, words", [
    (("--column", "v", "--stat", "mean", "--bounds", "0,10", "--fallback", "0.2"), "--fallback applies to the "
                                                                                   "selections"),
    (("--group-by", "g", "--keys", "a,b", "--sum", "v:0,10", "--fallback", "0.2"), "--fallback applies to the "
                                                                                   "selections"),
    (("--column", "v", "--stat", "median", "--bounds", "0,10", "--fallback", "1"), "0 <= fallback < 1"),
    (("--column", "v", "--stat", "median", "--bounds", "0,10", "--fallback", "abc"), "--fallback"),
])
def test_fallback_where_it_means_nothing_is_refused_and_charges_nothing(work: Path,
                                                                         capsys: pytest.CaptureFixture[str],
                                                                         args: tuple[str, ...], words: str) -> None:
    assert release(work, *args) != 0
    assert words in capsys.readouterr().err
    assert not (work / "a.jsonl").exists()


def _as_before_the_fallback(work: Path) -> None:
    """Rewrite the log as a release from before the fallback existed would have written it: the same queries and
    draws, with no fallback named in the queries nor stated in the parameters (the log re-chained)."""
    entries = [json.loads(line) for line in (work / "a.jsonl").read_text(encoding="utf-8").splitlines()]
    (work / "a.jsonl").unlink()
    log = AuditLog(work / "a.jsonl")
    for entry in entries:
        record = entry["record"]
        record["query"].pop("fallback", None)
        for aggregation in record["query"].get("aggregations", []):
            aggregation.pop("fallback", None)
        for cell in record["parameters"].values():
            if isinstance(cell, dict):
                for name in ("fallback", "fallback_weight", "fallback_units", "fallback_rows_bound"):
                    cell.pop(name, None)
        log.append(record)


def test_a_record_from_before_the_fallback_replays_with_none(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Its query names no fallback and its parameters state none: replay re-runs it with none (``fallback=0``),
    which is what it drew (made here by releases with ``--fallback 0``, then stripped of the fallback)."""
    assert release(work, "--column", "v", "--stat", "median", "--bounds", "0,10", "--fallback", "0") == 0
    assert release(work, "--group-by", "g", "--keys", "a,b", "--median", "v:0,10", "--fallback", "0") == 0
    _as_before_the_fallback(work)
    assert all('"fallback' not in json.dumps(r) for r in records(work))  # no field; the law's words remain
    out = replayed(work, capsys)
    assert "all 2 releases reproduced exactly" in out, out


def test_replay_reads_the_fallback_from_the_record_not_the_default(work: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A release at a fallback other than the default, whose query names none (as the Python API records a
    table), replays at the recorded one; with the parameters altered to another, it is not reproduced."""
    assert release(work, "--column", "v", "--stat", "median", "--bounds", "0,10", "--fallback", "1/10") == 0
    entries = [json.loads(line) for line in (work / "a.jsonl").read_text(encoding="utf-8").splitlines()]
    (work / "a.jsonl").unlink()
    log = AuditLog(work / "a.jsonl")
    record = entries[0]["record"]
    record["query"].pop("fallback")
    log.append(record)
    assert "reproduced exactly" in replayed(work, capsys)
    altered = json.loads(json.dumps(record))
    altered["parameters"]["v_median"]["fallback"] = "1/2"  # what replay reads when the query names none
    (work / "a.jsonl").unlink()
    AuditLog(work / "a.jsonl").append(altered)
    capsys.readouterr()
    status = main(["audit", "replay", str(work / "a.jsonl"), "--seed-file", str(work / "seed"),
                   "--data", str(work / "data.csv")])
    out = capsys.readouterr().out
    assert status != 0 and "reproduced exactly" not in out, out
