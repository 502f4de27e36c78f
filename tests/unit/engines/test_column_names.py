"""A table's columns may carry any name but securedp's reserved prefix: none may meet a column an engine adds.

Found by testing like the attacker (2026-11-28): a group column named ``_units`` was overwritten by the
engine's units column when there was no id column, so every count and sum of the table came out 0; ``_n``,
``_sum``, ``_sq`` and ``_at`` stopped the release with Polars' own duplicate-name error, depending on the
path. Inside an engine the group columns now take its own names (``_securedp_key0`` ...), and a column
named with the prefix ``_securedp_`` is refused from the names alone, before the data is read.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import securedp
from securedp.engines.protocol import KEY, PERSON, RESERVED, UNITS
from securedp.tables import Count, Median, Persons, Sum, Variance

ENGINE_NAMES = ["_units", "_units0", "_n", "_n0", "_sum", "_sum0", "_sq", "_rows", "_rows0", "_pair", "_hash", "_at",
                "_code", "_code_g", "_code_pid", "_tuple", "_k0", "_fields", "_run", "_digest", "_hh", "_hl", "_ll",
                "_value", "_persons", "_kept", "_kept0", "_group_rank", "_message", "_head", "_key", "_tail",
                "_prefix", "count", "x_sum", "x_median"]
"""Every internal column name of the in-memory and Spark engines at the time of the finding, and release
column names."""

_RNG = np.random.default_rng(3)  # test data only
BASE = pl.DataFrame({"pid": _RNG.integers(0, 60, 600), "g": _RNG.choice(["a", "b", "c"], 600),
                     "x": _RNG.integers(0, 10, 600)})


def _values(frame: pl.DataFrame, g: str, pid: str | None, x: str, private: bool) -> list[Any]:
    keys: dict[str, Any] = {"keys": None, "delta": "1e-6"} if private else {"keys": ["a", "b", "c"]}
    released = securedp.table(frame, aggregations=[Count(), Persons(), Sum(x, (0, 10)), Median(x, (0, 10)),
                                                   Variance(x, (0, 10))],
                              group_by=[g], id_column=pid, max_groups=2, max_rows=3, epsilon=5,
                              rng=securedp.ChaChaSource(bytes(32)), **keys)
    return [row[1:] for row in released.value]


FOUND = ["_units", "_units0", "_n", "_sum", "_sq", "_at"]
"""The names that broke a release when this was found."""


@pytest.mark.parametrize("names", [pytest.param(FOUND, id="found"),
                                   pytest.param(ENGINE_NAMES, id="every", marks=pytest.mark.slow)])
@pytest.mark.parametrize("private", [False, True], ids=["public keys", "private keys"])
@pytest.mark.parametrize("pid", ["pid", None], ids=["id column", "row per person"])
@pytest.mark.parametrize("role", ["g", "pid", "x"])
def test_a_column_named_like_an_engine_column_gives_the_same_release(names: list[str], private: bool,
                                                                     pid: str | None, role: str) -> None:
    if role == "pid" and pid is None:
        pytest.skip("no id column")
    expected = _values(BASE, "g", pid, "x", private)
    for name in names:
        named = {"g": "g", "pid": pid, "x": "x", role: name}
        assert _values(BASE.rename({role: name}), named["g"], named["pid"], named["x"], private) == expected, name


@pytest.mark.parametrize("name", [PERSON, "_securedp_row", UNITS.replace("_", RESERVED, 1), f"{KEY}0",
                                  f"{RESERVED}anything"])
@pytest.mark.parametrize("role", ["g", "pid", "x"])
def test_a_reserved_name_is_refused_before_the_data_is_read(name: str, role: str) -> None:
    names = {"g": "g", "pid": "pid", "x": "x", role: name}
    with pytest.raises(ValueError, match="start with '_securedp_', the prefix of securedp's own columns"):
        _values(BASE.rename({role: name}), names["g"], names["pid"], names["x"], False)


def test_the_contribution_analysis_refuses_a_reserved_name_too() -> None:
    from securedp.planning import analyze_contributions

    with pytest.raises(ValueError, match="start with '_securedp_'"):
        analyze_contributions(BASE.rename({"g": "_securedp_rows"}), id_column="pid", group_by=["_securedp_rows"])


def test_a_group_column_named_twice_is_refused_in_words() -> None:
    with pytest.raises(ValueError, match=r"group_by names column\(s\) \['g'\] more than once"):
        securedp.table(BASE, aggregations=[Count()], group_by=["g", "g"], keys=[("a", "a")], epsilon=1)


@pytest.mark.parametrize("role", ["g", "x"])
def test_a_column_named_by_the_empty_string_is_read_like_any_other(role: str) -> None:
    """Polars names a column "" "column_0" when a frame is built from a list of columns: the frames are built
    from mappings of names, so a group or value column named "" gives the release of any other name."""
    expected = _values(BASE, "g", "pid", "x", False)
    named = {"g": "g", "x": "x", role: ""}
    assert _values(BASE.rename({role: ""}), named["g"], "pid", named["x"], False) == expected


def test_an_empty_id_column_name_is_refused_in_words() -> None:
    with pytest.raises(ValueError, match="id_column='' names no column"):
        _values(BASE.rename({"pid": ""}), "g", "", "x", False)
