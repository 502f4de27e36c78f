"""A float parameter is used exactly, and warned about when it is not the decimal it prints as (issue 19.7)."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

import securedp
from securedp import ChaChaSource, InexactFloatWarning
from securedp.hazmat.exact.rational import to_rational


def test_float_epsilon_is_exact_and_warns_with_the_string_to_pass() -> None:
    with pytest.warns(InexactFloatWarning, match=r"epsilon=0\.1 is a float.*pass the string '0\.1'") as seen:
        release = securedp.count([1, 2, 3], epsilon=0.1, rng=ChaChaSource(bytes(32)))
    assert release.epsilon == Fraction(0.1) != Fraction(1, 10)  # converted exactly, as documented
    assert seen[0].filename == __file__  # the warning points at the caller's line, not into securedp


@pytest.mark.parametrize("value", [0.5, 0.25, 3.0, 2.0**-10, np.float32(0.5), np.float64(1.0)])
def test_floats_that_mean_what_they_print_do_not_warn(value: object) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert to_rational(value, "x") == Fraction(float(value))  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0.1, 1e-5, np.float32(0.1), np.longdouble("0.1"), 1e-300])
def test_floats_that_are_not_their_decimal_warn(value: object) -> None:
    with pytest.warns(InexactFloatWarning, match="used exactly"):
        q = to_rational(value, "x")
    n, d = value.as_integer_ratio()  # type: ignore[attr-defined]
    assert q == Fraction(int(n), int(d))


def test_strings_and_fractions_never_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert to_rational("0.1", "x") == Fraction(1, 10)
        assert to_rational(Fraction(1, 10), "x") == Fraction(1, 10)
