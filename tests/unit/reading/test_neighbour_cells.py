"""Neighbouring datasets found by review (2026-12-02) to differ in outcome class: one person's cell refused an
analyst-facing release that its neighbour released. Each case now releases both (the odd cell clamped or its row
dropped, as the reading rules say), and the data holder is refused in words (no bare ``InvalidOperation``,
``TypeError`` or ``ColumnNotFoundError``).

* numeric text with an exponent ``Decimal`` refuses (more than 18 digits): ``"1e99999999999999999999"``;
* ratio text of more than 4,300 digits in a column declared ``int`` (Python's ``int`` refuses them);
* ``np.timedelta64`` cells (NumPy registers them as integers) as values and ids;
* a CSV file whose first record is an empty line (Polars took the table's width from it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import securedp
from securedp import Session
from securedp.tables import Sum


def _outcome(release: Any) -> tuple[str, Any]:
    session = Session(epsilon=10, analyst_facing=True, rng=securedp.ChaChaSource(bytes(32)))
    try:
        release(session)
    except securedp.DataRefused:
        return "refused", session.spent
    return "released", session.spent


HUGE_EXPONENTS = ["1e99999999999999999999", "1e-99999999999999999999", "-3E+99999999999999999999",
                  "0e99999999999999999999", "1e" + "9" * 398, "\u0661e" + "\u0660" * 20 + "\u0661"]


@pytest.mark.parametrize("odd", HUGE_EXPONENTS)
def test_numeric_text_with_a_huge_exponent_is_a_number(odd: str) -> None:
    def total(values: list[str]) -> Any:
        return lambda s: s.sum(values, bounds=(0, 10), epsilon=1)

    assert _outcome(total(["1", "2", odd])) == _outcome(total(["1", "2"])) == ("released", 1)
    assert _outcome(lambda s: s.median(["1", "2", odd], bounds=(0, 10), epsilon=1))[0] == "released"
    expected = {"1e99999999999999999999": 10, "1e" + "9" * 398: 10, "\u0661e" + "\u0660" * 20 + "\u0661": 10}
    huge = securedp.sum(["0", odd], bounds=(0, 10), epsilon=10**9, rng=securedp.ChaChaSource(bytes(32))).value
    assert huge == expected.get(odd, 0)  # clamped to the bound, or (tiny, negative, zero) to 0


@pytest.mark.parametrize("odd, whole", [("1/" + "9" * 302, False), ("9" * 302 + "/7", False),
                                        ("9" * 302 + "/3", True)])  # 10**302 - 1 is 1 modulo 7, 0 modulo 3
def test_ratio_text_of_many_digits_in_a_column_declared_int(odd: str, whole: bool) -> None:
    def table(values: list[str]) -> Any:
        return lambda s: s.table({"pid": list(range(len(values))), "v": values}, id_column="pid",
                                 aggregations=[Sum("v", (0, 10))], epsilon=1, schema={"v": "int"})

    assert _outcome(table(["1", "2", odd])) == _outcome(table(["1", "2"])) == ("released", 1)
    holder = Session(epsilon=10)
    if whole:
        holder.table({"pid": [0, 1, 2], "v": ["1", "2", odd]}, id_column="pid", aggregations=[Sum("v", (0, 10))],
                     epsilon=1, schema={"v": "int"})
    else:
        with pytest.raises(ValueError, match=r"not a whole number .* in a column declared int"):
            holder.table({"pid": [0, 1, 2], "v": ["1", "2", odd]}, id_column="pid",
                         aggregations=[Sum("v", (0, 10))], epsilon=1, schema={"v": "int"})


@pytest.mark.parametrize("odd", ["1e" + "9" * 5000, "1/" + "9" * 5000, "9" * 5000 + "/3"])
def test_numeric_text_longer_than_a_cell_may_be_is_unusable(odd: str) -> None:
    """Judged by its length before it is read (securedp.hazmat.exact.bounds.CELL_CHARS): unusable like a blank."""
    def total(values: list[str]) -> Any:
        return lambda s: s.sum(values, bounds=(0, 10), epsilon=1)

    assert _outcome(total(["1", "2", odd])) == _outcome(total(["1", "2", ""])) == ("released", 1)
    with pytest.raises(ValueError, match=r"longer than 400 characters or digits, not read \(1 unusable cell"):
        Session(epsilon=10).sum(["1", "2", odd], bounds=(0, 10), epsilon=1)
    with pytest.raises(ValueError, match=r"longer than 400 characters or digits"):
        Session(epsilon=10).table({"pid": [0, 1, 2], "v": ["1", "2", odd]}, id_column="pid",
                                  aggregations=[Sum("v", (0, 10))], epsilon=1, schema={"v": "int"})


@pytest.mark.parametrize("odd", [np.timedelta64(1, "D"), np.timedelta64(3, "s"), np.timedelta64("NaT")])
def test_a_timedelta64_is_no_number_and_no_id(odd: Any) -> None:
    assert _outcome(lambda s: s.sum([1, 2, odd], bounds=(0, 10), epsilon=1)) == \
        _outcome(lambda s: s.sum([1, 2, None], bounds=(0, 10), epsilon=1))
    assert _outcome(lambda s: s.count([1.0] * 3, ids=[1, 2, odd], epsilon=1)) == \
        _outcome(lambda s: s.count([1.0] * 3, ids=[1, 2, None], epsilon=1))
    with pytest.raises(ValueError, match=r"not a number|neither an integer nor text|blank"):
        Session(epsilon=10).sum([1, 2, odd], bounds=(0, 10), epsilon=1)
    with pytest.raises(ValueError, match=r"neither an integer nor text|blank id"):
        Session(epsilon=10).count([1.0] * 3, ids=[1, 2, odd], epsilon=1)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_csv_file_whose_first_record_is_an_empty_line(tmp_path: Path, newline: str) -> None:
    def table(text: str) -> Any:
        path = tmp_path / f"{abs(hash(text))}.csv"
        path.write_bytes(text.replace("\n", newline).encode("utf-8"))
        return lambda s: s.table(str(path), id_column="pid", aggregations=[Sum("v", (0, 10))], epsilon=1)

    assert _outcome(table("pid,v\n\n1,3\n2,4\n")) == _outcome(table("pid,v\n1,3\n2,4\n")) == ("released", 1)
    path = tmp_path / "first.csv"
    path.write_bytes("pid,v\n\n1,3\n2,4\n".replace("\n", newline).encode("utf-8"))
    with pytest.raises(ValueError, match="line 2: blank id"):
        Session(epsilon=10).table(str(path), id_column="pid", aggregations=[Sum("v", (0, 10))], epsilon=1)


@pytest.mark.parametrize("kind", ["plain", "dictionary", "chunked"])
@pytest.mark.parametrize("as_key", [False, True])
def test_a_decimal256_column_is_read_like_a_decimal128_one(kind: str, as_key: bool) -> None:
    """Polars panics on Arrow's ``decimal256`` (a ``BaseException`` that escaped the analyst-facing boundary); its
    cells are read one by one, like the same numbers in ``decimal128``, with the same seeded release."""
    import decimal

    import pyarrow as pa

    from securedp.tables import Count

    numbers = [decimal.Decimal(i % 7) for i in range(40)]

    def column(arrow_type: Any) -> Any:
        array = pa.array(numbers, type=arrow_type)
        if kind == "dictionary":
            return array.dictionary_encode()
        return pa.chunked_array([array[:13], array[13:]]) if kind == "chunked" else array

    def release(arrow_type: Any) -> tuple[str, Any]:
        table = pa.table({"c": column(arrow_type), "pid": list(range(40)), "g": ["a"] * 40})
        session = Session(epsilon=10, analyst_facing=True, rng=securedp.ChaChaSource(bytes(32)))
        if as_key:
            out = session.table(table, id_column="pid", group_by=["c"], keys={"c": list(range(7))},
                                aggregations=[Count()], epsilon=1)
        else:
            out = session.table(table, id_column="c", group_by=["g"], keys={"g": ["a"]}, aggregations=[Count()],
                                epsilon=1)
        return "released", out.frame.to_pylist()

    assert release(pa.decimal256(38, 0)) == release(pa.decimal128(38, 0))  # cast exactly to decimal128
    wide, narrow = release(pa.decimal256(40, 0)), release(pa.decimal128(20, 0))  # read by cell: keys as text
    if as_key:
        narrow = narrow[0], [{**row, "c": str(row["c"])} for row in narrow[1]]
    assert wide == narrow


def test_an_arrow_type_polars_cannot_take_is_refused_by_its_type() -> None:
    import pyarrow as pa

    table = pa.table({"pid": pa.array([pa.MonthDayNano((1, 1, 1))] * 3, type=pa.month_day_nano_interval()),
                      "v": [1, 2, 3]})
    with pytest.raises(TypeError, match="id column 'pid' has type month_day_nano_interval"):
        Session(epsilon=1).table(table, id_column="pid", epsilon=1)
