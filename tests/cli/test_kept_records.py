"""A record kept beside the log (``LOG.unappended``) is accounted for (issue 40, part B).

When an append still fails after its retries, the command keeps the record in ``LOG.unappended``. The next
release appends it first (while the ledger still takes it: its ``spent`` is the last one plus its charge), so
the log's ledger never skips a charge; ``securedp audit verify`` reports a kept record that is not in the log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _ledger_cli import ledger_work

from securedp.audit.log import AuditLog
from securedp.audit.verify import verify_log
from securedp.cli.main import main

COLUMN = ["--column", "v", "--stat", "sum", "--bounds", "0,10", "--epsilon", "1"]
LEDGER = ["--budget-file", "b.json", "--budget", "10", "--audit-log", "log.jsonl", "--seed-file", "seed"]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return ledger_work(tmp_path, monkeypatch)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out + err


def logged() -> list[dict[str, Any]]:
    return [json.loads(line)["record"] for line in Path("log.jsonl").read_text(encoding="utf-8").splitlines()]


def kept_after_a_failed_append(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    assert run(capsys, "release", "d.csv", *COLUMN, *LEDGER)[0] == 0
    with monkeypatch.context() as patch:
        def broken(*_args: Any, **_kwargs: Any) -> Any:
            raise OSError(28, "injected: no space left on device")

        patch.setattr(AuditLog, "append", broken)
        status, said = run(capsys, "release", "d.csv", *COLUMN, *LEDGER)
    assert status == 1 and "log.jsonl.unappended" in said
    kept = [json.loads(line) for line in Path("log.jsonl.unappended").read_text(encoding="utf-8").splitlines()]
    assert len(kept) == 1
    return kept[0]


def test_verify_reports_a_kept_record_that_is_not_in_the_log(
        work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    kept_after_a_failed_append(capsys, monkeypatch)
    report = verify_log("log.jsonl")
    assert report.ok and len(report.kept) == 1  # the log is sound, but a charge's record is beside it
    status, said = run(capsys, "audit", "verify", "log.jsonl")
    assert status == 1 and "log.jsonl.unappended" in said and "not in the log" in said


def test_the_next_release_appends_the_kept_record_first(
        work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    kept = kept_after_a_failed_append(capsys, monkeypatch)
    status, said = run(capsys, "release", "d.csv", *COLUMN, *LEDGER)
    assert status == 0, said
    records = logged()
    assert [r["spent"] for r in records] == [1, 2, 3] and records[1] == kept  # the kept record itself, value and all
    assert verify_log("log.jsonl").ok and not verify_log("log.jsonl").kept
    assert run(capsys, "audit", "verify", "log.jsonl", "--budget-file", "b.json")[0] == 0


def test_a_record_kept_by_an_older_version_is_appended_too(
        work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    kept = kept_after_a_failed_append(capsys, monkeypatch)
    budget = json.loads(Path("b.json").read_text(encoding="utf-8"))
    budget.pop("pending", None)  # an older version kept the record but not its charge's pending record
    Path("b.json").write_text(json.dumps(budget, indent=1) + "\n", encoding="utf-8")
    assert run(capsys, "release", "d.csv", *COLUMN, *LEDGER)[0] == 0
    assert logged()[1] == kept and verify_log("log.jsonl").ok


def test_a_kept_record_the_ledger_no_longer_takes_is_left_and_reported(
        work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    kept = kept_after_a_failed_append(capsys, monkeypatch)
    stale = dict(kept, spent=kept["spent"] + 5, remaining=kept["remaining"] - 5)  # not the ledger's next
    Path("log.jsonl.unappended").write_text(json.dumps(stale) + "\n", encoding="utf-8")
    status, said = run(capsys, "release", "d.csv", *COLUMN, *LEDGER)
    assert status == 0, said
    assert "log.jsonl.unappended" in said  # said, not appended
    assert stale not in logged() and len(verify_log("log.jsonl").kept) == 1


def test_the_review_report_says_a_kept_record_is_not_in_the_log(
        work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from securedp.audit.report_model import build_report

    kept_after_a_failed_append(capsys, monkeypatch)
    report = build_report("log.jsonl")
    assert not report.ok and "1 record kept beside the log (log.jsonl.unappended" in report.headline
    assert run(capsys, "release", "d.csv", *COLUMN, *LEDGER)[0] == 0
    assert build_report("log.jsonl").ok
