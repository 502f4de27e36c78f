"""Private count of rows.

**Privacy map.** Adding or removing one person changes the number of rows
kept by at most ``m = max_contributions``: sensitivity ``m``. The release is
``n + Z`` with ``Z`` discrete Laplace of scale ``m / epsilon``
(``epsilon``-DP) or discrete Gaussian of variance ``m**2 / (2 rho)``
(``rho``-zCDP). Rows are counted whatever they hold (``None`` and NaN count
as rows). The noisy count is not clamped, so it can be negative.

``data`` is one column: a table (DataFrame), a 2-D array or a list of
row tuples is refused, never flattened into ``rows * columns`` "rows"
(:func:`securedp.lattice.columns.as_records`). With ``ids``, a row whose
person id is blank raises; in an analyst-facing session it is not counted.
Each person counts ``min(rows, m)``: which of their rows are kept does not
change the count, so a count draws no salt (unlike the other statistics
with ``ids``, :mod:`securedp.mechanisms.contributions`).

**Aggregate / noise** (:mod:`securedp.mechanisms.statistic`): step (1) is
:class:`CountAggregate` (the rows kept); step (2), :meth:`Count.noise_step`,
adds the noise to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from securedp.hazmat.bits.source import RandomSource
from securedp.lattice.columns import as_records
from securedp.mechanisms.contributions import bound_rows, check_max_contributions, refuse_rows
from securedp.mechanisms.noise import Cost, Noise, privacy_cost
from securedp.mechanisms.release import PreparedRelease
from securedp.mechanisms.statistic import Statistic, public_function, release_function


@dataclass(frozen=True)
class CountAggregate:
    """Step (1) of a count: the number of rows kept after contribution bounding."""

    rows: int


@dataclass(frozen=True)
class Count(Statistic[CountAggregate]):
    """The count's definition: ``rows + Z``, sensitivity ``max_contributions`` (see the module docstring)."""

    statistic = "count"
    cost: Cost
    max_contributions: int

    @classmethod
    def prepare(
        cls, data: Any, *, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1, ids: Any = None
    ) -> PreparedRelease:
        cost = privacy_cost(epsilon, rho)
        return cls(cost, check_max_contributions(max_contributions)).prepare_data(data, ids)

    @property
    def noise(self) -> Noise:
        return Noise(self.max_contributions, *self.cost)

    @property
    def parameters(self) -> dict[str, Any]:
        return {"lattice_step": 1, **self.noise.parameters()}

    def aggregate(self, data: Any, ids: Any = None) -> CountAggregate:
        records = as_records(data)
        refuse_rows(records)
        n = len(records)
        rule = bound_rows(n, ids, self.max_contributions)
        return CountAggregate(n if rule is None else rule.kept_rows)

    def sampler(self, aggregate: CountAggregate) -> Callable[[RandomSource], int]:
        noise = self.noise
        return lambda source: int(aggregate.rows + noise.draw(source))


prepare_count = public_function(Count.prepare, "prepare_count",
                                """Validate and price a count; nothing is drawn until ``.execute(rng)``.""")
count = release_function(prepare_count, "count", """Release the number of rows of ``data`` with ``epsilon``-DP \
(or ``rho``-zCDP); see the module docstring.""")
