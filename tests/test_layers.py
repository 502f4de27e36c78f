"""Imports inside securedp point only downwards through its layers, and no file imports itself in a circle.

The layer of a module is given by its package; a module may import from its
own layer or any layer below, never above. This test reads every module's
imports with ``ast`` and fails on the first upward import.

Within a layer any import is allowed, so a circle of files is checked on its own: the graph of every
import that runs (at module level or inside a function; ``from p import m`` of a module ``m`` is an
arrow to ``p.m``, of a name an arrow to ``p``) has no cycle. An import under ``if TYPE_CHECKING:``
never runs: it names, for the type checker, the type of a caller (a method's ``Session``), so it
takes part in the layer test above but not in the cycle test.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import securedp

ROOT = pathlib.Path(securedp.__file__).parent

# -- the layers: begin --
LAYERS = {  # one layer per package; the longest prefix of a module's name gives its layer
    "securedp._version": 0,
    "securedp.deprecation": 0,  # the one helper retiring a name, used by any layer
    "securedp.hazmat": 0,  # exact, bits, then samplers, generator, selftest (inner order: test below)
    "securedp.privacy": 1,  # costs, noise laws and their accuracy: below every statistic, engine and planner
    "securedp.reading": 1,  # the one reader
    "securedp.lattice": 2,  # fixed-point values, and a histogram's categories and bins
    "securedp.bounding": 2,  # the per-person rule, the parts of a partition, who reads an error
    "securedp.ledger": 2,  # a release, its record, the budget it is charged to
    "securedp.mechanisms": 3,  # the statistics and selections, beside the engines
    "securedp.engines": 3,  # the exact integers per key, beside the mechanisms
    "securedp.tables": 4,  # the one route: every release is a table
    "securedp.session": 5,  # Session: charges, partitions, the error boundary
    "securedp.planning": 5,  # beside session: it charges its releases to a Session
    "securedp.accounting": 5,  # deprecated aliases of the old paths (ledger, session), for one release
    "securedp.audit": 6,
    "securedp.cli": 7,
}
TOP = 7  # securedp/__init__.py and securedp/__main__.py, beside the cli
MOST_LAYERS = 8
"""Issue 41: a reader counts the layers on one hand and a half (every distinct number, the top's too)."""


def test_at_most_eight_layers() -> None:
    assert len({*LAYERS.values(), TOP}) <= MOST_LAYERS, sorted({*LAYERS.values(), TOP})


# -- the layers: end --


def layer_of(module: str) -> int:
    if module in ("securedp", "securedp.__main__"):
        return TOP
    best = None
    for prefix, layer in LAYERS.items():
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    if best is None:
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


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_imports(node: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node`` that runs: all of them but those under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            found.append(child)
        elif isinstance(child, ast.If) and _is_type_checking(child):
            found.extend(_runtime_imports(ast.Module(body=child.orelse, type_ignores=[])))
        else:
            found.extend(_runtime_imports(child))
    return found


def import_graph() -> dict[str, set[str]]:
    """``{module: the securedp modules it imports}``, over every import that runs (see the module)."""
    names = {module_name(path) for path in MODULES}
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        arrows: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                arrows.update(alias.name for alias in node.names if alias.name in names)
            elif node.module and node.level == 0 and node.module in names:
                for alias in node.names:
                    arrows.add(inner if (inner := f"{node.module}.{alias.name}") in names else node.module)
        graph[module_name(path)] = arrows
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of ``graph``: its strongly connected components of more than one module, or of one
    importing itself (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, arrows = work[-1]
            target = next(arrows, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(sorted(component))
    return found


def test_cycles_finds_a_circle_and_only_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"a"}, "b": set()}) == [["a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_circle_of_files() -> None:
    """No file imports itself through others: the import graph that runs has no cycle (see the module)."""
    assert cycles(import_graph()) == []


SIDE_BY_SIDE = ("securedp.mechanisms", "securedp.engines")
"""The statistics and the engines stand side by side: neither imports the other (issue 41)."""
HAZMAT_BASE = ("securedp.hazmat.exact", "securedp.hazmat.bits")
"""Exact numbers and random bits import nothing of the samplers, the generator or the self-test above them."""


def _imported(path: pathlib.Path) -> list[str]:
    """Every module name an import statement of ``path`` names (at any depth, under ``TYPE_CHECKING`` too)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_engines_and_mechanisms_stand_side_by_side() -> None:
    """A statistic needs no engine, an engine no statistic: they meet only in the tables above them."""
    for path in MODULES:
        name = module_name(path)
        for one, other in (SIDE_BY_SIDE, SIDE_BY_SIDE[::-1]):
            if _within(name, one):
                assert not [t for t in _imported(path) if _within(t, other)], f"{name} imports {other}"


def test_hazmat_exact_and_bits_import_nothing_above_them() -> None:
    for path in MODULES:
        name = module_name(path)
        if name.startswith(HAZMAT_BASE):
            for target in _imported(path):
                if _within(target, "securedp"):
                    assert target.startswith(HAZMAT_BASE), f"{name} imports {target}"


def test_every_module_has_a_layer() -> None:
    for path in MODULES:
        layer_of(module_name(path))


LONGEST = 400
"""The most lines a module may have (issue 27: small modules with one clear job)."""


def test_every_module_is_at_most_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in sorted(ROOT.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > LONGEST}
    assert not long, f"modules over {LONGEST} lines: {long}"
