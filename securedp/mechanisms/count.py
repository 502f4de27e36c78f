"""Private count of rows.

**Privacy map.** Adding or removing one person changes the number of rows
kept by at most ``m = max_contributions``: sensitivity ``m``. The release is
``n + Z`` with ``Z`` discrete Laplace of scale ``m / epsilon``
(``epsilon``-DP) or discrete Gaussian of variance ``m**2 / (2 rho)``
(``rho``-zCDP). Rows are counted whatever they hold (``None`` and NaN count
as rows). The noisy count is not clamped, so it can be negative.

``data`` is one column: a table (DataFrame), a 2-D array or a list of
row tuples is refused, never flattened into ``rows * columns`` "rows"
(:func:`securedp.lattice.screen.as_records`). With ``ids``, a row whose
person id is blank raises; in an analyst-facing session it is not counted.
"""

from __future__ import annotations

from typing import Any

from securedp.hazmat.bits.source import RandomSource
from securedp.lattice.screen import as_records
from securedp.mechanisms.contributions import bound_rows, check_max_contributions, refuse_rows
from securedp.mechanisms.noise import Noise, privacy_cost
from securedp.mechanisms.release import PreparedRelease, Release, canonical_input


def prepare_count(
    data: Any, *, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1, ids: Any = None
) -> PreparedRelease:
    """Validate and price a count; nothing is drawn until ``.execute(rng)``."""
    eps, rho_q = privacy_cost(epsilon, rho)
    m = check_max_contributions(max_contributions)
    records = as_records(data)
    refuse_rows(records)
    n = len(records)
    keep = bound_rows(n, ids, m)
    true_count = n if keep is None else int(keep.sum())
    noise = Noise(m, eps, rho_q)

    def run(source: RandomSource) -> Release:
        return Release(
            value=true_count + noise.draw(source),
            statistic="count",
            mechanism=noise.mechanism,
            parameters={"lattice_step": 1, **noise.parameters()},
            epsilon=eps,
            rho=rho_q,
            max_contributions=m,
            source=source.describe(),
        )

    return PreparedRelease("count", eps, rho_q, run, canonical_input("count", rows=true_count))


def count(
    data: Any,
    *,
    epsilon: Any = None,
    rho: Any = None,
    max_contributions: Any = 1,
    ids: Any = None,
    rng: RandomSource | None = None,
) -> Release:
    """Release the number of rows of ``data`` with ``epsilon``-DP (or ``rho``-zCDP); see the module docstring."""
    return prepare_count(data, epsilon=epsilon, rho=rho, max_contributions=max_contributions, ids=ids).execute(rng)
