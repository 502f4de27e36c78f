"""``securedp demo``: several private releases on the example dataset, with exact accounting."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from typing import Any

from securedp.accounting.session import Session
from securedp.audit.table import read_column
from securedp.cli.example_data import MAX_ROWS_PER_PERSON, PATH, REGIONS
from securedp.cli.show import label_text, number
from securedp.hazmat.exact.rational import format_rational
from securedp.mechanisms.release import Release

TOTAL = "1"


def try_command() -> str:
    """The command the demo suggests next: a correct release of the example data.

    People have up to :data:`~securedp.cli.example_data.MAX_ROWS_PER_PERSON`
    rows, so the command names the person column (``--id-column``, which
    enforces the bound) and declares that many contributions per person.
    ``tests/cli/test_documented_commands.py`` runs it and checks both.
    """
    return (
        f"securedp release {shlex.quote(str(PATH))} --column age --stat mean --bounds 18,90 --epsilon 0.5 "
        f"--id-column person_id --max-contributions {MAX_ROWS_PER_PERSON}"
    )


def _line(session: Session, title: str, release: Release) -> str:
    cost = format_rational(release.epsilon) if release.epsilon is not None else "?"
    return f"{title:<34} epsilon {cost:<5} remaining {format_rational(session.remaining):<5} -> {_value(release)}"


def _value(release: Release) -> str:
    if isinstance(release.value, tuple):
        labels = release.labels or ()
        return ", ".join(
            f"{label_text(label, i == len(labels) - 1)} {number(v)}"
            for i, (label, v) in enumerate(zip(labels, release.value, strict=True))
        )
    return number(release.value)


def run_demo(write: Callable[[str], Any] = print) -> int:
    """Run the demo, writing readable lines with ``write``; returns the exit status (0)."""
    start = time.perf_counter()
    age = read_column(PATH, "age", "person_id")
    hours = read_column(PATH, "hours", "person_id")
    income = read_column(PATH, "income", "person_id")
    region = read_column(PATH, "region", "person_id")
    people = len(set(age.ids or ()))
    write(f"securedp demo: {len(age.values)} rows, {people} people ({PATH.name}, synthetic)")
    write(f"one session with a total budget of epsilon = {TOTAL}; each person counted once "
          "(a person with more rows keeps the one of smallest salted SHA-256 digest)")
    write("")
    session = Session(epsilon=TOTAL)
    steps: list[tuple[str, Callable[[], Release]]] = [
        ("count of people", lambda: session.count(age.values, epsilon="1/10", ids=age.ids)),
        ("mean age, bounds [18, 90]", lambda: session.mean(age.values, bounds=(18, 90), epsilon="1/5", ids=age.ids)),
        ("variance of weekly hours [0, 80]",
         lambda: session.variance(hours.values, bounds=(0, 80), epsilon="3/10", ids=hours.ids)),
        ("people per region (parallel)",
         lambda: session.histogram(region.values, categories=REGIONS, epsilon="1/10", ids=region.ids)),
        ("median income, bounds [0, 400000]",
         lambda: session.median(income.values, bounds=(0, 400_000), epsilon="1/5", ids=income.ids)),
    ]
    for title, run in steps:
        write(_line(session, title, run()))
    write("")
    write(f"spent {format_rational(session.spent)} of {TOTAL}; a further release costing more than "
          f"{format_rational(session.remaining)} would be refused.")
    write(f"done in {time.perf_counter() - start:.2f} s. Try:")
    write(f"  {try_command()}")
    return 0
