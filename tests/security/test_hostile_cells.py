"""One person's cell cannot refuse an analyst-facing release, and the data holder is told exactly what is wrong
(issue 25, items 1 to 4 and 10). Each test here failed on the code before the issue.

1. a double quote in a cell of a column the release does not read (``5'11"``, ``ab"c``, an unclosed quote):
   an analyst-facing release is made (the cell is text, or its record is dropped); the data holder's release
   goes on for a quote inside a cell and is refused for a record that does not parse, naming its line and fault;
2. pandas ``object`` id and key cells (``11.0``, ``np.float64(11)``, ``Decimal(11)``, ``True``, ``b"x"``,
   ``2**64``, the text ``"5.0"``, ``2**63`` beside a negative id) get one verdict on every route: a table's
   ``id_column``/``group_by`` and a one-column release's ``ids=`` alike;
3. a Polars ``Int128``/``UInt128`` value column, with or without a null, is read exactly;
4. ``bounds="auto"`` (:func:`securedp.planning.auto_bounds`) in an analyst-facing session over a file holding one
   person's id that is not UTF-8: released, never the data holder's error;
10. a CSV header ``"a""b"`` names the column ``a"b``.
"""

from __future__ import annotations

import decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest

import securedp
from securedp import ChaChaSource, Session
from securedp.ledger.errors import DATA_REFUSED
from securedp.tables import Count, Sum

REFUSED = f"securedp: error: {DATA_REFUSED}\n"
Command = Any  # the ``command`` fixture of tests/conftest.py: argv -> (status, stdout, stderr)


def session(analyst_facing: bool) -> Session:
    return Session(epsilon=100, delta="1/1000", rng=ChaChaSource(bytes(32)), analyst_facing=analyst_facing)


def result(call: Any) -> tuple[Any, ...]:
    """``("released", value)`` or ``(exception type, message)``."""
    try:
        return ("released", call().value)
    except Exception as error:
        return (type(error).__name__, str(error))


# --- item 1: a quote in a column the release does not read ------------------------------------------------

INSIDE = ["5'11\"", 'ab"c', 'x"']
"""Quotes inside a cell that does not start with one: text, in every mode."""
MALFORMED = {'"unclosed': "a quoted cell is not closed", '"a"b': "text follows the closing quote"}
"""Cells that make their record unparseable: refused for the data holder naming the line, dropped when
analyst-facing."""


def people(tmp_path: Path, note: str | None) -> Path:
    """Ten persons; with ``note``, an eleventh on line 5 whose unqueried ``note`` cell is ``note``."""
    rows = [f"{i},{'ab'[i % 2]},{i},fine" for i in range(10)]
    if note is not None:
        rows.insert(3, f"99,a,7,{note}")
    path = tmp_path / ("with.csv" if note is not None else "without.csv")
    path.write_text("id,g,v,note\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def python_table(path: Path, analyst_facing: bool) -> tuple[Any, ...]:
    return result(lambda: session(analyst_facing).table(
        str(path), group_by=["g"], keys=["a", "b"], id_column="id", aggregations=[Count(), Sum("v", (0, 10))],
        epsilon=1))


@pytest.mark.parametrize("cell", INSIDE + list(MALFORMED))
def test_a_quote_in_an_unqueried_cell_never_refuses_an_analyst_facing_table(cell: str, tmp_path: Path) -> None:
    seen = python_table(people(tmp_path, cell), analyst_facing=True)
    assert seen[0] == "released"
    if cell in MALFORMED:  # the record is dropped: the table of the ten others
        assert seen == python_table(people(tmp_path, None), analyst_facing=True)


@pytest.mark.parametrize("cell", INSIDE)
def test_a_quote_inside_a_cell_is_text_for_the_data_holder_too(cell: str, tmp_path: Path) -> None:
    assert python_table(people(tmp_path, cell), analyst_facing=False)[0] == "released"
    read = securedp.reading.files.read_file(people(tmp_path, cell), ["note"])
    assert read.frame["note"][3] == cell and read.where(3) == "line 5"


@pytest.mark.parametrize("cell", list(MALFORMED))
def test_the_data_holder_is_told_the_line_and_the_fault(cell: str, tmp_path: Path) -> None:
    kind, message = python_table(people(tmp_path, cell), analyst_facing=False)
    assert kind == "ValueError" and ", line 5: not a CSV record: " in message and MALFORMED[cell] in message


CLI_RELEASES = {
    "column": ["release", "--column", "v", "--stat", "sum", "--bounds", "0,10", "--epsilon", "1"],
    "table": ["release", "--group-by", "g", "--keys", "a,b", "--sum", "v:0,10", "--id-column", "id", "--epsilon",
              "1"],
    "bounds": ["bounds", "--column", "v", "--epsilon", "1"],
    "analyze": ["analyze", "--id-column", "id", "--group-by", "g", "--epsilon", "1"],
}


def cli(command: Command, name: str, path: Path, *extra: str) -> tuple[int, str, str]:
    verb, *options = CLI_RELEASES[name]
    return command([verb, str(path), *options, *extra])


@pytest.mark.parametrize("cell", INSIDE + list(MALFORMED))
@pytest.mark.parametrize("name", sorted(CLI_RELEASES))
def test_analyst_facing_commands_release_whatever_quote_an_unqueried_cell_holds(
        name: str, cell: str, tmp_path: Path, command: Command) -> None:
    status, out, err = cli(command, name, people(tmp_path, cell), "--analyst-facing")
    assert status == 0 and err in ("", *(e for e in [err] if e.startswith("securedp: warning"))) and out


@pytest.mark.parametrize("cell", list(MALFORMED))
@pytest.mark.parametrize("name", sorted(CLI_RELEASES))
def test_the_commands_tell_the_data_holder_the_line_and_the_fault(name: str, cell: str, tmp_path: Path,
                                                                  command: Command) -> None:
    status, out, err = cli(command, name, people(tmp_path, cell))
    assert status == 1 and out == "" and err.count("\n") == 1
    assert err.startswith(f"securedp: error: {people(tmp_path, cell)}, line 5: not a CSV record: ")
    assert MALFORMED[cell] in err


# --- item 2: object id and key cells, one verdict on every route -------------------------------------------

ODD_CELLS: dict[str, tuple[Any, Any]] = {
    # name: (the cell, what it reads as: the equal canonical cell, or None when unusable)
    "float 11.0": (11.0, 11),
    "np.float64(11)": (np.float64(11), 11),
    "Decimal(11)": (decimal.Decimal(11), 11),
    "True": (True, None),
    "bytes": (b"x", None),
    "2**64": (2**64, str(2**64)),
    "text 5.0": ("5.0", "5.0"),
    "2.5": (2.5, None),
    "float 2**53": (float(2**53), None),
    "nan": (float("nan"), None),
}


def object_column(cells: list[Any]) -> pd.Series:
    return pd.Series(cells, dtype=object)


def routes(ids: list[Any], keys: list[Any], analyst_facing: bool) -> dict[str, tuple[Any, ...]]:
    """A count by person through a table's ``id_column``, a one-column release's ``ids=``, and (by key) a
    table's ``group_by``: the same seeded value on each route when the cells read alike."""
    frame = pd.DataFrame({"id": object_column(ids), "g": object_column(keys), "v": [1.0] * len(ids)})
    return {
        "table id_column": result(lambda: session(analyst_facing).table(
            frame, group_by=[], id_column="id", aggregations=[Count()], epsilon=1)),
        "one-column ids=": result(lambda: session(analyst_facing).count(frame["v"], ids=frame["id"], epsilon=1)),
        "table group_by": result(lambda: session(analyst_facing).table(
            frame, group_by=["g"], keys=["a", 11, "5.0"], aggregations=[Count()], epsilon=1)),
    }


def as_cells(seen: dict[str, tuple[Any, ...]]) -> dict[str, tuple[Any, ...]]:
    """The outcome of each route, a table's one cell as a one-column release's value."""
    out = {}
    for name, result in seen.items():
        if result[0] == "released" and name == "table id_column":
            result = ("released", result[1][0][0])
        out[name] = result
    return out


@pytest.mark.parametrize("name", sorted(ODD_CELLS))
def test_an_object_cell_reads_alike_as_an_id_on_every_route_and_as_its_canonical_cell(name: str) -> None:
    cell, canonical = ODD_CELLS[name]
    base = [1, 2, 2, 3]
    for analyst_facing in (False, True):
        seen = as_cells(routes([*base, cell], ["a"] * 5, analyst_facing))
        id_routes = [seen["table id_column"], seen["one-column ids="]]
        if canonical is not None:  # a usable id: the same person as its canonical cell, on both routes
            expected = as_cells(routes([*base, canonical], ["a"] * 5, analyst_facing))
            assert id_routes == [expected["table id_column"], expected["one-column ids="]], name
            assert id_routes[0] == id_routes[1] and id_routes[0][0] == "released"
        elif analyst_facing:  # an unusable id: its row is dropped, on both routes
            without = as_cells(routes(base, ["a"] * 4, True))
            assert id_routes == [without["table id_column"], without["one-column ids="]], name
        else:  # the data holder: one error, naming the place and the cell, on both routes
            kinds = {r[0] for r in id_routes}
            assert kinds == {"ValueError"}, (name, id_routes)
            table_message, ids_message = (r[1] for r in id_routes)
            assert table_message.startswith("column 'id', row 4: ") and ids_message.startswith("column 'ids', row 4: ")
            assert table_message.removeprefix("column 'id'") == ids_message.removeprefix("column 'ids'")


@pytest.mark.parametrize("name", sorted(ODD_CELLS))
def test_an_object_cell_reads_alike_as_a_group_key(name: str) -> None:
    cell, canonical = ODD_CELLS[name]
    for analyst_facing in (False, True):
        seen = routes([0, 1, 2], ["a", "a", cell], analyst_facing)["table group_by"]
        if canonical is not None:
            assert seen == routes([0, 1, 2], ["a", "a", canonical], analyst_facing)["table group_by"], name
        elif analyst_facing:
            assert seen == routes([0, 1], ["a", "a"], True)["table group_by"], name
        else:
            assert seen[0] == "ValueError" and seen[1].startswith("column 'g', row 2: "), seen


def test_the_text_key_5_0_is_not_the_number_5() -> None:
    frame = pd.DataFrame({"g": object_column(["5.0", 5, 5.0, "5"]), "v": [1] * 4})
    read = securedp.reading.keys.key_column(frame["g"], "g", "group_by")
    assert read.values.to_list() == ["5.0", "5", "5", "5"]


def test_an_id_beyond_int64_beside_a_negative_id_reads_by_cell_on_every_route() -> None:
    """2**63 used to make the whole column "integers beyond 64 bits" (refused); -1 is no person id."""
    ids = [0, 2**63, -1, 2**63]
    for analyst_facing in (False, True):
        seen = as_cells(routes(ids, ["a"] * 4, analyst_facing))
        id_routes = [seen["table id_column"], seen["one-column ids="]]
        if analyst_facing:
            assert id_routes[0] == id_routes[1] == as_cells(routes([0, 2**63, 2**63], ["a"] * 3, True))[
                "one-column ids="]
        else:
            assert [r[1].split(": ", 1)[1] for r in id_routes] == [
                "negative id -1 (pandas.factorize codes a missing id as -1; a person id is an integer >= 0 or text) "
                "(1 row(s) without a usable id); fill in or remove those rows"] * 2
            assert id_routes[0][1].startswith("column 'id', row 2")


@pytest.mark.parametrize("cell", [float("inf"), -float("inf"), 2.0**60, 2.5, -3.0])
@pytest.mark.parametrize("role", ["id", "g"])
def test_a_float_id_or_key_that_is_no_integer_is_named_for_the_data_holder(cell: float, role: str) -> None:
    """An infinite float id used to crash the data holder's error (``int(inf)``: OverflowError naming nothing)."""
    frame = pd.DataFrame({"id": [1.0, 2.0], "g": [5.0, 6.0]})
    frame.loc[1, role] = cell
    what = "id" if role == "id" else "group key"
    words = {float("inf"): "is not a finite number", -float("inf"): "is not a finite number",
             2.0**60: "is too large to be read exactly", 2.5: "is not a whole number",
             -3.0: "(pandas.factorize codes a missing id as -1"}[cell]
    if cell == -3.0 and role == "g":
        assert result(lambda: session(False).table(frame, group_by=["g"], keys=[5, 6], id_column="id",
                                                   epsilon=1))[0] == "released"  # a negative key is a key
        return
    with pytest.raises(ValueError, match=rf"^column '{role}', row 1: (negative )?{what} ") as error:
        session(False).table(frame, group_by=["g"], keys=[5, 6], id_column="id", epsilon=1)
    assert words in str(error.value)
    assert result(lambda: session(True).table(frame, group_by=["g"], keys=[5, 6], id_column="id",
                                              epsilon=1))[0] == "released"


# --- item 3: 128-bit integer values -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [pl.Int128, pl.UInt128])
@pytest.mark.parametrize("null", [False, True])
def test_a_128_bit_value_column_is_read_exactly_with_or_without_a_null(dtype: Any, null: bool) -> None:
    values = [1, 2**100, None if null else 3, 4]
    frame = pl.DataFrame({"id": [0, 1, 2, 3], "g": ["a"] * 4, "v": pl.Series(values, dtype=dtype)})
    reference = pl.DataFrame({"id": [0, 1, 2, 3], "g": ["a"] * 4,
                              "v": pl.Series([1, 10, None if null else 3, 4], dtype=pl.Int64)})  # 2**100 clamps to 10
    def table(data: Any, analyst_facing: bool, **options: Any) -> tuple[Any, ...]:
        return result(lambda: session(analyst_facing).table(data, group_by=["g"], keys=["a"], id_column="id",
                                                             aggregations=[Sum("v", (0, 10))], epsilon=1, **options))

    def one(data: Any, analyst_facing: bool, **options: Any) -> tuple[Any, ...]:
        return result(lambda: session(analyst_facing).sum(data["v"], bounds=(0, 10), ids=data["id"], epsilon=1,
                                                           **options))

    for analyst_facing in (False, True):
        options: dict[str, Any] = {"missing": "drop"} if null and not analyst_facing else {}
        for route in (table, one):
            got = [route(data, analyst_facing, **options) for data in (frame, reference)]
            assert got[0] == got[1] and got[0][0] == "released"
        if null and not analyst_facing:  # the data holder's missing="raise": the one wording
            with pytest.raises(ValueError, match=r"^column 'v', row 2: blank cell \(1 unusable cell"):
                session(False).table(frame, group_by=["g"], keys=["a"], id_column="id",
                                     aggregations=[Sum("v", (0, 10))], epsilon=1)


# --- item 4: auto bounds in an analyst-facing session --------------------------------------------------------

def test_auto_bounds_of_an_analyst_facing_session_never_show_an_undecodable_id(tmp_path: Path) -> None:
    from securedp.planning import auto_bounds

    rows = b"".join(f"{i},{'ab'[i % 2]},{i}\n".encode() for i in range(20))
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    good.write_bytes(b"id,g,v\n" + rows)
    bad.write_bytes(b"id,g,v\n" + rows + b"\xff\xfe,b,5\n")  # one more person, whose id is not UTF-8
    values = []
    for path in (good, bad):
        analyst = session(True)
        _, releases = auto_bounds(str(path), [Sum("v", "auto")], epsilon=1, id_column="id",
                                  session=analyst)
        values.append([r.value for r in releases])
        assert analyst.spent == 1
    assert values[0] == values[1]  # the undecodable id is no id: its row is dropped, as a rule of that row
    with pytest.raises(ValueError, match=r"column 'id' is not valid utf-8 \(the first invalid byte is on line 22\)"):
        auto_bounds(str(bad), [Sum("v", "auto")], epsilon=1, id_column="id", session=session(False))


# --- item 10: a header's doubled quote -----------------------------------------------------------------------

def test_a_header_with_a_doubled_quote_names_its_column(tmp_path: Path, command: Command) -> None:
    path = tmp_path / "q.csv"
    path.write_text('"a""b",g\n1,x\n2,y\n3,x\n', encoding="utf-8")
    assert securedp.reading.files.column_names(path) == ['a"b', "g"]
    table = securedp.table(str(path), group_by=["g"], keys=["x", "y"], aggregations=[Sum('a"b', (0, 5))],
                           epsilon=1, rng=ChaChaSource(bytes(32)))
    assert [row[0] for row in table.value] == ["x", "y"]
    status, out, err = command(["release", str(path), "--column", 'a"b', "--stat", "sum", "--bounds", "0,5",
                                "--epsilon", "1"])
    assert status == 0 and "sum of column 'a\"b'" in out, err


# --- issue 40 A: a cell is judged by its length before any conversion ------------------------------------------

LONG = {  # an in-range number of 300,000 digits in every form a value column holds, and one just too long to read
    "text": ("1." + "0" * 300_000, "1." + "0" * 400),
    "decimal": (decimal.Decimal("1." + "0" * 300_000), decimal.Decimal("1." + "0" * 400)),
    "fraction": (Fraction(10**300_000 + 1, 10**300_000), Fraction(10**430 + 1, 10**430)),
}


def _frame(kind: str, values: list[Any]) -> Any:
    data = {"pid": [f"p{i}" for i in range(len(values))], "v": values}
    if kind == "pandas":
        return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in data.items()})
    if kind == "polars":
        return pl.DataFrame({"pid": data["pid"], "v": [str(v) for v in values]})
    if kind == "pyarrow":
        import pyarrow as pa

        return pa.table({"pid": data["pid"], "v": [str(v) for v in values]})
    return data  # a mapping of Python lists


def _release(data: Any, analyst_facing: bool) -> tuple[Any, ...]:
    return result(lambda: session(analyst_facing).table(data, id_column="pid", aggregations=[Sum("v", (0, 10))],
                                                        epsilon=1))


@pytest.mark.parametrize("kind", ["list", "pandas", "polars", "pyarrow", "csv", "parquet"])
def test_a_too_long_cell_is_unusable_like_a_blank_one_on_every_input_kind(kind: str, tmp_path: Path) -> None:
    long, _ = LONG["text"] if kind in ("polars", "pyarrow", "csv", "parquet") else LONG["decimal"]
    base = [1, 2, 3, 4] if kind != "csv" else ["1", "2", "3", "4"]

    def data(cell: Any) -> Any:
        values = [*base, cell]
        if kind in ("csv", "parquet"):
            frame = pl.DataFrame({"pid": [f"p{i}" for i in range(5)], "v": [str(v) for v in values]})
            path = tmp_path / f"d.{kind}"
            frame.write_csv(path) if kind == "csv" else frame.write_parquet(path)
            return str(path)
        return _frame(kind, values)

    # Analyst-facing: the long cell's record is dropped, as a blank cell's is (same outcome, same value).
    assert _release(data(long), True) == _release(data(""), True) == _release(data(None), True)
    assert _release(data(long), True)[0] == "released"
    # The data holder: refused as every unusable cell is, naming its place and why.
    holder = _release(data(long), False)
    assert holder[0] == "ValueError" and "longer than 400 characters or digits" in holder[1], holder
    assert "unusable cell(s)" in holder[1] and len(holder[1]) < 600


@pytest.mark.parametrize("form", sorted(LONG))
def test_a_too_long_cell_costs_what_a_short_one_costs(form: str) -> None:
    """The time of a release with one in-range 300,000-digit number (3.9 s before: quadratic in its digits)
    against the same release with a number just too long to read (both dropped: the time does not depend on
    the digits), and against one with a short number (kept): ratios, the best of interleaved runs."""
    import time

    long, short = LONG[form]
    values = [float(i % 10) for i in range(2000)]

    def timed(cell: Any) -> float:
        start = time.perf_counter()
        session(True).sum([*values, cell], bounds=(0, 10), epsilon=1)
        return time.perf_counter() - start

    cells = {"long": long, "just too long": short, "short": 1.0}
    best = dict.fromkeys(cells, float("inf"))
    for _ in range(5):
        for name, cell in cells.items():
            best[name] = min(best[name], timed(cell))
    assert best["long"] < 2 * best["just too long"] + 0.005, best
    assert best["long"] < 3 * best["short"] + 0.01, best


def test_a_decimal_id_of_a_million_digits_is_unusable_at_once() -> None:
    import time

    ids = pd.Series([decimal.Decimal(i) for i in range(4)] + [decimal.Decimal("1." + "0" * 1_000_000)], dtype=object)
    start = time.perf_counter()
    got = session(True).count([1, 2, 3, 4, 5], ids=ids, epsilon=1)
    assert time.perf_counter() - start < 1.0 and got is not None
