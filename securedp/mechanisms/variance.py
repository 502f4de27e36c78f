"""Private bounded (population) variance from three noisy moments.

Records become units ``u`` in ``[lo_u, hi_u]`` exactly as for
:mod:`securedp.mechanisms.sum`; ``c`` and ``half`` are as in
:mod:`securedp.mechanisms.moments`, ``m = max_contributions`` and
``h = max(half, 1)``:

* noisy count ``N~ = N + Z1``: sensitivity ``m``;
* noisy centred sum ``S1~ = sum(u - c) + Z2``: sensitivity ``m * h``;
* noisy centred sum of squares ``S2~ = sum((u - c)**2) + Z3``: sensitivity ``m * h**2``;

each costing ``epsilon / 3`` (Laplace scale ``sensitivity / (epsilon / 3)``)
or ``rho / 3`` (Gaussian variance ``sensitivity**2 / (2 * rho / 3)``), so
the total is exactly the declared budget (basic composition). The release
is the post-processing ``step**2 * clamp(S2~ / n - (S1~ / n)**2, 0, ((hi_u - lo_u) / 2)**2)``
with ``n = max(N~, 1)`` (the clamp bound is the largest variance of data in
``[lo, hi]``), an exact Fraction.
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


def prepare_variance(
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
    """Validate and price a bounded variance; nothing is drawn until ``.execute(rng)``."""
    eps, rho_q = privacy_cost(epsilon, rho)
    m = check_max_contributions(max_contributions)
    rec = lattice_records(data, bounds=bounds, lattice=lattice, ids=ids, max_contributions=m, missing=missing, fill=fill)
    c, half = centre(rec)
    n = int(rec.units.size)
    s1, s2 = centred_sums(rec, c, half) if n else (0, 0)
    h = max(half, 1)
    share_eps, share_rho = split(eps, rho_q, 3)
    count_noise = Noise(m, share_eps, share_rho)
    sum_noise = Noise(m * h, share_eps, share_rho)
    square_noise = Noise(m * h * h, share_eps, share_rho)
    top = Fraction(rec.hi_u - rec.lo_u, 2) ** 2

    def run(source: RandomSource) -> Release:
        noisy_n = max(n + count_noise.draw(source), 1)
        noisy_s1 = s1 + sum_noise.draw(source)
        noisy_s2 = s2 + square_noise.draw(source)
        var_u = clamp_fraction(Fraction(noisy_s2, noisy_n) - Fraction(noisy_s1, noisy_n) ** 2, 0, top)
        return Release(
            value=exact_value(var_u * rec.lattice.step**2),
            statistic="variance",
            mechanism=count_noise.mechanism,
            parameters={
                **rec.parameters(),
                "centre_units": c,
                "budget_split": "count 1/3, centred sum 1/3, centred sum of squares 1/3",
                **count_noise.parameters("count_"),
                **sum_noise.parameters("sum_"),
                **square_noise.parameters("sum_of_squares_"),
            },
            epsilon=eps,
            rho=rho_q,
            max_contributions=m,
            source=source.describe(),
        )

    return PreparedRelease("variance", eps, rho_q, run, canonical_input("variance", rows=n, centred_sum_units=s1, centred_sum_of_squares_units=s2))


def variance(
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
    """Release the population variance of ``data`` clamped to ``bounds``; see the module docstring."""
    return prepare_variance(
        data, bounds=bounds, epsilon=epsilon, rho=rho, max_contributions=max_contributions, ids=ids,
        lattice=lattice, missing=missing, fill=fill,
    ).execute(rng)
