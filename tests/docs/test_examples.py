"""Every Python code block of the worked examples, the quickstart and the guides runs as written.

The blocks of one page run in order in one namespace, as a reader would paste them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(DOCS.glob("examples/*.md")) + [DOCS / "quickstart.md", DOCS / "dropin.md", DOCS / "audit.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_code_blocks_run(page: Path) -> None:
    blocks = BLOCK.findall(page.read_text(encoding="utf-8"))
    assert blocks, f"{page} has no python code block"
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page.name}[block {i + 1}]", "exec"), namespace)  # noqa: S102 - the docs are ours
