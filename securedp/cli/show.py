"""Readable text for a release, for the command's default output."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from securedp.cli.budget import Budget, budget_line
from securedp.hazmat.exact.rational import display_rational, exact_text, rounded
from securedp.ledger.release import Release
from securedp.tables.query import Query

__all__ = ["exact_text"]  # re-exported: its one definition is in securedp.hazmat.exact.rational

def approximate(value: Fraction, digits: int = 6) -> str:
    """``value`` to ``digits`` significant digits, with decimal arithmetic (no float: no overflow)."""
    return rounded(value, digits)[0]


_EXACTLY = 16
"""The longest exact text :func:`number` prints after a rounded value; a longer one is in ``--json`` only (so a
decimal rounded for having more than 15 significant digits never follows its rounding)."""


def number(value: Any) -> str:
    """A value for reading: :func:`exact_text` when it is a short decimal (at most 15 significant digits, a
    magnitude in ``[1e-6, 1e15)``); else rounded to 6 significant digits (scientific outside that range),
    after ``≈`` unless exact, and followed by ``(exactly 1/3)`` when that text is at most 16 characters:
    ``≈ 52.4371  (exactly 26874633/512512)``, ``≈ 12.0014``, ``1e+400``. The record (``--json``) keeps
    every value exactly."""
    text = exact_text(value)
    if isinstance(value, bool) or not isinstance(value, (int, Fraction)):
        return text
    q = Fraction(value)
    short, exact = rounded(q, 15)
    if exact and "e" not in short:
        return text
    shown, exact = rounded(q, 6)
    if exact:
        return shown
    return f"≈ {shown}" + (f"  (exactly {text})" if len(text) <= _EXACTLY else "")


def rounded_note(lines: list[str]) -> list[str]:
    """The line that says why a value printed after ``≈`` has no exact text beside it, if one has none."""
    if any("≈" in line and "(exactly" not in line for line in lines):
        return ["  (≈: rounded to 6 significant digits for reading; --json prints every value exactly)"]
    return []


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: ``1 record``, ``3 records``, ``0 releases``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def label_text(label: Any, last: bool) -> str:
    """A histogram label: a category as it is, a bin ``(lo, hi)`` as ``[lo, hi)`` (the last bin ``[lo, hi]``)."""
    if isinstance(label, tuple) and len(label) == 2:
        lo, hi = (exact_text(edge) for edge in label)
        return f"[{lo}, {hi}]" if last else f"[{lo}, {hi})"
    return exact_text(label)


def first_cell(release: Release) -> dict[str, Any]:
    """What the release records of its (first) statistic in its one cell: a release of one column is the
    one-cell table of it, whose parameters hold each aggregation's record under its name (``"data_sum"``)."""
    shares = release.parameters.get("shares")
    names = list(shares) if isinstance(shares, dict) else []
    record = release.parameters.get(names[0]) if names else None
    return record if isinstance(record, dict) else {}


def level_ranks(parameters: Mapping[str, Any]) -> list[int]:
    """The rank error bound of each quantile level a release selects, in order: a split's ``rank_error_bounds``,
    one quantile's ``rank_error_bound`` (from the records of its aggregations, in the order of their shares)."""
    shares = parameters.get("shares")
    records = [parameters.get(name) for name in (shares if isinstance(shares, dict) else ())]
    ranks: list[int] = []
    for record in records:
        if isinstance(record, dict) and "selection" in record:
            stated = record.get("rank_error_bounds", [record.get("rank_error_bound")])
            ranks += [int(r) for r in stated if r is not None]
    return ranks


def split_lines(parameters: Mapping[str, Any]) -> list[str]:
    """Each split of a table's record in words: its levels, its output columns and each level's rank interval."""
    level = display_rational(1 - Fraction(parameters.get("alpha", Fraction(1, 20))))
    lines = []
    for name, record in parameters.items():
        if isinstance(record, dict) and "rank_error_bounds" in record:
            levels = ", ".join(exact_text(Fraction(q)) for q in record["q"])
            bounds = ", ".join(f"{int(r):,}" for r in record["rank_error_bounds"])
            lines.append(f"ranks    {name}: q = {levels} (columns {name}_0 to _{len(record['q']) - 1}), by the "
                         f"recursive split: each at rank q n +/- {bounds} rows of its cell's n with probability "
                         f"{level}")
    return lines


def show_release(release: Release, query: Query, budget: Budget | None, typed: Fraction | None = None) -> str:
    """Several aligned lines describing ``release``; several quantiles state each level's rank interval; ``typed``:
    the grid the column's type declares, if any (:func:`securedp.reading.types.typed_steps`), which the lattice
    line names as its origin when it is the step."""
    if release.epsilon is not None:
        cost = f"epsilon {display_rational(release.epsilon)}"
    else:
        assert release.rho is not None  # a release is charged exactly one of epsilon or rho
        cost = f"rho {display_rational(release.rho)}"
    head = f"{release.statistic} of column {query.column!r}"
    if query.q is not None:
        head += f" at q = {exact_text(query.q)}"
    split = first_cell(release)
    if "depths" in split:
        head += (f" by the recursive split ({len(split['q'])} levels, {split['depths']} depths of epsilon "
                 f"{display_rational(split['epsilon_cell'])} each)")
    lines = [head]
    if isinstance(release.value, tuple):
        labels = release.labels or tuple(range(len(release.value)))
        texts = [label_text(label, i == len(labels) - 1) for i, label in enumerate(labels)]
        width = max(len(text) for text in texts) if texts else 0
        values = [number(v) for v in release.value]
        ranks = level_ranks(release.parameters) if query.statistic == "quantiles" else []
        if len(ranks) == len(values):
            level = display_rational(1 - Fraction(release.parameters.get("alpha", Fraction(1, 20))))
            shown = max(len(v) for v in values)
            values = [f"{v:<{shown}}  (rank {t} n +/- {r:,} with probability {level})"
                      for v, t, r in zip(values, texts, ranks, strict=True)]
        lines += [f"  {text:<{width}}  {v}" for text, v in zip(texts, values, strict=True)]
        if len(ranks) == len(values):
            lines.append("  (rank q n +/- r: the value lies between the kept rows' values at ranks q n - r and "
                         "q n + r, n their number, not released)")
    else:
        lines.append(f"  value    {number(release.value)}")
    lines += rounded_note(lines)
    unit = (f"the person of column {query.id_column!r}" if query.id_column is not None
            else "one row (no --id-column: every row counts as a different person)")
    lines.append(f"  privacy  {cost}, {release.mechanism}, max_contributions {release.max_contributions}; "
                 f"privacy unit: {unit}")
    step = first_cell(release).get("lattice_step")
    if step is not None and query.bounds is not None:
        how = ("--step" if query.lattice is not None else "from the column's type" if step == typed
               else "from --bounds; --step 1 keeps whole numbers whole, --step 0.01 whole cents")
        lines.append(f"  lattice  step {exact_text(step)} ({how})")
    if budget is not None:
        lines.append(f"  budget   {budget_line(budget)}")
    return "\n".join(lines)
