"""A release of the command is a transaction (issue 25, item 5, and its fault injection).

* **Before the first random bit**: an audit log that cannot take a record (its path a folder, its folder
  missing, its last line torn) and an ``--output`` that cannot be written refuse the release, naming what
  failed; the data is not read, nothing is drawn, the budget file is not changed.
* **After the draw**, every write is made to fail once (the audit append, the budget file's write, the
  ``--output`` file, standard output): whichever fails, a charge in the budget file always has its record
  (in the log, or kept beside it in ``LOG.unappended``), the released value reaches the user (standard
  output, or standard error when standard output fails), and ``securedp audit verify`` passes on the log.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from _ledger_cli import ledger_work

from securedp.audit.log import AuditLog
from securedp.audit.verify import verify_log
from securedp.cli.main import main
from securedp.cli.show import exact_text
from securedp.ledger.budget_file import BudgetFile
from securedp.session.session import Session

TABLE = ["--group-by", "g", "--keys", "a,b", "--count", "--sum", "v:0,10", "--id-column", "id"]
COLUMN = ["--column", "v", "--stat", "sum", "--bounds", "0,10"]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return ledger_work(tmp_path, monkeypatch)


class Spy:
    """Counts the data reads (the CSV reader) and the releases drawn (``Session.release``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import securedp.reading.files as files

        self.reads = self.draws = 0
        read, release = files.read_csv_bytes, Session.release

        def counted_read(*args: Any, **kwargs: Any) -> Any:
            self.reads += 1
            return read(*args, **kwargs)

        def counted_release(session: Session, *args: Any, **kwargs: Any) -> Any:
            self.draws += 1
            return release(session, *args, **kwargs)

        monkeypatch.setattr(files, "read_csv_bytes", counted_read)
        monkeypatch.setattr(Session, "release", counted_release)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


def ledger(capsys: pytest.CaptureFixture[str]) -> str:
    """A budget file (total 10) with one release charged already: its bytes."""
    status, _, err = run(capsys, "release", "d.csv", *TABLE, "--epsilon", "1", "--budget-file", "b.json", "--budget",
                         "10", "--audit-log", "log.jsonl", "--seed-file", "seed")
    assert status == 0, err
    return Path("b.json").read_text(encoding="utf-8")


# --- before the first random bit ---------------------------------------------------------------------------

def _folder(work: Path) -> str:
    (work / "folder.jsonl").mkdir()
    return "folder.jsonl"


def _torn(work: Path) -> str:
    log = work / "log.jsonl"
    log.write_bytes(log.read_bytes()[:-5])
    return "log.jsonl"


UNUSABLE_LOGS: dict[str, tuple[Callable[[Path], str], str]] = {
    "a folder": (_folder, "Is a directory"),
    "in a missing folder": (lambda work: "nowhere/log.jsonl", "cannot create the audit log nowhere/log.jsonl"),
    "torn": (_torn, "the last record of the audit log is incomplete (torn tail)"),
}
VERBS = {"column": ["release", "d.csv", *COLUMN], "table": ["release", "d.csv", *TABLE],
         "bounds": ["bounds", "d.csv", "--column", "v"],
         "analyze": ["analyze", "d.csv", "--id-column", "id", "--group-by", "g"]}


@pytest.mark.parametrize("verb", sorted(VERBS))
@pytest.mark.parametrize("case", sorted(UNUSABLE_LOGS))
def test_a_log_that_cannot_take_the_record_refuses_before_anything_is_read_or_drawn(
        case: str, verb: str, work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    before = ledger(capsys)
    make, message = UNUSABLE_LOGS[case]
    log = make(work)
    spy = Spy(monkeypatch)
    status, out, err = run(capsys, *VERBS[verb], "--epsilon", "1", "--budget-file", "b.json", "--audit-log", log)
    assert status == 1 and out == "" and message in err and err.count("\n") == 1, err
    assert (spy.reads, spy.draws) == (0, 0) and Path("b.json").read_text(encoding="utf-8") == before


@pytest.mark.parametrize("output", ["folder", "nowhere/t.csv", "nowhere/t.json"])
def test_an_output_that_cannot_be_written_refuses_before_anything_is_read_or_drawn(
        output: str, work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    before = ledger(capsys)
    (work / "folder").mkdir()
    spy = Spy(monkeypatch)
    status, out, err = run(capsys, "release", "d.csv", *TABLE, "--epsilon", "1", "--budget-file", "b.json",
                           "--audit-log", "log.jsonl", "--output", output)
    why = " (the folder nowhere does not exist)" if output.startswith("nowhere/") else ""
    assert status == 1 and out == "" and err == f"securedp: error: cannot write the output {output}{why}: nothing " \
                                               "was read, drawn or charged\n"
    assert (spy.reads, spy.draws) == (0, 0) and Path("b.json").read_text(encoding="utf-8") == before
    assert len(Path("log.jsonl").read_text(encoding="utf-8").splitlines()) == 1


@pytest.mark.parametrize("stat", [["count"], ["sum", "--bounds", "0,10"]], ids=["count", "sum"])
def test_a_column_not_in_the_file_is_refused_for_a_count_too(
        stat: list[str], work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A count reads no cell of its column, so a typo in ``--column`` was charged and recorded as the count of a
    column the file lacks (a fourth review); every other statistic refused it. The header decides, for both."""
    before = ledger(capsys)
    logged = Path("log.jsonl").read_bytes()
    spy = Spy(monkeypatch)
    status, out, err = run(capsys, "release", "d.csv", "--column", "vv", "--stat", *stat, "--epsilon", "1",
                           "--budget-file", "b.json", "--audit-log", "log.jsonl")
    assert (status, out) == (1, "") and "column(s) ['vv'] are not in the table (it has ['id', 'g', 'v'])" in err, err
    assert spy.draws == 0 and Path("b.json").read_text(encoding="utf-8") == before
    assert Path("log.jsonl").read_bytes() == logged


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_the_count_check_reads_the_header_in_the_files_encoding(
        encoding: str, work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The header is read in ``--encoding``: a real column named ``prénom`` of a latin-1 file was refused (a second
    reader of the fix above)."""
    (work / "e.csv").write_bytes("prénom,v\na,1\nb,2\n".encode(encoding))
    status, out, err = run(capsys, "release", "e.csv", "--column", "prénom", "--stat", "count", "--epsilon", "1",
                           "--encoding", encoding)
    assert status == 0 and "count of column 'prénom'" in out, err
    status, _, err = run(capsys, "release", "e.csv", "--column", "nom", "--stat", "count", "--epsilon", "1",
                         "--encoding", encoding)
    assert status == 1 and "column(s) ['nom'] are not in the table (it has ['prénom', 'v'])" in err, err


PRIVATE_KEYS = [a for a in TABLE if a not in ("--keys", "a,b")]
AUTO_REFUSALS = {  # a table refused for its options or its schema, or (the data holder's) a cell of its own
    "the table's cost and the bounds' exceed what remains": (["--epsilon", "9"], "budget exhausted: this release "
                                                             "needs epsilon 19/2 but only 9 of 10 remains (the auto "
                                                             "bounds, epsilon 0.5, and the table, epsilon 9, "
                                                             "together)"),
    "a private-keys table's delta, with no delta ledger": (["--epsilon", "1", "--delta", "1e-6"], "spends delta"),
    "a column not in the file": (["--epsilon", "1", "--mean", "nosuch:0,10"], "column(s) ['nosuch'] are not in"),
    "a blank cell of another column": (["--epsilon", "1", "--mean", "w:0,10"], "column 'w', line 9: blank cell"),
}


@pytest.mark.parametrize("case", sorted(AUTO_REFUSALS))
def test_a_table_refused_is_refused_before_its_auto_bounds_are_drawn(
        case: str, work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``COLUMN:auto`` is a bounds release of its own, made before the table: a table that is then refused for
    what its options, the file's columns or (in the data holder's mode) its cells say was refused after that
    release had been charged and recorded (a fourth review). It is now refused before any bound is drawn."""
    rows = "".join(f"{i},{'ab'[i % 2]},{i % 9},{'' if i == 7 else i % 5},{i * 3}\n" for i in range(30))
    (work / "d.csv").write_text("id,g,v,w,u\n" + rows, encoding="utf-8")
    before = ledger(capsys)
    logged = Path("log.jsonl").read_bytes()
    extra, message = AUTO_REFUSALS[case]
    spy = Spy(monkeypatch)
    table = PRIVATE_KEYS if "--delta" in extra else TABLE
    status, out, err = run(capsys, "release", "d.csv", *table, "--sum", "u:auto", "--auto-epsilon", "1/2", *extra,
                           "--budget-file", "b.json", "--audit-log", "log.jsonl", "--seed-file", "seed")
    assert status == 1 and out == "" and message in err, err
    assert spy.draws == 0 and Path("b.json").read_text(encoding="utf-8") == before
    assert Path("log.jsonl").read_bytes() == logged


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_budget_file_restored_from_an_older_copy_refuses_before_anything_is_read_or_drawn(
        verb: str, work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    older = ledger(capsys)  # spent 1 of 10
    argv = [*VERBS[verb], "--epsilon", "1", "--budget-file", "b.json", "--audit-log", "log.jsonl"]
    assert run(capsys, *argv)[0] == 0  # the log's last record of the ledger: spent 2
    newer = Path("b.json").read_text(encoding="utf-8")
    Path("b.json").write_text(older, encoding="utf-8")  # the copy of before the second release
    spy = Spy(monkeypatch)
    status, out, err = run(capsys, *argv)
    assert status == 1 and out == "" and err.count("\n") == 1, err
    assert "is behind the audit log log.jsonl: it has spent epsilon 1, where the audit log's last record of its " \
           "ledger says 2" in err and "nothing was read, drawn or charged" in err
    assert (spy.reads, spy.draws) == (0, 0) and Path("b.json").read_text(encoding="utf-8") == older
    Path("b.json").write_text(newer, encoding="utf-8")  # the current file is accepted again
    assert run(capsys, *argv)[0] == 0 and verify_log("log.jsonl").ok


def test_a_restored_budget_file_is_refused_when_the_ledger_ends_in_a_part(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by review: a session on the budget file (its log written with the file's ledger as writer) whose
    last record was a partition's part (its ``spent`` the part's) let a restored file pass."""
    import shutil

    from securedp import ChaChaSource
    from securedp.ledger.budget import Budget

    store = BudgetFile("b.json", 4)
    session = Session(budget=Budget("epsilon", store=store), audit=AuditLog("log.jsonl", writer=store.ledger),
                      rng=ChaChaSource(bytes(32)))
    session.count([1] * 50, epsilon="1/4")
    shutil.copy("b.json", "b.old")
    parts = session.partition([1, 2, 3, 4] * 10, by=["a", "b"] * 20, parts=["a", "b"], budget=2)
    parts["a"].session.count(parts["a"].data, epsilon="1/8")  # the ledger's last line: spent 1/8, the part's
    shutil.copy("b.old", "b.json")
    status, _, err = run(capsys, "release", "d.csv", *COLUMN, "--epsilon", "1", "--budget-file", "b.json",
                         "--audit-log", "log.jsonl")
    assert status == 1 and "it has spent epsilon 0.25, where the audit log's last record of its ledger says 2.25" \
        in err, err


@pytest.mark.parametrize("odd", ["1/0", "9" * 5000, "1/" + "9" * 5000, "x"])
def test_an_unreadable_last_record_of_the_ledger_gives_way_to_the_one_before(
        odd: str, work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by review: a last line of the ledger whose fields the schema refuses turned the check off, and a
    rational of more than 4,300 digits refused every release with Python's digit-limit message. The record
    before it is read instead: a file restored to before both is refused by it."""
    from securedp.audit.log import canonical, entry_hash

    older = ledger(capsys)  # spent 1
    argv = ["release", "d.csv", *COLUMN, "--epsilon", "1", "--budget-file", "b.json", "--audit-log", "log.jsonl"]
    assert run(capsys, *argv)[0] == 0  # spent 2
    assert run(capsys, *argv)[0] == 0  # spent 3: this line is made unreadable
    lines = Path("log.jsonl").read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[-1])
    entry["record"]["spent"] = odd
    entry["hash"] = entry_hash(entry)
    Path("log.jsonl").write_bytes(b"".join(line.encode() + b"\n" for line in lines[:-1]) + canonical(entry) + b"\n")
    Path("b.json").write_text(older, encoding="utf-8")  # restored to spent 1: behind the readable record's 2
    status, _, err = run(capsys, *argv)
    assert status == 1 and "it has spent epsilon 1, where the audit log's last record of its ledger says 2" in err, err


def test_a_budget_file_ahead_of_the_log_is_accepted(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger(capsys)
    # another log takes this budget file's next release: the first log is then behind the file, which is fine
    argv = ["release", "d.csv", *COLUMN, "--epsilon", "1", "--budget-file", "b.json"]
    assert run(capsys, *argv, "--audit-log", "other.jsonl")[0] == 0
    assert run(capsys, *argv, "--audit-log", "log.jsonl")[0] == 0
    assert json.loads(Path("b.json").read_text(encoding="utf-8"))["spent"] == "3"


# --- after the draw: each write fails once ------------------------------------------------------------------

class Injected(OSError):
    """The injected failure of a write."""


def fail_once(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str,
              when: Callable[..., bool] = lambda *a, **k: True) -> list[int]:
    """Make ``owner.name`` raise :class:`Injected` the first time it is called with arguments ``when`` accepts;
    the list returned counts the failures."""
    original = getattr(owner, name)
    failed: list[int] = []

    def flaky(*args: Any, **kwargs: Any) -> Any:
        if not failed and when(*args, **kwargs):
            failed.append(1)
            raise Injected(5, "injected input/output error")
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, flaky)
    return failed


class FlakyStdout:
    """Standard output whose first write fails (a full pipe, a closed terminal), then takes everything."""

    def __init__(self, real: Any) -> None:
        self.real, self.failed = real, False

    def write(self, text: str) -> int:
        if not self.failed and text:
            self.failed = True
            raise Injected(32, "injected broken pipe")
        return int(self.real.write(text))

    def flush(self) -> None:
        self.real.flush()


WRITE_POINTS = ["audit append", "audit append, every attempt", "budget file", "output file", "standard output"]


def inject(point: str, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    if point == "audit append":
        return fail_once(monkeypatch, AuditLog, "append")
    if point == "audit append, every attempt":
        def broken(*_args: Any, **_kwargs: Any) -> Any:
            raise Injected(28, "injected: no space left on device")

        monkeypatch.setattr(AuditLog, "append", broken)
        return [1]
    if point == "budget file":
        return fail_once(monkeypatch, BudgetFile, "_write")
    if point == "output file":
        return fail_once(monkeypatch, pl.DataFrame, "write_csv", lambda frame, *args, **kwargs: bool(args or kwargs))
    stream = FlakyStdout(sys.stdout)
    monkeypatch.setattr(sys, "stdout", stream)
    return [1]


def logged(path: str = "log.jsonl") -> list[dict[str, Any]]:
    return [json.loads(line)["record"] for line in Path(path).read_text(encoding="utf-8").splitlines()]


def kept(path: str = "log.jsonl.unappended") -> list[dict[str, Any]]:
    file = Path(path)
    return [] if not file.exists() else [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]


SHOWN = {"table": lambda value: f"{value[0][0]},", "column": lambda value: "sum of column 'v'",
         "bounds": lambda value: "bounds   {},{}".format(*(exact_text(Fraction(str(v))) for v in value)),
         "analyze": lambda value: "contribution analysis (private"}
"""What each verb shows of its value (the first key of a table, the bounds ...)."""


@pytest.mark.parametrize("mode", sorted(VERBS))
@pytest.mark.parametrize("point", WRITE_POINTS)
def test_a_write_that_fails_never_leaves_a_charge_without_its_record_or_its_value(
        point: str, mode: str, work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        replayable_labels: None) -> None:
    if point == "output file" and mode != "table":
        pytest.skip("--output is a table's option")
    ledger(capsys)
    spent_before = json.loads(Path("b.json").read_text(encoding="utf-8"))["spent"]
    failures = inject(point, monkeypatch)
    output = ["--output", "t.csv"] if point == "output file" else []
    status, out, err = run(capsys, *VERBS[mode], "--epsilon", "1", "--budget-file", "b.json",
                           "--audit-log", "log.jsonl", "--seed-file", "seed", *output)
    assert failures, "the write was never made: the injection missed it"
    spent = json.loads(Path("b.json").read_text(encoding="utf-8"))["spent"]
    records = [*logged(), *kept()]
    charged = spent != spent_before
    assert len(records) == 1 + charged, (point, err)  # a charge has its record; no record without a charge
    if charged:
        record = records[-1]
        assert Fraction(str(record["spent"])) == Fraction(spent)
        assert SHOWN[mode](record["value"]) in out + err, (point, out, err)
    else:  # refused before the first bit: the budget file as it was, nothing drawn, said in one line
        assert point == "budget file" and status == 1 and err.count("\n") == 1
    assert verify_log("log.jsonl").ok
    said = {"audit append": None, "budget file": "injected input/output error",
            "audit append, every attempt": "the record was written to log.jsonl.unappended",
            "output file": "cannot write t.csv (injected input/output error); the release was charged and recorded",
            "standard output": "cannot write to standard output (injected broken pipe); the release was charged and "
                               "recorded, and its result is printed on standard error"}[point]
    if said is None:  # tried again: appended
        assert status == 0 and len(logged()) == 2 and not kept()
    else:  # the failure is said last, in one line
        assert status == 1 and said in err.splitlines()[-1] and err.splitlines()[-1].startswith("securedp: error: ")
