"""``--memory-budget`` (issue 44): a file that does not fit is read in parts, with the same seeded release and log
record, and the log replays; a budget that is no size is the command's one-line error, spending nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import securedp.cli.pipeline
import securedp.engines.polars.pieces as pieces
import securedp.ledger.release
from securedp.cli.main import main
from tests.cli._seeded_cli import SEED, records, replayed

ARGS = ["--group-by", "g", "--id-column", "p", "--count", "--sum", "v:0,100", "--keys", "a,b,c", "--max-groups", "2",
        "--max-rows", "2"]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    rng = np.random.default_rng(9)  # test data only
    rows = [f"{p},{g},{v}" for p, g, v in zip(rng.integers(0, 400, 3000), rng.choice(["a", "b", "c", " "], 3000),
                                               rng.integers(-5, 120, 3000), strict=True)]
    (tmp_path / "data.csv").write_text("p,g,v\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "seed").write_bytes(SEED)
    fixed = type("Fixed", (), {"urandom": staticmethod(bytes)})  # the command's fresh stream label and nonce, fixed
    monkeypatch.setattr(securedp.ledger.release, "os", fixed)
    monkeypatch.setattr(securedp.cli.pipeline, "os", fixed)
    return tmp_path


def _release(work: Path, *extra: str) -> tuple[int, str, list[dict[str, object]]]:
    log = work / "a.jsonl"
    log.unlink(missing_ok=True)
    (work / "seed").write_bytes(SEED)  # the command moves a seed file's stream on: each release from the start
    status = main(["release", str(work / "data.csv"), "--epsilon", "1", "--seed-file", str(work / "seed"),
                   "--audit-log", str(log), "--json", "--missing-keys", "drop", *ARGS, *extra])
    return status, "", records(work) if log.exists() else []


def test_a_small_budget_gives_the_same_release_and_record(work: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    original = pieces.PiecesEngine.__init__

    def spy(self: object, *args: object) -> None:
        built.append(int(args[-1]))  # type: ignore[call-overload]
        original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(pieces.PiecesEngine, "__init__", spy)
    status, _, whole = _release(work)
    out_whole = capsys.readouterr().out
    assert status == 0 and not built
    status, _, parted = _release(work, "--memory-budget", "4KiB")
    assert status == 0 and built and built[0] > 1
    assert capsys.readouterr().out == out_whole
    assert json.dumps(parted, sort_keys=True) == json.dumps(whole, sort_keys=True)
    assert "memory_budget" not in json.dumps(parted)
    assert "reproduced exactly" in replayed(work, capsys)


@pytest.mark.parametrize("budget", ["lots", "0", "-1GiB", "4 parsecs"])
def test_a_budget_that_is_no_size_is_refused(work: Path, capsys: pytest.CaptureFixture[str], budget: str) -> None:
    status, _, logged = _release(work, f"--memory-budget={budget}")
    err = capsys.readouterr().err
    assert status != 0 and "--memory-budget" in err and len(err.strip().splitlines()) == 1
    assert logged == []


def test_the_budget_is_an_option_of_tables_only(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["release", str(work / "data.csv"), "--epsilon", "1", "--stat", "sum", "--column", "v",
                   "--bounds", "0,100", "--memory-budget", "1GiB"])
    assert status != 0 and "--memory-budget" in capsys.readouterr().err
