"""Private bounded mean from two noisy moments.

Records become units ``u`` in ``[lo_u, hi_u]`` exactly as for
:mod:`securedp.mechanisms.sum`. With the public centre ``c`` and
``half = max(hi_u - c, c - lo_u)`` (:mod:`securedp.mechanisms.moments`):

* noisy count ``N~ = N + Z1``: sensitivity ``m``, cost ``epsilon / 2``;
* noisy centred sum ``S~ = sum(u - c) + Z2``: sensitivity ``m * max(half, 1)``,
  cost ``epsilon / 2``;

(``m = max_contributions``; Laplace scales ``sensitivity / (epsilon / 2)``,
or with ``rho`` Gaussian variances ``sensitivity**2 / (2 * rho / 2)``). By
basic composition the pair is ``epsilon``-DP (``rho``-zCDP): the total
charged is exactly the declared budget. The released mean is the
post-processing ``step * clamp(c + S~ / max(N~, 1), lo_u, hi_u)``, an exact
Fraction in ``[lo, hi]``; the set of possible outputs does not depend on the data.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from securedp.hazmat.bits.source import RandomSource
from securedp.mechanisms.contributions import check_max_contributions
from securedp.mechanisms.moments import centre, centred_sums, clamp_fraction
from securedp.mechanisms.noise import Noise, privacy_cost, split
from securedp.mechanisms.records import exact_value, lattice_records
from securedp.mechanisms.release import PreparedRelease, Release, canonical_input


def prepare_mean(
    data: Any,
    *,
    bounds: Any = None,
    epsilon: Any = None,
    rho: Any = None,
    max_contributions: Any = 1,
    ids: Any = None,
    lattice: Any = None,
    missing: str = "raise",
    fill: Any = None,
) -> PreparedRelease:
    """Validate and price a bounded mean; nothing is drawn until ``.execute(rng)``."""
    eps, rho_q = privacy_cost(epsilon, rho)
    m = check_max_contributions(max_contributions)
    rec = lattice_records(data, bounds=bounds, lattice=lattice, ids=ids, max_contributions=m, missing=missing, fill=fill)
    c, half = centre(rec)
    n = int(rec.units.size)
    s1, _ = centred_sums(rec, c, half) if n else (0, 0)
    share_eps, share_rho = split(eps, rho_q, 2)
    count_noise = Noise(m, share_eps, share_rho)
    sum_noise = Noise(m * max(half, 1), share_eps, share_rho)

    def run(source: RandomSource) -> Release:
        noisy_n = n + count_noise.draw(source)
        noisy_s = s1 + sum_noise.draw(source)
        mean_u = clamp_fraction(c + Fraction(noisy_s, max(noisy_n, 1)), rec.lo_u, rec.hi_u)
        return Release(
            value=exact_value(mean_u * rec.lattice.step),
            statistic="mean",
            mechanism=count_noise.mechanism,
            parameters={
                **rec.parameters(),
                "centre_units": c,
                "budget_split": "count 1/2, centred sum 1/2",
                **count_noise.parameters("count_"),
                **sum_noise.parameters("sum_"),
            },
            epsilon=eps,
            rho=rho_q,
            max_contributions=m,
            source=source.describe(),
        )

    return PreparedRelease("mean", eps, rho_q, run, canonical_input("mean", rows=n, centred_sum_units=s1))


def mean(
    data: Any,
    *,
    bounds: Any = None,
    epsilon: Any = None,
    rho: Any = None,
    max_contributions: Any = 1,
    ids: Any = None,
    lattice: Any = None,
    missing: str = "raise",
    fill: Any = None,
    rng: RandomSource | None = None,
) -> Release:
    """Release the mean of ``data`` clamped to ``bounds``; see the module docstring for the privacy map."""
    return prepare_mean(
        data, bounds=bounds, epsilon=epsilon, rho=rho, max_contributions=max_contributions, ids=ids,
        lattice=lattice, missing=missing, fill=fill,
    ).execute(rng)
