"""Issue 17: one statistic, one definition. A one-column release is the one-cell table of its statistic.

For every statistic the two entry points must agree on what is released:

* **value**, at a huge epsilon (the noise is zero except with negligible probability: the discrete
  Laplace at scale ``1e-12`` is non-zero with probability below ``1e-12 * 2``): the one-column release
  equals the value of the one cell of ``securedp.table`` over the same rows, to the last digit;
* **law**, at a small epsilon: 400 seeded one-column releases and 400 seeded one-cell tables are two
  samples of one law (a two-sample chi-square over pooled bins, false-failure rate below ``1e-6``);
* the measured divergences of the issue: the mean's output lattice (``[1, 2, 2]`` gives ``13653/8192``
  in both), quantiles priced in ``rho`` (released, at the same selection epsilon), and text person ids
  (bounded by the same salted rule, so the same rows are kept).
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl
import pytest
from scipy import stats

import securedp
from securedp import ChaChaSource
from securedp.mechanisms.selection_price import selection_epsilon
from securedp.privacy.cost import Cost
from securedp.tables import IQR, Count, Mean, Median, Quantile, Sum, TrimmedMean, Variance

HUGE = 10**12
DATA = [1, 2, 3, 7, 4, 9, 8, 5]
COLUMN = pl.Series("v", DATA)
"""The one-column releases read the column the one-cell table reads (Int64: its declared type chooses the
default lattice, step 1 for sums and quantiles, in both)."""
BOUNDS = (0, 10)
Q_BOUNDS = (0, 200)
"""Quantile bounds on the lattice of step 1: a huge epsilon selects an exact quantile of DATA (the quartiles 2 or 3
and 7 or 8, the median 4 or 5, the 0.9-quantile 9), and the one-column release and the one-cell table the same
one from the same seed."""


def one_cell(data: list[Any], aggregation: Any, ids: list[Any] | None = None, **query: Any) -> Any:
    """The value of the one cell of a table of ``data`` (column ``v``, ids in ``p``)."""
    frame = pl.DataFrame({"v": data} if ids is None else {"v": data, "p": ids})
    release = securedp.table(frame, aggregations=[aggregation], id_column=None if ids is None else "p",
                             rng=ChaChaSource(bytes(32)), **query)
    return release.value[0][0]


CASES = {
    "count": (lambda **q: securedp.count(COLUMN, **q), Count()),
    "sum": (lambda **q: securedp.sum(COLUMN, bounds=BOUNDS, **q), Sum("v", BOUNDS)),
    "mean": (lambda **q: securedp.mean(COLUMN, bounds=BOUNDS, **q), Mean("v", BOUNDS)),
    "variance": (lambda **q: securedp.variance(COLUMN, bounds=BOUNDS, **q), Variance("v", BOUNDS)),
    "median": (lambda **q: securedp.median(COLUMN, bounds=Q_BOUNDS, **q), Median("v", Q_BOUNDS)),
    "quantile": (lambda **q: securedp.quantile(COLUMN, "0.9", bounds=Q_BOUNDS, **q),
                 Quantile("v", Q_BOUNDS, q="0.9")),
    "iqr": (lambda **q: securedp.iqr(COLUMN, bounds=Q_BOUNDS, **q), IQR("v", Q_BOUNDS)),
    "trimmed_mean": (lambda **q: securedp.trimmed_mean(COLUMN, bounds=Q_BOUNDS, **q), TrimmedMean("v", Q_BOUNDS)),
}


@pytest.mark.parametrize("currency", ["epsilon", "rho"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_one_column_value_is_the_one_cell_value(name: str, currency: str) -> None:
    release, aggregation = CASES[name]
    huge = HUGE if currency == "epsilon" else HUGE**4  # sigma**2 = s**2 / (2 rho): the variance's s is ~2**31
    one_column = release(**{currency: huge}, rng=ChaChaSource(bytes(32))).value
    assert one_column == one_cell(DATA, aggregation, **{currency: huge})


def test_the_mean_is_on_the_lattice_in_both() -> None:
    """The measured divergence: the one-column mean of [1, 2, 2] was 5/3, the one-cell table 13653/8192."""
    one_column = securedp.mean([1, 2, 2], bounds=BOUNDS, epsilon=HUGE, rng=ChaChaSource(bytes(32))).value
    assert one_column == one_cell([1, 2, 2], Mean("v", BOUNDS), epsilon=HUGE) == Fraction(13653, 8192)


def test_a_median_priced_in_rho_is_released_at_the_same_selection_epsilon() -> None:
    """The measured divergence: a one-column median in rho raised TypeError; a table median in rho was released."""
    release = securedp.median(DATA, bounds=BOUNDS, rho="1/2", rng=ChaChaSource(bytes(32)))
    table = securedp.table(pl.DataFrame({"v": DATA}), aggregations=[Median("v", BOUNDS)], rho="1/2",
                           rng=ChaChaSource(bytes(32)))
    assert release.rho == Fraction(1, 2) and release.epsilon is None
    assert release.parameters["data_median"]["epsilon_cell"] == table.parameters["v_median"]["epsilon_cell"] == (
        selection_epsilon(Cost.of(rho=Fraction(1, 2))))
    session = securedp.Session(rho=1)
    session.median(DATA, bounds=BOUNDS, rho="1/2")
    assert session.spent == Fraction(1, 2)


def test_text_person_ids_are_bounded_as_in_a_table() -> None:
    """The measured divergence: one-column releases refused text ids (``ids must be integers``); tables took them.

    Person "a" has four rows of different values and may keep two: which two is the salted rule's
    choice, the same in both for the same seed (the salt is the source's first 16 bytes).
    """
    data, ids = [1, 5, 9, 10, 3, 4], ["a", "a", "a", "a", "b", "c"]
    for seed in range(8):
        one_column = securedp.sum(pl.Series(data), bounds=BOUNDS, epsilon=HUGE, ids=ids, max_contributions=2,
                                  rng=ChaChaSource(bytes([seed]) * 32)).value
        frame = pl.DataFrame({"v": data, "p": ids})
        table = securedp.table(frame, aggregations=[Sum("v", BOUNDS)], id_column="p", max_rows=2, epsilon=HUGE,
                               rng=ChaChaSource(bytes([seed]) * 32))
        assert one_column == table.value[0][0]


def test_an_integer_id_and_its_text_are_one_person_in_both() -> None:
    """A person is the canonical text of their id (what the row digests hash): 7 and "7" are one person."""
    ids = np.empty(3, dtype=object)
    ids[:] = [7, "7", "8"]
    for seed in range(4):
        one_column = securedp.sum([1, 9, 4], bounds=BOUNDS, epsilon=HUGE, ids=ids, max_contributions=1,
                                  rng=ChaChaSource(bytes([seed]) * 32)).value
        frame = pl.DataFrame({"v": [1, 9, 4]}).to_pandas()
        frame["p"] = ids
        table = securedp.table(frame, aggregations=[Sum("v", BOUNDS)], id_column="p", epsilon=HUGE,
                               rng=ChaChaSource(bytes([seed]) * 32))
        assert one_column == table.value[0][0] and one_column in (5, 13)  # one of 1 and 9, and 4


def _draws(release: Any, table_aggregation: Any, n: int, **query: Any) -> tuple[list[Any], list[Any]]:
    source_a, source_b = ChaChaSource(b"one-column".ljust(32, b"\0")), ChaChaSource(b"one-cell".ljust(32, b"\0"))
    one_column = [release(**query, rng=source_a).value for _ in range(n)]
    prepared = securedp.prepare_table(pl.DataFrame({"v": DATA}), aggregations=[table_aggregation], **query)
    cells = [prepared.execute(source_b).value[0][0] for _ in range(n)]
    return one_column, cells


def _same_law(a: list[Any], b: list[Any]) -> float:
    """The p-value of a two-sample chi-square over the pooled values, bins of at least 10 expected draws."""
    pooled = Counter(a) + Counter(b)
    edges: list[Any] = []
    running = 0
    for value in sorted(pooled):
        running += pooled[value]
        if running >= 20:
            edges.append(value)
            running = 0
    bins = np.searchsorted(np.array([float(e) for e in edges]), [float(v) for v in a + b], side="left")
    bins = np.minimum(bins, len(edges) - 1)
    table = np.array([np.bincount(bins[: len(a)], minlength=len(edges)),
                      np.bincount(bins[len(a):], minlength=len(edges))])
    table = table[:, table.sum(axis=0) > 0]
    return float(stats.chi2_contingency(table)[1])


@pytest.mark.parametrize("name", ["count", "sum", "mean", "median", "iqr", "trimmed_mean"])
def test_the_one_column_law_is_the_one_cell_law(name: str) -> None:
    release, aggregation = CASES[name]
    one_column, cells = _draws(release, aggregation, 400, epsilon="1/2")
    assert len(set(one_column)) > 3  # the noise is real at this epsilon
    assert _same_law(one_column, cells) > 1e-6


def test_control_a_different_law_is_told_apart() -> None:
    """The same audit sees a one-column release at four times the epsilon as another law."""
    release, aggregation = CASES["sum"]
    one_column, _ = _draws(release, aggregation, 400, epsilon=2)
    _, cells = _draws(release, aggregation, 400, epsilon="1/2")
    assert _same_law(one_column, cells) < 1e-6


def test_the_interquartile_range_through_every_entry_point() -> None:
    """Issue 17's seam: one new aggregation, in one-column releases, Session, tables (and so the command)."""
    assert securedp.iqr(COLUMN, bounds=Q_BOUNDS, epsilon=HUGE, rng=ChaChaSource(bytes(32))).value in (4, 5, 6)
    fine = securedp.iqr(DATA, bounds=Q_BOUNDS, epsilon=HUGE, rng=ChaChaSource(bytes(32)))  # a list: 2**-13 steps
    assert 4 <= fine.value <= 6 and fine.value.denominator > 1  # quartiles anywhere in [2, 3] and [7, 8]
    session = securedp.Session(epsilon=2, rng=ChaChaSource(bytes(32)))
    release = session.iqr(DATA, bounds=Q_BOUNDS, epsilon=1)
    assert release.statistic == "iqr" and session.spent == 1
    assert release.parameters["data_iqr"]["epsilon_cell"] == Fraction(1, 2)
    frame = pl.DataFrame({"g": ["a"] * 8 + ["b"] * 9, "v": DATA + [v + 100 for v in DATA] + [150]})
    table = securedp.table(frame, group_by=["g"], keys=["a", "b"], aggregations=[IQR("v", Q_BOUNDS)], epsilon=HUGE,
                           rng=ChaChaSource(bytes(32)))
    a, b = (row[1] for row in table.value)
    assert a in (4, 5, 6) and b == 108 - 103  # a: quartiles 2 or 3 and 7 or 8; b: 103 and 108 (ranks 2.25, 6.75)
    assert table.parameters["v_iqr"]["q"] == [Fraction(1, 4), Fraction(3, 4)]
