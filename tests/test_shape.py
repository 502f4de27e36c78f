"""Every function in securedp is short enough to read whole, and takes few enough parameters to call by heart.

Issue 41.4: no function over :data:`MAX_LINES` lines (from its ``def`` line to its last line, docstring
included, decorators not), and no internal function over :data:`MAX_PARAMETERS` parameters. A parameter is
every name in the signature: positional, keyword-only, ``*args`` and ``**kwargs`` each count one; the first
parameter of a method (``self`` or ``cls``) does not. Nested functions count as functions of their own.
A *public* function (one exported by ``securedp``, ``securedp.tables`` or ``securedp.planning``, or the
signature of a statistic's public ``prepare_NAME`` and ``NAME`` in the one list of statistics) keeps its
keyword signature, however long; what travels together inside goes as one named value.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib
from collections.abc import Iterator

import securedp

ROOT = pathlib.Path(securedp.__file__).parent
MAX_LINES = 80
MAX_PARAMETERS = 10
PUBLIC_PACKAGES = ("securedp", "securedp.tables", "securedp.planning")
PENDING: frozenset[str] = frozenset()
"""Internal functions over the parameter limit that another change of issue 41 rewrites; emptied on merge."""


def functions(text: str) -> Iterator[tuple[str, int, int]]:
    """``(qualified name, lines, parameters)`` of every function defined in the module source ``text``."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = child.args
                names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
                if isinstance(node, ast.ClassDef) and names[:1] in (["self"], ["cls"]):
                    names = names[1:]
                assert child.end_lineno is not None
                yield prefix + child.name, child.end_lineno - child.lineno + 1, len(names)
                yield from walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    return walk(ast.parse(text), "")


def public_functions() -> set[str]:
    """``"path:qualname"`` of each function the public packages export (relative to ``securedp/``)."""
    found = set()
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            target = inspect.unwrap(getattr(module, name))
            if inspect.isfunction(target):
                path = pathlib.Path(inspect.getsourcefile(target) or "").resolve()
                found.add(f"{path.relative_to(ROOT.resolve()).as_posix()}:{target.__qualname__}")
    from securedp.tables.spec import STATISTICS  # a statistic's signature is its public prepare_NAME's and NAME's

    for name in STATISTICS:
        entry = STATISTICS[name]
        if entry.signature is not None:
            path = pathlib.Path(inspect.getsourcefile(entry.signature) or "").resolve()
            found.add(f"{path.relative_to(ROOT.resolve()).as_posix()}:{entry.signature.__qualname__}")
    return found


def every_function() -> list[tuple[str, int, int]]:
    return [(f"{path.relative_to(ROOT).as_posix()}:{name}", lines, parameters)
            for path in sorted(ROOT.rglob("*.py"))
            for name, lines, parameters in functions(path.read_text(encoding="utf-8"))]


def test_no_function_is_over_80_lines() -> None:
    long = [(where, lines) for where, lines, _ in every_function() if lines > MAX_LINES]
    assert long == [], f"functions over {MAX_LINES} lines: split them into named steps"


def test_no_internal_function_takes_over_10_parameters() -> None:
    public = public_functions()
    many = [(where, count) for where, _, count in every_function()
            if count > MAX_PARAMETERS and where not in public and where not in PENDING]
    assert many == [], f"internal functions over {MAX_PARAMETERS} parameters: group what travels together"


def test_the_counts_see_what_they_count() -> None:
    """Controls: the measure reads methods, nested functions and every kind of parameter, and the public
    set holds the long public signatures (so the rule above is not passed by reading nothing)."""
    source = (ROOT / "tables" / "table.py").read_text(encoding="utf-8")
    measured = {name: (lines, count) for name, lines, count in functions(source)}
    assert measured["prepare_table"][1] == 18  # the public signature, kept whole
    assert "PreparedTable.execute" in measured and measured["PreparedTable.execute"][1] == 1  # rng, not self
    assert "tables/table.py:prepare_table" in public_functions()
    assert "planning/contributions.py:analyze_contributions" in public_functions()
    sample = "class C:\n    def m(self, a, /, b, *c, d, **e):\n        def g(x):\n            pass\n"
    assert {name: (lines, count) for name, lines, count in functions(sample)} == {"C.m": (3, 5), "C.m.g": (2, 1)}


def test_every_prepared_release_holds_a_route_of_the_layer_that_prepared_it() -> None:
    """Issue 41.4: execution flows one way. A prepared release is a value plus a route, a named class of the
    layer that owns the route (a table's, its one cell's, a selection's, a planner's); none of securedp's
    is a function wrapped as a caller's (:class:`~securedp.ledger.release.RunRoute`)."""
    import polars as pl

    from securedp.ledger.release import RunRoute
    from securedp.planning.contributions import prepare_contribution_histogram

    people = pl.DataFrame({"p": [1, 2, 3, 3], "g": ["a", "b", "a", "b"], "x": [1, 2, 3, 4]})
    prepared = {
        "tables.table.TableRoute": securedp.prepare_table(people, group_by=["g"], keys=["a", "b"], epsilon=1),
        "tables.table.CellRoute": securedp.prepare_sum([1, 2], bounds=(0, 2), epsilon=1),
        "mechanisms.selection.SelectionRoute": securedp.prepare_exponential_mechanism([1, 2], epsilon=1,
                                                                                      sensitivity=1),
        "planning.bounds.FinishedRoute": securedp.prepare_private_bounds([1, 2, 3], epsilon=1),
        "planning.noisy_counts.NoisyCounts": prepare_contribution_histogram(people, id_column="p", group_by="g",
                                                                           epsilon=1),
    }
    for name, release in prepared.items():
        route = type(release.route)
        assert f"{route.__module__}.{route.__qualname__}" == f"securedp.{name}"
        assert not isinstance(release.route, RunRoute)
        assert release.execute(securedp.ChaChaSource(bytes(32))).statistic == release.statistic
    wrapped = securedp.PreparedRelease("count", prepared["tables.table.CellRoute"].epsilon, None,
                                       prepared["tables.table.CellRoute"].run)
    assert isinstance(wrapped.route, RunRoute)  # a caller's own function, as before routes
    assert wrapped.execute(securedp.ChaChaSource(bytes(32))) == \
        prepared["tables.table.CellRoute"].execute(securedp.ChaChaSource(bytes(32)))
