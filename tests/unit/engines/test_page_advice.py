"""NumPy's huge-page advice is off inside an engine's pass and the caller's setting comes back after."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from securedp.engines import page_advice
from securedp.engines.page_advice import without_huge_page_advice
from securedp.hazmat.bits import ChaChaSource
from securedp.tables import Count, Sum, prepare_table

multiarray = pytest.importorskip("numpy._core.multiarray")
get_advice = multiarray._get_madvise_hugepage
set_advice = multiarray._set_madvise_hugepage


@pytest.fixture(params=[True, False], ids=["advice on", "advice off"])
def caller_setting(request: pytest.FixtureRequest):
    before = set_advice(request.param)
    yield request.param
    set_advice(before)


def test_off_inside_and_restored_after(caller_setting: bool) -> None:
    seen = without_huge_page_advice(get_advice)()
    assert seen is False
    assert get_advice() is caller_setting


def test_restored_after_an_error(caller_setting: bool) -> None:
    @without_huge_page_advice
    def fails() -> None:
        raise RuntimeError("inside")

    with pytest.raises(RuntimeError, match="inside"):
        fails()
    assert get_advice() is caller_setting


def test_nested_calls_restore_once_the_outer_returns(caller_setting: bool) -> None:
    inner = without_huge_page_advice(get_advice)

    @without_huge_page_advice
    def outer() -> tuple[bool, bool]:
        first = inner()
        return first, get_advice()  # still off after the inner call returned

    assert outer() == (False, False)
    assert get_advice() is caller_setting


def test_overlapping_threads_restore_when_the_last_returns(caller_setting: bool) -> None:
    first_inside, release_first = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    @without_huge_page_advice
    def hold() -> None:
        first_inside.set()
        release_first.wait(10)

    @without_huge_page_advice
    def quick() -> None:
        seen["quick"] = get_advice()

    holder = threading.Thread(target=hold)
    holder.start()
    assert first_inside.wait(10)
    quick()
    seen["between"] = get_advice()  # the holder is still inside
    release_first.set()
    holder.join(10)
    assert seen == {"quick": False, "between": False}
    assert get_advice() is caller_setting
    assert page_advice._active == 0


def test_a_table_release_leaves_the_callers_setting(caller_setting: bool) -> None:
    data = {"id": np.arange(40) % 7, "g": np.arange(40) % 3, "x": np.arange(40) % 10}
    prepared = prepare_table(data, aggregations=[Count(), Sum("x", (0, 10))], id_column="id", group_by=["g"],
                             keys=[0, 1, 2], max_groups=2, max_rows=3, epsilon=1)
    first = prepared.execute(ChaChaSource(bytes(32)))
    assert get_advice() is caller_setting
    set_advice(not caller_setting)  # the setting is not an input: the same seed gives the same table
    second = prepared.execute(ChaChaSource(bytes(32)))
    assert first.frame.equals(second.frame)
