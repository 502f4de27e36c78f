"""Issue 42.3 (b): the plan of a table with private keys says when a separate selection on distinct persons is
cheaper to threshold than the released count of rows.

The default rule thresholds the released count, whose sensitivity is ``max_rows``; a key whose persons hold one
row each then needs more persons than a selection on distinct persons (sensitivity 1) at half the budget
(``selection="optimal"`` in epsilon, ``"gaussian"`` in rho). The plan names that rule and the persons a key needs
under each, from the public parameters alone, exactly when the alternative needs fewer for a 1/2 chance.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import securedp
from securedp.tables import Count, Persons, Sum

HALF = Fraction(1, 2)
FRAME = pl.DataFrame({"p": [1, 2, 3, 4], "g": ["a", "b", "a", "c"], "v": [1, 2, 3, 4]})


def _plan(**query: Any) -> Any:
    base: dict[str, Any] = {"group_by": ["g"], "id_column": "p", "delta": "1e-6", "aggregations": [Count()]}
    return securedp.prepare_table(FRAME, **(base | query)).plan


@pytest.mark.parametrize("currency", ["epsilon", "rho"])
@pytest.mark.parametrize("max_rows", [1, 2, 4])
@pytest.mark.parametrize("max_groups", [1, 4])
def test_the_hint_appears_exactly_when_the_per_person_selection_needs_fewer_persons(
        currency: str, max_rows: int, max_groups: int) -> None:
    budget = {currency: 1}
    default = _plan(max_rows=max_rows, max_groups=max_groups, **budget)
    rule = "optimal" if currency == "epsilon" else "gaussian"
    separate = _plan(max_rows=max_rows, max_groups=max_groups, selection=rule, **budget)
    assert default.selection is not None and default.selection.rule == "count"
    cheaper = separate.selection.needed[HALF] < default.selection.needed[HALF]
    hint = default.selection.cheaper
    assert (hint is not None) == cheaper
    text = "\n".join(default.lines())
    assert (f"selection='{rule}'" in text) == cheaper
    if hint is not None:
        assert hint.rule == rule and hint.needed == separate.selection.needed  # the plan that rule would state
        assert f"{hint.needed[HALF]} persons for a 0.5 chance" in text
        assert f"{default.selection.needed[HALF]} rows" in text
    if max_rows == 1:
        assert hint is None  # the released count already counts persons, at the whole budget


def test_the_measured_case_names_optimal() -> None:
    """InstEval's case (benchmarks/bench_heldout_gaps.py): epsilon 1, delta 1e-6, k = 1, max_rows = 2."""
    plan = _plan(max_rows=2, epsilon=1)
    assert plan.selection.cheaper is not None and plan.selection.cheaper.rule == "optimal"
    assert plan.selection.cheaper.needed[HALF] < plan.selection.needed[HALF]
    text = "\n".join(plan.lines())
    assert "hint:" in text and "selection='optimal'" in text and "distinct persons" in text


@pytest.mark.parametrize("query", [
    {"aggregations": [Persons(), Count()]},  # the released count of persons: sensitivity 1
    {"selection": "laplace"}, {"selection": "optimal"}, {"selection_share": "1/4"},  # a separate rule already
    {"keys": ["a", "b"], "delta": None},  # public keys: nothing to select
    {"aggregations": [Sum("v", (0, 10))]},  # no count: a separate selection is the default
])
def test_no_hint_where_the_keys_are_not_selected_by_a_count_of_rows(query: dict[str, Any]) -> None:
    plan = _plan(max_rows=4, epsilon=1, **query)
    assert plan.selection is None or plan.selection.cheaper is None
    assert "hint:" not in "\n".join(plan.lines())


def test_the_hint_depends_on_public_parameters_only() -> None:
    other = pl.DataFrame({"p": list(range(100)), "g": ["x"] * 100, "v": [0] * 100})
    one = _plan(max_rows=2, epsilon=1)
    two = securedp.prepare_table(other, group_by=["g"], id_column="p", delta="1e-6", aggregations=[Count()],
                                 max_rows=2, epsilon=1).plan
    assert one == two and one.selection.cheaper is not None


def test_the_dry_run_prints_the_hint(tmp_path: Path, command: Any) -> None:
    data = tmp_path / "t.csv"
    FRAME.write_csv(data)
    argv = ["release", str(data), "--group-by", "g", "--count", "--id-column", "p", "--delta", "1e-6", "--epsilon",
            "1", "--dry-run"]
    status, out, _ = command([*argv, "--max-rows", "2"])
    assert status == 0 and "hint:" in out and "selection='optimal'" in out and "--selection optimal" in out, out
    status, out, _ = command([*argv, "--max-rows", "1"])
    assert status == 0 and "hint:" not in out, out
