"""Move securedp's files into the house of issue 41 (at most 8 layers), in one step, by rules.

Run at the root of a clean checkout in the old layout (every change committed)::

    python tools/move_house.py --check   # print the plan, change nothing; exit 1 if a module has no place
    python tools/move_house.py           # do it (git mv, rewrite, aliases), then review `git diff --stat`

What it does, in order:

1. **Places every module.** Each module of ``securedp/`` is either moved by :data:`MOVES` (old dotted path ->
   new dotted path), or stays in a package that stays whole (:data:`STAYING`), or is listed in
   :data:`STAYING_MODULES` (packages that are split: ``mechanisms``, ``accounting``). A module with no place
   (a package or a file added since this map was written) stops the script before anything changes, with
   the list: add a line to the map.
2. **Moves files** with ``git mv`` (modules, then the mirrored tests of :data:`TEST_MOVES`), creating the new
   packages' ``__init__.py`` (:data:`NEW_PACKAGES`); with ``--commit-moves`` these renames are committed alone,
   so that ``git log --follow`` finds each file's history (the rest is left staged).
3. **Edits prose** that states the layers (:data:`PROSE`: exact text, replaced before the rewrite; a text not
   found is reported as a manual step, never guessed).
4. **Rewrites every reference** in every tracked text file (code, tests, docs' ``::: securedp.x.y``, README,
   benchmarks, config; not ``CHANGELOG.md``, which is history): dotted names (``securedp.a.b`` and
   ``securedp.a.b.Name``: longest moved prefix wins), paths (``securedp/a/b.py``, ``tests/unit/a/``), and
   ``from securedp.a import b`` where ``b`` is a moved module (split into its own line, keeping the local name).
5. **Leaves an alias** at each old module path: ``moved_module`` of :mod:`securedp.deprecation`, so every old
   advanced import path works for one release with a ``DeprecationWarning``; writes
   ``tests/unit/test_moved_modules.py``, which checks each alias.
6. **Rewrites the layer map** of ``tests/test_layers.py`` (the block between its markers) to :data:`LAYERS`.
7. Sorts the imports of the files it changed (``ruff check --select I --fix``).

Run twice, the second run finds every move done (an alias at the old path, the module at the new one) and
changes nothing. A dev tool: delete it once the move has landed.
"""

# ruff: noqa: T201, E501 - a command that prints; the prose it replaces has long table rows
from __future__ import annotations

import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# -- the map ---------------------------------------------------------------------------------------------

MOVES: dict[str, str] = {
    # layer 0, hazmat: the NumPy-style generator and the samplers' self-test use only hazmat
    "securedp.mechanisms.generator": "securedp.hazmat.generator",
    "securedp.mechanisms.generator_sampling": "securedp.hazmat.generator_sampling",
    "securedp.audit.selftest": "securedp.hazmat.selftest",
    # layer 2, bounding: who reads a data-dependent error, the parts of a partition, the data phase
    "securedp.mechanisms.contributions": "securedp.bounding.contributions",
    "securedp.mechanisms.data_phase": "securedp.bounding.data_phase",
    # layer 2, ledger (new): a release, its record, the budget it is charged to, the records of the audit log
    "securedp.mechanisms.release": "securedp.ledger.release",
    "securedp.mechanisms.record_schema": "securedp.ledger.release_record",
    "securedp.accounting.schema": "securedp.ledger.audit_record",
    "securedp.accounting.budget": "securedp.ledger.budget",
    "securedp.accounting.budget_file": "securedp.ledger.budget_file",
    "securedp.accounting.errors": "securedp.ledger.errors",
    # layer 5, session (new; accounting's budget went to the ledger): the Session and what it runs
    "securedp.accounting.session": "securedp.session.session",
    "securedp.accounting.methods": "securedp.session.methods",
    "securedp.accounting.partition": "securedp.session.partition",
    "securedp.accounting.recording": "securedp.session.recording",
    "securedp.accounting.boundary": "securedp.session.boundary",
}
"""Old dotted module path -> new one. Each old path keeps a deprecated alias module for one release."""

STAYING = (
    "securedp.hazmat", "securedp.privacy", "securedp.reading", "securedp.lattice", "securedp.bounding",
    "securedp.ledger", "securedp.engines", "securedp.tables", "securedp.session", "securedp.planning",
    "securedp.audit", "securedp.cli",
)
"""Packages whose every module stays where it is (a module added to one of them is placed with it)."""

STAYING_MODULES = frozenset({
    "securedp", "securedp.__main__", "securedp._version", "securedp.deprecation",
    "securedp.accounting",  # its __init__ stays: the package of the old paths' aliases, for one release
    # mechanisms: the statistics and the selections (one flat package: see NOTES)
    "securedp.mechanisms", "securedp.mechanisms.statistic", "securedp.mechanisms.records",
    "securedp.mechanisms.count", "securedp.mechanisms.sum", "securedp.mechanisms.mean",
    "securedp.mechanisms.moments", "securedp.mechanisms.variance", "securedp.mechanisms.histogram",
    "securedp.mechanisms.quantile", "securedp.mechanisms.rank_utility", "securedp.mechanisms.iqr",
    "securedp.mechanisms.trimmed_mean", "securedp.mechanisms.selection", "securedp.mechanisms.scores",
    "securedp.mechanisms.exponential", "securedp.mechanisms.noisy_max", "securedp.mechanisms.permute_and_flip",
    "securedp.mechanisms.partition_selection", "securedp.mechanisms.gaussian_threshold",
    "securedp.mechanisms.threshold_delta",
})
"""Modules of the split packages (and the top) that stay: every other module there must be in MOVES."""

LAYERS: dict[str, tuple[int, str]] = {
    "securedp._version": (0, ""),
    "securedp.deprecation": (0, "the one helper retiring a name, used by any layer"),
    "securedp.hazmat": (0, "exact, bits, then samplers, generator, selftest (inner order: test below)"),
    "securedp.privacy": (1, "costs, noise laws and their accuracy: below every statistic, engine and planner"),
    "securedp.reading": (1, "the one reader"),
    "securedp.lattice": (2, "fixed-point values, and a histogram's categories and bins"),
    "securedp.bounding": (2, "the per-person rule, the parts of a partition, who reads an error"),
    "securedp.ledger": (2, "a release, its record, the budget it is charged to"),
    "securedp.mechanisms": (3, "the statistics and selections, beside the engines"),
    "securedp.engines": (3, "the exact integers per key, beside the mechanisms"),
    "securedp.tables": (4, "the one route: every release is a table"),
    "securedp.session": (5, "Session: charges, partitions, the error boundary"),
    "securedp.planning": (5, "beside session: it charges its releases to a Session"),
    "securedp.accounting": (5, "deprecated aliases of the old paths (ledger, session), for one release"),
    "securedp.audit": (6, ""),
    "securedp.cli": (7, ""),
}
"""The new layer of every package (the longest prefix of a module's name gives its layer)."""
TOP = 7  # securedp/__init__.py and __main__.py, beside the cli

NEW_PACKAGES: dict[str, str] = {
    "securedp/ledger/__init__.py": '''"""The ledger: a release, its record, and the budget it is charged to (below every statistic and engine).

* :mod:`securedp.ledger.release`: :class:`~securedp.ledger.release.Release` (a published value and what it
  cost) and :class:`~securedp.ledger.release.PreparedRelease` (validated and priced, nothing drawn yet), and
  the commitment to a release's exact input.
* :mod:`securedp.ledger.release_record`: the one schema of a release's record, and its JSON form.
* :mod:`securedp.ledger.audit_record`: the budget fields of audit records, and every record kind of the log.
* :mod:`securedp.ledger.budget`, :mod:`securedp.ledger.budget_file`: a budget, its charging rules, and the
  file that keeps one across processes; :mod:`securedp.ledger.errors`: what a refused charge raises.
"""
''',
    "securedp/session/__init__.py": '''"""The session: a ``Session`` charges each release to its budget before it is drawn, and records it.

* :mod:`securedp.session.session`: :class:`~securedp.session.session.Session`.
* :mod:`securedp.session.methods`: its method per statistic; :mod:`securedp.session.partition`: parallel
  composition; :mod:`securedp.session.boundary`: the error boundary of an analyst-facing session;
  :mod:`securedp.session.recording`: how a record whose charge stands is written.

Below it, the ledger (:mod:`securedp.ledger`: the release, its record, the budget); beside it,
:mod:`securedp.planning`.
"""
''',
}

ACCOUNTING_INIT = '''"""Deprecated: ``securedp.accounting`` was split (securedp 0.2).

The budget, its file, its errors and the audit records' schema moved to :mod:`securedp.ledger`; the
``Session`` and what it runs (methods, partition, recording, boundary) to :mod:`securedp.session`. Each
old module path still resolves here for one release, with a :class:`DeprecationWarning`.
"""
'''

TEST_MOVES: list[tuple[str, str]] = [
    ("tests/unit/accounting/test_pending_record.py", "tests/unit/ledger/"),  # a budget file's pending record
    ("tests/unit/accounting/*", "tests/unit/session/"),
    ("tests/unit/mechanisms/test_generator*.py", "tests/unit/hazmat/"),
]
"""Mirrored tests follow their package: (glob of old files, new folder); a file takes the first rule it matches."""

NEVER_REWRITTEN = ("CHANGELOG.md", "tools/move_house.py", "tests/unit/test_moved_modules.py")
"""History, this map, and the test of the aliases name the old paths on purpose."""

NOTES = """\
mechanisms stays one flat package (20 modules, one statistic or selection each): a split into statistics/ and
selection/ would classify quantile (a statistic drawn by a selection) and partition selection (neither) by
taste, and move 20 advanced import paths for no arrow it removes.
"""

# -- prose that states the layers (exact text; replaced before the rewrite) -------------------------------

PROSE: list[tuple[str, str, str]] = [
    ("securedp/__init__.py", """\
0. ``securedp.hazmat.exact``, ``securedp.hazmat.bits``: exact numbers, random bits
1. ``securedp.hazmat.samplers``: exact, timing-hardened samplers (no privacy accounting)
2. ``securedp.reading``: the one exact reader of every input kind
3. ``securedp.lattice``: fixed-point values
4. ``securedp.bounding``: the per-person bounding rule
5. ``securedp.mechanisms``: releases and their privacy maps
6. ``securedp.engines``: exact per-key aggregates of grouped tables (Polars, Spark)
7. ``securedp.tables``: grouped-table releases
8. ``securedp.accounting``: budgets and sessions; ``securedp.planning`` beside it: contribution analysis,
   private bounds
9. ``securedp.audit``: hash-chained audit log, verification, replay
10. ``securedp.cli``: the ``securedp`` command
""", """\
0. ``securedp.hazmat``: exact numbers, random bits, the exact timing-hardened samplers, the drop-in
   generator and the samplers' self-test (no privacy accounting)
1. ``securedp.privacy``: what a release costs and the noise it buys; ``securedp.reading``: the one exact
   reader of every input kind
2. ``securedp.lattice``: fixed-point values; ``securedp.bounding``: the per-person bounding rule;
   ``securedp.ledger``: a release, its record, and the budget it is charged to
3. ``securedp.mechanisms``: each statistic and selection with its privacy map; ``securedp.engines`` beside
   it: exact per-key aggregates of grouped tables (Polars, Spark)
4. ``securedp.tables``: the one route of every release (a column is a one-cell table)
5. ``securedp.session``: the ``Session``; ``securedp.planning`` beside it: contribution analysis, private bounds
6. ``securedp.audit``: hash-chained audit log, verification, replay, report
7. ``securedp.cli``: the ``securedp`` command, beside this package
"""),
    ("securedp/__init__.py", "# Layer 3: accounting, and planning beside it.",
     "# Layer 5: the session (and the ledger's errors), planning beside it."),
    ("securedp/__init__.py", "# Layer 4: audit.", "# Layer 6: audit."),
    ("securedp/planning/__init__.py", "beside :mod:`securedp.accounting` (layer 8)",
     "beside :mod:`securedp.session` (layer 5)"),
    ("securedp/hazmat/__init__.py", "Layers, bottom up: ``exact`` and ``bits``, then ``samplers``.",
     "Bottom up: ``exact`` and ``bits``, then ``samplers``, then the drop-in\n``generator`` and the "
     "samplers' ``selftest`` that use them (one layer; ``exact`` and\n``bits`` import nothing above them: "
     "``tests/test_layers.py``)."),
    ("README.md", """\
securedp/reading          the one exact reader: columns of every kind, CSV/Parquet files
securedp/lattice          fixed-point values, clamping, exact sums
securedp/bounding         the per-person bounding rule (salted SHA-256 order), below statistics and engines
securedp/mechanisms       releases and selections with their privacy maps; partition selection;
                          confidence intervals
securedp/engines          bounding and exact per-key integers of grouped tables:
                          Polars in memory, Spark for data that outgrow one machine
securedp/tables           grouped table releases: the aggregate/noise boundary over an engine
securedp/accounting       budgets (epsilon or rho, plus a delta ledger) and sessions
securedp/planning         beside accounting: contribution analysis, private clamping bounds
securedp/audit, cli       hash-chained audit log, replay, the `securedp` command
""", """\
securedp/privacy          what a release costs (epsilon, rho, delta) and the noise it buys
securedp/reading          the one exact reader: columns of every kind, CSV/Parquet files
securedp/lattice          fixed-point values, clamping, exact sums, a histogram's bins
securedp/bounding         the per-person bounding rule (salted SHA-256 order), below statistics and engines
securedp/ledger           a release, its record, the budget (epsilon or rho, plus a delta ledger) and its file
securedp/mechanisms       the statistics and selections with their privacy maps; partition selection
securedp/engines          beside them: exact per-key integers of grouped tables,
                          Polars in memory, Spark for data that outgrow one machine
securedp/tables           the one route of every release: a column is the one-cell table
securedp/session          the Session: charges, partitions, the analyst-facing error boundary
securedp/planning         beside session: contribution analysis, private clamping bounds
securedp/audit, cli       hash-chained audit log, replay, report; the `securedp` command
"""),
    ("docs/architecture.md", """\
| `securedp.lattice` | fixed-point values: screen, clamp, round half to even onto a public step; exact integer sums | exact lattice units, or a per-record verdict "unusable" |
""", """\
| `securedp.lattice` | fixed-point values: screen, clamp, round half to even onto a public step; exact integer sums; a histogram's categories and bins (`lattice.bins`) | exact lattice units, or a per-record verdict "unusable" |
"""),
    ("docs/architecture.md", """\
| `securedp.bounding` | per-person bounding: the salted SHA-256 message format and its encoders (hashlib, Polars), the digests' leading 64 bits by the CPU's SHA instructions (`heads`, over the optional C extension `_sha256_heads`), each person's smallest digests of a column (`per_person`), the limits | one rule for every engine |
| `securedp.mechanisms` | each statistic's definition""", """\
| `securedp.bounding` | per-person bounding: the salted SHA-256 message format and its encoders (hashlib, Polars), the digests' leading 64 bits by the CPU's SHA instructions (`heads`, over the optional C extension `_sha256_heads`), each person's smallest digests of a column (`per_person`), the limits; the parts of a partition and who may read a data-dependent error (`contributions`, `data_phase`) | one rule for every engine |
| `securedp.ledger` (beside lattice and bounding) | a release (`Release`, `PreparedRelease`) and its one record schema (`ledger.release_record`); the budget, its charging rules and its file; the fields of audit records (`ledger.audit_record`) | one record per release, one budget rule |
| `securedp.mechanisms` | each statistic's definition"""),
    ("docs/architecture.md", """\
| `securedp.engines` | the exact per-key integers""", """\
| `securedp.engines` (beside mechanisms) | the exact per-key integers"""),
    ("docs/architecture.md", """\
| `securedp.accounting` | budgets and sessions: charge a release before it is drawn, refuse an overspend, write its record; the budget file | a release is drawn only if it was paid for, and recorded once drawn |
| `securedp.planning` (beside accounting) |""", """\
| `securedp.session` | the `Session`: charge a release before it is drawn, refuse an overspend, write its record; parallel composition; the analyst-facing error boundary | a release is drawn only if it was paid for, and recorded once drawn |
| `securedp.planning` (beside session) |"""),
    ("docs/architecture.md", """\
| `securedp.hazmat.exact`, `securedp.hazmat.bits` |""", """\
| `securedp.hazmat.exact`, `securedp.hazmat.bits` (layer 0, all of `securedp.hazmat`) |"""),
    ("docs/architecture.md", "accounting.Session: charge ─► execute", "  session.Session: charge ─► execute"),
    ("docs/architecture.md", "\"unreleased\" record appended (accounting.recording)",
     "\"unreleased\" record appended (session.recording)"),
]

# -- plumbing ----------------------------------------------------------------------------------------------

DOTTED = re.compile(r"(?<![\w.])securedp(?:\.[A-Za-z_]\w*)+")
SLASHED = re.compile(r"(?<![\w/])securedp(?:/[A-Za-z_]\w*)+(?:\.pyi?\b)?")
FROM_IMPORT = re.compile(r"^([ \t]*)from (securedp(?:\.\w+)*) import (\([^)]*\)|[^\n]*)", re.M)
ALIAS = '''"""Deprecated alias: {old} moved to{gap}:mod:`{new}` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from securedp.deprecation import moved_module
from {new_parent} import {new_leaf} as _moved

__getattr__ = moved_module("{old}", _moved)
'''
LAYER_BLOCK = re.compile(r"^# -- the layers: begin.*?^# -- the layers: end --\n", re.M | re.S)


def git(*args: str, capture: bool = False) -> str:
    done = subprocess.run(["git", *args], check=True, text=True, capture_output=capture)
    return done.stdout if capture else ""


def path_of(module: str, package: bool = False) -> Path:
    parts = module.split(".")
    return Path(*parts, "__init__.py") if package else Path(*parts[:-1], parts[-1] + ".py")


def module_of(path: Path) -> str:
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files() -> list[Path]:
    """Every Python module of ``securedp/`` on disk (tracked or not), build output left out."""
    return sorted(p for p in Path("securedp").rglob("*.py") if "__pycache__" not in p.parts)


def is_alias(path: Path) -> bool:
    return path.is_file() and "moved_module(" in path.read_text(encoding="utf-8") and \
        len(path.read_text(encoding="utf-8").splitlines()) < 15


def unplaced() -> list[str]:
    """The modules the map gives no place (empty when every module moves or stays)."""
    missing = []
    for path in source_files():
        name = module_of(path)
        if name in MOVES or name in STAYING_MODULES or name in MOVES.values():
            continue
        if any(name == p or name.startswith(p + ".") for p in STAYING):
            continue
        missing.append(f"{name} ({path})")
    split = ("securedp/mechanisms", "securedp/accounting")  # a data file there could not follow its module
    missing.extend(f"{path} (a non-Python file in a package that is split)" for path in Path("securedp").rglob("*")
                   if path.is_file() and path.suffix not in (".py", ".pyc", ".so", ".pyd")
                   and path.parent.as_posix() in split)
    return missing


def new_layer(module: str) -> int:
    """The layer of (new) module ``module`` under :data:`LAYERS` (the top package and ``__main__``: :data:`TOP`)."""
    if module in ("securedp", "securedp.__main__"):
        return TOP
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len, default=None)
    if best is None:
        raise SystemExit(f"move_house: {module} has no layer in LAYERS")
    return LAYERS[best][0]


def upward_imports() -> list[str]:
    """Every import of today's tree that would point upwards in the new house (the layer test would fail).

    Read with ``ast`` from every import statement (module level, in functions, under ``TYPE_CHECKING``), each
    name taken to its new module path first."""
    import ast

    names = {module_of(path) for path in source_files()}
    found = []
    for path in source_files():
        old = module_of(path)
        if is_alias(path) and old in MOVES:
            continue
        own = new_name(old)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in names else node.module
                           for a in node.names]
            for target in targets:
                if target == "securedp" or target.startswith("securedp."):
                    moved = new_name(target)
                    if new_layer(moved) > new_layer(own):
                        found.append(f"{path}:{node.lineno}: {own} (layer {new_layer(own)}) imports {moved} "
                                     f"(layer {new_layer(moved)})")
    return found


def module_moves() -> list[tuple[Path, Path]]:
    """(old file, new file) of every move not done yet; a move done already (alias at the old path) is skipped."""
    todo = []
    for old, new in MOVES.items():
        src, dst = path_of(old), path_of(new)
        if dst.exists() and (is_alias(src) or not src.exists()):
            continue
        if not src.exists():
            raise SystemExit(f"move_house: {src} (for {old}) is missing and {dst} does not exist")
        if dst.exists():
            raise SystemExit(f"move_house: {dst} exists already and {src} is not an alias: resolve by hand")
        todo.append((src, dst))
    return todo


def test_moves() -> list[tuple[Path, Path]]:
    tracked = set(git("ls-files", "tests", capture=True).split())
    todo = []
    for name in sorted(tracked):
        folder = next((folder for pattern, folder in TEST_MOVES if fnmatch.fnmatch(name, pattern)), None)
        if folder is not None:
            src = Path(name)
            dst = Path(folder) / src.name
            if dst.exists():
                raise SystemExit(f"move_house: {dst} exists already (moving {src})")
            todo.append((src, dst))
    return todo


def new_name(dotted: str) -> str:
    """``dotted`` with its longest moved module prefix replaced (unchanged if none)."""
    parts = dotted.split(".")
    for i in range(len(parts), 1, -1):
        prefix = ".".join(parts[:i])
        if prefix in MOVES:
            return ".".join([MOVES[prefix], *parts[i:]])
    return dotted


def split_from_imports(text: str) -> str:
    """``from securedp.a import b, c`` with ``securedp.a.b`` moved: ``b`` gets its own import from its new
    package, under its old local name (``from securedp.x import b2 as b``); the other names stay."""

    def one(match: re.Match[str]) -> str:
        indent, package, names = match.group(1), match.group(2), match.group(3)
        comment = names.splitlines()[0].partition("#")[2]
        body = " ".join(line.partition("#")[0] for line in names.splitlines()).strip().strip("()")
        items = [n.strip() for n in body.split(",") if n.strip()]
        moved = [n for n in items if f"{package}.{n.split(' as ')[0].strip()}" in MOVES]
        if not moved:
            return match.group(0)
        lines = []
        kept = [n for n in items if n not in moved]
        if kept:
            lines.append(f"{indent}from {package} import {', '.join(kept)}")
        for item in moved:
            leaf, _, local = (part.strip() for part in item.partition(" as "))
            target = MOVES[f"{package}.{leaf}"]
            parent, new_leaf = target.rsplit(".", 1)
            local = local or leaf
            lines.append(f"{indent}from {parent} import {new_leaf}" + (f" as {local}" if local != new_leaf else ""))
        if comment.strip():
            lines[0] += f"  # {comment.strip()}"
        return "\n".join(lines)

    return FROM_IMPORT.sub(one, text)


def test_path(path: str) -> str:
    """A test file's or folder's path after :data:`TEST_MOVES`."""
    for pattern, folder in TEST_MOVES:
        old_folder = pattern.rsplit("/", 1)[0]
        if path.rstrip("/") == old_folder and pattern.endswith("/*"):  # the folder itself
            return folder.rstrip("/") + ("/" if path.endswith("/") else "")
        if path.startswith(old_folder + "/") and fnmatch.fnmatch(path, pattern):
            return folder + path[len(old_folder) + 1:]
    return path


def rewrite(text: str) -> str:
    text = split_from_imports(text)
    text = DOTTED.sub(lambda m: new_name(m.group(0)), text)

    def slashed(match: re.Match[str]) -> str:
        found = match.group(0)
        suffix = found[found.rfind("."):] if found.endswith((".py", ".pyi")) else ""
        dotted = found[: len(found) - len(suffix)].replace("/", ".")
        moved = new_name(dotted)
        return found if moved == dotted else moved.replace(".", "/") + suffix

    text = SLASHED.sub(slashed, text)
    return re.sub(r"tests/unit/[\w/]+(?:\.py)?", lambda m: test_path(m.group(0)), text)


def text_files() -> list[Path]:
    files = []
    for name in git("ls-files", capture=True).split("\n"):
        path = Path(name)
        if not name or name in NEVER_REWRITTEN or not path.is_file():
            continue
        if path.suffix in (".png", ".jpg", ".gz", ".parquet", ".so", ".ico", ".woff", ".woff2"):
            continue
        try:
            path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        files.append(path)
    return files


def layer_block() -> str:
    lines = ["# -- the layers: begin (tools/move_house.py rewrites this block) --",
             "LAYERS = {  # one layer per package; the longest prefix of a module's name gives its layer"]
    for package, (layer, why) in LAYERS.items():
        lines.append(f'    "{package}": {layer},' + (f"  # {why}" if why else ""))
    lines += ["}",
              f"TOP = {TOP}  # securedp/__init__.py and securedp/__main__.py, beside the cli",
              "MOST_LAYERS = 8",
              '"""Issue 41: a reader counts the layers on one hand and a half (every distinct number, the top\'s too)."""',
              "",
              "",
              "def test_at_most_eight_layers() -> None:",
              "    assert len({*LAYERS.values(), TOP}) <= MOST_LAYERS, sorted({*LAYERS.values(), TOP})",
              "",
              "",
              "# -- the layers: end --", ""]
    return "\n".join(lines)


# -- the run -----------------------------------------------------------------------------------------------

def plan() -> tuple[list[str], list[tuple[Path, Path]], list[tuple[Path, Path]]]:
    missing = unplaced()
    return missing, module_moves() if not missing else [], test_moves()


def show(missing: list[str], modules: list[tuple[Path, Path]], tests: list[tuple[Path, Path]]) -> None:
    if missing:
        print("move_house: these modules have no place in the map (add each to MOVES, STAYING or STAYING_MODULES):")
        for line in missing:
            print(f"  {line}")
        return
    print(f"module moves ({len(modules)}; each old path keeps an alias):")
    for src, dst in modules:
        print(f"  git mv {src} {dst}")
    print(f"test moves ({len(tests)}):")
    for src, dst in tests:
        print(f"  git mv {src} {dst}")
    layers = sorted({layer for layer, _ in LAYERS.values()} | {TOP})
    print(f"layers: {len(layers)} ({', '.join(map(str, layers))})")
    for layer in layers:
        print(f"  {layer}: " + ", ".join(p for p, (n, _) in LAYERS.items() if n == layer) + (" + top" if layer == TOP else ""))
    print("notes: " + NOTES)


def run(modules: list[tuple[Path, Path]], tests: list[tuple[Path, Path]], commit_moves: bool) -> list[str]:
    manual = []
    changed: set[Path] = set()
    # 2. moves (first, so that with --commit-moves they are one commit of pure renames git follows)
    for init, text in NEW_PACKAGES.items():
        path = Path(init)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            git("add", init)
    for src, dst in [*modules, *tests]:
        dst.parent.mkdir(parents=True, exist_ok=True)
        git("mv", str(src), str(dst))
        changed.add(dst)
    if commit_moves and (modules or tests):
        git("commit", "--quiet", "-m", "The files of issue 41's house move, renames only (git log --follow keeps "
            "their history): the next commit rewrites the imports, so this one does not import")
    # 3. prose
    for name, old, new in PROSE:
        path = Path(name)
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if new in text:
            continue
        if old not in text:
            manual.append(f"{name}: text not found, edit by hand: {old.splitlines()[0][:70]!r}...")
            continue
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        changed.add(path)
    # 4. references
    for path in text_files():
        text = path.read_text(encoding="utf-8")
        if is_alias(path) and module_of(path) in MOVES:
            continue
        new = rewrite(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.add(path)
    # 5. aliases (and the old accounting package's docstring)
    for old, new in MOVES.items():
        path = path_of(old)
        if path.exists():
            continue
        parent, leaf = new.rsplit(".", 1)
        gap = " " if len(old) + len(new) < 70 else "\n"  # the first line within 120 characters
        path.write_text(ALIAS.format(old=old, new=new, gap=gap, new_parent=parent, new_leaf=leaf), encoding="utf-8")
        git("add", str(path))
        changed.add(path)
    accounting = Path("securedp/accounting/__init__.py")
    if accounting.exists() and accounting.read_text(encoding="utf-8") != ACCOUNTING_INIT:
        accounting.write_text(ACCOUNTING_INIT, encoding="utf-8")
        changed.add(accounting)
    write_alias_test()
    changed.add(Path("tests/unit/test_moved_modules.py"))
    # 6. the layer map
    layers = Path("tests/test_layers.py")
    text = layers.read_text(encoding="utf-8")
    if not LAYER_BLOCK.search(text):
        manual.append("tests/test_layers.py: no '# -- the layers: begin/end' markers; write LAYERS by hand")
    else:
        layers.write_text(LAYER_BLOCK.sub(lambda _: layer_block(), text, count=1), encoding="utf-8")
        changed.add(layers)
    # 7. import order
    python = sorted(str(p) for p in changed if p.suffix == ".py" and p.exists())
    ruff = shutil.which("ruff")
    if ruff and python:
        subprocess.run([ruff, "check", "--quiet", "--select", "I", "--fix", *python], check=False)
    elif python:
        manual.append("ruff not found: run `ruff check --select I --fix` on the changed files")
    git("add", "--update")
    git("add", "--", *sorted(str(p) for p in changed if p.exists()))
    return manual


def write_alias_test() -> None:
    lines = ['"""Every module path moved by the house of issue 41 still imports, for one release, with a warning.',
             "",
             "Written by tools/move_house.py: each old path is a ``securedp.deprecation.moved_module`` alias of the new one.",
             '"""',
             "",
             "from __future__ import annotations",
             "",
             "import importlib",
             "",
             "import pytest",
             "",
             "MOVED = {"]
    lines += [f'    "{old}": "{new}",' for old, new in MOVES.items()]
    lines += ["}",
              "",
              "",
              '@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))',
              "def test_an_old_path_resolves_each_name_to_the_new_one_with_a_warning(old: str, new: str) -> None:",
              "    moved = importlib.import_module(new)",
              "    alias = importlib.import_module(old)",
              "    names = [n for n, v in vars(moved).items()",
              "             if not n.startswith(\"_\") and getattr(v, \"__module__\", None) == new]",
              "    assert names, new",
              "    for name in names:",
              '        with pytest.warns(DeprecationWarning, match=f"{old}.{name} is deprecated.*use {new}.{name}"):',
              "            assert getattr(alias, name) is getattr(moved, name)",
              ""]
    Path("tests/unit/test_moved_modules.py").write_text("\n".join(lines), encoding="utf-8")
    git("add", "tests/unit/test_moved_modules.py")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="print the plan; change nothing")
    parser.add_argument("--force", action="store_true", help="move even if some imports would point upwards")
    parser.add_argument("--commit-moves", action="store_true",
                        help="commit the renames alone first (history follows them), leave the rest staged")
    args = parser.parse_args()
    if not Path("securedp/__init__.py").exists() or not Path(".git").exists():
        print("move_house: run at the root of a securedp checkout", file=sys.stderr)
        return 2
    missing, modules, tests = plan()
    show(missing, modules, tests)
    if missing:
        return 1
    upward = upward_imports()
    if upward:
        print("move_house: after the move these imports would point upwards (move a class down, or change LAYERS):")
        for line in upward:
            print(f"  {line}")
        if not args.force:
            return 1
    else:
        print("imports: none points upwards in the new house")
    if args.check:
        return 0
    if git("status", "--porcelain", "--untracked-files=no", capture=True).strip():
        print("move_house: the tree has uncommitted changes; commit or stash them first", file=sys.stderr)
        return 2
    manual = run(modules, tests, args.commit_moves)
    print("done: review with `git status` / `git diff --cached --stat`, then run the suite, ruff, mypy, mkdocs")
    for line in manual:
        print(f"MANUAL: {line}")
    return 0


if __name__ == "__main__":
    os.chdir(Path.cwd())
    sys.exit(main())
