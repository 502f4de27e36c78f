"""Issue 43.7: ``print(prepared.plan)`` prints the readable plan (the lines of ``--dry-run``), not a repr of
40-digit Fractions; ``repr`` stays exact."""

from __future__ import annotations

import polars as pl

from securedp.tables import Count, Mean, prepare_table


def test_print_plan_is_the_dry_run_text() -> None:
    frame = pl.DataFrame({"pid": [1, 2, 3], "city": ["a", "b", "a"], "income": [10, 20, 30]})
    prepared = prepare_table(frame, group_by=["city"], aggregations=[Count(), Mean("income", (0, 100))],
                             id_column="pid", epsilon="1/3", delta="1e-6")
    assert prepared.plan is not None
    text = str(prepared.plan)
    assert text == "\n".join(prepared.plan.lines())
    assert text.startswith("cost     epsilon") and "Fraction(" not in text and "income_mean" in text
    assert "Fraction(" in repr(prepared.plan)
