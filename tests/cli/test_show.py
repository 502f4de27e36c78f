"""How the command writes values: exactly, as a person would (:mod:`securedp.cli.show`)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from securedp.cli.show import approximate, exact_text, label_text, number


@pytest.mark.parametrize(
    "value, text",
    [
        (3, "3"), (Fraction(3), "3"), (-7, "-7"), (0, "0"), (Fraction(1, 4), "0.25"), (Fraction(-3, 2), "-1.5"),
        (Fraction(1, 10), "0.1"), (Fraction(5, 1000), "0.005"), (Fraction(-1, 2**18), "-0.000003814697265625"),
        (Fraction(-12374564689575344232292417536, 125), "-98996517516602753858339340.288"),
        (Fraction(1, 3), "1/3"), (Fraction(-22, 7), "-22/7"), (Fraction(1, 2**50), "1/1125899906842624"),
        ("north", "north"), (True, "True"),
    ],
)
def test_exact_text(value: object, text: str) -> None:
    assert exact_text(value) == text


def test_number_adds_an_approximation_only_to_a_fraction() -> None:
    assert number(Fraction(1, 4)) == "0.25"
    assert number(Fraction(26874633, 512512)) == "≈ 52.4371  (exactly 26874633/512512)"
    assert number(Fraction(-1, 3 * 10**400)) == "≈ -3.33333e-401"  # no float overflow; exact in --json
    assert number(Fraction(10**400 + 1, 3)) == "≈ 3.33333e+399"


def test_a_long_or_huge_number_is_rounded_for_reading() -> None:
    """Issue 28.6: a 401-digit epsilon, or the demo's 22-digit lattice value, is rounded (the record keeps it)."""
    assert number(Fraction(10**400)) == "1e+400"  # exact, in scientific form
    assert number(Fraction(1200140857696533203125, 10**20)) == "≈ 12.0014"
    assert number(Fraction(299771728515625, 10**12)) == "299.771728515625"  # 15 significant digits: exact
    assert number(123456789012345) == "123456789012345" and number(10**15 + 1) == "≈ 1e+15  (exactly 1000000000000001)"
    assert number(Fraction(1009775543212890625, 10**17)) == "≈ 10.0978"  # a long decimal is never shown beside


def test_bin_labels_are_intervals() -> None:
    assert label_text((Fraction(0), Fraction(1, 2)), last=False) == "[0, 0.5)"
    assert label_text((Fraction(60), Fraction(80)), last=True) == "[60, 80]"
    assert label_text("north", last=True) == "north"


denominators = st.builds(lambda a, b, r: 2**a * 5**b * r, st.integers(0, 45), st.integers(0, 45),
                         st.sampled_from([1, 1, 1, 3, 7, 9, 11, 21]))


@settings(max_examples=400, deadline=None)
@given(st.integers(-(10**40), 10**40), denominators)
def test_exact_text_round_trips_and_uses_decimals_exactly_when_finite(numerator: int, denominator: int) -> None:
    q = Fraction(numerator, denominator)
    text = exact_text(q)
    assert Fraction(text) == q  # exact: never rounded
    d = q.denominator
    finite = d == 2 ** ((d & -d).bit_length() - 1) * 5 ** _fives(d) and max((d & -d).bit_length() - 1, _fives(d)) <= 40
    assert ("/" not in text) == finite
    if "." in text:
        assert not text.endswith("0") and not text.endswith(".")
    if "/" in text:
        approx = Fraction(approximate(q))
        assert abs(approx - q) <= abs(q) * Fraction(1, 10**5)


def _fives(d: int) -> int:
    count = 0
    while d % 5 == 0:
        d //= 5
        count += 1
    return count
