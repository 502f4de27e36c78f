"""The example dataset shipped as ``securedp/data/example.csv``, generated deterministically.

1,200 visits by 1,000 synthetic people (so ``person_id`` repeats: a person
has one to four rows, :data:`MAX_ROWS_PER_PERSON`), with columns ``person_id``, ``age`` (18..90),
``region`` (north/south/east/west), ``hours`` (weekly hours worked, 0..80),
``income`` (yearly, two decimals) and ``smoker`` (0/1). Every value is
computed with integer arithmetic from uniform integers read (by rejection)
from ``ChaChaSource(SHA-256("securedp example dataset v1"))``, whose bytes
and byte-to-integer rule are fixed, so the file is the same on every machine
and every version (it does not depend on how the samplers consume bits); no
network is used. Regenerate with ``python -m securedp.cli.example_data``.
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

from securedp.hazmat.bits.chacha import ChaChaSource

PATH = Path(__file__).resolve().parent.parent / "data" / "example.csv"
COLUMNS = ("person_id", "age", "region", "hours", "income", "smoker")
REGIONS = ("north", "south", "east", "west")
PEOPLE = 1000
ROWS = 1200
MAX_ROWS_PER_PERSON = 4
"""The most rows one person has in the shipped file (one person has 4; tested against the file).

A release of the example data must name ``person_id`` as the id column, or
declare at least this many contributions per person.
"""


def _uniform(n: int, rng: ChaChaSource) -> int:
    """A uniform integer in ``[0, n)``: ``(n - 1).bit_length()`` random bits, rejected while ``>= n``."""
    k = (n - 1).bit_length()
    while True:
        value = rng.randbits(k)
        if value < n:
            return value


def generate() -> str:
    """The CSV text of the example dataset (header and ``ROWS`` rows)."""
    rng = ChaChaSource(hashlib.sha256(b"securedp example dataset v1").digest())
    ids = sorted(list(range(PEOPLE)) + [_uniform(PEOPLE, rng) for _ in range(ROWS - PEOPLE)])
    age = {p: 18 + _uniform(73, rng) for p in range(PEOPLE)}
    region = {p: REGIONS[_uniform(4, rng)] for p in range(PEOPLE)}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for p in ids:
        hours = min(80, max(0, 40 + sum(_uniform(7, rng) - 3 for _ in range(8))))
        cents = 1_500_000 + 100_000 * hours + _uniform(1_000_000, rng) * (1 + _uniform(4, rng))
        smoker = int(_uniform(5, rng) == 0)
        writer.writerow((p, age[p], region[p], hours, f"{cents // 100}.{cents % 100:02d}", smoker))
    return out.getvalue()


if __name__ == "__main__":
    PATH.write_text(generate(), encoding="utf-8")
    print(f"wrote {PATH}")
