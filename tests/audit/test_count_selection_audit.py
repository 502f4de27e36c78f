"""Issue 26, item 4: a private-key table selected by its released count, through the audit log.

The command writes the release (``epsilon`` and ``rho``, a count of persons and a count of rows); the
log verifies, replay reproduces every release exactly from the seed and the data, the records state the
rule, the count thresholded, ``tau``, ``delta`` and ``delta / k``, and the reviewer's report explains
each of them in words.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

from securedp.audit.report import render_report
from securedp.audit.report_model import build_report
from securedp.audit.report_words import UNDESCRIBED
from securedp.hazmat.exact.rational import format_rational
from securedp.mechanisms.gaussian_threshold import gaussian_threshold
from securedp.mechanisms.partition_selection import laplace_threshold

SEED = bytes(range(32))


def test_the_count_rule_is_recorded_verified_replayed_and_explained(tmp_path: Path, command,
                                                                     replayable_labels: None) -> None:
    data = tmp_path / "data.csv"
    rows = [f"{i % 700},{['n', 's', 'e'][i % 3] if i % 500 else 'rare'},{i % 50}" for i in range(4000)]
    data.write_text("person,g,a\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "seed.bin").write_bytes(SEED)
    log = tmp_path / "log.jsonl"
    common = ["--seed-file", str(tmp_path / "seed.bin"), "--audit-log", str(log), "--group-by", "g",
              "--id-column", "person", "--max-groups", "2", "--delta", "1e-6"]
    runs = [["--persons", "--count", "--epsilon", "1"], ["--count", "--max-rows", "3", "--rho", "1/2"],
            ["--count", "--mean", "a:0,50", "--epsilon", "1", "--selection", "laplace"]]
    for argv in runs:
        status, _, err = command(["release", str(data), *argv, *common])
        assert status == 0, err
    records = [json.loads(line)["record"] for line in log.read_text().splitlines()]
    first, second, third = (r["parameters"] for r in records)
    assert (first["selection"], first["selection_count"], first["threshold"], first["delta_per_key"]) == \
        ("count", "persons", laplace_threshold(Fraction(1, 2), "1e-6", 2).threshold,
         format_rational(laplace_threshold(Fraction(1, 2), "1e-6", 2).delta_per_key))  # the delta it proves
    assert (second["selection"], second["selection_count"], second["threshold"]) == \
        ("count", "count", gaussian_threshold("1/2", "1e-6", 2, 3).threshold)
    assert "rho-zCDP" in second["guarantee"]
    assert third["selection"] == "laplace" and "selection_count" not in third
    for record in records:
        assert record["value"] and all(row[0] != "rare" for row in record["value"])
    status, out, err = command(["audit", "verify", str(log)])
    assert status == 0, err
    status, out, err = command(["audit", "replay", str(log), "--seed-file", str(tmp_path / "seed.bin"),
                                "--data", str(data)])
    assert status == 0, err
    assert out.count(": table: reproduced exactly") == 3
    page = render_report(build_report(log))
    for name in ("selection_count", "delta_per_key", "threshold", "selection"):
        explained = re.findall(rf'<tr><th scope="row">{name}</th><td class="num">.*?</td><td>(.*?)</td></tr>', page,
                               re.S)
        assert explained and all(e.strip() and UNDESCRIBED not in e for e in explained), name
