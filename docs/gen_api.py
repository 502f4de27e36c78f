"""Write docs/api.md: every name in ``securedp.__all__`` with its signature and docstring.

Run ``python docs/gen_api.py`` after changing a public name or docstring;
``tests/docs/test_api_doc.py`` fails when docs/api.md is out of date. For a
class, its public methods and properties follow it. Sphinx roles such as
``:class:`~securedp.Session``` are rendered as code spans.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import securedp

OUT = Path(__file__).resolve().parent / "api.md"
_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc):`~?([^`]+)`")

HEADER = """# API reference

Every public name of `securedp` (its `__all__`), with its signature and exact semantics, generated
from the docstrings by `docs/gen_api.py`. Exact numbers: wherever a parameter is a number it may be
an `int`, a `Fraction`, a decimal string such as `"0.1"` (one tenth exactly), a ratio string such
as `"1/3"`, a `Decimal`, a gmpy2 number, or a float taken at its exact binary value
(see [Concepts](concepts.md)). Lower-level modules (`securedp.hazmat`, `securedp.lattice`,
`securedp.audit`) are documented in their docstrings.
"""



def clean(doc: str | None) -> str:
    """A docstring as Markdown: dedented, roles as code spans, ``x`` as `x`."""
    text = inspect.cleandoc(doc or "(no docstring)")
    text = _ROLE.sub(lambda m: f"``{m.group(1).split('.')[-1] if m.group(0).count('~') else m.group(1)}``", text)
    return text.replace("``", "`")


class _Annotation(str):
    """An annotation kept as written (``from __future__ import annotations``), shown without quotes."""

    def __repr__(self) -> str:
        return str(self)


def signature(obj: object, *, returns: bool = True) -> str:
    try:
        sig = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(...)"

    def plain(annotation: object) -> object:
        return _Annotation(annotation) if isinstance(annotation, str) else annotation

    params = [p.replace(annotation=plain(p.annotation)) for p in sig.parameters.values()]
    ret = plain(sig.return_annotation) if returns else inspect.Signature.empty
    return str(sig.replace(parameters=params, return_annotation=ret))


def members(cls: type) -> list[str]:
    lines = []
    found: dict[str, object] = {}
    for base in reversed(cls.__mro__[:-1]):  # own definitions override inherited ones
        found.update(vars(base))
    for name, member in sorted(found.items()):
        if name.startswith("_"):
            continue
        if isinstance(member, property):
            lines.append(f"- **`{name}`** (property): {clean(member.__doc__)}".replace("\n", "\n  "))
        elif isinstance(member, (staticmethod, classmethod)):
            func = member.__func__
            lines.append(f"- **`{name}{signature(getattr(cls, name))}`**: {clean(func.__doc__)}".replace("\n", "\n  "))
        elif inspect.isfunction(member):
            lines.append(f"- **`{name}{signature(member)}`**: {clean(member.__doc__)}".replace("\n", "\n  "))
    return lines


def render() -> str:
    parts = [HEADER]
    names = {name: getattr(securedp, name) for name in securedp.__all__}
    for name in sorted(names, key=str.lower):
        obj = names[name]
        if name == "__version__":
            parts.append(f"## `__version__`\n\nThe version string, `{obj}`.\n")
            continue
        if inspect.isclass(obj):
            kind = "exception" if issubclass(obj, BaseException) else "class"
            parts.append(f"## `{name}` ({kind})\n\n```python\n{name}{signature(obj, returns=False)}\n```\n\n{clean(obj.__doc__)}\n")
            methods = members(obj)
            if methods:
                parts.append("\n".join(methods) + "\n")
        else:
            parts.append(f"## `{name}`\n\n```python\n{name}{signature(obj)}\n```\n\n{clean(obj.__doc__)}\n")
    return "\n".join(parts)


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {OUT}\n")
