"""``--trim``: a trimmed mean's level on the command line, recorded and replayed; refused where it means nothing."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from _seeded_cli import SEED, records, release, replayed


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "seed").write_bytes(SEED)
    (tmp_path / "data.csv").write_text("v\n" + "".join(f"{i}\n" for i in range(1, 41)), encoding="utf-8")
    return tmp_path


def test_one_column_trim_is_used_recorded_and_replayed(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert release(work, "--column", "v", "--stat", "trimmed_mean", "--bounds", "0,40", "--step", "1",
                   "--trim", "1/4") == 0
    record = records(work)[-1]
    assert record["query"]["trim"] == "1/4"
    assert Fraction(record["parameters"]["v_trimmed_mean"]["trim"]) == Fraction(1, 4)
    assert "reproduced exactly" in replayed(work, capsys)


def test_the_default_trim_is_not_recorded_as_given(work: Path) -> None:
    assert release(work, "--column", "v", "--stat", "trimmed_mean", "--bounds", "0,40") == 0
    record = records(work)[-1]
    assert "trim" not in record["query"]
    assert Fraction(record["parameters"]["v_trimmed_mean"]["trim"]) == Fraction(1, 10)


@pytest.mark.parametrize("option", ["--trimmed-mean", "--trimmed_mean"])
def test_table_trim_applies_to_every_trimmed_mean(work: Path, capsys: pytest.CaptureFixture[str],
                                                  option: str) -> None:
    assert release(work, option, "v:0,40:1", "--sum", "v:0,40", "--trim", "0.2") == 0
    record = records(work)[-1]
    kinds = {a["kind"]: a for a in record["query"]["aggregations"]}
    assert Fraction(kinds["trimmed_mean"]["trim"]) == Fraction(1, 5) and "trim" not in kinds["sum"]
    assert "reproduced exactly" in replayed(work, capsys)


@pytest.mark.parametrize("args, words", [
    (("--column", "v", "--stat", "mean", "--bounds", "0,40", "--trim", "0.2"), "trimmed_mean statistic only"),
    (("--sum", "v:0,40", "--trim", "0.2"), "--trimmed-mean"),
    (("--column", "v", "--stat", "trimmed_mean", "--bounds", "0,40", "--trim", "1/2"), "0 < trim < 1/2"),
    (("--column", "v", "--stat", "trimmed_mean", "--bounds", "0,40", "--trim", "abc"), "--trim"),
])
def test_trim_where_it_means_nothing_is_refused_and_charges_nothing(work: Path, capsys: pytest.CaptureFixture[str],
                                                                     args: tuple[str, ...], words: str) -> None:
    assert release(work, *args) != 0
    assert words in capsys.readouterr().err
    assert not (work / "a.jsonl").exists()
