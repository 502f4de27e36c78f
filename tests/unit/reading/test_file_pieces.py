"""A file read in pieces (issue 44) is the file read whole: the same cells, the same lines, the same refusal.

Random CSV texts of hostile cells (quotes never closed, quoted line breaks, text after a closing quote, lone
carriage returns, blanks, invalid bytes) are read whole by :func:`read_file` and in pieces of 1 to 1000 bytes
by :func:`file_pieces`, for the data holder and in an analyst-facing session; a Parquet file in runs of row
groups. A piece cut inside a quoted cell, or a fault raised per piece, changes a cell, a line or a message.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from securedp.reading.files import TableFile, read_file
from securedp.reading.mode import analyst_facing_scope
from securedp.reading.pieces import cuttable_encoding, file_pieces

CELLS = ["1", "22", "", " ", 'a"b', '"q,uo"', '"multi\nline"', '"x""y"', '"unclosed', "é", "\r", "z ", '"a"b', "\ufffd"]


def _whole(path: Path, encoding: str) -> Any:
    try:
        read = read_file(path, ["pid", "v"], encoding=encoding)
    except ValueError as error:
        return str(error)
    return read.frame, read.lines.tolist() if read.lines is not None else None


def _pieces(path: Path, size: int, encoding: str) -> Any:
    try:
        read = list(file_pieces(TableFile(path, encoding=encoding), ["pid", "v"], 10, size))
    except ValueError as error:
        return str(error)
    lines = np.concatenate([p.lines for p in read if p.lines is not None])
    return pl.concat([p.frame for p in read]), lines.tolist()


@pytest.mark.parametrize("analyst", [False, True])
@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_csv_pieces_are_the_whole_file(tmp_path: Path, analyst: bool, encoding: str) -> None:
    rng = random.Random(44)  # test data only
    for trial in range(150):
        lines = ["pid,g,v"]
        for _ in range(rng.randint(0, 40)):
            lines.append(",".join(rng.choice(CELLS) if rng.random() < 0.3 else str(rng.randint(0, 5))
                                  for _ in range(3)))
        text = rng.choice(["\n", "\r\n"]).join(lines) + rng.choice(["", "\n"])
        raw = text.encode(encoding, errors="replace")
        if rng.random() < 0.2:
            raw = raw.replace(b"5", b"\xff", 1)
        path = tmp_path / f"{trial}.csv"
        path.write_bytes(raw)
        with analyst_facing_scope(analyst):
            whole = _whole(path, encoding)
            for size in (1, 7, 30, 1000):
                parts = _pieces(path, size, encoding)
                if isinstance(whole, str) or isinstance(parts, str):
                    assert parts == whole, (trial, size, text)
                else:
                    assert parts[0].equals(whole[0]) and parts[1] == whole[1], (trial, size, text)


def test_parquet_pieces_are_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    table = pa.table({"pid": pa.array([None if i % 11 == 0 else f"p{i % 37}" for i in range(1000)]),
                      "v": pa.array([None if i % 13 == 0 else i * 0.5 for i in range(1000)]),
                      "other": pa.array(range(1000))})
    pq.write_table(table, path, row_group_size=97)
    whole = read_file(path, ["pid", "v"]).frame
    for rows in (1, 100, 400, 5000):
        read = list(file_pieces(TableFile(path), ["pid", "v"], rows, 1))
        assert pl.concat([p.frame for p in read]).equals(whole)
        positions = np.concatenate([p.positions for p in read if p.positions is not None])
        assert positions.tolist() == list(range(1000))
        assert read[-1].where(0) == f"row {int(read[-1].positions[0])}"  # type: ignore[index]


def test_only_encodings_cut_at_their_line_breaks_are_read_in_pieces() -> None:
    assert cuttable_encoding("utf-8") and cuttable_encoding("latin-1") and cuttable_encoding("cp1252")
    assert not cuttable_encoding("utf-16") and not cuttable_encoding("utf-8-sig")
    assert not cuttable_encoding("shift_jis")


def test_an_unclosed_quote_is_read_on_in_linear_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a quoted cell never closed, every later piece belongs to that record: the text held is parsed again
    only each time it has doubled (it was parsed again at every piece: 80,000 rows took 8.1 s against 0.1 s), and
    the pieces still read as the whole file does."""
    import securedp.reading.pieces as module

    path = tmp_path / "t.csv"
    path.write_text("pid,v\n1,2\n5,\"k5\n" + "".join(f"{i},{i % 50}\n" for i in range(20000)), encoding="utf-8")
    calls: list[int] = []
    real = module._parsed

    def counted(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(module, "_parsed", counted)
    assert _pieces(path, 211, "utf-8") == _whole(path, "utf-8")
    assert len(calls) < 40, len(calls)  # about log2(file size / piece size) parses, not one a piece (over 900)
