"""The rules that changed between the versions that wrote audit records: one object, one scope, one reading.

A release runs by this version's rules; a record written by an earlier version ran by that version's, and a replay
must re-run it by them to reproduce its bytes. Each such rule is a field of :class:`RecordRules` (its default is
this version's rule), the rules in force are :func:`current_rules` (this version's, or those entered with
:func:`rules_scope`), and :meth:`RecordRules.stated` reads from a record's ``parameters`` the rules it states, the
one definition of "which version's rules does this record state" (``securedp.audit.replay``). The rules:

* ``conversion``: how a ``rho``-priced exponential-mechanism selection derives its ``epsilon`` and its zCDP
  (:mod:`securedp.mechanisms.selection_price`): :data:`ZCDP_CONVERSION`, the certified sharp bounded-range bound
  (issue 42); earlier :data:`EIGHTH_ZCDP_CONVERSION` (``epsilon**2 / 8``) and, in securedp 0.2 and earlier,
  :data:`EARLIER_ZCDP_CONVERSION` (``epsilon**2 / 2``). A record states it as ``"conversion"``.
* ``charges_asked_delta``: whether a thresholding plan charges the ``delta`` asked (before issue 42 (0.2.0)) instead of
  the ``delta`` its threshold proves (:mod:`securedp.mechanisms.threshold_delta`, since issue 42 (0.2.0)). A record of
  the proven charge states ``"delta_asked"`` beside its ``"delta"``; an earlier one only ``"delta"``.
* ``quantile_draw``: :data:`PERMUTE_AND_FLIP` (since issue 42 (0.2.0): an ``epsilon``-priced quantile selection over
  few candidates draws by permute-and-flip, :mod:`securedp.mechanisms.quantile_draw`) or :data:`EXPONENTIAL`
  (before: every selection by the exponential mechanism). A record states each draw as ``"selection"``.
* ``tie_margin``: whether a quantile's score gives a block of tied records this version's tie margin ``c``
  (:mod:`securedp.mechanisms.rank_utility`; issue 42) or none (``c = 0``, as before). A record of the margin
  states ``"tie_margin"``; an earlier one none.

One field is not a version's rule but a pricing choice, kept here because the draw reads it beside the rule:
``rho_budget``, set by :meth:`securedp.Session.prepare` for a session whose budget is in ``rho``, where every
quantile selection draws by the exponential mechanism (bounded range: a quarter of the charge). A record states
it by its draws (``"selection": "exponential"``), so a replay re-runs it by the ``quantile_draw`` it states.

Adding a rule is one field (its default this version's rule) and its reading in :meth:`RecordRules.stated`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

ZCDP_CONVERSION = ("the epsilon-DP exponential mechanism is epsilon-bounded range, hence rho-zCDP for the sharp "
                   "bounded-range rho, certified from above (securedp.privacy.bounded_range_zcdp; Cesar and Rogers "
                   "2021)")
"""The conversion of this version's rho-priced selections."""
EIGHTH_ZCDP_CONVERSION = ("the epsilon-DP exponential mechanism is epsilon-bounded range, hence epsilon**2/8-zCDP "
                          "(Durfee and Rogers 2019; Cesar and Rogers 2021)")
"""The conversion recorded by the rho-priced selections of the versions that charged ``epsilon**2 / 8``."""
EARLIER_ZCDP_CONVERSION = "epsilon-DP is epsilon**2/2-zCDP (Bun and Steinke 2016, Prop. 1.4)"
"""The conversion recorded by the rho-priced selections of securedp 0.2 and earlier."""
CONVERSIONS = (ZCDP_CONVERSION, EIGHTH_ZCDP_CONVERSION, EARLIER_ZCDP_CONVERSION)
"""Every conversion a record may state, this version's first."""
EXPONENTIAL = "exponential"
"""A selection drawn by the exponential mechanism (as a record states it); as a rule, every quantile selection."""
PERMUTE_AND_FLIP = "permute_and_flip"
"""A selection drawn by permute-and-flip (as a record states it); as a rule, this version's choice of draw."""
QUANTILE_DRAWS = (PERMUTE_AND_FLIP, EXPONENTIAL)
"""Every quantile draw rule, this version's first."""


@dataclass(frozen=True)
class RecordRules:
    """The rules a release runs by (module docstring); the defaults are this version's."""

    conversion: str = ZCDP_CONVERSION
    """How a rho-priced selection converts (one of :data:`CONVERSIONS`)."""
    charges_asked_delta: bool = False
    """A thresholding plan charges the ``delta`` asked, as before issue 42 (0.2.0) (else the ``delta`` it proves)."""
    quantile_draw: str = PERMUTE_AND_FLIP
    """:data:`PERMUTE_AND_FLIP` (since issue 42 (0.2.0)) or :data:`EXPONENTIAL` (every selection, as before)."""
    tie_margin: bool = True
    """A quantile's score gives tied records the tie margin (else ``c = 0``, as before it)."""
    rho_budget: bool = False
    """Not a version's rule: the release is charged to a ``rho`` budget, so quantile selections draw by the
    exponential mechanism (set by :meth:`securedp.Session.prepare`; never read from a record)."""

    def __post_init__(self) -> None:
        if self.conversion not in CONVERSIONS:
            raise ValueError(f"unknown selection conversion {self.conversion!r}")
        if self.quantile_draw not in QUANTILE_DRAWS:
            raise ValueError(f"unknown quantile selection rule {self.quantile_draw!r}")

    @classmethod
    def stated(cls, parameters: Any) -> RecordRules:
        """The rules a record's ``parameters`` state (this version's where they state none): the ones to re-run it
        by."""
        return cls(conversion=_stated_conversion(parameters), charges_asked_delta=_states_asked_delta(parameters),
                   quantile_draw=_stated_draw(parameters), tie_margin=_states_tie_margin(parameters))


# the default is immutable (a frozen dataclass), which B039 cannot see
_RULES: ContextVar[RecordRules] = ContextVar("securedp_record_rules", default=RecordRules())  # noqa: B039


@contextmanager
def rules_scope(rules: RecordRules) -> Iterator[None]:
    """Within it, releases run by ``rules`` (an earlier version's: to replay a record that states them)."""
    token = _RULES.set(rules)
    try:
        yield
    finally:
        _RULES.reset(token)


def current_rules() -> RecordRules:
    """The rules in force: this version's, or those of the innermost :func:`rules_scope`."""
    return _RULES.get()


def _stated_conversion(parameters: Any) -> str:
    """The conversion of a rho-priced selection that ``parameters`` state (anywhere in them: one column's, or each
    aggregation's cells), or this version's when none is stated."""
    if isinstance(parameters, dict):
        if parameters.get("conversion") in CONVERSIONS:
            return str(parameters["conversion"])
        parameters = list(parameters.values())
    if isinstance(parameters, list):
        for item in parameters:
            stated = _stated_conversion(item)
            if stated != ZCDP_CONVERSION:
                return stated
    return ZCDP_CONVERSION


def _states_asked_delta(parameters: Any) -> bool:
    """Whether ``parameters`` charged the ``delta`` asked: a ``delta`` and no ``delta_asked`` (before issue 42, in
    0.2.0)."""
    return isinstance(parameters, dict) and "delta" in parameters and "delta_asked" not in parameters


def _stated_draw(parameters: Any) -> str:
    """The quantile draw rule to re-run ``parameters`` by: this version's if they state a permute-and-flip draw
    anywhere (``"selection": "permute_and_flip"``), else every selection by the exponential mechanism, as the
    record's version drew them (a record of this version that states none drew none by permute-and-flip, so both
    rules re-run it alike)."""
    if isinstance(parameters, dict):
        if parameters.get("selection") == PERMUTE_AND_FLIP:
            return PERMUTE_AND_FLIP
        parameters = list(parameters.values())
    if isinstance(parameters, list) and any(_stated_draw(item) == PERMUTE_AND_FLIP for item in parameters):
        return PERMUTE_AND_FLIP
    return EXPONENTIAL


def _states_tie_margin(parameters: Any) -> bool:
    """Whether ``parameters`` were drawn with the tie margin: they state a ``"tie_margin"`` anywhere (one column's,
    or each aggregation's cells); every record before the margin states none and was drawn at ``c = 0``."""
    if isinstance(parameters, dict):
        if "tie_margin" in parameters:
            return True
        parameters = list(parameters.values())
    return isinstance(parameters, list) and any(_states_tie_margin(item) for item in parameters)
