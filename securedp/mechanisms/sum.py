"""Private bounded sum on a fixed-point lattice.

Each record is screened, clamped to ``bounds=(lo, hi)`` (snapped inward onto
the lattice) and rounded to units ``u`` in ``[lo_u, hi_u]`` (see
:mod:`securedp.lattice`); the exact integer sum ``S`` of the units is taken.

**Privacy map.** Adding or removing one person (at most
``m = max_contributions`` rows) changes ``S`` by at most
``Delta = m * max(|lo_u|, |hi_u|, 1)`` units (rounding is included, because
the rounded units never leave ``[lo_u, hi_u]``). The release is
``(S + Z) * step`` with ``Z`` discrete Laplace of scale ``Delta / epsilon``
(``epsilon``-DP) or discrete Gaussian of variance ``Delta**2 / (2 rho)``
(``rho``-zCDP). The output is a multiple of ``step``, whatever the data.
"""

from __future__ import annotations

from typing import Any

from securedp.hazmat.bits.source import RandomSource
from securedp.lattice import exact_sum
from securedp.mechanisms.contributions import check_max_contributions
from securedp.mechanisms.noise import Noise, privacy_cost
from securedp.mechanisms.records import exact_value, lattice_records
from securedp.mechanisms.release import PreparedRelease, Release, canonical_input


def prepare_sum(
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
    """Validate and price a bounded sum; nothing is drawn until ``.execute(rng)``."""
    eps, rho_q = privacy_cost(epsilon, rho)
    m = check_max_contributions(max_contributions)
    rec = lattice_records(data, bounds=bounds, lattice=lattice, ids=ids, max_contributions=m, missing=missing, fill=fill)
    total = exact_sum(rec.units, rec.bound)
    noise = Noise(m * max(rec.bound, 1), eps, rho_q)

    def run(source: RandomSource) -> Release:
        noisy = total + noise.draw(source)
        return Release(
            value=exact_value(rec.lattice.value(noisy)),
            statistic="sum",
            mechanism=noise.mechanism,
            parameters={**rec.parameters(), **noise.parameters()},
            epsilon=eps,
            rho=rho_q,
            max_contributions=m,
            source=source.describe(),
        )

    return PreparedRelease("sum", eps, rho_q, run, canonical_input("sum", rows=rec.units.size, sum_units=total))


def sum(  # noqa: A001 - the public name mirrors the statistic
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
    """Release the sum of ``data`` clamped to ``bounds`` with ``epsilon``-DP (or ``rho``-zCDP); see the module docstring."""
    return prepare_sum(
        data, bounds=bounds, epsilon=epsilon, rho=rho, max_contributions=max_contributions, ids=ids,
        lattice=lattice, missing=missing, fill=fill,
    ).execute(rng)
