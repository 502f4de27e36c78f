"""Static types of the functions made from the one list of statistics (issue 41.2).

``prepare_NAME``, ``NAME`` and ``Session.NAME`` are made at import from :data:`securedp.tables.spec.STATISTICS`,
so ``help()`` and IDEs see their real signatures, but a static checker (mypy, pyright) reads source, not what
runs. ``securedp/tables/signatures.pyi`` states the same signatures for it: it is generated from the list by
:func:`stub_text`, and this test fails when the file differs from what the list gives (rewrite it with
``python tests/unit/tables/test_signatures_stub.py``). So the list stays the one definition.
"""

from __future__ import annotations

import ast
import inspect
import pathlib
import sys

import securedp
from securedp.session.session import Session
from securedp.tables import one_column
from securedp.tables.spec import STATISTICS

STUB = pathlib.Path(securedp.__file__).parent / "tables" / "signatures.pyi"
HEADER = '''# ruff: noqa: A001 - sum is the statistic's name
"""Typed signatures of each statistic's public functions, for static checkers only (never imported at run
time).

GENERATED from securedp.tables.spec.STATISTICS by tests/unit/tables/test_signatures_stub.py: do not edit; rewrite
it with `python tests/unit/tables/test_signatures_stub.py` when the list changes (the test fails until then).
"""

from collections.abc import Sequence
from typing import Any

from securedp.hazmat.bits.source import RandomSource
from securedp.ledger.release import PreparedRelease, Release
'''


def _default(value: object) -> str:
    """A default as the stub states it: a literal (``None``, an int, a string) as itself, anything else ``...``."""
    return repr(value) if value is None or type(value) in (int, str, bool) else "..."


def _declaration(name: str, function: object, indent: str = "") -> str:
    signature = inspect.signature(function)  # type: ignore[arg-type]
    inner = indent + "    "
    parameters = "".join(f"{inner}{text},\n" for text in _render(signature))
    return f"{indent}def {name}(\n{parameters}{indent}) -> {signature.return_annotation}: ...\n"


def _render(signature: inspect.Signature) -> list[str]:
    """``a: T = d``, ``/``, ``b: U``, ``*``, ``c: V = e``: inspect's layout of kinds, each annotation as its
    text."""
    out, previous = [], None
    for parameter in signature.parameters.values():
        kind = parameter.kind
        if previous is inspect.Parameter.POSITIONAL_ONLY and kind is not inspect.Parameter.POSITIONAL_ONLY:
            out.append("/")
        if kind is inspect.Parameter.KEYWORD_ONLY and previous not in (inspect.Parameter.KEYWORD_ONLY,
                                                                      inspect.Parameter.VAR_POSITIONAL):
            out.append("*")
        star = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}.get(kind, "")
        text = star + parameter.name
        if parameter.annotation is not parameter.empty:
            text += f": {parameter.annotation}"
        if parameter.default is not parameter.empty:
            text += f" = {_default(parameter.default)}"
        out.append(text)
        previous = kind
    if previous is inspect.Parameter.POSITIONAL_ONLY:
        out.append("/")
    return out


def stub_text() -> str:
    """The stub the list of statistics gives: every ``prepare_NAME`` and ``NAME``, and ``Session``'s methods."""
    names = [name for name in STATISTICS if STATISTICS[name].signature is not None]
    exported = sorted([f"prepare_{name}" for name in names] + names)
    parts = [HEADER, "\n__all__ = [\n" + "".join(f'    "{name}",\n' for name in exported) + "]\n\n"]
    for name in names:
        parts.append(_declaration(f"prepare_{name}", getattr(one_column, f"prepare_{name}")))
        parts.append(_declaration(name, getattr(one_column, name)))
    parts.append("\n\nclass SessionStatistics:\n")
    parts.append('    """The methods a ``Session`` has for each statistic of one column."""\n\n')
    parts.extend(_declaration(name, getattr(Session, name), "    ") for name in names)
    return "".join(parts)


def test_the_stub_states_what_the_list_of_statistics_makes() -> None:
    assert STUB.read_text(encoding="utf-8") == stub_text(), (
        f"{STUB} is out of date: run python tests/unit/tables/test_signatures_stub.py")


def _stub_parameters(function: ast.FunctionDef) -> list[tuple[str, str]]:
    """``(name, kind)`` of each parameter a stub declares, read from the stub's text (not from the generator)."""
    args = function.args
    return ([(a.arg, "POSITIONAL_ONLY") for a in args.posonlyargs]
            + [(a.arg, "POSITIONAL_OR_KEYWORD") for a in args.args]
            + [(a.arg, "KEYWORD_ONLY") for a in args.kwonlyargs])


def _runtime_parameters(function: object) -> list[tuple[str, str]]:
    return [(p.name, p.kind.name) for p in inspect.signature(function).parameters.values()]  # type: ignore[arg-type]


def test_every_function_the_stub_declares_exists_at_run_time_with_those_parameters() -> None:
    """The stub file, read as a static checker reads it, declares what runs: each top-level function is the
    public one of that name (``securedp.NAME`` and ``securedp.tables.one_column.NAME``) with the same parameters in
    the same kinds, and each method of ``SessionStatistics`` is ``Session``'s."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    declared = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    methods = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    assert len(declared) == 2 * len(methods[0].body[1:]) > 0  # prepare_NAME and NAME, and one method each
    for function in declared:
        runtime = getattr(one_column, function.name)
        assert getattr(securedp, function.name) is runtime
        assert _stub_parameters(function) == _runtime_parameters(runtime), function.name
    for method in methods[0].body[1:]:  # after the class docstring
        assert isinstance(method, ast.FunctionDef)
        assert _stub_parameters(method) == _runtime_parameters(getattr(Session, method.name)), method.name


if __name__ == "__main__":
    STUB.write_text(stub_text(), encoding="utf-8")
    sys.stdout.write(f"wrote {STUB}\n")
