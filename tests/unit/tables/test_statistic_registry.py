"""A new statistic is one definition and one entry in the one list (issue 41).

The test registers a toy additive statistic (the bounded sum of a column, doubled after the noise: a
post-processing, so its privacy map is the sum's) and finds, without any other edit: its table aggregation
(``--toy_total``, a recorded table query), its one-column function and ``prepare_*`` twin, its ``Session``
method with a real signature, ``--stat``'s choice and the command query's checks. It also checks that every
statistic of the list has all of these.
"""

from __future__ import annotations

import argparse
import inspect
import json
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pytest

import securedp
from securedp import ChaChaSource, Session
from securedp.cli import commands, table_command
from securedp.mechanisms.statistic import CellColumn
from securedp.mechanisms.sum import Sum as SumDefinition
from securedp.privacy.cost import Cost
from securedp.tables import one_column
from securedp.tables.aggregation import ColumnAggregation, Definition
from securedp.tables.query import AggregationQuery, Query
from securedp.tables.registry import Statistic
from securedp.tables.spec import KINDS, STATISTICS


@dataclass(frozen=True)
class DoubledSum(SumDefinition):
    """The toy's cell statistic: ``2 (S + Z) step``, the sum's noise doubled after the draw."""

    statistic = "toy_total"

    def finish(self, noisy: list[list[int]], alpha: Fraction) -> CellColumn:
        done = super().finish(noisy, alpha)
        return CellColumn([2 * v for v in done.values], [2 * v for v in done.low or ()],
                          [2 * v for v in done.high or ()], done.step, done.step)


@dataclass(frozen=True)
class ToyTotal(ColumnAggregation):
    """The toy's table aggregation."""

    statistic = DoubledSum
    kind = "toy_total"

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        return DoubledSum(cost, self.lattice_column(m), max_groups=k)


def _toy_total(data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
               ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None) -> None:
    """Validate and price the toy: twice a bounded sum."""


@pytest.fixture
def toy() -> Iterator[Statistic]:
    entry = STATISTICS.register(Statistic("toy_total", "column", ToyTotal, signature=_toy_total,
                                          doc="Release twice the bounded sum of ``data``."))  # the one line
    try:
        yield entry
    finally:
        STATISTICS.unregister("toy_total")
        for name in ("toy_total", "prepare_toy_total"):
            vars(one_column).pop(name, None)
        if "toy_total" in vars(Session):
            delattr(Session, "toy_total")


DATA = [3, 1, 4, 1, 5, 9, 2, 6]


def test_a_registered_statistic_is_a_table_aggregation(toy: Statistic) -> None:
    assert KINDS["toy_total"] is toy
    query = Query((), (AggregationQuery("toy_total", "v", (Fraction(0), Fraction(10))),), epsilon=Fraction(100))
    table = query.prepare({"v": DATA}).execute(ChaChaSource(bytes(32)))
    assert table.labels == ("v_toy_total", "v_toy_total_low", "v_toy_total_high")
    assert abs(table.value[0][0] - 2 * sum(DATA)) <= 2 * 10  # the sum's noise at epsilon 100 is small


def test_a_registered_statistic_has_its_functions_and_its_session_method(toy: Statistic) -> None:
    prepare, release = one_column.prepare_toy_total, one_column.toy_total  # type: ignore[attr-defined]
    assert inspect.signature(prepare) == inspect.signature(_toy_total).replace(return_annotation="PreparedRelease")
    assert "rng" in inspect.signature(release).parameters
    method = Session.toy_total  # type: ignore[attr-defined]
    assert list(inspect.signature(method).parameters)[1:] == list(inspect.signature(_toy_total).parameters)
    assert method.__doc__ == ":func:`securedp.toy_total`, charged to this session."

    one = release(DATA, bounds=(0, 10), epsilon=1, rng=ChaChaSource(bytes(32)))
    table = securedp.table({"data": DATA}, aggregations=[ToyTotal("data", (0, 10))], epsilon=1,
                           rng=ChaChaSource(bytes(32)))
    assert one.value == table.value[0][0] and one.statistic == "toy_total"
    assert json.dumps(one.record()["parameters"], sort_keys=True) == \
        json.dumps(table.record()["parameters"], sort_keys=True)  # the one-cell table, to the byte

    session = Session(epsilon=2, rng=ChaChaSource(bytes(32)))
    assert session.toy_total(DATA, bounds=(0, 10), epsilon=1).value == one.value  # type: ignore[attr-defined]
    assert session.spent == 1
    with pytest.raises(TypeError, match="did you mean bounds="):
        session.toy_total(DATA, bound=(0, 10), epsilon=1)  # type: ignore[attr-defined]


def test_a_registered_statistic_is_a_choice_of_the_command_with_its_checks(toy: Statistic) -> None:
    assert "toy_total" in commands.stat_choices()
    parser = argparse.ArgumentParser()
    table_command.add_table_options(parser)
    assert table_command.wants_table(parser.parse_args(["--toy-total", "v:0,10"]))  # a table's --NAME too
    query = Query.of_column("toy_total", "v", Fraction(1), bounds=(Fraction(0), Fraction(10))).check()
    assert query.prepare({"v": DATA}).execute(ChaChaSource(bytes(32))).value == \
        one_column.toy_total(DATA, bounds=(0, 10), epsilon=1, rng=ChaChaSource(bytes(32))).value  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="toy_total needs --bounds"):
        Query.of_column("toy_total", "v", Fraction(1)).check()
    with pytest.raises(ValueError, match="--trim applies to the trimmed_mean statistic only"):
        Query.of_column("toy_total", "v", Fraction(1), bounds=(Fraction(0), Fraction(10)), trim=Fraction(1, 5)).check()
    assert Query.from_json(query.to_json()) == query


def test_an_unregistered_statistic_is_refused_everywhere() -> None:
    assert "toy_total" not in commands.stat_choices() and "toy_total" not in KINDS
    with pytest.raises(ValueError, match="unknown statistic 'toy_total'"):
        Query.of_column("toy_total", "v", Fraction(1)).check()
    with pytest.raises(AttributeError):
        one_column.toy_total  # type: ignore[attr-defined]  # noqa: B018 - the lookup is the test


def test_every_statistic_of_one_column_has_its_functions_and_method() -> None:
    for name, entry in STATISTICS.items():
        if entry.signature is None:
            assert entry.table and not hasattr(one_column, name)
            continue
        prepare = getattr(securedp, f"prepare_{name}")
        assert prepare is getattr(one_column, f"prepare_{name}")
        assert getattr(securedp, name) is getattr(one_column, name)
        assert inspect.signature(getattr(Session, name)).parameters.keys() - {"self"} == \
            inspect.signature(prepare).parameters.keys()
