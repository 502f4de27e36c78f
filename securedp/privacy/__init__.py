"""The privacy layer: what a release costs and the noise it buys, below every statistic, engine and planner.

* :mod:`securedp.privacy.cost`: :class:`~securedp.privacy.cost.Cost` (a currency, an exact amount, and a
  delta for a release that spends one) and :class:`~securedp.privacy.cost.Currency`; ``Cost.of`` is the one
  check of ``epsilon=`` / ``rho=`` arguments.
* :mod:`securedp.privacy.noise`: :class:`~securedp.privacy.noise.Noise`, an integer noise whose law
  (:class:`~securedp.privacy.noise.Law`: discrete Laplace or discrete Gaussian) is a field, calibrated to a
  cost and a sensitivity; every noisy integer securedp releases is drawn through it.
* :mod:`securedp.privacy.accuracy`: the proven half-widths of those laws (directed rounding).
* :mod:`securedp.privacy.conversions`: pure DP, zCDP and (epsilon, delta)-DP, converted conservatively.

It imports only :mod:`securedp.hazmat` (exact arithmetic and the samplers).
"""
