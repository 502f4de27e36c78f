"""``securedp demo``: several private releases on the example dataset, with exact accounting."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from typing import Any

import polars as pl

from securedp.cli.example_data import MAX_ROWS_PER_PERSON, PATH, REGIONS
from securedp.cli.show import label_text, number
from securedp.hazmat.exact.rational import display_rational
from securedp.ledger.release import Release
from securedp.session.session import Session

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
    cost = display_rational(release.epsilon) if release.epsilon is not None else "?"
    return f"{title:<34} epsilon {cost:<4} remaining {display_rational(session.remaining):<4} -> {_value(release)}"


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
    visits = pl.read_csv(PATH)
    ids = visits["person_id"]
    write(f"securedp demo: {visits.height} rows, {ids.n_unique()} people ({PATH.name}, synthetic)")
    write(f"one session with a total budget of epsilon = {TOTAL}; each person counted once "
          "(a person with more rows keeps the one of smallest salted SHA-256 digest)")
    write("")
    session = Session(epsilon=TOTAL)
    steps: list[tuple[str, Callable[[], Release]]] = [
        ("count of people", lambda: session.count(visits["age"], epsilon="1/10", ids=ids)),
        ("mean age, bounds [18, 90]", lambda: session.mean(visits["age"], bounds=(18, 90), epsilon="1/5", ids=ids)),
        ("variance of weekly hours [0, 80]",
         lambda: session.variance(visits["hours"], bounds=(0, 80), epsilon="3/10", ids=ids)),
        ("people per region (parallel)",
         lambda: session.histogram(visits["region"], categories=REGIONS, epsilon="1/10", ids=ids)),
        ("median income, bounds [0, 400000]",
         lambda: session.median(visits["income"], bounds=(0, 400_000), epsilon="1/5", ids=ids)),
    ]
    lines = [_line(session, title, run()) for title, run in steps]
    for line in lines:
        write(line)
    write("")
    if any("≈" in line for line in lines):
        write("(≈: rounded to 6 significant digits for reading; each release's value is exact in Python, "
              "release.value, and in its record)")
    write(f"spent {display_rational(session.spent)} of {TOTAL}; a further release costing more than "
          f"{display_rational(session.remaining)} would be refused.")
    write(f"done in {time.perf_counter() - start:.2f} s. Try:")
    write(f"  {try_command()}")
    return 0
