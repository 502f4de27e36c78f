"""The API reference, generated from the docstrings by mkdocstrings, is complete, public-only and clean.

The site is built once, as CI builds it (``mkdocs build --strict``, failing on any warning: the
``site`` fixture of tests/docs/conftest.py), into a temporary directory; the checks read the HTML of
the pages under ``docs/api/``:

- every name of ``securedp.__all__``, ``securedp.hazmat.samplers.__all__`` and ``securedp.tables.__all__``
  is documented: some rendered object heading names a path that resolves to the very same object;
- nothing private is shown: no documented path has a component with a leading underscore, no
  rendered signature has a parameter with one (``ChaChaSource(_labels=...)``, ``Session(_path=...)``),
  and no private attribute appears in code (an attribute's initialiser such as ``self._key``);
- docstrings render cleanly: the only headings in a page's body are its object headings and the
  headings its Markdown source writes (a docstring line read as a heading, as ``#1`` once was, fails),
  no reST role (``:func:`...```) or doubled backtick survives as text, no emphasis opens right
  after an operand (``k**2 / (2 sigma**2)`` once rendered "k<strong>2 / (2 sigma</strong>2"), and
  no line of prose becomes a quotation (``rational\n> 0`` once did).

Skipped when the docs extra (``pip install ".[docs]"``) is not installed; ``.ci/run`` runs it after
installing that extra.
"""

from __future__ import annotations

import html
import importlib
import importlib.util
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import securedp
import securedp.hazmat.samplers
import securedp.tables

pytest.importorskip("mkdocstrings_handlers.python", reason='the docs extra is not installed: pip install ".[docs]"')
griffe = pytest.importorskip("griffe")

ROOT = Path(__file__).resolve().parents[2]
API_SOURCES = sorted((ROOT / "docs" / "api").glob("*.md"))
PRIVATE_PARAMETER = re.compile(r"(?:^|[(,])\s*\**(_\w*)\s*(?=[:=,)])", re.M)
ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`")
MARKDOWN_HEADING = re.compile(r"^#{1,6} ", re.M)
OPERAND_EMPHASIS = re.compile(r"[\w)\]]<(?:strong|em)>")


class Page(HTMLParser):
    """The parts of one built page the checks need: its body's headings and signatures, and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.in_body = False
        self.object_ids: list[str] = []  # ids of mkdocstrings' object headings
        self.other_headings: list[str] = []  # ids of every other heading in the body
        self.signatures: list[str] = []
        self.text: list[str] = []
        self.html = ""  # the body's markup
        self._signature_depth = 0
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("role") == "main":
            self.in_body = True
        if not self.in_body:
            return
        if tag == "footer":
            self.in_body = False
            return
        if tag == "div":
            self._depth += 1
            if "doc-signature" in (found.get("class") or "").split():
                self._signature_depth = self._depth
                self.signatures.append("")
        if re.fullmatch(r"h[1-6]", tag):
            target = self.object_ids if "doc-heading" in (found.get("class") or "").split() else self.other_headings
            target.append(found.get("id") or "")

    def handle_endtag(self, tag: str) -> None:
        if self.in_body and tag == "div":
            if self._depth == self._signature_depth:
                self._signature_depth = 0
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if not self.in_body:
            return
        self.text.append(data)
        if self._signature_depth:
            self.signatures[-1] += data


def read_page(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    page.html = text[text.find('role="main"') : text.find("<footer")]
    return page


def private_parameters(signature: str) -> list[str]:
    """The parameter names with a leading underscore in a rendered signature."""
    return PRIVATE_PARAMETER.findall(html.unescape(signature))


def resolve(path: str) -> Any:
    """The object a documented dotted path names, read as griffe reads it: a submodule before an attribute.

    (``securedp.hazmat.samplers.bernoulli`` is the module; the function is ``...bernoulli.bernoulli``.)
    None for a path naming no runtime attribute (an instance attribute documented on its class).
    """
    parts = path.split(".")
    obj: Any = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], start=1):
        name = ".".join(parts[: i + 1])
        if hasattr(obj, "__path__") and importlib.util.find_spec(name) is not None:  # a package
            obj = importlib.import_module(name)
        elif hasattr(obj, part):
            obj = getattr(obj, part)
        else:
            return None
    return obj


@pytest.fixture(scope="module")
def pages(site: Path) -> dict[str, Page]:
    """Each API page of the site built as CI builds it (``site``, tests/docs/conftest.py), by source stem."""
    found = {}
    for source in API_SOURCES:
        built_page = site / "api" / ("" if source.stem == "index" else source.stem) / "index.html"
        found[source.stem] = read_page(built_page.read_text(encoding="utf-8"))
    return found


def test_every_public_name_is_documented(pages: dict[str, Page]) -> None:
    documented = [path for page in pages.values() for path in page.object_ids]
    objects = [resolve(path) for path in documented]
    for module in (securedp, securedp.hazmat.samplers, securedp.tables):
        for name in module.__all__:
            if name == "__version__":
                assert "securedp.__version__" in "".join(pages["index"].text)
                continue
            target = getattr(module, name)
            assert any(obj is target for obj in objects), f"{module.__name__}.{name} is not in the API reference"


def test_nothing_private_is_shown(pages: dict[str, Page]) -> None:
    for stem, page in pages.items():
        for path in page.object_ids:
            assert not any(part.startswith("_") for part in path.split(".")), f"api/{stem}: private {path} shown"
        for signature in page.signatures:
            assert not private_parameters(signature), f"api/{stem}: private parameter in {signature.strip()}"
        assert "self._" not in "".join(page.text), f"api/{stem}: private attributes shown in code"
    rendered = " ".join(s for page in pages.values() for s in page.signatures)
    assert "ChaChaSource(seed: bytes)" in " ".join(rendered.split()), "ChaChaSource's signature is not shown"


def test_docstrings_render_cleanly(pages: dict[str, Page]) -> None:
    for source in API_SOURCES:
        page = pages[source.stem]
        written = MARKDOWN_HEADING.findall(source.read_text(encoding="utf-8"))
        assert len(page.other_headings) == len(written), (
            f"api/{source.stem}: headings not written by its Markdown (a docstring line read as a heading?): "
            f"{page.other_headings}"
        )
        text = "".join(page.text)
        assert not ROLE.search(text), f"api/{source.stem}: a reST role was left as text"
        assert "``" not in text, f"api/{source.stem}: doubled backticks were left as text"
        misread = OPERAND_EMPHASIS.findall(page.html)
        assert not misread, f"api/{source.stem}: an operator read as emphasis: {misread}"
        assert "<blockquote>" not in page.html, f"api/{source.stem}: a line starting with '>' read as a quotation"


def test_controls_the_checks_catch_what_they_look_for() -> None:
    assert private_parameters("ChaChaSource(seed: bytes, *, _labels: tuple = ())") == ["_labels"]
    assert private_parameters("Session(\n    epsilon=None,\n    _path=None,\n)") == ["_path"]
    assert private_parameters("f(data: Any, *, rng: RandomSource | None = None) -> Release") == []
    stray = read_page('<div role="main"><h1 id="p">P</h1><h2 id="x" class="doc doc-heading">x</h2><h1 id="1">1</h1>'
                      '<div class="doc-signature">f(_a=1)</div></div><footer><h4>m</h4></footer>')
    assert stray.object_ids == ["x"] and stray.other_headings == ["p", "1"]
    assert stray.signatures == ["f(_a=1)"]
    assert OPERAND_EMPHASIS.findall("exp(-k<strong>2 / (2 sigma</strong>2)") == ["k<strong>"]
    assert not OPERAND_EMPHASIS.findall("<p><strong>Law.</strong> the <em>exact</em> law</p>")


def test_extension_hides_private_parameters_and_links_roles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "m.py").write_text(
        'class Lattice: ...\n\ndef f(a, *, _b=1):\n    """See :class:`~m.Lattice`, :class:`Lattice` and :func:`g`."""\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    extensions = griffe.load_extensions(f"{ROOT / 'docs' / 'griffe_securedp.py'}:SecuredpDocstrings")
    f = griffe.load("m", search_paths=[tmp_path], extensions=extensions)["f"]
    assert [p.name for p in f.parameters] == ["a"]
    doc = f.docstring.value
    assert '<autoref identifier="m.Lattice" optional><code>Lattice</code></autoref>' in doc
    assert doc.count('identifier="m.Lattice"') == 2, "a relative name is resolved in the object's scope"
    assert '<autoref identifier="g" optional><code>g</code></autoref>' in doc
