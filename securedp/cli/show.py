"""Readable text for a release, for the command's default output."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from securedp.audit.query import Query
from securedp.cli.budget import Budget
from securedp.hazmat.exact.rational import format_rational
from securedp.mechanisms.release import Release


def number(value: Any) -> str:
    """A value for reading: integers as they are, other rationals as a decimal and their exact form."""
    if isinstance(value, Fraction) and value.denominator != 1:
        return f"{float(value):.6g}  (exactly {format_rational(value)})"  # float-ok: display only
    return str(value)


def show_release(release: Release, query: Query, budget: Budget | None) -> str:
    """Several aligned lines describing ``release``."""
    if release.epsilon is not None:
        cost = f"epsilon {format_rational(release.epsilon)}"
    else:
        assert release.rho is not None  # a release is charged exactly one of epsilon or rho
        cost = f"rho {format_rational(release.rho)}"
    head = f"{release.statistic} of column {query.column!r}"
    if query.q is not None:
        head += f" at q = {format_rational(query.q)}"
    lines = [head]
    if isinstance(release.value, tuple):
        labels = release.labels or tuple(range(len(release.value)))
        width = max(len(str(label)) for label in labels) if labels else 0
        lines += [f"  {str(label):<{width}}  {number(v)}" for label, v in zip(labels, release.value)]
    else:
        lines.append(f"  value    {number(release.value)}")
    lines.append(f"  privacy  {cost}, {release.mechanism}, max_contributions {release.max_contributions}")
    if budget is not None:
        lines.append(
            f"  budget   spent {format_rational(budget.spent)} of {format_rational(budget.total)}, "
            f"remaining {format_rational(budget.remaining)} ({budget.currency})"
        )
    return "\n".join(lines)
