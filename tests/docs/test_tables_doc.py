"""docs/tables.md runs as written and prints what it shows.

The page's fenced blocks run in order, as a reader would paste them: every ```` ```python ```` block
in one namespace, and every ```` ```sh ```` block whose lines are all ``securedp ...`` commands as
commands, in a directory holding ``data.csv`` (the example dataset) and ``seed.bin``. When the next
fenced block after a runnable block is a plain ```` ```text ```` block, it is that block's expected
standard output: a Python block's is compared exactly (its releases are seeded, so the tables
replay bit for bit); a command block's, whose ``--seed-file`` gives every release a fresh
substream, line by line up to the first comma (the CSV header, then each row's key). The same
commands are also run by ``test_documented_commands.py``, which checks that every table of the
example data names its person column.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from securedp.cli.example_data import PATH as EXAMPLE
from securedp.cli.main import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "tables.md"
FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
SEED = bytes(range(32))


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of ``text`` in order: ``(kind, body)``, kind "python", "commands" or "output"."""
    found = []
    for language, body in FENCE.findall(text):
        lines = [line for line in body.splitlines() if line.strip()]
        if language == "python":
            found.append(("python", body))
        elif language == "sh" and lines and all(line.startswith("securedp ") for line in lines):
            found.append(("commands", body))
        elif language == "text":
            found.append(("output", body))
    return found


def run_block(kind: str, body: str, namespace: dict[str, object], index: int) -> str:
    """Run one block; return what it printed on standard output."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if kind == "python":
            exec(compile(body, f"tables.md[block {index}]", "exec"), namespace)  # the docs are ours
        else:
            for line in body.splitlines():
                if line.strip():
                    status = main(shlex.split(line)[1:])
                    assert status == 0, f"`{line}` exited with {status}"
    return out.getvalue()


def normal(text: str, kind: str = "python") -> list[str]:
    """The lines of an output; for a command, each line up to its first comma (the noise varies)."""
    lines = [line.rstrip() for line in text.strip("\n").splitlines()]
    return [line.split(",")[0] if kind == "commands" else line for line in lines]


def test_every_block_runs_and_prints_what_the_page_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "data.csv").write_bytes(EXAMPLE.read_bytes())
    (tmp_path / "seed.bin").write_bytes(SEED)
    monkeypatch.chdir(tmp_path)
    found = blocks(PAGE.read_text(encoding="utf-8"))
    assert sum(kind == "python" for kind, _ in found) >= 8 and any(kind == "commands" for kind, _ in found)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    checked = 0
    for i, (kind, body) in enumerate(found):
        if kind == "output":
            continue
        printed = run_block(kind, body, namespace, i + 1)
        if i + 1 < len(found) and found[i + 1][0] == "output":
            assert normal(printed, kind) == normal(found[i + 1][1], kind), f"block {i + 1} printed:\n{printed}"
            checked += 1
    assert checked >= 8
    assert (tmp_path / "table.json").exists() and (tmp_path / "audit.jsonl").exists()


def test_control_a_changed_output_is_caught() -> None:
    page = "```python\nprint(1 + 1)\n```\n\nprose\n\n```text\n3\n```\n"
    (kind, body), (_, shown) = blocks(page)
    assert normal(run_block(kind, body, {}, 1)) != normal(shown)
    assert normal("a,1\nb,2", "commands") == ["a", "b"] != normal("a,1\nc,2", "commands")
