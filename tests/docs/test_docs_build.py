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
from pathlib import Path

import pytest

from _site import ROOT, build_site


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
