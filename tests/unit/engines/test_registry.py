"""The engine protocol stands apart from the engines, and the command's engines come from the registry."""

from __future__ import annotations

import ast
from pathlib import Path

import securedp.engines.protocol as protocol
from securedp.cli.main import build_parser
from securedp.engines.registry import DEFAULT, ENGINES, engine_named, engine_names


def test_the_protocol_imports_no_engine() -> None:
    tree = ast.parse(Path(protocol.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not [name for name in imported if name.startswith(("securedp.engines.", "pyspark"))], imported


def test_the_commands_engine_choices_are_the_registrys() -> None:
    parser = build_parser()
    release = next(a for a in parser._subparsers._group_actions[0].choices["release"]._actions  # noqa: SLF001
                   if "--engine" in a.option_strings)
    assert release.choices == engine_names() == [DEFAULT, *sorted(e.name for e in ENGINES if e.name != DEFAULT)]
    assert release.default == DEFAULT
    assert all(engine_named(name).name == name for name in engine_names())
