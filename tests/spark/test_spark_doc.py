"""docs/spark.md runs as written, on the test run's local Spark session.

The page's Python blocks run in order in one namespace: the local-session example (its
``getOrCreate`` returns this run's session, so no second JVM starts) must print the table the page
shows, the pandas block must find the identical release, and the ``spark-submit`` script
``release_table.py`` runs as a submitted application would, with its three arguments, on a Parquet
copy of the example data. The shell and ``spark-submit`` lines themselves are not run here (the
command line on Spark is ``tests/spark/test_spark_cli.py``'s subject).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from pathlib import Path

import pandas as pd

from securedp.audit import verify_log
from securedp.cli.example_data import PATH as EXAMPLE

PAGE = Path(__file__).resolve().parents[2] / "docs" / "spark.md"
FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def fenced(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of ``text`` in order, as ``(language, body)``."""
    return FENCE.findall(text)


def run(body: str, namespace: dict[str, object], name: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(body, name, "exec"), namespace)  # the docs are ours
    return out.getvalue()


def test_the_spark_page_runs_as_written(spark, tmp_path, monkeypatch):
    found = fenced(PAGE.read_text(encoding="utf-8"))
    python = [i for i, (language, _) in enumerate(found) if language == "python"]
    assert len(python) == 3
    local, same, script = (found[i][1] for i in python)

    namespace: dict[str, object] = {"__name__": "__docs__"}
    printed = run(local, namespace, "spark.md[local]")
    shown = found[python[0] + 1]
    assert shown[0] == "text" and printed.strip() == shown[1].strip()
    assert namespace["spark"] is spark  # the page's session is this run's session
    run(same, namespace, "spark.md[pandas]")

    parquet, output, log = tmp_path / "visits.parquet", tmp_path / "released", tmp_path / "audit.jsonl"
    pd.read_csv(EXAMPLE).to_parquet(parquet)
    monkeypatch.setattr(sys, "argv", ["release_table.py", str(parquet), str(output), str(log)])
    summary = json.loads(run(script, {"__name__": "__main__"}, "release_table.py"))
    assert summary == {"spent": "1", "rows": 4}
    released = pd.read_parquet(output)
    assert sorted(released["region"]) == ["east", "north", "south", "west"]
    assert list(released.columns) == ["region", "count", "count_low", "count_high", "hours_mean", "hours_mean_low",
                                      "hours_mean_high"]
    report = verify_log(log)
    assert report.problem is None and report.valid == 1
