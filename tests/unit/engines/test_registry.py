"""The engine protocol stands apart from the engines, and the command's engines come from the registry."""

from __future__ import annotations

import ast
from pathlib import Path

import securedp.engines.protocol as protocol
from securedp.cli.main import build_parser
from securedp.engines.registry import DEFAULT, ENGINES, engine_named, engine_names


def test_the_protocol_imports_no_engine_and_no_frame_library() -> None:
    """Its types name Polars frames for type checkers only: nothing of an engine runs in the protocol."""
    tree = ast.parse(Path(protocol.__file__).read_text(encoding="utf-8"))
    run = [node for node in tree.body if not (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test))]
    imported = {node.module for top in run for node in ast.walk(top)
                if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {alias.name for top in run for node in ast.walk(top) if isinstance(node, ast.Import)
                 for alias in node.names}
    assert not [name for name in imported if name.startswith(("securedp.engines", "pyspark", "polars", "pandas"))]


def test_the_commands_engine_choices_are_the_registrys() -> None:
    parser = build_parser()
    release = next(a for a in parser._subparsers._group_actions[0].choices["release"]._actions
                   if "--engine" in a.option_strings)
    assert release.choices == engine_names() == [DEFAULT, *sorted(e.name for e in ENGINES if e.name != DEFAULT)]
    assert release.default == DEFAULT
    assert all(engine_named(name).name == name for name in engine_names())
