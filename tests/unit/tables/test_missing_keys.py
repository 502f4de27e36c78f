"""Issue 19.5: rows whose group key is missing can be dropped (missing_keys="drop", --missing-keys drop)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import polars as pl
import pytest

import securedp
from securedp import ChaChaSource
from securedp.cli.main import main

FRAME = pd.DataFrame({"p": [1, 2, 3, 4], "g": ["a", None, "b", " "], "x": [1, 2, 3, 4]})


def test_missing_keys_are_refused_by_default_and_dropped_on_request() -> None:
    with pytest.raises(ValueError, match="column 'g', row 1: blank group key"):
        securedp.prepare_table(FRAME, group_by=["g"], keys=["a", "b"], id_column="p", epsilon=1)
    for data in (FRAME, pl.from_pandas(FRAME)):
        release = securedp.table(data, group_by=["g"], keys=["a", "b"], id_column="p", epsilon=10**9,
                                 missing_keys="drop", rng=ChaChaSource(bytes(32)))
        assert [row[:2] for row in release.value] == [("a", 1), ("b", 1)]
    with pytest.raises(ValueError, match="missing_keys"):
        securedp.prepare_table(FRAME, group_by=["g"], keys=["a"], epsilon=1, missing_keys="ignore")


def test_a_missing_id_is_still_refused() -> None:
    frame = FRAME.assign(p=[1, None, 3, 4], g=["a", "a", "b", "b"])
    with pytest.raises(ValueError, match="column 'p', row 1: blank id"):
        securedp.prepare_table(frame, group_by=["g"], keys=["a"], id_column="p", epsilon=1, missing_keys="drop")


def test_the_cli_drops_rows_without_a_key_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "d.csv").write_text("p,g\n1,a\n2,\n3,b\n", encoding="utf-8")
    argv = ["release", str(tmp_path / "d.csv"), "--group-by", "g", "--count", "--keys", "a,b", "--id-column", "p",
            "--epsilon", "1"]
    assert main(argv) == 1
    assert "column 'g', line 3: blank group key" in capsys.readouterr().err
    assert main([*argv, "--missing-keys", "drop"]) == 0
    assert main(["release", str(tmp_path / "d.csv"), "--column", "p", "--stat", "count", "--epsilon", "1",
                 "--missing-keys", "drop"]) == 1  # a table option: refused in the one-column mode
