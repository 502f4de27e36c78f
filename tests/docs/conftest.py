"""The documentation site, built once per test process as CI builds it (see ``_site.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _site import ROOT, build_site


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's site, built with ``mkdocs build --strict``; fails on a non-zero status or any warning.

    Skipped when the docs extra (``pip install ".[docs]"``) is not installed.
    """
    pytest.importorskip("mkdocstrings_handlers.python", reason='the docs extra is not installed: pip install ".[docs]"')
    built = build_site(ROOT / "mkdocs.yml", tmp_path_factory.mktemp("site"))
    assert built.status == 0 and not built.warnings, f"mkdocs build --strict failed or warned:\n{built.output}"
    return built.site
