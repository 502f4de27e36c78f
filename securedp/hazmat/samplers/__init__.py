"""Exact samplers. One module per law, each stating its law, algorithm and proof.

=====================  ===================================================
module                 law
=====================  ===================================================
``uniform``            uniform on {0, ..., n-1}
``bernoulli``          Bernoulli(p), rational p
``bernoulli_exp``      Bernoulli(exp(-x)), rational x >= 0
``geometric``          P(k) = (1-q) q**k, q = exp(-1/scale) or 1 - p
``discrete_laplace``   P(k) proportional to exp(-|k|/scale)
``discrete_gaussian``  P(k) proportional to exp(-k**2 / (2 sigma**2))
``categorical``        P(i, j) proportional to exp(-rate * g_i), j < m_i
``coins``              independent Bernoulli(exp(-rate * g_i)); a random order
=====================  ===================================================

``decide`` holds the one comparison they all rest on, ``plan`` the protocols
every prepared sampler satisfies, ``pool`` the pools that serve scalar draws,
``params`` argument checks and plan caches; ``envelope`` and ``slots`` the
tables of the selection sampler.

What the mechanisms use, under these documented names:

* :class:`ExpCategorical`: one exact draw with weights ``exp(-rate * g_i)``
  (exponential mechanism, quantiles);
* :class:`FloatGaps`: float64 scores read exactly, as gaps for it;
* :class:`ExpCoins` and :func:`first_in_random_order`: the coins and the
  random order of permute-and-flip;
* :class:`PlanCache` and :func:`check_size`: a cache of plans per parameter as
  the caller wrote it, and the check of a ``size`` argument.
"""

from securedp.hazmat.samplers.bernoulli import bernoulli
from securedp.hazmat.samplers.bernoulli_exp import bernoulli_exp
from securedp.hazmat.samplers.categorical import ExpCategorical
from securedp.hazmat.samplers.coins import ExpCoins, first_in_random_order
from securedp.hazmat.samplers.discrete_gaussian import discrete_gaussian
from securedp.hazmat.samplers.discrete_laplace import discrete_laplace
from securedp.hazmat.samplers.envelope import FloatGaps
from securedp.hazmat.samplers.geometric import geometric
from securedp.hazmat.samplers.params import PlanCache, check_size
from securedp.hazmat.samplers.plan import Plan, SelectionPlan
from securedp.hazmat.samplers.uniform import uniform_below

__all__ = [
    "ExpCategorical", "ExpCoins", "FloatGaps", "Plan", "PlanCache", "SelectionPlan", "bernoulli", "bernoulli_exp",
    "check_size", "discrete_gaussian", "discrete_laplace", "first_in_random_order", "geometric", "uniform_below",
]
