"""Public values whose order a release follows are refused as a set, and one aggregation is refused in words.

A table's public keys given as a set released its rows, and drew their noise, in the set's iteration order,
which for texts changes from process to process (``PYTHONHASHSEED``): one seed gave other bytes in another
process. The same held for a histogram's categories, and a selection over a set returned an index into an
order the caller never saw. ``aggregations=Count()`` stopped with Python's "object is not iterable".
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import securedp
from securedp import ChaChaSource
from securedp.tables import Count, prepare_table

TABLE = {"id": [1, 2, 3, 4], "g": ["abc", "abc", "x", "y"], "v": [1.0, 2.0, 3.0, 4.0]}
SOURCE = ChaChaSource(bytes(32))


@pytest.mark.parametrize("kind", [set, frozenset, lambda values: dict.fromkeys(values).keys()])
def test_a_set_is_refused_where_the_release_follows_the_order(kind) -> None:
    with pytest.raises(TypeError, match="keys must be in a fixed order"):
        prepare_table(TABLE, aggregations=[Count()], id_column="id", group_by=["g"], keys=kind(["abc", "x"]),
                      epsilon=1)
    with pytest.raises(TypeError, match="categories must be in a fixed order"):
        securedp.histogram(["a", "b"], categories=kind(["a", "b"]), epsilon=1, rng=SOURCE)
    with pytest.raises(TypeError, match="qs must be in a fixed order"):
        securedp.quantiles([1.0, 2.0], qs=kind(["1/4", "3/4"]), bounds=(0, 4), epsilon=1, rng=SOURCE)
    with pytest.raises(TypeError, match="scores must be in a fixed order"):
        securedp.exponential_mechanism(kind([1, 2, 3]), epsilon=1, sensitivity=1, rng=SOURCE)
    with pytest.raises(TypeError, match="candidates must be in a fixed order"):
        securedp.exponential_mechanism(lambda data, c: c, candidates=kind([1, 2, 3]), epsilon=1, sensitivity=1,
                                       rng=SOURCE)


def test_lists_and_tuples_of_texts_give_the_same_bytes_in_every_process() -> None:
    """The refusal's point: with a list the release is the same in processes whose string hashes differ."""
    code = ("import securedp; from securedp import ChaChaSource; from securedp.tables import Count, prepare_table;"
            "t = {'id': [1, 2, 3, 4, 5, 6], 'g': ['abc', 'abc', 'x', 'y', 'zz', 'q'], 'v': [1.0] * 6};"
            "r = prepare_table(t, aggregations=[Count()], id_column='id', group_by=['g'],"
            " keys=['abc', 'x', 'y', 'zz', 'q', 'w'], epsilon=1).execute(ChaChaSource(bytes(32)));"
            "print(r.value)")
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2, 3)}
    assert len(outputs) == 1


def test_one_aggregation_alone_is_refused_in_words() -> None:
    with pytest.raises(TypeError, match=r"aggregations must be a list of aggregations, not one: aggregations=\[Count"):
        prepare_table(TABLE, aggregations=Count(), id_column="id", epsilon=1)
    with pytest.raises(TypeError, match="aggregations must be a list of aggregations, not str"):
        prepare_table(TABLE, aggregations="count", id_column="id", epsilon=1)


@pytest.mark.parametrize("kind", [set, frozenset])
def test_a_set_is_refused_for_bounds_bins_group_columns_and_parts(kind) -> None:
    """Bounds given as a set of texts were accepted or found reversed depending on the process's hash seed;
    group columns as a set changed the released columns' order; a part's index enters its digests."""
    from securedp.tables import Sum

    with pytest.raises(TypeError, match="bounds must be in a fixed order"):
        securedp.sum([1.0, 2.0], bounds=kind(["0.5", "4"]), epsilon=1, rng=SOURCE)
    with pytest.raises(TypeError, match="bounds must be in a fixed order"):
        prepare_table(TABLE, aggregations=[Sum("v", kind(["0", "5"]))], id_column="id", epsilon=1)
    with pytest.raises(TypeError, match="bins must be in a fixed order"):
        securedp.histogram([1.0, 2.0], bins=kind([0, 1, 2]), epsilon=1, rng=SOURCE)
    with pytest.raises(TypeError, match="group_by must be in a fixed order"):
        prepare_table(TABLE, aggregations=[Count()], id_column="id", group_by=kind(["g", "v"]), keys=[("abc", 1.0)],
                      epsilon=1)
    with pytest.raises(TypeError, match="group_by must be in a fixed order"):
        securedp.analyze_contributions(TABLE, id_column="id", group_by=kind(["g"]), epsilon=1)
    session = securedp.Session(epsilon=5, rng=ChaChaSource(bytes(32)))
    with pytest.raises(TypeError, match="parts must be in a fixed order"):
        session.partition([1.0, 2.0], by=["a", "b"], parts=kind(["a", "b"]), budget=1)
    assert session.spent == 0
