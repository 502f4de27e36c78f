"""The audit record of one release: a typed class that every producer writes and the verifier parses.

:meth:`securedp.Release.record` is ``ReleaseRecord.of(release).to_json()``:
a JSON object with, in this order,

==================== ===========================================================
field                content
==================== ===========================================================
``format``           the record format, :data:`FORMAT` (absent: format 1, written by
                     securedp 0.1, whose one-column releases had a record of their own)
``statistic``        what was released, a non-empty string
``value``            the exact value (an integer, a ``"num/den"`` string, or a list)
``labels``           a histogram's declared categories or bins, else ``null``
``mechanism``        the noise or selection mechanism, a non-empty string
``parameters``       an object of exact parameters; for a release of data (a table, or one
                     column: the one-cell table of it) the table's: ``group_by``,
                     ``keys``, ``max_groups``, ``max_rows``, ``privacy_unit``, ``alpha``,
                     ``shares``, ``salt_commitment`` and each aggregation's record under
                     its name (``"data_sum": {"noise": [...], "lattice_step": ...}``)
``epsilon``/``rho``  the privacy cost: exactly one is a positive rational, the other ``null``
``max_contributions`` rows per person, a positive integer
``source``           the random source: an object with a string ``kind``, never a
                     ``seed``, ``key`` or ``secret``; a ``chacha20`` source has a
                     64-hex ``seed_commitment`` and a list of ``substream`` labels
``input_commitment`` (seeded releases only) ``scheme``, 32-hex ``nonce``, 64-hex ``mac``
==================== ===========================================================

Rationals are written as JSON integers or canonical ``"num/den"`` strings
(lowest terms, denominator > 1). **Parsing is verification**:
:meth:`ReleaseRecord.from_json` returns a record only for an object that
satisfies every rule above, and otherwise raises :class:`SchemaError` naming
the field (relative to the record: ``"source.seed_commitment"``). The budget
fields a session or the command adds are typed in the accounting package
(:mod:`securedp.ledger.audit_record`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeAlias

from securedp.hazmat.exact.rational import format_rational
from securedp.privacy.cost import Cost, Currency

if TYPE_CHECKING:
    from securedp.ledger.release import Release

Json: TypeAlias = bool | int | str | list["Json"] | dict[str, "Json"] | None
"""A JSON value as records hold it: no floats (rationals are ``"num/den"`` strings)."""

_RATIONAL = re.compile(r"-?[1-9]\d*/[1-9]\d*")
_SECRET_KEYS = frozenset({"seed", "key", "secret"})
RECORD_FIELDS = ("statistic", "value", "mechanism", "parameters", "epsilon", "rho", "max_contributions", "source")
"""The fields every release record has (``format``, ``labels`` and ``input_commitment`` may be absent)."""
FORMAT = 2
"""The record format this version writes: every release of data is a table of one or more cells."""
COMMITMENT_SCHEME = "hmac-sha256/securedp-input/v1"
"""The scheme of a release's commitment to its exact input (:func:`securedp.ledger.release.commit_input`)."""


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


class SchemaError(ValueError):
    """A record that does not parse: ``field`` (dotted, relative to the record; ``""`` for the record) and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def parse_rational(value: object, name: str) -> Fraction:
    """A rational from its record form: a JSON integer or a canonical ``"num/den"`` string."""
    if isinstance(value, bool):
        raise SchemaError(name, "must be an integer or a \"num/den\" string, not a boolean")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, str) and _RATIONAL.fullmatch(value):
        num, den = (int(part) for part in value.split("/"))
        q = Fraction(num, den)
        if q.denominator != den or den == 1:
            raise SchemaError(name, f"{value!r} is not in lowest terms")
        return q
    raise SchemaError(name, f"must be an integer or a \"num/den\" string, got {value!r}")


BOUNDED_RANGE_STATISTICS = frozenset({"selection", "median", "quantile", "quantiles", "iqr"})
"""The statistics whose ``exponential`` releases are exponential mechanisms and nothing else."""


def bounded_range(statistic: str, mechanism: str) -> bool:
    """Whether a pure release of ``statistic`` by ``mechanism`` is ``epsilon``-bounded range, hence
    zCDP by the sharp bounded-range bound (:func:`~securedp.privacy.conversions.bounded_range_to_zcdp`, at most
    ``epsilon**2 / 8``): the exponential mechanism's selections (:mod:`securedp.mechanisms.exponential`, which
    proves it for the plain, monotone and fallback laws), alone, several side by side at shares of ``epsilon``
    (their losses add: ``epsilon``-bounded range), or in ``D`` adaptive depths at ``epsilon / D`` (their zCDP add
    up to at most the bound of ``epsilon``: :mod:`securedp.privacy.bounded_range_zcdp`, "Equal shares").
    Report-noisy-max and permute-and-flip are not (see
    :mod:`securedp.mechanisms.permute_and_flip`): they keep the bound of every ``epsilon``-DP release."""
    return mechanism == "exponential" and statistic in BOUNDED_RANGE_STATISTICS


def parse_cost(record: Mapping[str, Any], delta: Fraction | None = None) -> Cost:
    """The exact cost a record states: exactly one of its ``epsilon`` and ``rho`` (a rational > 0), with
    ``delta`` (read by :func:`parse_delta`)."""
    eps, rho = record["epsilon"], record["rho"]
    if (eps is None) == (rho is None):
        raise SchemaError("epsilon", "exactly one of epsilon and rho must be set")
    name = "epsilon" if eps is not None else "rho"
    amount = parse_rational(eps if eps is not None else rho, name)
    if amount <= 0:
        raise SchemaError(name, "must be > 0")
    return Cost(Currency.EPSILON if eps is not None else Currency.RHO, amount, delta)


def parse_delta(value: object, name: str = "delta") -> Fraction | None:
    """A record's ``delta``: ``None``, or a rational in ``(0, 1)``."""
    delta = None if value is None else parse_rational(value, name)
    if delta is not None and not 0 < delta < 1:
        raise SchemaError(name, "must be in (0, 1)")
    return delta


def require(record: Mapping[str, object], names: tuple[str, ...]) -> None:
    """Raise :class:`SchemaError` naming the first of ``names`` that ``record`` lacks."""
    for name in names:
        if name not in record:
            raise SchemaError(name, "missing")


def positive_int(value: object, name: str) -> int:
    """``value`` if it is a JSON integer >= 1 (not a boolean)."""
    if type(value) is not int or value < 1:
        raise SchemaError(name, f"must be a positive integer, got {value!r}")
    return value


def hex_digits(value: object, digits: int, name: str) -> str:
    """``value`` if it is a string of exactly ``digits`` lowercase hex digits."""
    if not isinstance(value, str) or not re.fullmatch(f"[0-9a-f]{{{digits}}}", value):
        raise SchemaError(name, f"must be {digits} lowercase hex digits")
    return value


def nonempty_text(value: object, name: str) -> str:
    """``value`` if it is a non-empty string, else :class:`SchemaError` naming ``name``."""
    if not isinstance(value, str) or not value:
        raise SchemaError(name, "must be a non-empty string")
    return value


def _source(source: object) -> dict[str, Json]:
    """A source description: an object with a ``kind``, no secret, and a seed commitment if seeded."""
    if not isinstance(source, dict) or not isinstance(source.get("kind"), str):
        raise SchemaError("source", "must be an object with a 'kind'")
    leaked = _SECRET_KEYS & source.keys()
    if leaked:
        raise SchemaError(f"source.{sorted(leaked)[0]}", "a source description must never contain secret material")
    if source["kind"] == "chacha20":
        hex_digits(source.get("seed_commitment"), 64, "source.seed_commitment")
        labels = source.get("substream")
        if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
            raise SchemaError("source.substream", "must be a list of labels")
    return source


@dataclass(frozen=True)
class InputCommitment:
    """HMAC-SHA256 commitment to the exact input (:func:`securedp.ledger.release.commit_input`)."""

    scheme: str
    nonce: str
    mac: str

    def to_json(self) -> dict[str, Json]:
        return {"scheme": self.scheme, "nonce": self.nonce, "mac": self.mac}

    @classmethod
    def from_json(cls, value: object) -> InputCommitment:
        name = "input_commitment"
        if not isinstance(value, dict) or set(value) != {"scheme", "nonce", "mac"}:
            raise SchemaError(name, "must be an object with exactly 'scheme', 'nonce' and 'mac'")
        if value["scheme"] != COMMITMENT_SCHEME:
            raise SchemaError(f"{name}.scheme", f"expected {COMMITMENT_SCHEME!r}")
        return cls(COMMITMENT_SCHEME, hex_digits(value["nonce"], 32, f"{name}.nonce"),
                   hex_digits(value["mac"], 64, f"{name}.mac"))


@dataclass(frozen=True)
class ReleaseRecord:
    """The audit record of a release (see the module docstring for each field's rule).

    ``value``, ``labels``, ``parameters`` and ``source`` are held in their
    JSON form (:func:`jsonable`); the cost is
    held exactly.
    """

    statistic: str
    value: Json
    labels: Json
    mechanism: str
    parameters: dict[str, Json]
    epsilon: Fraction | None
    rho: Fraction | None
    max_contributions: int
    source: dict[str, Json]
    input_commitment: InputCommitment | None = None
    format: int = FORMAT
    """The record format (1: securedp 0.1's, read and verified; this version writes :data:`FORMAT`)."""

    @property
    def currency(self) -> Currency:
        """The release's own unit: epsilon or rho."""
        return Currency.EPSILON if self.epsilon is not None else Currency.RHO

    @property
    def cost(self) -> Fraction:
        """The privacy cost in the release's own unit: its ``epsilon``, else its ``rho``."""
        cost = self.epsilon if self.epsilon is not None else self.rho
        if cost is None:
            raise TypeError("a release costs epsilon or rho; both are None")
        return cost

    @classmethod
    def of(cls, release: Release) -> ReleaseRecord:
        """The record of ``release``."""
        commitment = release.input_commitment
        return cls(
            statistic=release.statistic,
            value=jsonable(release.value),
            labels=jsonable(release.labels) if release.labels is not None else None,
            mechanism=release.mechanism,
            parameters=jsonable(dict(release.parameters)),
            epsilon=release.epsilon,
            rho=release.rho,
            max_contributions=release.max_contributions,
            source=jsonable(dict(release.source)),
            input_commitment=None if commitment is None else InputCommitment(
                commitment["scheme"], commitment["nonce"], commitment["mac"]
            ),
        )

    def to_json(self) -> dict[str, Json]:
        """The record as JSON, fields in the order of the module docstring."""
        record: dict[str, Json] = {
            "format": self.format,
            "statistic": self.statistic,
            "value": self.value,
            "labels": self.labels,
            "mechanism": self.mechanism,
            "parameters": self.parameters,
            "epsilon": jsonable(self.epsilon),
            "rho": jsonable(self.rho),
            "max_contributions": self.max_contributions,
            "source": self.source,
        }
        if self.input_commitment is not None:
            record["input_commitment"] = self.input_commitment.to_json()
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> ReleaseRecord:
        """Parse a release record, or raise :class:`SchemaError` naming the first field that breaks a rule.

        Fields that are not a release's (budget fields, the command's
        ``query``) are left to the caller.
        """
        require(record, RECORD_FIELDS)
        written = record.get("format", 1)
        if type(written) is not int or not 1 <= written <= FORMAT:
            raise SchemaError("format", f"must be a record format from 1 to {FORMAT}, got {written!r}")
        statistic = nonempty_text(record["statistic"], "statistic")
        mechanism = nonempty_text(record["mechanism"], "mechanism")
        if not isinstance(record["parameters"], dict):
            raise SchemaError("parameters", "must be an object")
        cost = parse_cost(record)
        k = positive_int(record["max_contributions"], "max_contributions")
        source = _source(record["source"])
        commitment = None
        if "input_commitment" in record:
            commitment = InputCommitment.from_json(record["input_commitment"])
            if source["kind"] != "chacha20":
                raise SchemaError("input_commitment", "only a release drawn from a seeded (chacha20) source "
                                  "carries an input commitment")
        return cls(
            statistic=statistic,
            value=record["value"],
            labels=record.get("labels"),
            mechanism=mechanism,
            parameters=record["parameters"],
            epsilon=cost.epsilon,
            rho=cost.rho,
            max_contributions=k,
            source=source,
            input_commitment=commitment,
            format=written,
        )
