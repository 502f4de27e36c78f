"""Files are read by one exact reader (issue 16 items 4 and 8): strict UTF-8 or a declared encoding, never
lossy; CSV cells as text, so no type is inferred from the data; only the needed columns."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import securedp
from securedp import ChaChaSource, DataRefused, Session
from securedp.cli.main import main
from securedp.tables import Count, Sum

MULLER, MALLER = "Müller".encode("latin-1"), "Mäller".encode("latin-1")  # invalid UTF-8, distinct bytes


def _latin1_people(tmp_path: Path, extra: bool) -> Path:
    rows = [b"person,g,v", MULLER + b",a,1", MULLER + b",b,2", b"ann,a,3"]
    if extra:
        rows.append(MALLER + b",b,4")
    path = tmp_path / ("with.csv" if extra else "without.csv")
    path.write_bytes(b"\n".join(rows) + b"\n")
    return path


def _table(session_or_module: Any, path: Path, **options: Any) -> Any:
    return session_or_module.table(path, group_by=["g"], id_column="person", keys=["a", "b"], max_groups=1,
                                   aggregations=[Count()], epsilon=10**9, **options)


def test_invalid_utf8_is_refused_for_the_data_holder_naming_the_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"column .person. is not valid utf-8.*line 2.*encoding") as info:
        securedp.prepare_table(_latin1_people(tmp_path, False), group_by=["g"], keys=["a"], id_column="person",
                               epsilon=1)
    assert "ller" not in str(info.value)  # the line, never the bytes


def test_a_declared_encoding_reads_latin1_exactly(tmp_path: Path) -> None:
    path = _latin1_people(tmp_path, True)
    frame = securedp.reading.files.read_file(path, ["person"], encoding="latin-1").frame
    assert frame["person"].to_list() == ["Müller", "Müller", "ann", "Mäller"]


def test_analyst_facing_never_merges_two_ids_and_adding_one_person_moves_no_one_else(tmp_path: Path) -> None:
    """Item 4: "Müller" and "Mäller" used to decode to one person, so adding Mäller moved Müller's kept group."""
    outcomes = []
    for extra in (False, True):
        session = Session(epsilon=10**10, rng=ChaChaSource(bytes(32)), analyst_facing=True)
        outcomes.append(_table(session, _latin1_people(tmp_path, extra)).value)
    # the undecodable ids are no ids: both neighbours keep only ann's row, in group a
    assert outcomes[0] == outcomes[1]
    assert [row[:2] for row in outcomes[0]] == [("a", 1), ("b", 0)]


def test_a_late_unparseable_value_gives_the_same_outcome_class(tmp_path: Path) -> None:
    """Item 8: a value after row 10,000 that a type inferred from the first rows cannot parse raised a Polars
    ComputeError quoting it; cells are text now, read by the exact screen (an unusable record)."""
    lines = ["person,g,v"] + [f"{i},a,{i % 7}" for i in range(12_000)]
    clean = tmp_path / "clean.csv"
    clean.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dirty = tmp_path / "dirty.csv"
    dirty.write_text("\n".join([*lines, "12000,a,HIV+"]) + "\n", encoding="utf-8")
    query = {"group_by": ["g"], "id_column": "person", "keys": ["a"], "aggregations": [Sum("v", (0, 10))],
             "epsilon": 1}
    for path in (clean, dirty):
        Session(epsilon=1, analyst_facing=True).table(path, **query)  # released, both
    with pytest.raises(ValueError, match="column 'v'") as info:  # the data holder is told which column
        securedp.prepare_table(dirty, **query)
    assert "offset" not in str(info.value)


def test_only_the_needed_columns_of_a_file_are_read(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b"person,g,junk\n1,a,\xff\xfe\n2,a,ok\n")
    release = securedp.table(path, group_by=["g"], id_column="person", keys=["a"], epsilon=10**9,
                             rng=ChaChaSource(bytes(32)))
    assert release.value[0][1] == 2
    parquet = tmp_path / "d.parquet"
    pl.DataFrame({"person": [1, 2], "g": ["a", "a"], "junk": [[1], [2, 3]]}).write_parquet(parquet)
    assert securedp.table(parquet, group_by=["g"], id_column="person", keys=["a"], epsilon=10**9,
                          rng=ChaChaSource(bytes(32))).value[0][1] == 2


def test_csv_keys_are_their_text(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("g\n01\n1\n1\n", encoding="utf-8")
    release = securedp.table(path, group_by=["g"], keys=["01", 1], epsilon=10**9, rng=ChaChaSource(bytes(32)))
    assert [row[:2] for row in release.value] == [("01", 1), ("1", 2)]


def test_the_cli_refuses_invalid_utf8_in_one_line_and_reads_a_declared_encoding(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _latin1_people(tmp_path, True)
    for argv in (["--column", "v", "--stat", "count", "--id-column", "person", "--epsilon", "1"],
                 ["--group-by", "g", "--count", "--keys", "a,b", "--id-column", "person", "--epsilon", "1"]):
        capsys.readouterr()
        assert main(["release", str(path), *argv]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "not valid utf-8" in err and "Traceback" not in err
        assert main(["release", str(path), *argv, "--encoding", "latin-1"]) == 0
        assert main(["release", str(path), *argv, "--encoding", "latin-1", "--analyst-facing"]) == 0


def test_standard_input_is_read_by_the_same_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    data = b"person,g,v\n" + MULLER + b",a,1\nann,a,HIV+\n"

    class Stdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr("sys.stdin", Stdin)
    argv = ["release", "-", "--group-by", "g", "--count", "--keys", "a", "--epsilon", "1", "--id-column", "person"]
    assert main(argv) == 1
    assert "not valid utf-8" in capsys.readouterr().err
    Stdin.buffer = io.BytesIO(data)
    assert main([*argv, "--analyst-facing"]) == 0


def test_an_undecodable_id_is_data_refused_nowhere(tmp_path: Path) -> None:
    session = Session(epsilon=10**10, rng=ChaChaSource(bytes(32)), analyst_facing=True)
    try:
        _table(session, _latin1_people(tmp_path, True))
    except DataRefused:  # pragma: no cover - the assertion below explains
        pytest.fail("an analyst-facing table over a file with invalid bytes must be released")


def test_a_line_with_more_fields_than_the_header_is_named_not_an_internal_error(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("job\nCraftsmen, Foremen\nSales\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2: not a CSV record: it has 2 cells, the header 1.*must be quoted"):
        securedp.table(str(path), group_by=["job"], keys=["Sales"], epsilon=1)


def test_a_parquet_decimal_wider_than_38_digits_is_refused_naming_its_column(tmp_path: Path) -> None:
    """Polars raised its own ``InvalidOperationError`` for a decimal256 column of a Parquet file (a fourth review):
    the schema decides, and the refusal names the column; a narrower decimal beside it is read as before."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    from securedp.reading.files import read_file

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"narrow": pa.array([decimal.Decimal("1.25")], pa.decimal128(10, 2)),
                             "wide": pa.array([decimal.Decimal("1.25")], pa.decimal256(60, 4))}), path)
    assert read_file(path, ["narrow"]).frame["narrow"].to_list() == [decimal.Decimal("1.25")]
    for columns in (["wide"], None):
        with pytest.raises(ValueError, match=r"column 'wide' is a decimal of more than 38 digits"):
            read_file(path, columns)
