"""docs/api.md lists every public name with its current signature and docstring."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import securedp

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_api_reference_is_complete_and_current() -> None:
    spec = importlib.util.spec_from_file_location("gen_api", DOCS / "gen_api.py")
    gen_api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_api)
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    for name in securedp.__all__:
        assert f"## `{name}`" in text, f"{name} is missing from docs/api.md"
    assert text == gen_api.render(), "docs/api.md is out of date: run python docs/gen_api.py"
