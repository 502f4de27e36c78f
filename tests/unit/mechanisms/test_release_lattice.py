"""Lattice: exact conversion, clamping before rounding, screening, fast paths equal the exact reference."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from securedp.lattice import Lattice, exact_sum, exact_sum_of_squares


def reference_units(x, step, lo_u, hi_u):
    """Clamp to [lo_u*step, hi_u*step], then round half to even: the documented rule, with Fractions."""
    if x in (float("inf"), float("-inf")):
        return hi_u if x > 0 else lo_u
    q = Fraction(x)
    q = min(max(q, lo_u * step), hi_u * step)
    return round(q / step)  # Fraction.__round__ is half-to-even


def test_constructors_and_rules():
    assert Lattice.binary(3).step == Fraction(1, 8)
    assert Lattice.decimal(2).step == Fraction(1, 100)
    assert Lattice.binary(-2).step == 4 and Lattice("0.1") == Lattice.decimal(1)
    assert Lattice.for_bounds(0, 1).step == Fraction(1, 1 << 16)
    assert Lattice.for_bounds(0, 100).step == Fraction(1, 1024)  # 100 * 2**10 >= 2**16 > 100 * 2**9
    assert Lattice.for_bounds(0, 1, resolution=3).step == Fraction(1, 4)
    with pytest.raises(ValueError):
        Lattice.for_bounds(1, 1)
    with pytest.raises(ValueError):
        Lattice(0)
    with pytest.raises(ValueError):
        Lattice.binary(1).bounds_units(2, 1)


def test_units_value_and_bounds():
    lat = Lattice.binary(2)
    assert [lat.units(v) for v in ("0.125", "0.375", "-0.125", "-0.375", 1)] == [0, 2, 0, -2, 4]
    assert lat.value(3) == Fraction(3, 4)
    assert lat.bounds_units("0.1", "0.9") == (1, 3)  # snapped inward
    assert lat.bounds_units(-1, 2) == (-4, 8)
    with pytest.raises(ValueError):
        Lattice(1).bounds_units("0.2", "0.8")  # no lattice point inside


ABSURD = [10**400, -(10**400), float("inf"), float("-inf"), Decimal("1e999999"), Decimal("-1e999999"),
          Decimal("1e-999999"), Fraction(10**400 + 1, 10**400), Fraction(1, 10**5000), Fraction(-(10**5000), 3),
          "1e999999", "-3/1", "1" * 400, "1" * 199 + "/" + "3" * 199]
"""Within the declared length of a cell (securedp.hazmat.exact.bounds: 400 characters or digits, 1,400 bits a term
of a rational within the bounds); longer ones are unusable (below)."""
TOO_LONG = [Fraction(10**5000 + 1, 10**5000), "1" * 5000, "1" * 5000 + "/" + "3" * 5000, "1" * 401,
            Decimal("1." + "0" * 400), Fraction(2**1401 + 1, 2**1401)]


@pytest.mark.parametrize("step", [Fraction(1, 4), Fraction(1, 10), Fraction(1, 3), Fraction(5, 2)])
def test_absurd_records_are_clamped_exactly(step):
    lat = Lattice(step)
    lo_u, hi_u = lat.bounds_units(-2, 3)
    got = lat.clamp_units(ABSURD, -2, 3).tolist()
    zero = reference_units(0, step, lo_u, hi_u)
    one = reference_units(1, step, lo_u, hi_u)
    third = reference_units(Fraction(1, 3), step, lo_u, hi_u)
    exact = [hi_u, lo_u, hi_u, lo_u, hi_u, lo_u, zero, one, zero, lo_u, hi_u, lo_u, hi_u, third]
    assert got == exact


@pytest.mark.parametrize("step", [Fraction(1, 4), Fraction(1, 10), Fraction(1, 3), Fraction(5, 2)])
def test_records_too_long_to_read_are_unusable(step):
    lat = Lattice(step)
    kept = lat.clamp_units([1, *TOO_LONG, 2], -2, 3, missing="drop")
    assert kept.tolist() == lat.clamp_units([1, 2], -2, 3).tolist()
    for record in TOO_LONG:
        with pytest.raises(ValueError, match=r"longer than 400 characters or digits|more than 1400 bits"):
            lat.clamp_units([1, record], -2, 3)


@pytest.mark.parametrize("step", [Fraction(1, 1024), Fraction(1, 1000), Fraction(1, 3), Fraction(7, 5), Fraction(1)])
def test_fast_paths_match_exact_reference(step):
    rng = np.random.default_rng(7)  # test data only, not noise
    lat = Lattice(step)
    floats = np.concatenate([rng.uniform(-12, 12, 3000), np.round(rng.uniform(-12, 12, 500) * 8) / 8,
                             [0.05, 0.15, 0.25, 0.35, -0.05, 1e308, -1e308, 5e-324, 0.0, -0.0]])
    lo_u, hi_u = lat.bounds_units("-10.3", "9.7")
    expected = [reference_units(x, step, lo_u, hi_u) for x in floats.tolist()]
    assert lat.clamp_units(floats, "-10.3", "9.7").tolist() == expected
    assert lat.clamp_units(floats.tolist(), "-10.3", "9.7").tolist() == expected
    with np.errstate(over="ignore"):  # +-1e308 become +-inf in float32, on purpose
        singles = floats.astype(np.float32)
    assert lat.clamp_units(singles, "-10.3", "9.7").tolist() == [
        reference_units(x, step, lo_u, hi_u) for x in singles.tolist()]
    ints = rng.integers(-20, 20, 500)
    expected_i = [reference_units(x, step, lo_u, hi_u) for x in ints.tolist()]
    assert lat.clamp_units(ints, "-10.3", "9.7").tolist() == expected_i
    assert lat.clamp_units(ints.astype(np.uint8) % 16, "-10.3", "9.7").tolist() == [
        reference_units(x, step, lo_u, hi_u) for x in (ints.astype(np.uint8) % 16).tolist()]
    assert lat.clamp_units(ints.tolist(), "-10.3", "9.7").tolist() == expected_i


def test_ties_to_even_after_clamping():
    lat = Lattice(1)
    assert lat.clamp_units([0.5, 1.5, 2.5, -0.5, -1.5], -5, 5).tolist() == [0, 2, 2, 0, -2]
    # clamping first: 7.5 is clamped to 5 (not rounded to 8 first)
    assert lat.clamp_units([7.5, "2.5", Decimal("3.5"), Fraction(9, 2)], 0, 5).tolist() == [5, 2, 4, 4]


def test_unusable_records():
    lat = Lattice(1)
    for bad, reason in ([None, "blank cell"], [float("nan"), "blank cell"], ["abc", "not a number"],
                        [True, "boolean"], [Decimal("NaN"), "blank cell"], [object(), "not a number"],
                        [[1], "not a number"]):
        with pytest.raises(ValueError, match=reason):
            lat.clamp_units([1, bad], 0, 5)
    with pytest.raises(ValueError, match="blank cell"):
        lat.clamp_units(np.array([1.0, np.nan]), 0, 5)
    with pytest.raises(TypeError):
        lat.clamp_units(np.array([True, False]), 0, 5)
    assert lat.clamp_units([1, None, 3.0, "x"], 0, 5, missing="drop").tolist() == [1, 3]
    assert lat.clamp_units(np.array([1.0, np.nan]), 0, 5, missing="drop").tolist() == [1]
    assert lat.clamp_units([1, None], 0, 5, missing="impute", fill=9).tolist() == [1, 5]
    with pytest.raises(ValueError):
        lat.clamp_units([1], 0, 5, missing="impute")
    with pytest.raises(ValueError):
        lat.clamp_units([1], 0, 5, missing="ignore")


def test_units_beyond_int64_use_python_ints():
    lat = Lattice(1)
    big = 1 << 70
    out = lat.clamp_units([big + 5, -big, 3, 2.0**80], -big, big)
    assert out.dtype == object and out.tolist() == [big, -big, 3, big]
    assert exact_sum(out, big) == big + 3


def test_exact_sums_do_not_overflow_and_ignore_order():
    bound = (1 << 62) + 1
    units = np.array([bound] * 8 + [-3, 5], dtype=np.int64)
    assert exact_sum(units, bound) == 8 * bound + 2
    assert exact_sum(units[::-1].copy(), bound) == 8 * bound + 2
    assert exact_sum_of_squares(np.array([3, -4], dtype=np.int64), 4) == 25
    assert exact_sum_of_squares(np.array([1 << 40, 1], dtype=np.int64), 1 << 40) == (1 << 80) + 1
    assert exact_sum(np.zeros(0, dtype=np.int64), 1) == 0


def test_an_integer_array_on_a_step_whose_denominator_passes_int64_is_read_exactly() -> None:
    """``lattice="1e-40"`` has a denominator of 10**40: the vectorised integer path used to overflow on it."""
    import numpy as np

    from securedp.lattice import screen_units

    units, kept = screen_units(np.array([0, 1, -1, 0], dtype=np.int64), Fraction(1, 10**40), 0, 10**15)
    assert kept is None and units.tolist() == [0, 10**15, 0, 0]
