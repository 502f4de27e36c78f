"""The privacy layer: one cost type with its one check, one noise type whose law is a field."""

from __future__ import annotations

import ast
from fractions import Fraction
from pathlib import Path

import gmpy2
import pytest
from hypothesis import given
from hypothesis import strategies as st

import securedp
from securedp import ChaChaSource
from securedp.privacy.cost import Cost, Currency, IncompatibleCost
from securedp.privacy.noise import Law, Noise

PACKAGE = Path(securedp.__file__).parent


@pytest.mark.parametrize(("epsilon", "rho"), [(None, None), (1, 1), ("1/2", "1/3")])
def test_a_cost_is_exactly_one_of_epsilon_and_rho(epsilon: object, rho: object) -> None:
    with pytest.raises(TypeError, match=r"exactly one of epsilon= .* or rho="):
        Cost.of(epsilon, rho)


@pytest.mark.parametrize("bad", [0, -1, "0", float("nan"), float("inf"), True, "x", None])
def test_a_cost_is_a_positive_rational(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        Cost.of(epsilon=bad) if bad is not None else Cost.of(rho=bad, epsilon=bad)


@pytest.mark.parametrize(("given_value", "exact"), [("0.1", Fraction(1, 10)), (Fraction(1, 3), Fraction(1, 3)),
                                                    (gmpy2.mpq(2, 7), Fraction(2, 7)), (3, Fraction(3)),
                                                    (0.5, Fraction(1, 2))])
def test_every_accepted_form_is_read_exactly(given_value: object, exact: Fraction) -> None:
    cost = Cost.of(rho=given_value)
    assert cost == Cost(Currency.RHO, exact) and cost.rho == exact and cost.epsilon is None


def test_a_float_is_its_binary_value() -> None:
    with pytest.warns(securedp.InexactFloatWarning):
        assert Cost.of(epsilon=0.1).amount == Fraction(0.1)


@given(st.fractions(min_value=Fraction(1, 10**6), max_value=10**6), st.integers(1, 50))
def test_shares_add_up_exactly_in_the_same_currency(amount: Fraction, parts: int) -> None:
    cost = Cost(Currency.EPSILON, amount, delta=Fraction(1, 10**6))
    share = cost.split(parts)
    assert share.currency is Currency.EPSILON and share.delta is None and share.amount * parts == amount


def test_pricing_in_a_currency() -> None:
    assert Cost.of(epsilon="1/2").in_currency(Currency.EPSILON) == Fraction(1, 2)
    assert Cost.of(epsilon="1/2").in_currency(Currency.RHO) == Fraction(1, 8)  # epsilon**2 / 2, exactly
    assert Cost.of(rho="1/3").in_currency(Currency.RHO) == Fraction(1, 3)
    with pytest.raises(IncompatibleCost, match="cannot be charged to a pure epsilon budget"):
        Cost.of(rho="1/3").in_currency(Currency.EPSILON)


@given(st.integers(1, 1000), st.integers(1, 20), st.fractions(min_value=Fraction(1, 1000), max_value=100))
def test_the_law_is_the_currencys_and_its_parameter_is_exact(s: int, k: int, amount: Fraction) -> None:
    laplace = Noise.of(s, Cost(Currency.EPSILON, amount), k)
    gaussian = Noise.of(s, Cost(Currency.RHO, amount), k)
    assert laplace.law is Law.LAPLACE and laplace.parameter == Fraction(k * s) / amount
    assert gaussian.law is Law.GAUSSIAN and gaussian.parameter == Fraction(k * s * s) / (2 * amount)
    assert laplace.record() == {"mechanism": "discrete_laplace", "cell_sensitivity_units": s,
                                "scale_units": laplace.parameter}
    assert gaussian.record() == {"mechanism": "discrete_gaussian", "cell_sensitivity_units": s,
                                 "variance_units": gaussian.parameter}


def test_a_noise_draws_its_own_law_from_the_source() -> None:
    for law in Law:
        noise = Noise(law, 1, Fraction(1))
        one, batch = noise.draw(ChaChaSource(bytes(32))), noise.draw(ChaChaSource(bytes(32)), 5)
        assert isinstance(one, int) and len(batch) == 5 and all(isinstance(v, int) for v in batch)
        assert noise.draw(ChaChaSource(bytes(32)), 0) == []
    with pytest.raises(ValueError, match="positive integers"):
        Noise(Law.LAPLACE, 0, Fraction(1))


def _source_strings(path: Path) -> list[str]:
    return [node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_the_law_names_are_written_only_by_the_privacy_layer() -> None:
    """A noise law is a value (Law), not re-derived from "is epsilon set" by each release."""
    writers = [path.relative_to(PACKAGE) for path in PACKAGE.rglob("*.py")
               if {"discrete_laplace", "discrete_gaussian"} & set(_source_strings(path))
               and path.parts[-2] not in ("privacy", "hazmat", "samplers", "audit")
               and path != PACKAGE / "__init__.py"]  # the samplers' retired top-level names
    assert writers == [], writers
