"""A griffe extension that adapts securedp's docstrings to the API pages built by mkdocstrings.

securedp's docstrings are reST-flavoured: ``double backticks`` (already a Markdown code span) and
Sphinx roles such as ``:class:`~securedp.Session```. This extension, loaded by ``mkdocs.yml``:

- documents a function *derived* at import time (``count = release_function(prepare_count, ...)``,
  which static analysis sees only as an attribute, or made from the one list of statistics, which it does
  not see at all: ``securedp.tables.one_column.count``, ``Session.count``) as the function it is at runtime:
  its real signature (``inspect.signature``, so ``__signature__``) and its docstring;
- turns every role into an *optional* cross-reference: a link when the target is rendered somewhere
  in the site, plain code otherwise (``~`` keeps only the last dotted component as the title, as in
  Sphinx; a name that is not a full path is resolved where the docstring stands), so
  ``mkdocs build --strict`` never fails on a role naming an undocumented module;
- escapes a ``>`` or ``#`` that a line of prose happens to start with (``> 0`` wrapped from
  ``rational > 0``; ``#1`` wrapped from ``A.1 #1``), which Markdown would read as a quote or a heading;
- escapes a ``*`` written as an operator between operands (``k**2 / (2 sigma**2)``, ``a*b``) outside
  code spans, which Markdown would otherwise read as emphasis;
- turns a reST *simple table* (columns framed by ``=====  =====`` borders, which Markdown would read
  as a heading underline) into a Markdown table, rows continued on lines whose first column is
  blank as in reST;
- drops private parameters (a name with a leading underscore, such as ``ChaChaSource(_labels=...)``)
  from every signature: they are internal plumbing, not API.
"""

from __future__ import annotations

import ast
import html
import importlib
import inspect
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`(~?)([^`]+)`")
BORDER = re.compile(r"^ *=+(?: +=+)+ *$")
CELL_GAP = re.compile(r" {2,}")
CODE_SPAN = re.compile(r"(``.+?``|`[^`]+`)")
LINE_MARKER = re.compile(r"^( {0,3})([>#])", re.M)
OPERATOR_STAR = re.compile(r"(?<=[\w)\]])(\*{1,2})(?=[\w(\[-])")


def annotation(value: object, parent: griffe.Module | griffe.Class) -> str | griffe.Expr | None:
    """A runtime annotation as griffe stores one (an expression resolved in ``parent``'s scope when it parses)."""
    if value is inspect.Parameter.empty:
        return None
    text = value if isinstance(value, str) else getattr(value, "__name__", repr(value))
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return text
    found: str | griffe.Expr | None = griffe.safe_get_annotation(node, parent)
    return found


def runtime_function(
    name: str, function: Any, parent: griffe.Module | griffe.Class, static: griffe.Object, loader: griffe.GriffeLoader
) -> griffe.Function:
    """The griffe function for a runtime ``function`` named ``name`` in ``parent``, where ``static`` stood."""
    signature = inspect.signature(function)
    parameters = griffe.Parameters(*(
        griffe.Parameter(
            p.name,
            annotation=annotation(p.annotation, parent),
            kind=griffe.ParameterKind(p.kind.description),
            default=None if p.default is inspect.Parameter.empty else repr(p.default),
        )
        for p in signature.parameters.values()
    ))
    doc = inspect.getdoc(function)
    return griffe.Function(
        name,
        parameters=parameters,
        returns=annotation(signature.return_annotation, parent),
        docstring=None if doc is None else griffe.Docstring(doc, parser=loader.docstring_parser,
                                                            parser_options=loader.docstring_options),
        lineno=static.lineno,
        endlineno=static.endlineno,
    )


def document_derived_functions(
    owner: griffe.Module | griffe.Class, runtime: object, loader: griffe.GriffeLoader
) -> None:
    """Replace each public attribute of ``owner`` (and of its classes) that is a function at runtime."""
    for name, member in list(owner.members.items()):
        if name.startswith("_") or isinstance(member, griffe.Alias) or not hasattr(runtime, name):
            continue
        live = inspect.getattr_static(runtime, name)
        if isinstance(member, griffe.Attribute) and inspect.isfunction(live):
            owner.set_member(name, runtime_function(name, live, owner, member, loader))
        elif isinstance(member, griffe.Class) and owner.is_module:
            document_derived_functions(member, live, loader)
    for name, live in list(vars(runtime).items()):  # made at import time from a list (the statistics' functions
        if name.startswith("_") or name in owner.members or not inspect.isfunction(live):  # and Session methods)
            continue
        made_here = live.__module__ == owner.path if owner.is_module else live.__qualname__ == f"{owner.name}.{name}"
        if made_here:
            owner.set_member(name, runtime_function(name, live, owner, owner, loader))


def cross_reference(obj: griffe.Object, match: re.Match[str]) -> str:
    """The optional autorefs link for one role in ``obj``'s docstring.

    ``:func:`~a.b``` links to ``a.b`` titled ``b``; a name that is not a full path (``:class:`Lattice```)
    is resolved in ``obj``'s scope, as Python would resolve it there.
    """
    short, written = match.group(1), match.group(2).strip()
    title = written.rsplit(".", 1)[-1] if short else written
    head, dot, rest = written.partition(".")
    try:
        target = obj.resolve(head) + dot + rest
    except griffe.NameResolutionError:
        target = written
    return f'<autoref identifier="{html.escape(target)}" optional><code>{html.escape(title)}</code></autoref>'


def escape_operators(text: str) -> str:
    """``text`` with every ``*`` or ``**`` between operands, and a ``>`` or ``#`` starting a line, escaped.

    Code spans are left alone.
    """
    parts = CODE_SPAN.split(text)
    parts[::2] = [OPERATOR_STAR.sub(lambda m: "\\*" * len(m.group(1)), part) for part in parts[::2]]
    return LINE_MARKER.sub(r"\1\\\2", "".join(parts))


def table_row(line: str, starts: list[int]) -> tuple[int, list[str]]:
    """The first column a table line writes in, and its cells from there (split at runs of two spaces)."""
    text = line.strip()
    first = max(i for i, start in enumerate(starts) if start <= len(line) - len(line.lstrip()))
    cells = CELL_GAP.split(text, maxsplit=len(starts) - 1 - first)
    return first, cells + [""] * (len(starts) - first - len(cells))


def markdown_table(header: list[str], rows: list[str], starts: list[int]) -> list[str]:
    """The Markdown lines of a reST simple table's header and body lines."""
    table: list[list[str]] = []
    for part in (header, rows):
        for line in part:
            if not line.strip():
                continue
            first, cells = table_row(line, starts)
            if first == 0 or not table:
                table.append([""] * first + cells)
            else:  # a continuation line: its cells extend the row above
                table[-1][first:] = [f"{old} {new}".strip() for old, new in zip(table[-1][first:], cells, strict=True)]
    if not header:
        table.insert(0, [""] * len(starts))
    escaped = [[cell.replace("|", "\\|") for cell in row] for row in table]
    lines = ["| " + " | ".join(row) + " |" for row in escaped]
    return [lines[0], "|" + "---|" * len(starts), *lines[1:]]


def rest_tables(text: str) -> str:
    """``text`` with every reST simple table turned into a Markdown table (anything else unchanged)."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        borders = [j for j in range(i, len(lines)) if BORDER.match(lines[j]) and lines[j] == lines[i]][:3]
        if not BORDER.match(lines[i]) or len(borders) < 2:
            out.append(lines[i])
            i += 1
            continue
        closing = borders[2] if len(borders) == 3 and borders[1] + 1 < len(lines) and lines[borders[1] + 1].strip() \
            else borders[1]
        starts = [m.start() for m in re.finditer("=+", lines[i])]
        header, rows = (lines[i + 1 : borders[1]], lines[borders[1] + 1 : closing]) if closing != borders[1] \
            else ([], lines[i + 1 : closing])
        out += markdown_table(header, rows, starts)
        i = closing + 1
    return "\n".join(out)


def public_parameters(parameters: griffe.Parameters) -> griffe.Parameters:
    """``parameters`` without those whose name starts with an underscore."""
    return griffe.Parameters(*(p for p in parameters if not p.name.startswith("_")))


class SecuredpDocstrings(griffe.Extension):
    """Document derived functions, rewrite roles and hide private parameters once griffe has loaded the package."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:  # noqa: ARG002 - griffe's hook signature
        modules = [pkg]
        while modules:
            module = modules.pop()
            document_derived_functions(module, importlib.import_module(module.path), loader)
            modules += [  # never __main__: importing it would run the command line
                member for name, member in module.modules.items()
                if isinstance(member, griffe.Module) and not name.startswith("_")
            ]

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:  # noqa: ARG002 - griffe's hook signature
        if obj.docstring is not None:
            linked = ROLE.sub(lambda match: cross_reference(obj, match), obj.docstring.value)
            obj.docstring.value = rest_tables(escape_operators(linked))
        if isinstance(obj, griffe.Function):
            obj.parameters = public_parameters(obj.parameters)
