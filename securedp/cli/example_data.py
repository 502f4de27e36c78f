"""The example dataset shipped as ``securedp/data/example.csv``, generated deterministically.

1,200 visits by 1,000 synthetic people (so ``person_id`` repeats: a person
has one to three rows), with columns ``person_id``, ``age`` (18..90),
``region`` (north/south/east/west), ``hours`` (weekly hours worked, 0..80),
``income`` (yearly, two decimals) and ``smoker`` (0/1). Every value is drawn
by securedp's own samplers from ``ChaChaSource(SHA-256("securedp example
dataset v1"))``, so the file is the same on every machine; no network is
used. Regenerate with ``python -m securedp.cli.example_data``.
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

from securedp.hazmat.bits.chacha import ChaChaSource
from securedp.hazmat.samplers import bernoulli, discrete_gaussian, geometric, uniform_below

PATH = Path(__file__).resolve().parent.parent / "data" / "example.csv"
COLUMNS = ("person_id", "age", "region", "hours", "income", "smoker")
REGIONS = ("north", "south", "east", "west")
PEOPLE = 1000
ROWS = 1200


def generate() -> str:
    """The CSV text of the example dataset (header and ``ROWS`` rows)."""
    rng = ChaChaSource(hashlib.sha256(b"securedp example dataset v1").digest())
    people = [int(i) for i in uniform_below(PEOPLE, ROWS - PEOPLE, rng=rng)]
    ids = sorted(list(range(PEOPLE)) + people)
    age = {p: 18 + int(uniform_below(73, rng=rng)) for p in range(PEOPLE)}
    region = {p: REGIONS[int(uniform_below(4, rng=rng))] for p in range(PEOPLE)}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for p in ids:
        hours = min(80, max(0, 38 + int(discrete_gaussian(9, rng=rng))))
        cents = 1_500_000 + 100_000 * hours + int(geometric(scale=2_000_000, rng=rng))
        smoker = int(bernoulli("0.2", rng=rng))
        writer.writerow((p, age[p], region[p], hours, f"{cents // 100}.{cents % 100:02d}", smoker))
    return out.getvalue()


if __name__ == "__main__":
    PATH.write_text(generate(), encoding="utf-8")
    print(f"wrote {PATH}")
