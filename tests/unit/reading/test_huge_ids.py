"""An id or key cell holding a huge integer (``2**ID_BITS`` or more in magnitude) is unusable, like a blank one.

Found by review: Python refuses to write an integer of more than 4,300 digits as text, so ``10**5000`` as one
person's id refused an analyst-facing release (spending nothing) where its neighbour was released, and
``Decimal("5E+999999999")`` ran for longer than 20 s. Now the analyst's release drops that row, exactly as it drops
a blank id, and the data holder's refusal names the cell without writing out its digits, in a moment.
"""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction

import pytest

import securedp
from securedp import Session
from securedp.reading.keys import ID_BITS

HUGE = [10**5000, -(10**5000), Fraction(10**5000), Decimal("1E+5000"), Decimal("5E+999999999"), 2**ID_BITS,
        Decimal(2**ID_BITS)]
NAMES = ["10**5000", "-10**5000", "Fraction", "Decimal 1E+5000", "Decimal 5E+999999999", "2**ID_BITS",
         "Decimal 2**ID_BITS"]


def _outcome(release) -> tuple[str, object]:
    try:
        return "released", release()
    except securedp.DataRefused:
        return "refused", None


@pytest.mark.parametrize("huge", HUGE, ids=NAMES)
def test_an_analyst_facing_release_drops_the_row_as_it_drops_a_blank_id(huge) -> None:
    def count(ids):
        session = Session(epsilon=10, analyst_facing=True, rng=securedp.ChaChaSource(bytes(32)))
        outcome = _outcome(lambda: session.count([1, 2, 3], ids=ids, epsilon="1/4").value)
        return outcome, session.spent

    start = time.perf_counter()
    assert count([1, 2, huge]) == count([1, 2, None])
    assert time.perf_counter() - start < 5  # Decimal("5E+999999999") ran for over 20 s


@pytest.mark.parametrize("huge", HUGE, ids=NAMES)
def test_a_table_reads_a_huge_id_or_key_as_unusable(huge) -> None:
    frame = {"pid": [1, 2, huge, 4], "g": ["a", "b", "a", "b"], "x": [1.0, 2.0, 3.0, 4.0]}
    blank = {**frame, "pid": [1, 2, None, 4]}

    def table(data, **where):
        session = Session(epsilon=10, analyst_facing=True, rng=securedp.ChaChaSource(bytes(32)))
        return _outcome(lambda: session.table(data, aggregations=[securedp.tables.Count()], epsilon=1,
                                              **where).value), session.spent

    assert table(frame, group_by=["g"], keys=["a", "b"], id_column="pid") == \
        table(blank, group_by=["g"], keys=["a", "b"], id_column="pid")
    keyed = {"g": [1, 2, huge, 2], "x": [1.0, 2.0, 3.0, 4.0]}
    assert table(keyed, group_by=["g"], keys=[1, 2]) == table({**keyed, "g": [1, 2, None, 2]}, group_by=["g"],
                                                               keys=[1, 2])


@pytest.mark.parametrize("huge", HUGE, ids=NAMES)
def test_the_data_holder_is_told_which_cell_without_its_digits(huge) -> None:
    session = Session(epsilon=10)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"row 2: id .* is too large .* below 2\*\*4096"):
        session.count([1, 2, 3], ids=[1, 2, huge], epsilon="1/4")
    assert time.perf_counter() - start < 5 and session.spent == 0


def test_the_largest_usable_integer_id_is_a_person() -> None:
    released = securedp.count([1, 2, 3], ids=[1, 2, 2**ID_BITS - 1], epsilon=10**6,
                              rng=securedp.ChaChaSource(bytes(32)))
    assert released.value == 3


def test_a_huge_ratio_is_named_by_its_size_in_the_data_holders_refusals() -> None:
    """``repr`` of a ``Fraction`` past 4,300 digits raises: the refusal of a huge non-whole id, and of such a value
    in a column declared int, named it by ``repr`` and so said "Exceeds the limit (4300 digits)" instead."""
    big = Fraction(2**20000, 3)
    with pytest.raises(ValueError, match=r"row 1: id <Fraction of 20,001 bits> is not a whole number"):
        Session(epsilon=10).count([1.0, 2.0], ids=[1, big], epsilon=1)
    with pytest.raises(ValueError, match=r"not a whole number \(<Fraction of 20,001 bits>\) in a column declared int"):
        Session(epsilon=10).table({"pid": [0, 1], "v": [1, big]}, id_column="pid",
                                  aggregations=[securedp.tables.Sum("v", (0, 10))], epsilon=1, schema={"v": "int"})
