"""What a rho-priced exponential-mechanism selection costs, and the ``epsilon`` a share of ``rho`` buys.

An ``epsilon``-DP exponential mechanism is ``epsilon``-bounded range, hence ``rho(epsilon)``-zCDP for the certified
sharp bounded-range bound (:mod:`securedp.privacy.bounded_range_zcdp`, at most ``epsilon**2 / 8``). Earlier versions
converted by ``epsilon**2 / 8`` and, before them, ``epsilon**2 / 2``; a record states the conversion it ran by
(``"conversion"``), and replay re-runs it by that one (the rule ``conversion`` of
:class:`~securedp.mechanisms.record_rules.RecordRules`, where the conversions are defined). Used by the quantiles
(:mod:`securedp.mechanisms.quantile`), their recursive split, the trimmed mean's trim points and the tables.
"""

from __future__ import annotations

import math
from fractions import Fraction

from securedp.mechanisms.record_rules import (
    EARLIER_ZCDP_CONVERSION,
    EIGHTH_ZCDP_CONVERSION,
    ZCDP_CONVERSION,
    current_rules,
)
from securedp.privacy.bounded_range_zcdp import bounded_range_epsilon
from securedp.privacy.conversions import bounded_range_to_zcdp
from securedp.privacy.cost import Cost

_DIVISORS = {EIGHTH_ZCDP_CONVERSION: 8, EARLIER_ZCDP_CONVERSION: 2}
_CELL_GRID = 1 << 32


def zcdp_of_selection(epsilon: Fraction) -> Fraction:
    """The zCDP of one ``epsilon``-DP exponential-mechanism selection under the conversion in force:
    :func:`~securedp.privacy.conversions.bounded_range_to_zcdp` (or ``epsilon**2 / 8``, ``epsilon**2 / 2`` under
    an earlier one's rules, :func:`~securedp.mechanisms.record_rules.current_rules`)."""
    conversion = current_rules().conversion
    if conversion == ZCDP_CONVERSION:
        return bounded_range_to_zcdp(epsilon)
    return epsilon * epsilon / _DIVISORS[conversion]


def selection_epsilon(cost: Cost, k: int = 1) -> Fraction:
    """The ``epsilon`` of one exponential-mechanism selection costing ``cost``, in each of ``k`` cells a
    person can change: ``epsilon / k``; or for ``rho`` the ``j / 2**32`` with ``k`` times its certified sharp
    zCDP at most ``rho`` that :func:`~securedp.privacy.bounded_range_zcdp.bounded_range_epsilon` gives (within
    ``2**-10`` of the largest; an ``epsilon``-DP exponential mechanism is ``epsilon``-bounded range:
    :func:`~securedp.privacy.conversions.bounded_range_to_zcdp`; and the ``k`` cells compose); under
    an earlier conversion's rules, the largest with ``k * (j / 2**32)**2 / d <= rho``, exactly
    ``j = isqrt(floor(d * rho * 2**64 / k))`` for ``d = 8`` or ``2``. Raises if ``rho`` is too small for any
    positive ``j``."""
    if cost.epsilon is not None:
        return cost.epsilon / k
    rho = cost.rho
    assert rho is not None
    conversion = current_rules().conversion
    if conversion == ZCDP_CONVERSION:
        j = bounded_range_epsilon(rho / k, _CELL_GRID)
    else:
        divisor = _DIVISORS[conversion]
        j = math.isqrt((divisor * rho.numerator * _CELL_GRID * _CELL_GRID) // (k * rho.denominator))
    if j == 0:
        raise ValueError(f"a selection's share of rho ({rho}) is too small for {k} cell(s) per person: its "
                         "exponential mechanism would run at epsilon 0")
    cell = Fraction(j, _CELL_GRID)
    assert k * zcdp_of_selection(cell) <= rho
    return cell

