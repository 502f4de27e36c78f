"""The one exact search of the planners: the least integer at which a monotone predicate holds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from securedp.hazmat.exact.search import least_holding


@given(first=st.integers(-50, 50), offset=st.integers(0, 10_000), width=st.one_of(st.none(), st.integers(0, 20_000)))
def test_the_least_holding_point_is_found_and_the_one_before_was_checked(first: int, offset: int,
                                                                         width: int | None) -> None:
    threshold = first + offset
    limit = None if width is None else first + width
    seen: list[int] = []

    def holds(n: int) -> bool:
        assert n >= first and (limit is None or n <= limit)  # never outside the range
        seen.append(n)
        return n >= threshold

    found = least_holding(holds, first, limit)
    if limit is not None and threshold > limit:
        assert found is None
    else:
        assert found == threshold
        assert threshold == first or threshold - 1 in seen  # proven both ways
    assert len(seen) <= 2 * (offset + 1).bit_length() + 2  # logarithmic


def test_an_empty_range_holds_nowhere() -> None:
    assert least_holding(lambda n: True, 5, 4) is None
