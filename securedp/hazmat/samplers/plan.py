"""What a prepared sampler is: the :class:`Plan` and :class:`SelectionPlan` protocols, stated once.

A *plan* holds everything a law needs that does not depend on the random
bits: parsed exact parameters, threshold tables, envelope masses. It is built
once (the public samplers cache plans per parameter,
:class:`~securedp.hazmat.samplers.params.PlanCache`) and then drawn from many
times, each draw reading fresh bits from a
:class:`~securedp.hazmat.bits.source.RandomSource`. Every plan states
:attr:`slow_path_bound`: an upper bound on the probability that one draw does
work that depends on the value drawn (a comparison resolved beyond its first
word, a rare branch); outside that event a draw's work is the same whatever
its value.

=============================================================  ==================
plan                                                           protocol
=============================================================  ==================
:class:`~securedp.hazmat.samplers.bernoulli.BernoulliPlan`     :class:`Plan`
:class:`~securedp.hazmat.samplers.geometric.GeometricPlan`     :class:`Plan`
:class:`~securedp.hazmat.samplers.discrete_laplace.DiscreteLaplacePlan`    :class:`Plan`
:class:`~securedp.hazmat.samplers.discrete_gaussian.DiscreteGaussianPlan`  :class:`Plan`
:class:`~securedp.hazmat.samplers.categorical.ExpCategorical`  :class:`SelectionPlan`
=============================================================  ==================
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from securedp.hazmat.bits.source import RandomSource


@runtime_checkable
class Plan(Protocol):
    """A prepared sampler of integer values: ``draw(n, source)`` gives ``n`` independent draws."""

    slow_path_bound: float
    """Upper bound on the probability that one draw does value-dependent work."""

    def draw(self, n: int, source: RandomSource) -> np.ndarray:
        """``n`` independent draws from the plan's law (int64, or Python ints in an object array)."""
        ...


@runtime_checkable
class SelectionPlan(Protocol):
    """A prepared sampler of one entry ``(i, j)`` of a finite, weighted list of entries."""

    slow_path_bound: float
    """Upper bound on the probability that one draw does value-dependent work."""

    def draw(self, source: RandomSource) -> tuple[int, int]:
        """One independent draw: the entry ``i`` and the offset ``j`` inside it."""
        ...
