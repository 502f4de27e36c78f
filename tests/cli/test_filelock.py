"""``import securedp`` works without ``fcntl``, and the budget file and audit log lock through the platform's lock.

Each case runs in a fresh interpreter where ``sys.modules["fcntl"] = None``
(importing it raises ImportError, as on Windows). With a stand-in ``msvcrt``
that records its calls, the Windows path is exercised end to end: a command
release charged to a budget file and appended to an audit log must take and
release a one-byte ``msvcrt.locking`` lock far beyond the end of the file.
Without either module, importing still works and a charge fails with a
clear error before anything is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import securedp
from securedp.cli.example_data import PATH as EXAMPLE

REPO = Path(securedp.__file__).resolve().parent.parent

FAKE_MSVCRT = """
import sys, types
import subprocess  # before the fake: subprocess (which the CSV reader loads) takes any msvcrt for Windows
calls = []
msvcrt = types.ModuleType("msvcrt")
msvcrt.LK_LOCK, msvcrt.LK_UNLCK, msvcrt.LK_NBLCK = 1, 0, 2
held = {}  # inode -> the descriptor holding its lock
import os
def locking(fd, mode, nbytes):
    position = os.lseek(fd, 0, os.SEEK_CUR)
    calls.append((mode, position, nbytes))
    key = os.fstat(fd).st_ino
    if mode == msvcrt.LK_LOCK:
        if key in held:
            raise RuntimeError("a second lock on a locked file: the first was never released")
        held[key] = fd
    elif mode == msvcrt.LK_UNLCK:
        if held.get(key) != fd:
            raise OSError(13, "not locked")
        del held[key]
msvcrt.locking = locking
_close = os.close
def close(fd):  # as on Windows, closing a descriptor releases its locks
    for key in [k for k, v in held.items() if v == fd]:
        del held[key]
    _close(fd)
os.close = close
sys.modules["msvcrt"] = msvcrt
"""


def run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60)


def test_import_securedp_without_fcntl(tmp_path: Path) -> None:
    result = run("""
        import sys
        sys.modules["fcntl"] = None
        import securedp
        from securedp.hazmat.bits import filelock
        print(filelock.KIND, securedp.count([1, 2, 3], epsilon=1).statistic)
    """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["none", "count"]


def test_without_fcntl_the_windows_lock_guards_the_budget_file_and_the_audit_log(tmp_path: Path) -> None:
    result = run(textwrap.dedent("""
        import sys, json
        sys.modules["fcntl"] = None
    """) + FAKE_MSVCRT + textwrap.dedent(f"""
        from securedp.hazmat.bits import filelock
        assert filelock.KIND == "msvcrt", filelock.KIND
        from securedp.cli.main import main
        argv = ["release", {str(EXAMPLE)!r}, "--column", "age", "--stat", "count", "--epsilon", "1/4",
                "--id-column", "person_id", "--budget-file", "b.json", "--audit-log", "a.jsonl"]
        assert main(argv + ["--budget", "1"]) == 0
        assert main(argv) == 0
        print(json.dumps(calls))
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    calls = json.loads(result.stdout.strip().splitlines()[-1])
    offset = (1 << 40) + (1 << 31) - 16
    assert calls and all(position == offset and nbytes == 1 for _, position, nbytes in calls)
    modes = [mode for mode, _, _ in calls]
    assert modes.count(1) == 6  # a lock per budget charge, per audit append, per check (before the draw) that
    #                             the existing log can take a record, and on the budget file while it is compared
    #                             with the log's last record of its ledger (the second release: there is a log)
    assert modes.count(0) >= 2  # the budget's locks are released explicitly
    assert json.loads((tmp_path / "b.json").read_text())["spent"] == "1/2"
    assert len((tmp_path / "a.jsonl").read_text().splitlines()) == 2


def test_a_busy_windows_lock_is_retried_until_granted(tmp_path: Path) -> None:
    result = run(textwrap.dedent("""
        import sys, os, errno
        sys.modules["fcntl"] = None
    """) + FAKE_MSVCRT + textwrap.dedent("""
        from securedp.hazmat.bits import filelock
        attempts = []
        real = msvcrt.locking
        def flaky(fd, mode, nbytes):
            if mode == msvcrt.LK_LOCK and len(attempts) < 3:
                attempts.append(mode)
                raise OSError(errno.EDEADLK, "LK_LOCK gave up after ten attempts")
            return real(fd, mode, nbytes)
        msvcrt.locking = flaky
        fd = os.open("f", os.O_RDWR | os.O_CREAT)
        os.write(fd, b"data")
        with filelock.locked(fd):
            assert os.lseek(fd, 0, os.SEEK_CUR) == 4  # the position is restored
        def broken(fd, mode, nbytes):
            raise OSError(errno.EBADF, "bad descriptor")
        msvcrt.locking = broken
        try:
            filelock.lock_file(fd)
        except OSError as error:  # any other error is raised, not retried for ever
            assert error.errno == errno.EBADF
        else:
            raise AssertionError("no error")
        print(len(attempts), [m for m, _, _ in calls])
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split(maxsplit=1) == ["3", "[1, 0]\n"]


def test_with_no_lock_at_all_a_charge_fails_clearly_and_writes_nothing(tmp_path: Path) -> None:
    result = run(f"""
        import sys
        sys.modules["fcntl"] = None
        sys.modules["msvcrt"] = None
        from securedp.cli.main import main
        sys.exit(main(["release", {str(EXAMPLE)!r}, "--column", "age", "--stat", "count", "--epsilon", "1/4",
                       "--budget-file", "b.json", "--budget", "1"]))
    """, tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "securedp: error: this platform has neither fcntl nor msvcrt: securedp cannot lock the budget or audit file"
    )
    assert not (tmp_path / "b.json").exists()


def test_posix_lock_excludes_another_process(tmp_path: Path) -> None:
    if os.name == "nt":
        return
    from securedp.hazmat.bits import filelock

    assert filelock.KIND == "fcntl"
    path = tmp_path / "f.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        with filelock.locked(fd):
            probe = run(f"""
                import fcntl, os
                fd = os.open({str(path)!r}, os.O_RDWR)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    print("acquired")
                except BlockingIOError:
                    print("busy")
            """, tmp_path)
            assert probe.stdout.strip() == "busy"
        probe = run(f"""
            import fcntl, os
            fd = os.open({str(path)!r}, os.O_RDWR)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            print("acquired")
        """, tmp_path)
        assert probe.stdout.strip() == "acquired"  # released at the end of the block, before close
    finally:
        os.close(fd)
