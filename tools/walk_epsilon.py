"""Follow ``--epsilon`` from ``securedp release`` to the draw: how many of securedp's files does the way open?

Issue 41's measure of the hall, made repeatable. ``python tools/walk_epsilon.py`` runs, in process,
``securedp release data.csv --column age --stat mean --bounds 18,90 --epsilon 0.37`` on 200 rows (extra
arguments are appended to the command) and prints two sets of securedp files, in the order met:

* **stack**: the files on the call stack when the first discrete Laplace draw starts: the command's entry,
  every file a call passes through, the sampler;
* **value**: the stack, plus every file with a function called before that draw with an argument that is the
  epsilon (``"0.37"``, or 37/100 exactly) or holds it up to two levels down (a ``Cost``, a query, the parsed
  arguments): where the value is read, checked, priced and handed on.

A reader following the value opens at least the *value* files. A dev tool (issue 41).
"""

# ruff: noqa: T201 - a command that prints
from __future__ import annotations

import sys
import tempfile
from fractions import Fraction
from pathlib import Path
from types import FrameType
from typing import Any

import securedp
from securedp.cli.main import main

ROOT = Path(securedp.__file__).resolve().parent
EPSILON = Fraction(37, 100)
DRAW = "hazmat/samplers/discrete_laplace.py"


def relative(filename: str) -> str | None:
    try:
        return Path(filename).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None


def is_epsilon(value: Any) -> bool:
    try:
        if isinstance(value, str):
            return value == "0.37"
        exact = (isinstance(value, (int, Fraction)) and not isinstance(value, bool)) or type(value).__name__ == "mpq"
        return bool(exact and value == EPSILON)
    except (TypeError, ValueError):
        return False


def carries(value: Any, depth: int = 0) -> bool:
    """``value`` is the epsilon, or a mapping, sequence or object holding it (two levels down at most)."""
    if is_epsilon(value):
        return True
    if depth >= 2 or isinstance(value, (str, bytes, type)):
        return False
    try:
        if isinstance(value, dict):
            inner = list(value.values())
        elif isinstance(value, (list, tuple)):
            inner = list(value)[:50]
        elif hasattr(value, "__dict__"):
            inner = list(vars(value).values())
        elif hasattr(value, "__slots__"):
            inner = [getattr(value, name, None) for name in value.__slots__]
        else:
            return False
    except TypeError:
        return False
    return any(carries(item, depth + 1) for item in inner)


class Walk:
    def __init__(self) -> None:
        self.stack: list[str] | None = None
        self.value: list[str] = []

    def __call__(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call" or self.stack is not None:
            return
        here = relative(frame.f_code.co_filename)
        if here is None:
            return
        if here == DRAW:
            files: list[str] = []
            walker: FrameType | None = frame
            while walker is not None:
                name = relative(walker.f_code.co_filename)
                if name and name not in files:
                    files.append(name)
                walker = walker.f_back
            self.stack = files[::-1]
            return
        if here.startswith("hazmat/samplers/") or here in self.value:
            return
        code = frame.f_code
        arguments = list(frame.f_locals.values())[: code.co_argcount + code.co_kwonlyargcount]
        if any(carries(value) for value in arguments):
            self.value.append(here)


def packages(files: list[str]) -> list[str]:
    return sorted({f.split("/")[0] if "/" in f else "(top)" for f in files})


def run(extra: list[str]) -> Walk:
    folder = Path(tempfile.mkdtemp())
    data = folder / "data.csv"
    data.write_text("age\n" + "".join(f"{20 + i % 50}\n" for i in range(200)), encoding="utf-8")
    walk = Walk()
    sys.setprofile(walk)
    try:
        main(["release", str(data), "--column", "age", "--stat", "mean", "--bounds", "18,90", "--epsilon", "0.37",
              *extra])
    except SystemExit:
        pass
    finally:
        sys.setprofile(None)
    return walk


if __name__ == "__main__":
    walk = run(sys.argv[1:])
    stack = walk.stack or []
    value = stack + [f for f in walk.value if f not in stack]
    print(f"stack: {len(stack)} files in {len(packages(stack))} packages")
    for name in stack:
        print(f"  {name}")
    print(f"value: {len(value)} files in {len(packages(value))} packages ({', '.join(packages(value))})")
    for name in value[len(stack):]:
        print(f"  + {name}")
