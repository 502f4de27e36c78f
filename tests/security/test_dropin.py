"""SecureGenerator: NumPy-shaped API, outputs on the declared lattice, and the porosity audit.

The audit (see ``_audit.py``) runs the one-line drop-in swap on neighbouring
inputs ``loc = 0`` and ``loc = 1`` (sensitivity 1, scale 1, so epsilon = 1)
and looks at the event "how fine is the output's binary expansion" (the bit
length of the denominator of its exact value). NumPy's
float Laplace fails: its outputs near 0 carry low-order bits that outputs
near 1 cannot. SecureGenerator passes: every output is a multiple of the
declared step whatever ``loc`` is.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from _audit import certified_violations

from securedp import ChaChaSource, SecureGenerator

N = 20_000


def fineness(v: float) -> int:
    """The event: bit length of the denominator of ``v``'s exact value (how many low-order bits it uses)."""
    return Fraction(v).denominator.bit_length()


def audit(draw) -> list:
    samples0 = [fineness(v) for v in draw(0.0)]
    samples1 = [fineness(v) for v in draw(1.0)]
    return certified_violations(samples0, samples1, epsilon=1.0)


def test_porosity_audit_fails_on_numpy() -> None:
    rng = np.random.default_rng(12345)
    assert audit(lambda loc: rng.laplace(loc, 1.0, size=N))


def test_porosity_audit_passes_on_securedp_after_a_one_line_change() -> None:
    rng = SecureGenerator(ChaChaSource(bytes(range(32))))  # the one line that changes
    assert not audit(lambda loc: rng.laplace(loc, 1.0, size=N))


def test_porosity_audit_fails_on_numpy_normal_and_passes_on_securedp() -> None:
    ref = np.random.default_rng(54321)
    assert audit(lambda loc: ref.normal(loc, 1.0, size=N))
    rng = SecureGenerator(ChaChaSource(bytes(range(1, 33))))
    assert not audit(lambda loc: rng.normal(loc, 1.0, size=N))


@pytest.mark.parametrize("scale", [1.0, 3, "0.1", 1e-9, 2.0**40, Fraction(7, 3)])
@pytest.mark.parametrize("method", ["laplace", "normal"])
def test_outputs_lie_on_the_declared_lattice_whatever_loc(method: str, scale) -> None:
    rng = SecureGenerator(ChaChaSource(bytes(32)))
    step = SecureGenerator.lattice(scale)
    s = Fraction(scale)
    assert s / 2**13 < step <= s / 2**12 and (step.numerator == 1 or step.denominator == 1)
    for loc in (0.0, 0.1, -1e6 * float(s), float(s) / 3):
        values = getattr(rng, method)(loc, scale, size=200)
        assert all((Fraction(v) / step).denominator == 1 for v in values)
        center = round(Fraction(loc) / step) * step
        spread = max(abs(Fraction(v) - center) for v in values)
        assert spread < 40 * s


def test_loc_is_snapped_to_nearest_ties_to_even() -> None:
    rng = SecureGenerator(ChaChaSource(bytes(32)))
    step = SecureGenerator.lattice(1)  # 2**-12
    half = float(step / 2)
    a = np.array(rng.laplace(half, 1, size=4000)) / float(step)  # 0.5 steps -> 0
    b = np.array(rng.laplace(3 * half, 1, size=4000)) / float(step)  # 1.5 steps -> 2
    assert abs(a.mean()) < 200 and abs(b.mean() - 2) < 200
    seeded = [SecureGenerator(ChaChaSource(bytes(32))).laplace(loc, 1) for loc in (half, 0.0)]
    assert seeded[0] == seeded[1]


def test_shapes_and_types_match_numpy() -> None:
    rng = SecureGenerator(ChaChaSource(bytes(32)))
    ref = np.random.default_rng(0)
    for method in ("laplace", "normal"):
        assert isinstance(getattr(rng, method)(), float)
        assert getattr(rng, method)(size=(2, 3)).shape == getattr(ref, method)(size=(2, 3)).shape
        assert getattr(rng, method)([0.0, 5.0]).shape == (2,)
        assert getattr(rng, method)([0.0, 5.0], 1.0, size=(3, 2)).shape == (3, 2)
        assert getattr(rng, method)(size=(3, 2)).dtype == np.float64
    assert 0 <= rng.integers(5) < 5
    values = rng.integers(-3, 3, size=1000, endpoint=True)
    assert values.dtype == np.int64 and set(values.tolist()) == set(range(-3, 4))
    assert rng.integers(0, 256, size=10, dtype=np.uint8).dtype == np.uint8
    g = rng.geometric(0.25, size=5000)
    assert g.min() >= 1 and abs(g.mean() - 4) < 0.3
    assert rng.geometric(1) == 1


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda g: g.laplace(0, 0), ValueError),
        (lambda g: g.normal(0, -1), ValueError),
        (lambda g: g.laplace(float("nan")), ValueError),
        (lambda g: g.integers(5, 5), ValueError),
        (lambda g: g.integers(0, 300, dtype=np.uint8), ValueError),
        (lambda g: g.geometric(0), ValueError),
        (lambda g: g.laplace(size=-1), ValueError),
    ],
)
def test_bad_arguments_raise(call, error) -> None:
    with pytest.raises(error):
        call(SecureGenerator())


def test_privacy_cost_of_snapping_is_exact() -> None:
    assert SecureGenerator.epsilon_of(1, 1) == 1  # loc on the lattice: no cost
    step = SecureGenerator.lattice(1)
    assert SecureGenerator.epsilon_of("0.1", 1) == (int(Fraction(1, 10) / step) + 1) * step
    assert SecureGenerator.epsilon_of("0.1", 1) <= Fraction(1, 10) + step
    assert SecureGenerator.rho_of(2, 4) == Fraction(1, 8)


def test_a_seeded_generator_is_reproducible() -> None:
    a = SecureGenerator(ChaChaSource(bytes(32))).laplace(0, 2, size=10)
    b = SecureGenerator(ChaChaSource(bytes(32))).laplace(0, 2, size=10)
    assert a.tolist() == b.tolist()


# -- the fast scalar path: exact snapping with integer arithmetic, outputs on the lattice ---------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from securedp.hazmat.generator import _snap_one, lattice_exponent  # noqa: E402

PROPERTY = settings(max_examples=300, deadline=None, derandomize=True, database=None)
DRAWS = settings(max_examples=60, deadline=None, derandomize=True, database=None)  # each example builds a plan
finite_floats = st.floats(allow_nan=False, allow_infinity=False)
locs = st.one_of(
    finite_floats.filter(lambda x: abs(x) < 1e200),
    st.integers(-(2**80), 2**80),
    st.fractions(max_denominator=10**6).filter(lambda q: abs(q) < 10**12),
)
scales = st.one_of(
    st.floats(min_value=1e-250, max_value=1e250),
    st.integers(1, 2**70),
    st.fractions(min_value=Fraction(1, 10**9), max_value=10**9).filter(lambda q: q > 0),
)


def reference_snap(value, k: int) -> int:
    """round(value / 2**k), ties to even, with Fractions: the definition the fast path must equal."""
    q = Fraction(value) / Fraction(2) ** k
    floor = q.numerator // q.denominator
    rem = q - floor
    return floor + (rem > Fraction(1, 2) or (rem == Fraction(1, 2) and floor % 2 == 1))


@PROPERTY
@given(value=st.one_of(finite_floats, st.integers(-(2**200), 2**200)), k=st.integers(-1200, 1200))
def test_fast_snapping_equals_exact_rounding(value, k: int) -> None:
    assert _snap_one(value, k) == reference_snap(value, k)
    assert _snap_one(np.float64(value) if isinstance(value, float) else value, k) == reference_snap(value, k)


@pytest.mark.parametrize("value", [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3, -3, 5, -5, 7, -7])
@pytest.mark.parametrize("k", [0, 1, 2])
def test_fast_snapping_ties_go_to_even(value, k: int) -> None:
    assert _snap_one(value, k) == reference_snap(value, k)


@DRAWS
@given(loc=locs, scale=scales, method=st.sampled_from(["laplace", "normal"]), seed=st.binary(min_size=32, max_size=32))
def test_scalar_outputs_lie_on_the_lattice_and_equal_the_exact_array_path(loc, scale, method: str, seed: bytes) -> None:
    step = SecureGenerator.lattice(scale)
    assert step == Fraction(2) ** lattice_exponent(scale)
    value = getattr(SecureGenerator(ChaChaSource(seed)), method)(loc, scale)
    assert isinstance(value, float)
    assert (Fraction(value) / step).denominator == 1  # on the declared lattice, whatever loc is
    # A scalar call serves the first value of a fresh source's pooled batch of 1024 draws, which is the
    # first value of a size-1024 draw on a fresh source: so the fast scalar path (integer snapping,
    # cached lattice) must give exactly what the exact array path gives.
    batch = getattr(SecureGenerator(ChaChaSource(seed)), method)(loc, scale, size=1024)
    assert value == batch[0]
    center = reference_snap(loc, lattice_exponent(scale))
    if abs(center) < 2**52:  # below 2**53 units the float is the exact lattice value (beyond, correctly rounded)
        assert abs(Fraction(value) - center * step) <= 200 * Fraction(scale)
