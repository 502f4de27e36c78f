"""The documentation site builds strictly and cleanly from the README's command, and works air-gapped.

Issue 28, item 3: the README's ``mkdocs build`` needs the docs extra; ``--strict`` must fail on every
warning (``--quiet`` once hid them, so a site with two broken references passed); code is highlighted
at build time (Pygments), so no page loads a script or style sheet from the network; the home page's
table names every page of the navigation; and no API page prints a docstring twice.
"""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from _site import ROOT, build_site

EXTERNAL = re.compile(r"^(?:https?:)?//", re.I)


def test_the_strict_build_has_no_warning(site: Path) -> None:
    """The ``site`` fixture builds without ``--quiet`` and fails on any warning; here: it built."""
    assert (site / "index.html").is_file() and (site / "architecture" / "index.html").is_file()


def test_control_quiet_hides_a_warning_that_the_check_catches(tmp_path: Path) -> None:
    """A page with a broken link: ``--strict --quiet`` exits 0, the fixture's check does not."""
    pytest.importorskip("mkdocs", reason='the docs extra is not installed: pip install ".[docs]"')
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [nowhere](missing.md).\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: control\ntheme:\n  name: mkdocs\n", encoding="utf-8")
    quiet = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir",
                            str(tmp_path / "quiet")], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert quiet.returncode == 0, "MkDocs' --quiet no longer hides warnings from --strict: simplify conftest"
    built = build_site(config, tmp_path / "site")
    assert built.status != 0 and any("missing.md" in w for w in built.warnings)


def docs_extra() -> set[str]:
    """The distributions the ``docs`` extra of pyproject.toml names (lower case, without versions).

    Read with a pattern, not ``tomllib``, which Python 3.10 lacks; the extra is one line.
    """
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    line = re.search(r"^docs = \[(.*)\]", text, re.M)
    assert line is not None, "pyproject.toml has no one-line docs extra"
    specs = re.findall(r'"([^"]+)"', line.group(1))
    return {re.split(r"[\[<>=!~ ;]", spec, maxsplit=1)[0].lower() for spec in specs}


def test_the_readme_builds_the_docs_with_the_docs_extra() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if "mkdocs build" in line)
    assert 'pip install ".[docs]"' in line, f"the README's docs line does not install the docs extra: {line}"
    needed = {"mkdocs", "mkdocstrings", "mkdocstrings-python"}
    if "pymdownx." in (ROOT / "mkdocs.yml").read_text(encoding="utf-8"):
        needed |= {"pymdown-extensions", "pygments"}  # pymdownx.highlight falls back to JS classes without Pygments
    assert needed <= docs_extra(), f"the docs extra lacks {sorted(needed - docs_extra())}"


class Loads(HTMLParser):
    """Every script and style sheet a page loads, and the class of every ``<code>`` inside a ``<pre>``."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []
        self.styles: list[str] = []
        self.code_spans = 0
        self._in_pre = 0
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script" and found.get("src"):
            self.loads.append(found["src"] or "")
        if tag == "link" and "stylesheet" in (found.get("rel") or "").split():
            self.loads.append(found.get("href") or "")
        if tag == "pre":
            self._in_pre += 1
        if tag == "span" and self._in_pre and found.get("class"):
            self.code_spans += 1
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._in_pre -= 1
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)


def read_loads(page: Path) -> Loads:
    parser = Loads()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def external_css(text: str) -> list[str]:
    """The network addresses a style sheet's ``@import`` or ``url(...)`` would fetch."""
    targets = re.findall(r"@import\s+['\"]([^'\"]+)", text) + re.findall(r"url\(\s*['\"]?([^'\")\s]+)", text)
    return sorted({t for t in targets if EXTERNAL.match(t)})


def test_no_page_loads_a_script_or_style_sheet_from_the_network(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 20
    for page in pages:
        found = read_loads(page)
        remote = [url for url in found.loads if EXTERNAL.match(url)]
        assert not remote, f"{page.relative_to(site)} loads {remote}"
        assert not external_css("".join(found.styles)), f"{page.relative_to(site)}: a <style> imports from the network"
    for sheet in site.rglob("*.css"):
        assert not external_css(sheet.read_text(encoding="utf-8")), f"{sheet.relative_to(site)} fetches a URL"


def test_code_is_highlighted_at_build_time(site: Path) -> None:
    """Code blocks carry Pygments' token spans in the HTML, styled by a local sheet linked from every page."""
    home = site / "index.html"
    found = read_loads(home)
    assert found.code_spans > 5, "the home page's shell block has no highlighted tokens"
    sheets = [site / href for href in found.loads if href.endswith(".css")]
    rules = "".join(sheet.read_text(encoding="utf-8") for sheet in sheets if sheet.is_file())
    assert re.search(r"\.highlight \.k\s*\{", rules), "no linked style sheet styles Pygments' keyword tokens"
    quickstart = (site / "quickstart" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<span class="(?:kn|k|nn|n)">import</span>', quickstart), "Python code is not tokenised"
    assert "hljs" not in quickstart and "highlight.min.js" not in quickstart


def test_control_the_loads_check_sees_a_cdn() -> None:
    parser = Loads()
    parser.feed('<link rel="stylesheet" href="https://cdn.example/a.css"><script src="//cdn.example/x.js"></script>'
                '<style>@import url("https://fonts.example/f.css");</style>')
    assert [u for u in parser.loads if EXTERNAL.match(u)] == ["https://cdn.example/a.css", "//cdn.example/x.js"]
    assert external_css("".join(parser.styles)) == ["https://fonts.example/f.css"]
    assert external_css("a{background:url(data:image/png;base64,xx)}") == []


def mkdocs_config() -> dict[str, object]:
    """mkdocs.yml, read with PyYAML (MkDocs' own dependency: skipped without the docs extra)."""
    yaml = pytest.importorskip("yaml", reason='the docs extra is not installed: pip install ".[docs]"')
    found: dict[str, object] = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return found


def nav_pages(entries: list[object]) -> list[tuple[str, str | None]]:
    """The top level of mkdocs.yml's nav as (title, file); a section's file is None."""
    found: list[tuple[str, str | None]] = []
    for entry in entries:
        assert isinstance(entry, dict)
        ((title, target),) = entry.items()
        found.append((str(title), target if isinstance(target, str) else None))
    return found


def test_the_home_page_table_names_every_page_of_the_navigation() -> None:
    home = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    rows = [line for line in home.splitlines() if line.startswith("| ")]
    nav = mkdocs_config()["nav"]
    assert isinstance(nav, list)
    for title, target in nav_pages(nav):
        if target == "index.md":
            continue
        if target is None:  # a section: named by its title (its pages are listed in the navigation)
            assert any(row.startswith(f"| {title}") or f"[{title}]" in row for row in rows), f"no row for {title}"
        else:
            assert any(f"]({target})" in row for row in rows), f"the home page's table omits {title} ({target})"


def paragraphs_by_object(page: Path) -> list[tuple[str, str]]:
    """Every paragraph of a page's main content as (name of the object heading above it, text).

    The name is the last component of the nearest mkdocstrings heading's id ("" above the first one);
    whitespace is collapsed and tags are dropped.
    """
    text = page.read_text(encoding="utf-8")
    body = text[text.find('role="main"'):text.find("<footer")]
    found: list[tuple[str, str]] = []
    name = ""
    for match in re.finditer(r'<h\d id="([^"]*)" class="doc doc-heading"|<p>(.*?)</p>', body, re.S):
        if match.group(1) is not None:
            name = match.group(1).rsplit(".", 1)[-1]
        else:
            found.append((name, " ".join(re.sub(r"<[^>]+>", "", match.group(2)).split())))
    return found


def printed_twice(found: list[tuple[str, str]]) -> list[str]:
    """Long paragraphs shown under two differently named objects (an inherited member shares its name)."""
    names: dict[str, set[str]] = {}
    for name, paragraph in found:
        if len(paragraph) > 80:
            names.setdefault(paragraph, set()).add(name)
    return sorted(paragraph for paragraph, where in names.items() if len(where) > 1)


@pytest.mark.parametrize("stem", sorted(p.stem for p in (ROOT / "docs" / "api").glob("*.md")))
def test_no_api_page_prints_a_docstring_twice(site: Path, stem: str) -> None:
    page = site / "api" / ("" if stem == "index" else stem) / "index.html"
    twice = printed_twice(paragraphs_by_object(page))
    assert not twice, f"api/{stem} prints a paragraph under two objects: {twice[0][:120]}..."


def test_control_a_docstring_under_two_objects_is_caught() -> None:
    long = "A paragraph long enough to count as a docstring's, and not a stock phrase such as 'see below'."
    assert printed_twice([("", long), ("table", long)]) == [long]
    assert printed_twice([("pool", long), ("pool", long), ("other", "short")]) == []  # one inherited member


def test_the_grouped_tables_page_documents_the_table_function(site: Path) -> None:
    """``securedp.table`` is shown as the function it is (signature and docstring), not as its module again."""
    text = (site / "api" / "tables" / "index.html").read_text(encoding="utf-8")
    assert text.count("Grouped table releases: counts, sums, means and variances per group") == 1
    assert "Release a grouped table:" in text
    assert re.search(r'<div class="doc-signature[^"]*"><pre><span></span><code><span class="nf">table</span>', text)
