"""``securedp release ... --engine spark``: the command runs the table on the active Spark session.

The strongest check there is: the audit record of a table computed on Spark is replayed by
``securedp audit replay``, which re-runs it in memory (Polars) from the seed, and must reproduce it
exactly, input commitment included.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl

from securedp.cli.main import main


def test_a_spark_release_replays_exactly_in_memory(spark, tmp_path, capsys):
    rng = np.random.default_rng(12)  # test data only
    n = 800
    pl.DataFrame({
        "person": rng.integers(0, 150, n), "region": rng.choice(["north", "south"], n),
        "income": np.round(rng.uniform(0, 1000, n), 2),
    }).write_parquet(tmp_path / "t.parquet")
    (tmp_path / "seed").write_text("33" * 32)
    log = tmp_path / "log.jsonl"
    argv = ["release", str(tmp_path / "t.parquet"), "--group-by", "region", "--keys", "north,south,west",
            "--count", "--sum", "income:0,1000:0.01", "--median", "income:0,1000", "--id-column", "person",
            "--max-groups", "2", "--max-rows", "2", "--epsilon", "1", "--seed-file", str(tmp_path / "seed"),
            "--audit-log", str(log), "--engine", "spark", "--json"]
    capsys.readouterr()
    assert main(argv) == 0, capsys.readouterr().err
    record = json.loads(capsys.readouterr().out)
    assert [row[0] for row in record["value"]] == ["north", "south", "west"]
    assert main(["audit", "replay", str(log), "--seed-file", str(tmp_path / "seed"),
                 "--data", str(tmp_path / "t.parquet")]) == 0
    assert "reproduced exactly, input commitment matches the data" in capsys.readouterr().out
