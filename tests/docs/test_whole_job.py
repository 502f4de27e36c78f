"""Issue 43: a newcomer's whole job (docs/first-day.md) runs on the first try, command for command as the page
prints it, on a realistic people file: 50,000 rows, about 40 regions with a long tail, blank regions, blank
incomes and incomes in the tens of millions."""

from __future__ import annotations

import json
import random
import shlex
from fractions import Fraction
from pathlib import Path

import pytest
from test_documented_commands import ROOT, commands_in

from securedp.cli.main import main

PAGE = ROOT / "docs" / "first-day.md"


def people(path: Path, rows: int = 50_000) -> None:
    """A generated people file (a fixed pseudo-random stream: the same file on every run)."""
    draw = random.Random(43)
    regions = [f"region{i:02d}" for i in range(40)]
    weights = [1 / (i + 1) for i in range(40)]  # a long tail: the last regions have a few dozen rows
    lines = ["person_id,region,income"]
    for _ in range(rows):
        region = "" if draw.random() < 0.02 else draw.choices(regions, weights)[0]
        income = ("" if draw.random() < 0.03 else str(draw.randrange(1_000_000, 20_000_000))
                  if draw.random() < 0.01 else str(int(draw.lognormvariate(10.5, 0.6))))
        lines.append(f"{draw.randrange(30_000)},{region},{income}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_whole_job_runs_from_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    people(tmp_path / "data.csv")
    commands = commands_in(PAGE.read_text(encoding="utf-8"))
    assert [c[0] if c[0] == "seed" else c[1] for c in commands] == [
        "seed", "analyze", "budget", "bounds", "release", "release", "budget", "audit", "audit", "audit"]
    said: dict[str, str] = {}
    for argv in commands:
        if argv[0] == "seed":
            Path(argv[1]).write_bytes(bytes(range(32)))
            continue
        capsys.readouterr()
        status = main(argv[1:])
        out, err = capsys.readouterr()
        assert status == 0 and "Traceback" not in out + err, f"`{shlex.join(argv)}` failed: {err.strip()}"
        said[" ".join(argv[1:3])] = out + err
    assert "DIFFERS" not in said["audit replay"] and "all 2 releases reproduced exactly" in said["audit replay"]
    assert "2 of 2 releases reproduced exactly" in said["audit report"]
    table = Path("job-table.csv").read_text(encoding="utf-8").splitlines()
    assert table[0].startswith("region,count,") and "income_median" in table[0] and len(table) > 5
    budget = json.loads(Path("job-budget.json").read_text(encoding="utf-8"))
    # the delta ledger is charged the delta the release's threshold proves (issue 42), which its record states
    last = json.loads(Path("job.jsonl").read_text(encoding="utf-8").splitlines()[-1])["record"]
    assert budget["spent"] == "9/4" and budget["delta_spent"] == last["delta_spent"] == last["delta_charged"]
    assert 0 < Fraction(budget["delta_spent"]) <= Fraction(1, 10**6)


def test_the_api_tables_page_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 43.10: the grouped tables' API page shows a working example (its plan printed as text)."""
    import re

    page = (ROOT / "docs" / "api" / "tables.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"```python\n(.*?)```", page, re.S)
    exec(compile(code, "docs/api/tables.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.startswith("cost     epsilon 1\n") and "region  count" in out and "Fraction(" not in out


INTERNALS = ("input_bytes", "execution", "executed", "input_commitment", "output", "floats", "typed",
             "lattice_column", "lattice_of", "default_lattice", "definition")


def test_the_api_tables_page_lists_no_internals_and_formats_signatures(site: Path) -> None:
    """Issue 43.10: the page's members are what a user calls; a long signature is one parameter a line."""
    import html
    import re

    page = (site / "api" / "tables" / "index.html").read_text(encoding="utf-8")
    ids = re.findall(r'<h[2-6] id="securedp\.([\w.]+)"', page)
    assert "tables.PreparedTable.execute" in ids and "tables.TableRelease.frame" in ids
    assert [i for i in ids if i.rsplit(".", 1)[-1] in INTERNALS] == []
    signatures = [html.unescape(re.sub(r"<[^>]+>", "", s))
                  for s in re.findall(r'<div class="doc-signature[^"]*">(.*?)</div>', page, re.S)]
    signature = next(s for s in signatures if s.startswith("prepare_table("))
    assert "\n    group_by: Sequence[str] = (),\n" in signature
