"""Every NumPy float, longdouble included, is taken at its exact value (defect 4 of 0.1)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import securedp
from securedp.hazmat import samplers
from securedp.hazmat.exact.rational import to_rational

LONG_IS_WIDER = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.longdouble])
def test_numpy_float_scalars_are_exact(dtype):
    x = dtype(1) / dtype(3)
    num, den = x.as_integer_ratio()
    assert to_rational(x, "scale") == Fraction(int(num), int(den))


@pytest.mark.skipif(not LONG_IS_WIDER, reason="longdouble is float64 on this platform")
def test_longdouble_keeps_its_low_bits():
    x = np.longdouble(1) + np.longdouble(2) ** -60
    assert to_rational(x, "scale") == 1 + Fraction(1, 2**60)
    assert to_rational(x, "scale") != to_rational(np.float64(x), "scale")
    # a scale given as longdouble is the scale used: its plan is the exact rational's plan
    a = samplers.discrete_laplace(x, size=50, rng=securedp.ChaChaSource(bytes(32)))
    b = samplers.discrete_laplace(1 + Fraction(1, 2**60), size=50, rng=securedp.ChaChaSource(bytes(32)))
    assert np.array_equal(a, b)


@pytest.mark.parametrize("bad", [np.longdouble("nan"), np.float16("inf"), np.complex128(1), np.bool_(True)])
def test_non_finite_and_non_real_are_refused(bad):
    with pytest.raises((TypeError, ValueError), match="scale"):
        to_rational(bad, "scale")
