"""Parameters are parsed exactly, and bad ones are refused with an error naming them."""

from __future__ import annotations

import decimal
import importlib
import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np
import pytest

from securedp import ChaChaSource
from securedp.hazmat import samplers
from securedp.hazmat.exact.rational import to_rational


def short_id(value: Any) -> str:
    """A stable, short test id (no memory addresses, no 10,000-digit integers)."""
    if isinstance(value, Fraction) and value.numerator.bit_length() > 1000:
        return "huge-fraction"
    return type(value).__name__ if type(value) is object else re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))[:40]


def rng() -> ChaChaSource:
    return ChaChaSource(bytes(32))


# Every real-valued parameter of every sampler, as (name in messages, call with that parameter).
PARAMETERS: list[tuple[str, Callable[[Any], Any]]] = [
    ("scale", lambda v: samplers.discrete_laplace(v, rng=rng())),
    ("sigma", lambda v: samplers.discrete_gaussian(v, rng=rng())),
    ("variance", lambda v: samplers.discrete_gaussian(variance=v, rng=rng())),
    ("scale", lambda v: samplers.geometric(v, rng=rng())),
    ("p", lambda v: samplers.geometric(p=v, rng=rng())),
    ("p", lambda v: samplers.bernoulli(v, rng=rng())),
    ("x", lambda v: samplers.bernoulli_exp(v, rng=rng())),
    ("n", lambda v: samplers.uniform_below(v, rng=rng())),
]
PARAMETER_IDS = ["laplace-scale", "gaussian-sigma", "gaussian-variance", "geometric-scale", "geometric-p",
                 "bernoulli-p", "bernoulli_exp-x", "uniform-n"]

NOT_NUMBERS = [True, False, np.bool_(True), None, "abc", "", "1/", "0x10", "1,5", "nan", "inf", "1/0", 1 + 2j,
               [1], object()]
NOT_FINITE = [math.nan, math.inf, -math.inf, np.float64("nan"), np.float32("inf"), decimal.Decimal("NaN"),
              decimal.Decimal("-Infinity"), gmpy2.mpfr("nan"), gmpy2.mpfr("inf")]


def _raises_naming(name: str, call: Callable[[], Any], errors: tuple[type[Exception], ...]) -> None:
    with pytest.raises(errors) as info:
        call()
    assert re.search(rf"\b{name}\b", str(info.value)), f"message {str(info.value)!r} does not name {name!r}"


@pytest.mark.parametrize(("name", "call"), PARAMETERS, ids=PARAMETER_IDS)
@pytest.mark.parametrize("value", NOT_NUMBERS + NOT_FINITE, ids=short_id)
def test_non_numbers_and_non_finite_values_are_refused(name: str, call: Callable[[Any], Any], value: Any) -> None:
    _raises_naming(name, lambda: call(value), (TypeError, ValueError))


@pytest.mark.parametrize("value", [True, None, 1 + 2j, object()], ids=short_id)
def test_wrong_types_raise_type_error(value: Any) -> None:
    _raises_naming("scale", lambda: samplers.discrete_laplace(value), (TypeError,))


@pytest.mark.parametrize("value", [math.nan, math.inf, "abc", "1e999999", decimal.Decimal("1e-999999")], ids=short_id)
def test_bad_numbers_raise_value_error(value: Any) -> None:
    _raises_naming("scale", lambda: samplers.discrete_laplace(value), (ValueError,))


POSITIVE = [p for p in zip(PARAMETER_IDS, PARAMETERS, strict=True) if p[0] in
            ("laplace-scale", "gaussian-sigma", "gaussian-variance", "geometric-scale")]


@pytest.mark.parametrize(("name", "call"), [p for _, p in POSITIVE], ids=[i for i, _ in POSITIVE])
@pytest.mark.parametrize("value", [0, -1, "-0.5", Fraction(-1, 3), -0.0, 0.0, "0", "-1e-9"], ids=short_id)
def test_scales_must_be_positive(name: str, call: Callable[[Any], Any], value: Any) -> None:
    _raises_naming(name, lambda: call(value), (ValueError,))


@pytest.mark.parametrize("value", [-1, "-1/3", Fraction(3, 2), 2, "1.0000001", -1e-300], ids=short_id)
def test_probabilities_must_lie_in_0_1(value: Any) -> None:
    _raises_naming("p", lambda: samplers.bernoulli(value), (ValueError,))
    _raises_naming("p", lambda: samplers.geometric(p=value), (ValueError,))


def test_geometric_success_probability_must_be_positive() -> None:
    _raises_naming("p", lambda: samplers.geometric(p=0), (ValueError,))


@pytest.mark.parametrize("value", [-1, "-0.01", Fraction(-1, 10**9)], ids=short_id)
def test_bernoulli_exp_needs_non_negative_x(value: Any) -> None:
    _raises_naming("x", lambda: samplers.bernoulli_exp(value), (ValueError,))


@pytest.mark.parametrize("value", [0, -1, -(2**80), "2.5", Fraction(7, 2), 1.5], ids=short_id)
def test_uniform_below_needs_an_integer_at_least_one(value: Any) -> None:
    _raises_naming("n", lambda: samplers.uniform_below(value), (ValueError,))


@pytest.mark.parametrize("value", [3, "3", 3.0, Fraction(6, 2), np.int64(3), gmpy2.mpz(3), decimal.Decimal("3.00")],
                         ids=short_id)
def test_uniform_below_accepts_integral_values_of_any_type(value: Any) -> None:
    assert samplers.uniform_below(value, size=50, rng=rng()).max() <= 2


SIZED = [
    lambda size: samplers.discrete_laplace(1, size, rng=rng()),
    lambda size: samplers.discrete_gaussian(1, size, rng=rng()),
    lambda size: samplers.geometric(1, size, rng=rng()),
    lambda size: samplers.bernoulli("0.5", size, rng=rng()),
    lambda size: samplers.bernoulli_exp(1, size, rng=rng()),
    lambda size: samplers.uniform_below(5, size, rng=rng()),
]


@pytest.mark.parametrize("call", SIZED, ids=["laplace", "gaussian", "geometric", "bernoulli", "bernoulli_exp",
                                             "uniform"])
def test_bad_sizes_are_refused(call: Callable[[Any], Any]) -> None:
    for size in (-1, (2, -1), np.int64(-3)):
        _raises_naming("size", lambda size=size: call(size), (ValueError,))
    for size in (True, np.bool_(False), 2.0, "3", [2, 3], (2, 3.0), (True, 2)):
        _raises_naming("size", lambda size=size: call(size), (TypeError,))


def test_gaussian_takes_exactly_one_of_sigma_and_variance() -> None:
    for call in (lambda: samplers.discrete_gaussian(), lambda: samplers.discrete_gaussian(1, variance=1)):
        _raises_naming("sigma", call, (TypeError,))
        _raises_naming("variance", call, (TypeError,))


def test_geometric_takes_exactly_one_of_scale_and_p() -> None:
    for call in (lambda: samplers.geometric(), lambda: samplers.geometric(1, p="0.5")):
        _raises_naming("scale", call, (TypeError,))
        _raises_naming("p", call, (TypeError,))


@pytest.mark.parametrize("bad", [np.random.default_rng(0), 42, b"\x00" * 32, "system"], ids=short_id)
def test_rng_must_be_a_random_source(bad: Any) -> None:
    _raises_naming("rng", lambda: samplers.discrete_laplace(1, rng=bad), (TypeError,))


# --- exact parsing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "exact"),
    [
        ("0.1", Fraction(1, 10)),
        (0.1, Fraction(3602879701896397, 36028797018963968)),
        (np.float64(0.1), Fraction(0.1)),
        (np.float32(0.1), Fraction(float(np.float32(0.1)))),
        ("1/3", Fraction(1, 3)),
        (" -2/6 ", Fraction(-1, 3)),
        (decimal.Decimal("0.25"), Fraction(1, 4)),
        (decimal.Decimal("1E+3"), Fraction(1000)),
        (gmpy2.mpq(1, 3), Fraction(1, 3)),
        (gmpy2.mpz(7), Fraction(7)),
        (gmpy2.mpfr("0.5"), Fraction(1, 2)),
        (np.int64(-5), Fraction(-5)),
        (np.uint8(200), Fraction(200)),
        ("1e-3", Fraction(1, 1000)),
        ("2.5E2", Fraction(250)),
        (".5", Fraction(1, 2)),
        ("+3.", Fraction(3)),
        ("1e10000", Fraction(10**10000)),
        (10**30, Fraction(10**30)),
    ],
    ids=short_id,
)
def test_parsing_is_exact(value: Any, exact: Fraction) -> None:
    parsed = to_rational(value, "v")
    assert type(parsed) is Fraction and parsed == exact


def test_float_and_decimal_string_mean_different_numbers() -> None:
    """``0.1`` is the binary float, ``"0.1"`` one tenth: the samplers see (and cache) them apart."""
    assert to_rational(0.1, "v") != to_rational("0.1", "v")
    plans = importlib.import_module("securedp.hazmat.samplers.bernoulli")._PLANS
    float_low = plans.get(0.1).thresholds.real_at(0).floor_ceil(64)[0]
    decimal_low = plans.get("0.1").thresholds.real_at(0).floor_ceil(64)[0]
    assert (float_low, decimal_low) == (3602879701896397 << 9, (1 << 64) // 10)


@pytest.mark.parametrize("text", ["1e999999", "-1e-999999", "1e10001", "5E+1000000000"])
def test_huge_decimal_exponents_are_refused_quickly(text: str) -> None:
    _raises_naming("scale", lambda: samplers.discrete_laplace(text), (ValueError,))
    _raises_naming("scale", lambda: samplers.discrete_laplace(decimal.Decimal(text)), (ValueError,))
