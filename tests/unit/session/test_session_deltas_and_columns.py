"""Issue 16 items 12, 16 and 17: delta in approx_dp and from_approx_dp, the id column as a value, keys without
group_by, the documented salt size and id equality."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

import securedp
from securedp import ChaChaSource, Session
from securedp.bounding.messages import SALT_BYTES
from securedp.privacy.conversions import approx_dp_to_zcdp, zcdp_to_approx_dp
from securedp.tables import Count, Sum

PEOPLE = pd.DataFrame({"g": ["a"] * 60, "p": range(60)})
DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_approx_dp_accounts_for_the_delta_the_releases_spent() -> None:
    session = Session(rho="1/2", delta="1e-3", rng=ChaChaSource(bytes(32)))
    table = session.table(PEOPLE, group_by=["g"], id_column="p", rho="1/4", delta="1e-3")
    spent = session.delta_spent
    assert spent == table.delta < Fraction(1, 1000)  # the delta its threshold proves
    total = spent + Fraction(1, 10**6)
    assert session.approx_dp(total) == zcdp_to_approx_dp(Fraction(1, 4), total - spent)
    with pytest.raises(ValueError, match="not above the delta the releases already spent"):
        session.approx_dp("1e-6")  # it used to answer as if no delta had been spent


def test_a_session_without_delta_spent_converts_as_before() -> None:
    session = Session(rho="1/2", rng=ChaChaSource(bytes(32)))
    session.count([1, 2, 3], rho="1/8")
    assert session.approx_dp("1e-6") == zcdp_to_approx_dp(Fraction(1, 8), Fraction(1, 10**6))


def test_from_approx_dp_can_reserve_delta_for_private_keys() -> None:
    with pytest.raises(TypeError, match="multiple values for argument 'delta'"):
        Session.from_approx_dp(1, "1e-6", delta="1e-7")  # delta is the whole guarantee's: the reserve has its name
    session = Session.from_approx_dp(1, "1e-6", selection_delta="1e-7", rng=ChaChaSource(bytes(32)))
    assert session.delta == Fraction(1, 10**7)
    assert session.total == approx_dp_to_zcdp(1, Fraction(9, 10**7))
    session.table(PEOPLE, group_by=["g"], id_column="p", rho=session.total / 2, delta="1e-7")
    assert session.approx_dp("1e-6") <= 1  # the whole session stays (1, 1e-6)-DP
    with pytest.raises(ValueError, match="must be below delta"):
        Session.from_approx_dp(1, "1e-6", selection_delta="1e-6")


@pytest.mark.parametrize("group_by", [[], ["g"]])
def test_the_id_column_is_a_value_column_like_any_other(group_by: list[str]) -> None:
    frame = pl.DataFrame({"p": [1, 2, 3], "g": ["a", "b", "a"]})
    keys = {"keys": ["a", "b"]} if group_by else {}
    release = securedp.prepare_table(frame, group_by=group_by, id_column="p", epsilon=10**9, **keys,
                                     aggregations=[Sum("p", (0, 5), lattice=1)]).execute(ChaChaSource(bytes(32)))
    sums = [row[len(group_by)] for row in release.value]
    assert sums == ([4, 2] if group_by else [6])


def test_keys_without_group_by_and_an_id_column_that_is_a_key_are_refused_at_prepare() -> None:
    frame = pl.DataFrame({"p": [1, 2, 3], "g": ["a", "b", "a"]})
    with pytest.raises(ValueError, match="without group_by there is one cell"):
        securedp.prepare_table(frame, keys=["a"], epsilon=1, aggregations=[Count()])
    with pytest.raises(ValueError, match="also a group_by column"):
        securedp.prepare_table(frame, group_by=["g"], id_column="g", keys=["a"], epsilon=1)


def test_the_docs_state_the_salt_the_code_draws_and_that_ids_are_not_normalised() -> None:
    text = (DOCS / "tables.md").read_text(encoding="utf-8")
    sizes = {int(n) for n in re.findall(r"salt` is (\d+) secret bytes", text)}
    assert sizes == {SALT_BYTES}
    assert "NFC" in text and "NFD" in text and '"ann "' in text


def test_nfc_and_nfd_ids_are_two_persons() -> None:
    nfc, nfd = "Zo\u00eb", "Zoe\u0308"
    frame = pl.DataFrame({"p": [nfc, nfd], "x": [1, 1]})
    release = securedp.prepare_table(frame, id_column="p", epsilon=10**9, aggregations=[Count()]
                                     ).execute(ChaChaSource(bytes(32)))
    assert release.value[0][0] == 2  # max_rows 1 per person, yet both rows count: two persons
