"""Imports inside securedp point only downwards through its layers.

The layer of a module is given by its package; a module may import from its
own layer or any layer below, never above. This test reads every module's
imports with ``ast`` and fails on the first upward import.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import securedp

ROOT = pathlib.Path(securedp.__file__).parent

LAYERS = {  # one layer per package
    "securedp.hazmat.exact": 0,
    "securedp.hazmat.bits": 0,
    "securedp.deprecation": 0,  # the one helper retiring a name, used by any layer
    "securedp.hazmat.samplers": 1,
    "securedp.privacy": 2,  # costs, noise laws and their accuracy: below every statistic, engine and planner
    "securedp.reading": 2,
    "securedp.lattice": 3,
    "securedp.bounding": 4,
    "securedp.mechanisms": 5,
    "securedp.engines": 6,
    "securedp.tables": 7,
    "securedp.accounting": 8,
    "securedp.planning": 8,  # beside accounting: it charges its releases to a Session
    "securedp.audit": 9,
    "securedp.cli": 10,
}
TOP = 11  # securedp/__init__.py and securedp/__main__.py sit above everything


def layer_of(module: str) -> int:
    best = None
    for prefix, layer in LAYERS.items():
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    if best is None:
        if module in ("securedp", "securedp.__main__"):
            return TOP
        if module == "securedp._version" or module == "securedp.hazmat":
            return -1
        raise AssertionError(f"{module} belongs to no declared layer: add it to LAYERS")
    return best[1]


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = sorted(ROOT.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_downwards(path: pathlib.Path) -> None:
    name = module_name(path)
    own = layer_of(name)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets = [node.module]
        for target in targets:
            if target == "securedp" or target.startswith("securedp."):
                assert layer_of(target) <= own, f"{name} (layer {own}) imports {target} (layer {layer_of(target)})"


def test_every_module_has_a_layer() -> None:
    for path in MODULES:
        layer_of(module_name(path))


LONGEST = 400
"""The most lines a module may have (issue 27: small modules with one clear job)."""


def test_every_module_is_at_most_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in sorted(ROOT.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > LONGEST}
    assert not long, f"modules over {LONGEST} lines: {long}"
