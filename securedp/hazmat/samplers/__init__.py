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
=====================  ===================================================

``decide`` holds the one comparison they all rest on, ``pool`` the pools
that serve scalar draws, ``params`` argument checks and plan caches.
"""

from securedp.hazmat.samplers.bernoulli import bernoulli
from securedp.hazmat.samplers.bernoulli_exp import bernoulli_exp
from securedp.hazmat.samplers.discrete_gaussian import discrete_gaussian
from securedp.hazmat.samplers.discrete_laplace import discrete_laplace
from securedp.hazmat.samplers.geometric import geometric
from securedp.hazmat.samplers.uniform import uniform_below

__all__ = ["bernoulli", "bernoulli_exp", "discrete_gaussian", "discrete_laplace", "geometric", "uniform_below"]
