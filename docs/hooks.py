"""MkDocs hooks: SECURITY.md's threat model on the site, and the style sheet of build-time highlighting.

* The threat model page shows SECURITY.md's threat model, so the text lives in one file.
* Code is highlighted when the site is built (``pymdownx.highlight`` writes Pygments' token spans into
  the HTML), so the site needs no script and no network; ``css/pygments.css``, which ``mkdocs.yml``
  lists in ``extra_css``, is Pygments' style sheet for those spans, generated here with the Pygments
  that tokenised them (so the two always agree) rather than kept as a copy in the repository.
"""

from __future__ import annotations

import pathlib
import re
from typing import Any

_ROOT = pathlib.Path(__file__).resolve().parent.parent
_MARKER = "<!-- SECURITY.md: threat model -->"
PYGMENTS_CSS = "css/pygments.css"
_STYLE = "default"  # Pygments' own light style, for the theme's light colour mode
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


def pygments_css() -> str:
    """Pygments' rules for the token spans of ``pymdownx.highlight`` (its blocks have class ``highlight``)."""
    from pygments.formatters import HtmlFormatter  # the docs extra's; imported here so tests can load this file

    rules: str = HtmlFormatter(style=_STYLE).get_style_defs(".highlight")
    return rules + "\n"


def on_files(files: Any, config: Any, **kwargs: Any) -> Any:  # noqa: ARG001 - MkDocs' hook signature
    """Add the generated ``css/pygments.css`` to the site's files (``files`` is MkDocs' ``Files``)."""
    from mkdocs.structure.files import File  # MkDocs runs this hook; the tests load the file without MkDocs

    files.append(File.generated(config, PYGMENTS_CSS, content=pygments_css()))
    return files
