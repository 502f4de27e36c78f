"""What `pip install` brings: the extras the docs name exist and say what they pin (issue 19.10, 19.11)."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_spark_extra_pins_a_pandas_that_pyspark_supports() -> None:
    """PySpark (4.3) warns on every run under pandas >= 3: the [spark] extra keeps pandas below 3."""
    spark = PROJECT["optional-dependencies"]["spark"]
    assert any(r.replace(" ", "").startswith("pandas") and "<3" in r.replace(" ", "") for r in spark)


def test_every_extra_a_page_asks_for_exists() -> None:
    extras = set(PROJECT["optional-dependencies"])
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    asked = set()
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for start in range(len(text)):
            if text.startswith('".[', start):
                asked.update(text[start + 3:text.index("]", start)].split(","))
    assert asked and asked <= extras, sorted(asked - extras)


def test_no_page_installs_securedp_from_the_package_index() -> None:
    """securedp is installed from a checkout: `pip install securedp` would fetch someone else's package."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        assert "pip install securedp" not in text and 'pip install "securedp' not in text, page.name
