"""The privacy map of a table's additive noise, checked on neighbouring tables rather than restated.

A table is ``epsilon``-DP (``rho``-zCDP) because, for every noisy integer of every aggregation, the
vectors of exact integers over the cells of two neighbouring tables (one person added, with any rows)
differ by at most the L1 sensitivity its Laplace noise is calibrated to (``k * s``: ``Noise.parameter *
epsilon``), and by at most the squared L2 sensitivity of its Gaussian noise (``k * s**2``). Nothing is
assumed about bounding: the exact integers are those the engine computes for one salt (the same for both
tables, as the salt is the seeded source's first 16 bytes), and the sensitivities are read from the
statistics' own noise laws. Hypothesis draws the tables and the added person (up to 6 rows over 3 keys,
values anywhere, clamped or not).

Control: the same check with ``max_rows`` larger in the data than in the calibration (the noise of
``m = 1`` applied to a table bounded at ``m = 3``) finds a pair that breaks it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import securedp
from securedp import ChaChaSource
from securedp.mechanisms.statistic import AdditiveStatistic
from securedp.tables import Count, Mean, Persons, Sum, Variance

KEYS = ["a", "b", "c"]
AGGREGATIONS = [Count(), Persons(), Sum("v", (-5, 20), 1), Mean("v", (0, 10), "0.5"), Variance("v", (-3, 3), 1)]
ROW = st.tuples(st.sampled_from(KEYS), st.integers(-40, 40))
TABLE = st.lists(st.tuples(st.integers(0, 6), ROW), max_size=25)
PERSON = st.lists(ROW, min_size=1, max_size=6)


def exact_integers(rows: list[tuple[int, tuple[str, int]]], monkeypatch: pytest.MonkeyPatch, k: int,
                   m: int, calibrated_m: int | None = None) -> dict[str, tuple[list[list[int]], list[Any]]]:
    """Each aggregation's exact integers per cell, and its noise laws, for the seeded salt."""
    seen: dict[str, tuple[list[list[int]], list[Any]]] = {}
    original = AdditiveStatistic.release_cells

    def spy(self: AdditiveStatistic[Any], exact: list[list[int]], source: Any, alpha: Fraction) -> Any:
        noises = self.noises
        if calibrated_m is not None:  # the control: the laws of another max_rows
            import dataclasses

            other = dataclasses.replace(self, column=dataclasses.replace(self.column, max_contributions=calibrated_m)
                                        ) if hasattr(self, "column") else dataclasses.replace(
                self, max_contributions=calibrated_m)
            noises = other.noises
        seen[self.statistic + str(len(seen))] = (exact, list(noises))
        return original(self, exact, source, alpha)

    monkeypatch.setattr(AdditiveStatistic, "release_cells", spy)
    frame = pl.DataFrame({"p": [p for p, _ in rows], "g": [g for _, (g, _) in rows], "v": [v for _, (_, v) in rows]},
                         schema={"p": pl.Int64, "g": pl.String, "v": pl.Int64})
    securedp.table(frame, group_by=["g"], keys=KEYS, aggregations=AGGREGATIONS, id_column="p", max_groups=k,
                   max_rows=m, epsilon=1, rng=ChaChaSource(bytes(32)))
    monkeypatch.undo()
    return seen


def violations(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    found = []
    for name, (exact, noises) in before.items():
        other, _ = after[name]
        for j, noise in enumerate(noises):
            l1 = sum(abs(x - y) for x, y in zip(exact[j], other[j], strict=True))
            l2 = sum((x - y) ** 2 for x, y in zip(exact[j], other[j], strict=True))
            if l1 > noise.max_groups * noise.sensitivity or l2 > noise.max_groups * noise.sensitivity**2:
                found.append(f"{name}[{j}]: L1 {l1}, L2**2 {l2}, "
                             f"calibrated to k={noise.max_groups} s={noise.sensitivity}")
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=TABLE, person=PERSON, k=st.integers(1, 3), m=st.integers(1, 3))
def test_neighbouring_tables_move_each_noisy_integer_within_its_calibration(
        table: list[Any], person: list[Any], k: int, m: int, monkeypatch: pytest.MonkeyPatch) -> None:
    without = exact_integers(table, monkeypatch, k, m)
    with_person = exact_integers(table + [(99, row) for row in person], monkeypatch, k, m)
    assert violations(without, with_person) == []


def test_control_noise_calibrated_for_fewer_rows_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    table = [(0, ("a", 1)), (1, ("b", 2))]
    person = [(99, ("a", 20)), (99, ("a", 20)), (99, ("a", 20))]
    without = exact_integers(table, monkeypatch, 1, 3, calibrated_m=1)
    with_person = exact_integers(table + person, monkeypatch, 1, 3, calibrated_m=1)
    assert violations(without, with_person)
