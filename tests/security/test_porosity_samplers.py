"""Porosity (Mironov, CCS 2012) at the sampler level: the output lattice must not depend on the input.

Float noise such as numpy's Laplace reaches only a sparse, input-dependent
set of doubles, so the low-order bits of ``x + noise`` betray ``x``. Integer
noise added to an integer keeps every release on the integers, the same
lattice for every input.

One audit is applied to both: releases ``x + noise`` for ``x0 = 0`` and
``x1 = 1`` with noise of scale ``1 / epsilon``, epsilon = 1, and the
certified-violation audit (:mod:`_audit`) on two families of events: the
released value itself, and its number of binary digits after the point (the
low-order-bit events of Mironov's attack). Ours must show nothing; numpy's
float Laplace must fail. Why it fails, exactly: a double ``d`` with
``|d| >= 1/2`` has at most 53 fractional binary digits, and ``1 + noise`` is
either such a double or (for noise in (-3/2, -1/2)) an exact difference of
doubles with at least that granularity; so no release of ``x1 = 1`` has more
than 53 fractional digits, while releases of ``x0 = 0`` near zero have more
about 20 % of the time.

**False-failure rate.** The audit fails a correct sampler with probability at
most 1e-6 (each of the two event families is audited at 5e-7); our noise comes
from a fixed ChaCha stream, as numpy's comes from a fixed seed, so both
outcomes are deterministic.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from _audit import certified_violations

import securedp
from securedp.hazmat import samplers

EPSILON = 1.0
ALPHA = 1e-6
N = 20_000


def fractional_digits(value) -> int:
    """How many binary digits after the point ``value`` (an int or a double) needs."""
    return Fraction(value).denominator.bit_length() - 1


def audit_release(releases0: list, releases1: list):
    """Certified violations on release values and on their fractional binary digits, alpha 1e-6 in all."""
    by_value = certified_violations(releases0, releases1, EPSILON, ALPHA / 2)
    digits0 = [fractional_digits(v) for v in releases0]
    digits1 = [fractional_digits(v) for v in releases1]
    by_digits = certified_violations(digits0, digits1, EPSILON, ALPHA / 2)
    return by_value, by_digits


def test_discrete_laplace_releases_pass_the_porosity_audit():
    """``x + discrete_laplace(1 / epsilon)``: integers only, and no event certified for x0 = 0 versus x1 = 1."""
    source = securedp.ChaChaSource(bytes(32))  # seeded: the audit would fail OS-entropy noise with probability 1e-6
    noise0 = samplers.discrete_laplace(Fraction(1) / Fraction(EPSILON), size=N, rng=source)
    noise1 = samplers.discrete_laplace(Fraction(1) / Fraction(EPSILON), size=N, rng=source)
    assert noise0.dtype == np.int64 and noise1.dtype == np.int64
    releases0, releases1 = (0 + noise0).tolist(), (1 + noise1).tolist()
    assert all(type(v) is int for v in releases0 + releases1)  # one lattice, the integers, for both inputs
    by_value, by_digits = audit_release(releases0, releases1)
    assert by_value == []
    assert by_digits == []


def test_numpy_float_laplace_fails_the_porosity_audit():
    """Negative control: numpy's float Laplace betrays x through the low-order bits of the release."""
    rng = np.random.default_rng(0)
    releases0 = (0.0 + rng.laplace(0.0, 1 / EPSILON, N)).tolist()
    releases1 = (1.0 + rng.laplace(0.0, 1 / EPSILON, N)).tolist()
    digits1 = [fractional_digits(v) for v in releases1]
    assert max(digits1) <= 53  # proved in the module docstring
    only_under_x0 = sum(fractional_digits(v) > 53 for v in releases0)
    assert only_under_x0 > N // 10  # outputs impossible under x1 = 1
    by_value, by_digits = audit_release(releases0, releases1)
    assert by_value == []  # each double is seen about once: values alone say nothing
    assert by_digits, "the low-order-bit audit missed numpy's porosity"
    assert all(v.likelier_under == 0 and v.event > 53 for v in by_digits)
