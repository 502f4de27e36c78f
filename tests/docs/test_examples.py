"""Every Python code block of the worked examples, the quickstart and the guides runs as written.

The blocks of one page run in order in one namespace, as a reader would paste them. Every release
they make is watched (:mod:`_releases_seen`): a release over data where a person has several rows
(the built-in example dataset) must declare the person ids, or a ``max_contributions`` of at least
the most rows one person has.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _releases_seen import unsafe, watching

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = [*sorted(DOCS.glob("examples/*.md")), DOCS / "quickstart.md", DOCS / "dropin.md", DOCS / "audit.md",
         DOCS / "architecture.md", DOCS / "planning.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def run_page(text: str, name: str) -> list[str]:
    """Run the Python blocks of a page in one namespace; return the problems of the releases they made."""
    blocks = BLOCK.findall(text)
    assert blocks, f"{name} has no python code block"
    namespace: dict[str, object] = {"__name__": "__docs__"}
    with watching() as seen:
        for i, block in enumerate(blocks):
            exec(compile(block, f"{name}[block {i + 1}]", "exec"), namespace)  # the docs are ours
    return [problem for problem in map(unsafe, seen) if problem]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_code_blocks_run(page: Path) -> None:
    problems = run_page(page.read_text(encoding="utf-8"), page.name)
    assert not problems, f"{page.name}: {problems[0]}"


def test_control_an_example_without_ids_over_repeated_persons_is_caught() -> None:
    body = (
        "import securedp\n"
        "import pandas as pd\n"
        "from securedp.cli.example_data import PATH\n"
        "visits = pd.read_csv(PATH)\n"
        "ages, person_ids = visits['age'].tolist(), visits['person_id'].tolist()\n"
        "session = securedp.Session(epsilon=1)\n"
        "session.mean(ages, bounds=(18, 90), epsilon='1/2'{ids})\n"
        "securedp.median(ages, bounds=(18, 90), epsilon='1/4'{ids})\n"
    )
    unsafe_page = "```python\n" + body.format(ids="") + "```\n"
    problems = run_page(unsafe_page, "control")
    assert len(problems) == 2 and all("without ids" in p for p in problems)
    safe_page = "```python\n" + body.format(ids=", ids=person_ids") + "```\n"
    assert run_page(safe_page, "control") == []


def test_the_analyst_facing_block_of_releases_md_runs_within_its_budget() -> None:
    """The block declares its budget and spends it; it used to overspend (three releases of 1/2 under 1)."""
    block = next(b for b in BLOCK.findall((DOCS / "releases.md").read_text(encoding="utf-8"))
                 if "analyst_facing=True" in b)
    namespace: dict[str, object] = {"Session": __import__("securedp").Session, "rows": ["a", "b", "zz", None],
                                    "incomes": [1.5, None, float("nan"), "n/a", 10**400],
                                    "hours": [40, None, 12]}
    exec(compile(block, "releases.md[analyst-facing block]", "exec"), namespace)  # the docs are ours
    session = namespace["s"]
    assert session.remaining == 0  # type: ignore[attr-defined]


def test_every_readme_block_runs_on_its_own() -> None:
    """Issue 28.7: a reader pastes one README block, not the page: each runs in a namespace of its own, over the
    built-in data (no file a reader does not have), and its releases are correct."""
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    blocks = BLOCK.findall(readme)
    assert len(blocks) >= 2 and "people.parquet" not in readme
    for i, block in enumerate(blocks):
        problems = run_page(f"```python\n{block}```\n", f"README.md[block {i + 1}]")
        assert not problems, problems[0]


def test_the_readme_median_is_of_enough_rows_to_mean_something() -> None:
    """The README's median is released from thousands of values, not seven (at epsilon 1/2, the rank error
    bound is 32 rows: a median of 7 values would be mostly noise)."""
    namespace: dict[str, object] = {"__name__": "__docs__"}
    exec(compile(BLOCK.findall((DOCS.parent / "README.md").read_text(encoding="utf-8"))[0], "README", "exec"),
         namespace)
    ages, m = namespace["ages"], namespace["m"]
    assert len(ages) >= 1000  # type: ignore[arg-type]
    assert "noise" in (DOCS.parent / "README.md").read_text(encoding="utf-8").split("```python")[1]
    assert abs(m.value - sorted(ages)[len(ages) // 2]) <= 10  # type: ignore[attr-defined, arg-type]
