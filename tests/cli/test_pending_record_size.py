"""A release's pending record fits its budget file whatever public keys its query names (issue 40, second reader).

While a release is in flight its budget file holds the record to append if it dies, and a table's query names
every public key. With a budget file of at most 64 KiB, a table of 6,000 public keys was refused ("too long to be
kept with its charge") although it ran before the pending record existed. The file's bound is now 64 MiB
(``securedp.hazmat.exact.bounds.BUDGET_FILE_BYTES``): the release runs, its record reaches the log, the log
verifies against the budget file, and the file holds no pending record afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from securedp.cli.main import main


def test_a_table_of_6000_public_keys_is_released_with_its_budget_file_and_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, keys = tmp_path / "big.csv", tmp_path / "keys.txt"
    data.write_text("pid,g\n" + "".join(f"{i},k{i % 6000:05d}\n" for i in range(12000)), encoding="utf-8")
    keys.write_text("g\n" + "".join(f"k{i:05d}\n" for i in range(6000)), encoding="utf-8")
    budget, log = tmp_path / "b.json", tmp_path / "a.log"
    status = main(["release", str(data), "--group-by", "g", "--count", "--keys-file", str(keys), "--max-groups", "1",
                   "--max-rows", "1", "--id-column", "pid", "--epsilon", "1", "--budget-file", str(budget),
                   "--budget", "10", "--audit-log", str(log), "--output", str(tmp_path / "out.csv")])
    err = capsys.readouterr().err
    assert status == 0, err
    stored = json.loads(budget.read_text(encoding="utf-8"))
    assert stored["spent"] == "1" and "pending" not in stored
    assert len(log.read_text(encoding="utf-8").splitlines()) == 1
    assert main(["audit", "verify", str(log), "--budget-file", str(budget)]) == 0
