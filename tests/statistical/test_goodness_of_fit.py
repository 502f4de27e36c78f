"""Every sampler against its exact law, by a G-test at fixed ChaCha seeds.

**False-failure rate.** Each test draws from a ``ChaChaSource`` with a fixed
seed, so it is deterministic: it either always passes or always fails. The
seeds were not chosen to pass; under a correct sampler a test fails for a
given seed with probability at most ``ALPHA = 1e-6`` (the p-value of
:func:`gof_pvalue` is valid), so the whole file (~100 tests) fails falsely
for fewer than 1 in 10,000 seed choices.

**Power.** The meta-tests at the end show that the same test, at the same
alpha and sample sizes, rejects laws that are only slightly wrong (a 5% error
in the scale, a broken resolver, a broken rare branch, one impossible value).

**Rare paths.** The exact resolver (:func:`decide.resolve_below`) runs with
probability ``2**-64`` per comparison in production; plans built with a
test-only narrow comparison width (4 bits) run it on a large fraction of
comparisons, and the tests count the calls to prove that it really ran.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from _exact_pmf import Bernoulli, DiscreteGaussian, DiscreteLaplace, Geometric, Law, Uniform, gof_pvalue

from securedp import ChaChaSource
from securedp.hazmat import samplers
from securedp.hazmat.exact.interval import exp_neg
from securedp.hazmat.samplers import decide
from securedp.hazmat.samplers.bernoulli import BernoulliPlan
from securedp.hazmat.samplers.decide import Thresholds
from securedp.hazmat.samplers.discrete_gaussian import DiscreteGaussianPlan
from securedp.hazmat.samplers.discrete_laplace import DiscreteLaplacePlan
from securedp.hazmat.samplers.geometric import ExpRatio, GeometricPlan

# The package re-exports functions under the names of their modules: fetch the modules themselves.
bernoulli_module = importlib.import_module("securedp.hazmat.samplers.bernoulli")
gaussian_module = importlib.import_module("securedp.hazmat.samplers.discrete_gaussian")

ALPHA = 1e-6
N_BATCH = 200_000
N_SCALAR = 20_000
N_RARE = 20_000  # narrow-width plans resolve in Python: fewer samples keep them fast


def seeded(label: str) -> ChaChaSource:
    """A fixed, independent ChaCha stream per test case."""
    return ChaChaSource(hashlib.sha256(b"gof-" + label.encode()).digest())


def assert_fits(samples: Any, law: Law) -> None:
    p = gof_pvalue(samples, law)
    assert p > ALPHA, f"{law}: p = {p:.3g} <= {ALPHA}"


Draw = Callable[..., Any]  # draw(size=..., rng=...)


def _case(name: str, law: Law, draw: Draw, n_batch: int = N_BATCH) -> Any:
    return pytest.param(law, draw, n_batch, id=name)


def _laplace(scale: Any) -> Any:
    return _case(f"laplace-{scale}", DiscreteLaplace(Fraction(scale)),
                 lambda **kw: samplers.discrete_laplace(scale, **kw))


def _gaussian(sigma: Any) -> Any:
    return _case(f"gaussian-sigma-{sigma}", DiscreteGaussian(Fraction(sigma) ** 2),
                 lambda **kw: samplers.discrete_gaussian(sigma, **kw))


def _geometric_scale(scale: Any, n_batch: int = N_BATCH) -> Any:
    return _case(f"geometric-scale-{scale}", Geometric(scale=Fraction(scale)),
                 lambda **kw: samplers.geometric(scale, **kw), n_batch)


def _geometric_p(p: Any) -> Any:
    return _case(f"geometric-p-{p}", Geometric(p=Fraction(p)), lambda **kw: samplers.geometric(p=p, **kw))


def _bernoulli(p: Any) -> Any:
    return _case(f"bernoulli-{p}", Bernoulli.rational(Fraction(p)), lambda **kw: samplers.bernoulli(p, **kw))


def _bernoulli_exp(x: Any) -> Any:
    return _case(f"bernoulli_exp-{x}", Bernoulli.exp_neg(Fraction(x)), lambda **kw: samplers.bernoulli_exp(x, **kw))


def _uniform(n: int, n_batch: int = N_BATCH) -> Any:
    return _case(f"uniform-{n}", Uniform(n), lambda **kw: samplers.uniform_below(n, **kw), n_batch)


CASES = [
    *(_laplace(s) for s in (Fraction(1, 1000), "0.3", 1, 10, "7/3", 1000, 10**6, 10**12)),
    *(_gaussian(s) for s in ("0.1", 1, 10, 1000)),
    _case("gaussian-variance-2", DiscreteGaussian(Fraction(2)),
          lambda **kw: samplers.discrete_gaussian(variance=2, **kw)),
    *(_geometric_scale(s) for s in ("0.5", "7/3", 10, 1000, 10**9)),
    _geometric_scale(2**60, n_batch=50_000),  # past 2**55: the Python-int (object) path
    *(_geometric_p(p) for p in ("0.5", "1/3", "1e-3", "0.999", 1)),
    *(_bernoulli(p) for p in (0, Fraction(1, 3), "0.999", 1)),
    *(_bernoulli_exp(x) for x in (0, "0.01", 1, 20)),
    *(_uniform(n) for n in (1, 2, 3, 10, 2**40 + 1)),
    _uniform(2**70 + 3, n_batch=50_000),  # past 2**63: the Python-int (object) path
]


@pytest.mark.parametrize(("law", "draw", "n_batch"), CASES)
def test_batch_draws_follow_the_exact_law(law: Law, draw: Draw, n_batch: int, request: pytest.FixtureRequest) -> None:
    """``size=n`` draws pass a G-test against the exact law (fixed seed, alpha = 1e-6)."""
    samples = draw(size=n_batch, rng=seeded("batch-" + request.node.callspec.id))
    assert samples.shape == (n_batch,)
    assert_fits(samples, law)


@pytest.mark.parametrize(("law", "draw", "n_batch"), CASES)
def test_scalar_draws_follow_the_exact_law(law: Law, draw: Draw, n_batch: int, request: pytest.FixtureRequest) -> None:
    """``size=None`` draws (pools, ``decide_one``, ``uniform_below_one``) pass the same G-test."""
    rng = seeded("scalar-" + request.node.callspec.id)
    samples = [draw(rng=rng) for _ in range(N_SCALAR)]
    assert all(type(v) is int for v in samples)
    assert_fits(np.array(samples, dtype=object), law)


def test_reference_laws_are_consistent() -> None:
    """The reference PMFs sum to their CDF differences and are tightly bounded (checks the checker)."""
    for law, a, b in ((DiscreteLaplace(Fraction(7, 3)), -30, 30), (Geometric(scale=Fraction(5)), -1, 60),
                      (Geometric(p=Fraction(1, 3)), -1, 60), (DiscreteGaussian(Fraction(2)), -12, 12)):
        total = law.pmf(a + 1)
        for k in range(a + 2, b + 1):
            total = total + law.pmf(k)
        mass = law.mass(a, b)
        assert total.lo <= mass.hi and mass.lo <= total.hi, law
        assert float(mass.hi - mass.lo) < 1e-40, law
        assert abs(float(law.mass(None, None)) - 1) < 1e-40
    laplace = DiscreteLaplace(Fraction(10))
    q = np.exp(-0.1)
    assert float(laplace.pmf(-3)) == pytest.approx((1 - q) / (1 + q) * q**3, rel=1e-12)
    gaussian = DiscreteGaussian(Fraction(1))
    weights = np.exp(-np.arange(-40, 41) ** 2 / 2.0)
    assert float(gaussian.pmf(2)) == pytest.approx(weights[42] / weights.sum(), rel=1e-12)


# --- rare paths, forced with a narrow comparison width -------------------------------------------


@pytest.fixture
def resolver_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts calls of the exact resolver (the ``u == L`` branch of every comparison)."""
    calls = [0]
    original = decide.resolve_below

    def counting(*args: Any) -> bool:
        calls[0] += 1
        return original(*args)

    monkeypatch.setattr(decide, "resolve_below", counting)
    monkeypatch.setattr(gaussian_module, "resolve_below", counting)
    return calls


NARROW_PLANS = [
    pytest.param(lambda: DiscreteLaplacePlan(10, width=4), DiscreteLaplace(Fraction(10)), id="laplace-10-width4"),
    pytest.param(lambda: DiscreteLaplacePlan("0.3", width=4), DiscreteLaplace(Fraction(3, 10)),
                 id="laplace-0.3-width4"),
    pytest.param(lambda: GeometricPlan(ExpRatio(Fraction(1, 100)), width=4), Geometric(scale=Fraction(100)),
                 id="geometric-100-width4"),
    pytest.param(lambda: DiscreteGaussianPlan(Fraction(4), width=4), DiscreteGaussian(Fraction(4)),
                 id="gaussian-variance4-width4"),
    pytest.param(lambda: bernoulli_module.rational_plan(Fraction(1, 3), width=3), Bernoulli.rational(Fraction(1, 3)),
                 id="bernoulli-1/3-width3"),
    pytest.param(lambda: BernoulliPlan(exp_neg(Fraction(1, 2)), width=4), Bernoulli.exp_neg(Fraction(1, 2)),
                 id="bernoulli_exp-1/2-width4"),
]


@pytest.mark.parametrize(("make_plan", "law"), NARROW_PLANS)
def test_narrow_width_plans_are_exact(make_plan: Callable[[], Any], law: Law, resolver_calls: list[int],
                                      request: pytest.FixtureRequest) -> None:
    """With 3-4 bit comparisons the resolver decides a large share of outcomes; the law stays exact."""
    plan = make_plan()
    samples = plan.draw(N_RARE, seeded("narrow-" + request.node.callspec.id))
    assert resolver_calls[0] > N_RARE // 20, f"resolver ran only {resolver_calls[0]} times"
    assert_fits(samples, law)


def test_narrow_geometric_plan_uses_a_splitting_level() -> None:
    """The scale-100 narrow plan above really exercises level rejection, not only digits."""
    plan = GeometricPlan(ExpRatio(Fraction(1, 100)), width=4)
    assert plan.levels and plan.levels[0].accept.width == 4


def test_narrow_bernoulli_decide_one_is_exact(resolver_calls: list[int]) -> None:
    """The scalar comparison (``Thresholds.decide_one``) with its resolver, at 3 bits."""
    plan = bernoulli_module.rational_plan(Fraction(1, 3), width=3)
    rng = seeded("narrow-decide-one")
    samples = [plan.draw_one(rng) for _ in range(N_RARE)]
    assert resolver_calls[0] > N_RARE // 20
    assert_fits(np.array(samples), Bernoulli.rational(Fraction(1, 3)))


def test_default_gaussian_plan_uses_128_bit_comparisons_and_is_exact() -> None:
    """Most Gaussian plans need the two-word (128-bit) comparison path: it is exact too."""
    plan = DiscreteGaussianPlan(Fraction(100))
    assert plan.width == 128 and plan.accept.nwords == 2
    assert_fits(plan.draw(N_BATCH, seeded("gaussian-128")), DiscreteGaussian(Fraction(100)))


def test_gaussian_past_a_capped_table_is_exact(monkeypatch: pytest.MonkeyPatch, resolver_calls: list[int]) -> None:
    """Very large sigma gets no full acceptance table; proposals past it are decided one by one, exactly."""
    monkeypatch.setattr(gaussian_module, "TABLE_LIMIT", 4)
    plan = DiscreteGaussianPlan(Fraction(25), width=4)
    assert plan.table_size <= 4 < plan.cutoff
    assert_fits(plan.draw(N_RARE, seeded("gaussian-capped")), DiscreteGaussian(Fraction(25)))
    assert resolver_calls[0] > N_RARE


def _with_few_digits(plan: GeometricPlan, digits: int) -> GeometricPlan:
    """The same law with only ``digits`` digits, so that ``H >> d != 0`` is a common event.

    Splitting ``H`` into ``digits`` low digits and ``H >> digits`` is exact for
    every ``digits``; the production plan only picks enough digits to make the
    top event negligible.
    """
    plan.digits = digits
    plan.digit_thresholds = plan.digit_thresholds[:digits]
    plan.top = Thresholds.of([plan.tail_ratio.power(1 << digits)], plan.width)
    return plan


@pytest.fixture
def top_branch_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the elements sent through ``GeometricPlan._add_top``."""
    calls = [0]
    original = GeometricPlan._add_top

    def counting(self: GeometricPlan, result: np.ndarray, top: np.ndarray, source: Any) -> np.ndarray:
        calls[0] += int(np.count_nonzero(top))
        return original(self, result, top, source)

    monkeypatch.setattr(GeometricPlan, "_add_top", counting)
    return calls


def test_geometric_top_branch_is_exact(top_branch_calls: list[int]) -> None:
    """``H >> d != 0`` (probability <= 2**-64 in production) made frequent: the law is unchanged."""
    plan = _with_few_digits(GeometricPlan(ExpRatio(Fraction(1, 100))), digits=2)
    assert plan.shift > 0  # the top branch must also respect the splitting levels
    samples = plan.draw(N_RARE, seeded("geometric-top"))
    assert top_branch_calls[0] > N_RARE // 50
    assert_fits(samples, Geometric(scale=Fraction(100)))


def test_laplace_top_branch_at_narrow_width_is_exact(top_branch_calls: list[int], resolver_calls: list[int]) -> None:
    """Top branch, levels and resolver together, through the Laplace sampler."""
    plan = DiscreteLaplacePlan(40, width=4)
    _with_few_digits(plan.magnitude, digits=1)
    samples = plan.draw(N_RARE, seeded("laplace-top-narrow"))
    assert top_branch_calls[0] > N_RARE // 50 and resolver_calls[0] > N_RARE // 20
    assert_fits(samples, DiscreteLaplace(Fraction(40)))


# --- meta-tests: the goodness-of-fit test can fail --------------------------------------------------


def test_gof_rejects_laplace_with_scale_5_percent_too_large() -> None:
    samples = samplers.discrete_laplace("10.5", size=N_BATCH, rng=seeded("meta-laplace"))
    assert gof_pvalue(samples, DiscreteLaplace(Fraction(10))) < ALPHA


def test_gof_rejects_gaussian_with_sigma_5_percent_too_large() -> None:
    samples = samplers.discrete_gaussian("10.5", size=N_BATCH, rng=seeded("meta-gaussian"))
    assert gof_pvalue(samples, DiscreteGaussian(Fraction(100))) < ALPHA


def test_gof_rejects_a_broken_resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    """A resolver that always answers "no" biases narrow-width plans: the rare-path tests would see it."""
    monkeypatch.setattr(decide, "resolve_below", lambda *args: False)
    samples = DiscreteLaplacePlan(10, width=4).draw(N_RARE, seeded("meta-resolver"))
    assert gof_pvalue(samples, DiscreteLaplace(Fraction(10))) < ALPHA


def test_gof_rejects_a_broken_top_branch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forgetting the geometric ``G'`` in ``H >> d = 1 + G'`` is caught by the top-branch test."""

    def broken(self: GeometricPlan, result: np.ndarray, top: np.ndarray, source: Any) -> np.ndarray:
        result[top] += 1 << (self.shift + self.digits)
        return result

    monkeypatch.setattr(GeometricPlan, "_add_top", broken)
    plan = _with_few_digits(GeometricPlan(ExpRatio(Fraction(1, 100))), digits=2)
    assert gof_pvalue(plan.draw(N_RARE, seeded("meta-top")), Geometric(scale=Fraction(100))) < ALPHA


def test_gof_rejects_one_impossible_value_hidden_in_a_pooled_tail() -> None:
    """The extreme-value checks catch what pooling tails would hide."""
    zeros = np.zeros(N_SCALAR, dtype=np.int64)
    assert gof_pvalue(zeros, DiscreteLaplace(Fraction(1, 1000))) > ALPHA
    zeros[123] = 1
    assert gof_pvalue(zeros, DiscreteLaplace(Fraction(1, 1000))) < ALPHA
    assert gof_pvalue(zeros, Bernoulli.rational(Fraction(0))) < ALPHA
    laplace = samplers.discrete_laplace(10, size=N_SCALAR, rng=seeded("meta-outlier"))
    laplace[7] = -2000
    assert gof_pvalue(laplace, DiscreteLaplace(Fraction(10))) < ALPHA

