"""One deprecation helper: every retired name warns through :mod:`securedp.deprecation`, at the caller's line."""

from __future__ import annotations

import ast
import importlib
import warnings
from pathlib import Path

import pytest

import securedp
from securedp.deprecation import deprecated, moved_module

PACKAGE = Path(securedp.__file__).parent
MOVED = [("securedp.tables.engines", "securedp.engines.registry", "engine_for"),
         ("securedp.tables.frames", "securedp.engines.frames", "read_table"),
         ("securedp.tables.keys", "securedp.engines.keys", "PublicKeys"),
         ("securedp.engines.messages", "securedp.bounding.messages", "SALT_BYTES"),
         ("securedp.engines.bounding", "securedp.engines.polars.bounding", "bound_and_aggregate"),
         ("securedp.engines.digest", "securedp.bounding.digest", "message")]


@pytest.mark.parametrize(("old", "new", "name"), MOVED)
def test_a_moved_module_resolves_each_name_with_a_warning_at_the_callers_line(old: str, new: str, name: str) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f"{old}.{name} is deprecated .* use {new}.{name}") as caught:
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)
    assert caught[0].filename == __file__
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018 - the attribute access is the test


def test_a_deprecated_function_warns_at_its_callers_line() -> None:
    def old() -> int:
        deprecated("old()", "new()")
        return 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert old() == 1
    assert caught[0].category is DeprecationWarning and caught[0].filename == __file__
    assert str(caught[0].message) == "old() is deprecated and will be removed in the next release: use new()"


def test_moved_module_names_unknown_attributes_as_the_new_module_does() -> None:
    getter = moved_module("x.y", importlib.import_module("securedp.bounding.digest"))
    with pytest.raises(AttributeError, match="no_such"):
        getter("no_such")


def test_no_module_warns_deprecation_by_itself() -> None:
    """Every DeprecationWarning of the package goes through the one helper."""
    for path in PACKAGE.rglob("*.py"):
        if path.name == "deprecation.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        assert "DeprecationWarning" not in names, path
