"""The package type-checks cleanly under mypy (configured in ``[tool.mypy]`` of pyproject.toml).

Skipped when mypy is not installed (it is in the ``test`` extra). The cache
goes to a fresh temporary directory, so the check is a full, cold run and
never reuses or pollutes the working tree's ``.mypy_cache``.
"""

from __future__ import annotations

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "securedp"
PYPROJECT = ROOT / "pyproject.toml"


def test_mypy_reports_no_errors(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("mypy")
    from mypy import api
    if not (PACKAGE / "__init__.py").is_file() or not PYPROJECT.is_file():
        pytest.skip("needs the source tree (securedp/ next to pyproject.toml)")
    stdout, stderr, status = api.run([
        "--config-file", str(PYPROJECT),
        "--cache-dir", str(tmp_path / "mypy_cache"),
        "--no-error-summary",
        "--show-error-codes",
        str(PACKAGE),
    ])
    assert status == 0 and not stdout.strip(), f"mypy found problems:\n{stdout}{stderr}"
