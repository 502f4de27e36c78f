"""The threat model lives in SECURITY.md only; the documentation site shows it through docs/hooks.py."""

from __future__ import annotations

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_site_page_shows_security_md_threat_model_whole() -> None:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = (ROOT / "docs" / "threat-model.md").read_text(encoding="utf-8")
    shown = hooks.on_page_markdown(page, page=None)
    security = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    section = security[security.index("## Threat model"):]
    threats = [line.split("|")[1].strip() for line in section.splitlines()
               if line.startswith("| ") and not line.startswith("| threat |")]
    assert len(threats) > 15
    for threat in threats:
        assert f"| {threat} |" in shown, threat
    assert "## Not defended" in shown and "docs/audit.md" not in shown  # links made relative to docs/
    assert "| Floating-point porosity" not in page  # the page itself holds no copy
