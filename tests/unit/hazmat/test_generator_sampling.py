"""Issue 43.9: SecureGenerator's random, bytes, choice, permutation and shuffle, each checked against its exact
law with a chi-square test at a fixed ChaCha seed (alpha 1e-6: a correct sampler fails about once in a million
seeds; the seed is fixed, so the test passes or fails the same way on every run), and NumPy's shapes."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from securedp import SecureGenerator

ALPHA = 1e-6


def generator(label: int) -> SecureGenerator:
    return SecureGenerator.from_seed(bytes([label]) * 32)


def fits(counts: Counter, law: dict, draws: int) -> float:
    keys = sorted(law, key=repr)
    return float(chisquare([counts.get(k, 0) for k in keys], [float(law[k]) * draws for k in keys]).pvalue)


def test_permutation_and_shuffle_give_every_order_probability_one_over_n_factorial() -> None:
    g, draws = generator(1), 24_000
    law = {order: Fraction(1, 24) for order in itertools.permutations(range(4))}
    assert fits(Counter(tuple(g.permutation(4).tolist()) for _ in range(draws)), law, draws) > ALPHA
    shuffled = Counter()
    for _ in range(draws):
        items = [0, 1, 2, 3]
        g.shuffle(items)
        shuffled[tuple(items)] += 1
    assert fits(shuffled, law, draws) > ALPHA
    rows = np.arange(6).reshape(3, 2)
    assert sorted(g.permutation(rows).tolist()) == rows.tolist() and g.permutation(rows).shape == (3, 2)
    g.shuffle(rows)
    assert sorted(rows.tolist()) == [[0, 1], [2, 3], [4, 5]]


def test_choice_uniform_with_and_without_replacement() -> None:
    g, draws = generator(2), 30_000
    assert fits(Counter(g.choice(5, draws).tolist()), {i: Fraction(1, 5) for i in range(5)}, draws) > ALPHA
    ordered = Counter(tuple(g.choice(["a", "b", "c", "d"], 2, replace=False).tolist()) for _ in range(draws))
    law = {pair: Fraction(1, 12) for pair in itertools.permutations("abcd", 2)}
    assert fits(ordered, law, draws) > ALPHA
    assert g.choice(["x", "y"]) in ("x", "y") and g.choice(7, (2, 3)).shape == (2, 3)
    assert sorted(g.choice(10, 10, replace=False).tolist()) == list(range(10))
    with pytest.raises(ValueError, match="without replacement"):
        g.choice(3, 4, replace=False)


def test_choice_with_p_draws_p_over_its_sum_exactly() -> None:
    g, draws = generator(3), 40_000
    p = ["1/10", "1/5", "7/10"]
    counts = Counter(g.choice(3, draws, p=p).tolist())
    assert fits(counts, {0: Fraction(1, 10), 1: Fraction(1, 5), 2: Fraction(7, 10)}, draws) > ALPHA
    unnormalised = Counter(g.choice(2, draws, p=[1, 3]).tolist())  # read exactly as 1/4, 3/4
    assert fits(unnormalised, {0: Fraction(1, 4), 1: Fraction(3, 4)}, draws) > ALPHA
    assert set(g.choice(3, 200, p=[0, 1, 0]).tolist()) == {1}
    for bad in ([-1, 2, 0], [0, 0, 0], [1, 2]):
        with pytest.raises(ValueError):
            g.choice(3, p=bad)
    with pytest.raises(ValueError, match="refused"):
        g.choice(3, 2, replace=False, p=["1/3"] * 3)


def test_random_is_uniform_on_the_float64_grid_of_two_to_minus_53() -> None:
    g, draws = generator(4), 32_000
    values = g.random(draws)
    assert values.dtype == np.float64 and values.shape == (draws,) and ((values >= 0) & (values < 1)).all()
    assert all(math.ldexp(v, 53) == int(math.ldexp(v, 53)) for v in values.tolist())
    top = Counter((values * 16).astype(int).tolist())  # the first four bits: uniform on 16 bins
    assert fits(top, {i: Fraction(1, 16) for i in range(16)}, draws) > ALPHA
    low = Counter((np.ldexp(values, 53).astype(np.int64) % 16).tolist())  # and the last four
    assert fits(low, {i: Fraction(1, 16) for i in range(16)}, draws) > ALPHA
    assert isinstance(g.random(), float)
    with pytest.raises(ValueError, match="float64"):
        g.random(dtype=np.float32)


def test_bytes_are_uniform_and_of_the_length_asked() -> None:
    g = generator(5)
    data = g.bytes(64_000)
    assert len(data) == 64_000 and g.bytes(0) == b""
    assert fits(Counter(data), {b: Fraction(1, 256) for b in range(256)}, len(data)) > ALPHA
    with pytest.raises(ValueError):
        g.bytes(-1)


@pytest.mark.parametrize("method, params, scalars", [
    ("laplace", {"loc": [0.0, 100.0], "scale": [1.0, "1/3"]}, [{"loc": 0.0, "scale": 1.0},
                                                              {"loc": 100.0, "scale": "1/3"}]),
    ("normal", {"loc": 5, "scale": [2, 8]}, [{"loc": 5, "scale": 2}, {"loc": 5, "scale": 8}]),
    ("exponential", {"scale": [1, 1000]}, [{"scale": 1}, {"scale": 1000}]),
    ("uniform", {"low": [0, -7], "high": 1}, [{"low": 0, "high": 1}, {"low": -7, "high": 1}]),
    ("integers", {"low": 3, "high": [4, 1000]}, [{"low": 3, "high": 4}, {"low": 3, "high": 1000}]),
])
def test_array_parameters_broadcast_and_each_element_is_the_scalar_draw(method: str, params: dict,
                                                                        scalars: list[dict]) -> None:
    """Broadcasting as NumPy does: the parameters' shape, or ``size`` they broadcast to; element by element, in
    C order, the same exact draw as the scalar call on the same stream (whose law is tested on its own)."""
    drawn = getattr(generator(6), method)(**params, size=(3, 2))
    assert drawn.shape == (3, 2)
    again = generator(6)
    assert drawn.ravel().tolist() == [getattr(again, method)(**scalars[i % 2]) for i in range(6)]
    assert getattr(generator(6), method)(**params).shape == (2,)
    with pytest.raises(ValueError, match="cannot hold"):
        getattr(generator(6), method)(**params, size=3)
