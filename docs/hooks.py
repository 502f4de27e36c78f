"""MkDocs hooks: the threat model page shows SECURITY.md's threat model, so the text lives in one file."""

from __future__ import annotations

import pathlib
import re
from typing import Any

_ROOT = pathlib.Path(__file__).resolve().parent.parent
_MARKER = "<!-- SECURITY.md: threat model -->"
_SECTION = re.compile(r"<!-- threat model: start[^>]*-->\n(.*?)<!-- threat model: end -->", re.S)


def threat_model() -> str:
    """SECURITY.md's threat model, its links made relative to docs/ and its headings one level up."""
    found = _SECTION.search((_ROOT / "SECURITY.md").read_text(encoding="utf-8"))
    if found is None:
        raise ValueError("SECURITY.md has no threat model section between its markers")
    text = found.group(1).replace("](docs/", "](")
    return re.sub(r"^### ", "## ", text, flags=re.M)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if _MARKER not in markdown:
        return markdown
    return markdown.replace(_MARKER, threat_model())
