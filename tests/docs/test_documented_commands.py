"""Every ``securedp`` command the project prints or documents runs, and every release it makes is correct.

Commands are collected from the shell blocks (```` ```sh ````) of README.md
and every page under docs/, and from the lines ``securedp demo`` prints. Each
page's commands run in order, in a fresh directory holding what a reader of
the docs has at hand: ``data.csv`` (a copy of the built-in example dataset,
where one person has up to four rows), ``seed.bin`` and an ``audit.jsonl``
with one seeded release. Every release a command (or the demo itself) makes
is watched (:mod:`_releases_seen`): over the example data it must either name
the person column (the bound is then enforced) or declare a
``max_contributions`` of at least the largest number of rows one person has.
The controls at the end show that the old demo suggestion fails this check.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pandas as pd
import pytest
from _releases_seen import Seen, example_max_rows_per_person, unsafe, watching

from securedp import ChaChaSource
from securedp.cli import demo as demo_module
from securedp.cli import selftest as selftest_module
from securedp.cli.example_data import MAX_ROWS_PER_PERSON
from securedp.cli.example_data import PATH as EXAMPLE
from securedp.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHELL_BLOCK = re.compile(r"^```(?:sh|bash|shell|console)[ \t]*\n(.*?)^```", re.S | re.M)
SEPARATORS = {"&&", "||", ";", "|"}
SEED = bytes(range(32))


SEED_LINE = ["head", "-c", "32", "/dev/urandom"]


@pytest.fixture(autouse=True)
def seeded_selftest(monkeypatch: pytest.MonkeyPatch) -> None:
    """``securedp selftest`` (docs/index.md; docs/quickstart.md with ``--plot`` when matplotlib is installed)
    draws from the system source, and fails when one of its 9 G-tests has p < 1e-6: about 9e-6 per run of a
    correct sampler. Here it reads a fixed ChaCha stream instead, so the page's commands pass or fail the
    same way on every run."""
    monkeypatch.setattr(selftest_module, "default_source", lambda: ChaChaSource(SEED).substream("selftest"))


def commands_in(text: str) -> list[list[str]]:
    """The ``securedp ...`` commands of the shell blocks of ``text``, as argument lists, in order.

    A line that makes a new seed file (``head -c 32 /dev/urandom > NAME``) is kept as ``["seed", NAME]``,
    so that a page's commands run against the files its reader would have made.
    """
    found: list[list[str]] = []
    for block in SHELL_BLOCK.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"^\s*\$\s+", "", line)  # a console prompt
            segment: list[str] = []
            for token in [*shlex.split(line, comments=True), ";"]:
                if token in SEPARATORS:
                    if segment[:1] == ["securedp"]:
                        found.append(segment)
                    elif segment[:4] == SEED_LINE and len(segment) == 5:
                        found.append(["seed", segment[4]])
                    segment = []
                elif not re.match(r"^\d?[<>]", token):  # drop redirections
                    segment.append(token)
    return found


def demo_commands(lines: list[str]) -> list[list[str]]:
    """The ``securedp ...`` commands the demo prints (anywhere on a line)."""
    found = []
    for line in lines:
        match = re.search(r"(?:^|\s)(securedp (?:release|demo|selftest|audit)(?:\s.*)?)$", line)
        if match:
            found.append(shlex.split(match.group(1)))
    return found


def reader_directory(path: Path) -> Path:
    """A directory with what the docs assume: data.csv (the example data), seed.bin and a seeded audit.jsonl."""
    shutil.copyfile(EXAMPLE, path / "data.csv")
    (path / "seed.bin").write_bytes(SEED)
    status = main(["release", str(path / "data.csv"), "--column", "age", "--stat", "count", "--epsilon", "1/10",
                   "--id-column", "person_id", "--seed-file", str(path / "seed.bin"),
                   "--audit-log", str(path / "audit.jsonl")])
    assert status == 0
    return path


def run_and_check(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[Seen]:
    """Run one command in this process; assert it succeeds; return the releases it made."""
    capsys.readouterr()
    with watching() as seen:
        status = main(argv[1:])
    _out, err = capsys.readouterr()
    if status != 0 and argv[1] == "selftest" and "--plot" in argv and "needs matplotlib" in err:
        return seen  # an optional dependency the docs name; the command itself is fine
    assert status == 0, f"`{shlex.join(argv)}` failed: {err.strip()}"
    if argv[1] == "release":
        assert seen, f"`{shlex.join(argv)}` made no release that could be watched"
    return seen


def assert_correct(seen: list[Seen], where: str) -> None:
    problems = [problem for problem in map(unsafe, seen) if problem]
    assert not problems, f"{where}: {problems[0]}"


def test_the_declared_maximum_is_the_files() -> None:
    assert MAX_ROWS_PER_PERSON == example_max_rows_per_person() == 4


def test_commands_are_found_where_they_are_documented() -> None:
    quickstart = commands_in((ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8"))
    assert ["securedp", "demo"] in quickstart and sum(c[1] == "release" for c in quickstart) >= 4
    assert ["securedp", "demo"] in commands_in((ROOT / "README.md").read_text(encoding="utf-8"))
    assert commands_in("```sh\nx && securedp a b \\\n  c  # note\n$ securedp d >/dev/null 2>err\n```\n") == [
        ["securedp", "a", "b", "c"], ["securedp", "d"]]


@pytest.mark.parametrize("page", [p for p in PAGES if commands_in(p.read_text(encoding="utf-8"))],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_commands_run_and_release_correctly(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(reader_directory(tmp_path))
    for argv in commands_in(page.read_text(encoding="utf-8")):
        if argv[0] == "seed":
            Path(argv[1]).write_bytes(bytes(reversed(SEED)))  # a new seed, as the page's reader makes one
            continue
        assert_correct(run_and_check(argv, capsys), f"{page.name}: `{shlex.join(argv)}`")


def test_the_demo_and_every_command_it_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(reader_directory(tmp_path))
    lines: list[str] = []
    with watching() as seen:
        assert demo_module.run_demo(write=lines.append) == 0
    assert len(seen) >= 5
    assert_correct(seen, "securedp demo")
    printed = demo_commands(lines)
    assert printed, "the demo suggests no command"
    for argv in printed:
        released = run_and_check(argv, capsys)
        assert_correct(released, f"demo suggestion `{shlex.join(argv)}`")
        if argv[1] == "release":
            assert "--id-column" in argv or int(argv[argv.index("--max-contributions") + 1]) >= MAX_ROWS_PER_PERSON


# -- controls: the check catches what it must --------------------------------------------------------

OLD_DEMO_SUGGESTION = f"securedp release {EXAMPLE} --column age --stat mean --bounds 18,90 --epsilon 0.5"


def test_control_the_old_demo_suggestion_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    seen = run_and_check(shlex.split(OLD_DEMO_SUGGESTION), capsys)
    problems = [p for p in map(unsafe, seen) if p]
    assert problems and "max_contributions 1 without ids" in problems[0] and "4 rows" in problems[0]
    fixed = run_and_check([*shlex.split(OLD_DEMO_SUGGESTION), "--max-contributions", "4"], capsys)
    assert fixed and not any(map(unsafe, fixed))
    too_few = run_and_check([*shlex.split(OLD_DEMO_SUGGESTION), "--max-contributions", "3"], capsys)
    assert any(map(unsafe, too_few))


def test_control_ids_that_split_a_person_are_caught() -> None:
    example = pd.read_csv(EXAMPLE)
    ages, ids = example["age"].tolist(), example["person_id"].tolist()
    assert unsafe(Seen("prepare_mean", ages, ids, 1)) is None
    assert "different ids" in str(unsafe(Seen("prepare_mean", ages, list(range(len(ages))), 1)))
    assert unsafe(Seen("prepare_mean", ages, None, 4)) is None
    assert "without ids" in str(unsafe(Seen("prepare_count", [int(a) for a in ages], None, 2)))
    assert unsafe(Seen("prepare_count", [1, 2, 3], None, 1)) is None  # not the example data: not judged here


def test_control_a_documented_unsafe_command_fails_the_page_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    page = "Run:\n\n```sh\nsecuredp release data.csv --column hours --stat sum --bounds 0,80 --epsilon 1\n```\n"
    monkeypatch.chdir(reader_directory(tmp_path))
    (argv,) = commands_in(page)
    with pytest.raises(AssertionError, match="without ids"):
        assert_correct(run_and_check(argv, capsys), "page")


def test_control_a_table_of_the_example_data_without_its_person_column_is_caught(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Table commands are watched too: over the example data they must name the person column."""
    table = ("securedp release data.csv --group-by region --count --keys north,south,east,west --epsilon 1 "
             "--seed-file seed.bin")
    monkeypatch.chdir(reader_directory(tmp_path))
    rows_as_persons = run_and_check(shlex.split(table), capsys)
    assert [s.function for s in rows_as_persons] == ["prepare_table"]
    with pytest.raises(AssertionError, match="counts each row as a person"):
        assert_correct(rows_as_persons, "page")
    bounded = run_and_check([*shlex.split(table), "--id-column", "person_id", "--max-rows", "4"], capsys)
    assert bounded and not any(map(unsafe, bounded))
