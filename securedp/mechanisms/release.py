"""The result of a private release: an exact value and everything needed to audit it."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping

from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.exact.rational import format_rational


def jsonable(value: Any) -> Any:
    """A JSON-ready copy of ``value``: rationals become ``"num/den"`` strings (integers stay ints)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else format_rational(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


@dataclass(frozen=True)
class Release:
    """A published statistic.

    * ``value``: the exact released value (an ``int``, a ``Fraction``, or for
      a histogram a tuple of them); ``float(release)`` gives a float for
      display, never for further exact work.
    * ``statistic``: what was released (``"count"``, ``"sum"``, ``"median"`` ...).
    * ``mechanism``: the noise or selection mechanism (``"discrete_laplace"``,
      ``"discrete_gaussian"``, ``"exponential"`` ...).
    * ``parameters``: its exact parameters (scale, variance, sensitivity,
      bounds, lattice step ...), each an int, ``Fraction`` or string.
    * ``epsilon`` / ``rho``: the privacy cost charged, an exact rational
      (one of them is ``None``), for ``max_contributions`` rows per person.
    * ``labels``: for a histogram, the declared categories or bins, in order.
    """

    value: Any
    statistic: str
    mechanism: str
    parameters: Mapping[str, Any]
    epsilon: Fraction | None
    rho: Fraction | None
    max_contributions: int
    labels: tuple[Any, ...] | None = None
    source: Mapping[str, Any] = field(default_factory=dict)

    def __float__(self) -> float:
        if isinstance(self.value, tuple):
            raise TypeError("a histogram release has several values; use .value or .floats()")
        return float(self.value)  # float-ok: display only

    def floats(self) -> tuple[float, ...]:
        """The released values as floats, for display."""
        values = self.value if isinstance(self.value, tuple) else (self.value,)
        return tuple(float(v) for v in values)  # float-ok: display only

    def record(self) -> dict[str, Any]:
        """A JSON-ready dict describing the release exactly (rationals as ``"num/den"``)."""
        return {
            "statistic": self.statistic,
            "value": jsonable(self.value),
            "labels": jsonable(self.labels) if self.labels is not None else None,
            "mechanism": self.mechanism,
            "parameters": jsonable(dict(self.parameters)),
            "epsilon": jsonable(self.epsilon),
            "rho": jsonable(self.rho),
            "max_contributions": self.max_contributions,
            "source": jsonable(dict(self.source)),
        }


@dataclass(frozen=True)
class PreparedRelease:
    """A release that has been validated and priced but has drawn nothing yet.

    Every mechanism is built in two steps so that accounting can come in
    between: ``prepare_*`` checks every input (raising before anything is
    drawn or charged) and computes the exact privacy cost; :meth:`execute`
    then draws the noise and returns the :class:`Release`. A ``Session``
    charges ``epsilon``/``rho`` first, then executes, and refunds if
    execution fails. ``epsilon`` is set for pure-DP mechanisms and ``rho``
    for zCDP ones (the other is ``None``).
    """

    statistic: str
    epsilon: Fraction | None
    rho: Fraction | None
    run: Any  # Callable[[RandomSource], Release]

    def execute(self, rng: Any = None) -> Release:
        """Draw the noise from ``rng`` (default: the system source) and return the release."""
        return self.run(resolve_source(rng))
