"""A release killed at any instant never leaves a charge without its record (issue 40, part B).

Each test runs one release of the command in a child process and kills it (``os._exit``, as ``kill -9``
would: no ``finally``, no flush) at one named step of the transaction, then checks what is left: the budget
file (charged or not, never half), ``securedp audit verify`` on the log (with the budget file: a charge whose
record is not in the log yet is reported, never passed over), and that the next release succeeds and leaves
a log whose ledger adds up to exactly what the budget file says was spent.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from _ledger_cli import ledger_work

from securedp.audit.verify import verify_log
from securedp.cli.main import main

COLUMN = ["--column", "v", "--stat", "sum", "--bounds", "0,10"]
TABLE = ["--group-by", "g", "--keys", "a,b", "--count", "--sum", "v:0,10", "--id-column", "id"]
LEDGER = ["--budget-file", "b.json", "--budget", "10", "--audit-log", "log.jsonl", "--seed-file", "seed"]

KILLER = textwrap.dedent('''
    import os, sys
    import securedp.session.session as session
    import securedp.audit.log as log
    from securedp.ledger.budget_file import BudgetFile
    from securedp.audit.log import AuditLog
    from securedp.cli.main import main

    step, argv = sys.argv[1], sys.argv[2:]
    writes = []

    def die():
        os._exit(137)

    write = BudgetFile._write
    def budget_write(self, state):
        writes.append(1)
        if step == "before the charge" and len(writes) == 1:
            die()
        write(self, state)
        if (step, len(writes)) in (("after the charge", 1), ("after the last budget write", 2)):
            die()
    BudgetFile._write = budget_write

    boundary = session.data_boundary
    def drawn(*args, **kwargs):
        result = boundary(*args, **kwargs)
        if step == "after the draw" and kwargs.get("reading"):
            die()
        return result
    session.data_boundary = drawn

    append = AuditLog.append
    def appended(self, record):
        if step == "before the append":
            die()
        entry = append(self, record)
        if step == "after the append":
            die()
        return entry
    AuditLog.append = appended

    real_write = os.write
    class Os:
        def __getattr__(self, name):
            return getattr(os, name)
        @staticmethod
        def write(fd, data):
            if step == "mid-append":
                real_write(fd, data[: len(data) // 2])
                os.fsync(fd)
                die()
            return real_write(fd, data)
    log.os = Os()
    sys.exit(main(argv))
''')

STEPS = ["before the charge", "after the charge", "after the draw", "before the append", "mid-append",
         "after the append", "after the last budget write"]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = ledger_work(tmp_path, monkeypatch)
    (work / "killer.py").write_text(KILLER, encoding="utf-8")
    return work


def release(capsys: pytest.CaptureFixture[str], *extra: str, shape: list[str] = COLUMN) -> tuple[int, str]:
    capsys.readouterr()
    status = main(["release", "d.csv", *shape, "--epsilon", "1", *LEDGER, *extra])
    return status, capsys.readouterr().err


def killed(step: str, shape: list[str] = COLUMN) -> subprocess.CompletedProcess[str]:
    argv = ["release", "d.csv", *shape, "--epsilon", "1", *LEDGER]
    return subprocess.run([sys.executable, "killer.py", step, *argv], capture_output=True, text=True, timeout=120)


def spent() -> Fraction:
    return Fraction(json.loads(Path("b.json").read_text(encoding="utf-8"))["spent"])


def records() -> list[dict[str, Any]]:
    return [json.loads(line)["record"] for line in Path("log.jsonl").read_text(encoding="utf-8").splitlines()
            if line.endswith("}")]


def accounted() -> None:
    """The log verifies and its ledger ends at exactly what the budget file has spent, each charge once."""
    report = verify_log("log.jsonl")
    assert report.ok, report.problem
    logged = records()
    assert Fraction(str(logged[-1]["spent"])) == spent()
    assert len(logged) == spent()  # every release costs 1: one record per charge, no more, no fewer


@pytest.mark.parametrize("shape", [COLUMN, TABLE], ids=["column", "table"])
@pytest.mark.parametrize("step", STEPS)
def test_a_kill_at_any_step_leaves_every_charge_with_its_record(
        step: str, shape: list[str], work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert release(capsys, shape=shape)[0] == 0
    child = killed(step, shape)
    assert child.returncode == 137, child.stderr
    assert spent() in (1, 2)  # charged or not, never half
    charged = spent() == 2
    assert charged == (step != "before the charge")
    # verify with the budget file: a charge whose record is not in the log yet is reported, never passed over
    capsys.readouterr()
    status = main(["audit", "verify", "log.jsonl", "--budget-file", "b.json"])
    out, err = capsys.readouterr()
    complete = len(records()) == spent() and verify_log("log.jsonl").ok
    assert status == (0 if complete else 1), (step, out, err)
    if not complete:
        assert "not in the log" in out + err or "incomplete" in out + err, (out, err)
    status, err = release(capsys, shape=shape)
    assert status == 0, (step, err)
    accounted()
    if step in ("after the charge", "after the draw", "before the append", "mid-append"):
        lost = records()[-2]
        assert lost["kind"] == "unreleased" and lost["error"] == "OutcomeLost" and lost["charged"] == 1


def test_a_kill_during_the_recovery_is_recovered_in_turn(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert release(capsys)[0] == 0
    assert killed("after the draw").returncode == 137
    assert killed("before the append").returncode == 137  # the recovery's own append is killed
    assert killed("mid-append").returncode == 137
    assert release(capsys)[0] == 0
    accounted()


def test_a_python_session_over_a_budget_file_recovers_too(work: Path) -> None:
    script = textwrap.dedent('''
        import os, sys
        import securedp
        from securedp.ledger.budget import Budget
        from securedp.ledger.budget_file import BudgetFile
        from securedp.audit.log import AuditLog
        import securedp.session.session as session
        die = sys.argv[1] == "die"
        boundary = session.data_boundary
        def drawn(*args, **kwargs):
            result = boundary(*args, **kwargs)
            if die and kwargs.get("reading"):
                os._exit(137)
            return result
        session.data_boundary = drawn
        budget = Budget("epsilon", store=BudgetFile("b.json", 10))
        s = securedp.Session(budget=budget, audit=AuditLog("log.jsonl"))
        s.count([1, 2, 3], epsilon=1)
    ''')
    Path("py.py").write_text(script, encoding="utf-8")
    for how in ("live", "die", "live"):
        child = subprocess.run([sys.executable, "py.py", how], capture_output=True, text=True, timeout=120)
        assert child.returncode == (137 if how == "die" else 0), child.stderr
    report = verify_log("log.jsonl")
    assert report.ok, report.problem
    assert [r.get("error") for r in records()] == [None, "OutcomeLost", None]
    assert Fraction(str(records()[-1]["spent"])) == spent() == 3


def test_a_pending_record_refuses_a_release_without_an_audit_log(work: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert release(capsys)[0] == 0
    assert killed("after the draw").returncode == 137
    before = Path("b.json").read_bytes()
    capsys.readouterr()
    status = main(["release", "d.csv", *COLUMN, "--epsilon", "1", "--budget-file", "b.json"])
    err = capsys.readouterr().err
    assert status == 1 and "holds the record of a charge" in err and err.count("\n") == 1
    assert Path("b.json").read_bytes() == before
    capsys.readouterr()
    assert main(["budget", "b.json"]) == 0 and "pending" in capsys.readouterr().out


@pytest.mark.slow
def test_kill_9_at_random_moments_never_leaves_a_charge_without_its_record(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os
    import random
    import signal
    import time

    assert release(capsys)[0] == 0
    chooser = random.Random(40)  # a fixed seed: the same moments on every run
    argv = [sys.executable, "-m", "securedp", "release", "d.csv", *COLUMN, "--epsilon", "1/100", *LEDGER]
    for _ in range(12):  # each release recovers what the kill before it left
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(chooser.uniform(0.3, 2.0))
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=120)
    status, err = release(capsys)
    assert status == 0, err
    report = verify_log("log.jsonl")
    assert report.ok, report.problem
    assert Fraction(str(records()[-1]["spent"])) == spent()
