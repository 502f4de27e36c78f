"""The result of a private release: an exact value and everything needed to audit it."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from securedp.hazmat.bits.chacha import ChaChaSource
from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.ledger.release_record import COMMITMENT_SCHEME as COMMITMENT_SCHEME  # re-exported
from securedp.ledger.release_record import ReleaseRecord
from securedp.ledger.release_record import jsonable as jsonable  # re-exported
from securedp.privacy.cost import Cost


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
    input_commitment: Mapping[str, str] | None = field(default=None, compare=False)
    """The commitment to the exact input (see :func:`commit_input`), or ``None``.

    Set by :meth:`PreparedRelease.execute` for a release drawn from a
    :class:`~securedp.ChaChaSource`; its nonce is fresh, so it takes no part
    in comparing two releases."""

    def __float__(self) -> float:
        if isinstance(self.value, tuple):
            raise TypeError("a histogram release has several values; use .value or .floats()")
        return float(self.value)  # float-ok: display only

    def floats(self) -> tuple[float, ...]:
        """The released values as floats, for display."""
        values = self.value if isinstance(self.value, tuple) else (self.value,)
        return tuple(float(v) for v in values)  # float-ok: display only

    def record(self) -> dict[str, Any]:
        """A JSON-ready dict describing the release exactly (rationals as ``"num/den"``).

        It is :class:`~securedp.ledger.release_record.ReleaseRecord`, the
        one schema of release records, in JSON form. A release with an
        :attr:`input_commitment` also has the key ``"input_commitment"``;
        the others do not.
        """
        return ReleaseRecord.of(self).to_json()


class Route(Protocol):
    """How a :class:`PreparedRelease` draws: the one step it hands to the layer that owns its route.

    A prepared release is a value (its statistic, its exact price, its public statements) plus a route;
    the route is a named class of the layer that built the release and holds what that layer needs to
    draw (:class:`securedp.tables.table.TableRoute` for a table and
    :class:`securedp.tables.table.CellRoute` for its one cell, a selection's
    :class:`securedp.mechanisms.selection.SelectionRoute`, the planners'
    :class:`securedp.planning.bounds.FinishedRoute` and :class:`securedp.planning.noisy_counts.NoisyCounts`),
    so this module names no code above it and runs none but through this protocol.
    """

    def execution(self, source: RandomSource) -> Execution:
        """One whole execution on ``source``: the release and the input bytes of *this* execution."""
        ...


@dataclass(frozen=True)
class PreparedRelease:
    """A release that has been validated and priced but has drawn nothing yet.

    Every mechanism is built in two steps so that accounting can come in
    between: ``prepare_*`` checks every input (raising before anything is
    drawn or charged) and computes the exact privacy cost; :meth:`execute`
    then draws the noise and returns the :class:`Release`. A ``Session``
    charges ``epsilon``/``rho`` first, then executes, and refunds if
    execution fails. ``epsilon`` is set for pure-DP mechanisms and ``rho``
    for zCDP ones (the other is ``None``). What draws is :attr:`route`.
    """

    statistic: str
    epsilon: Fraction | None
    rho: Fraction | None
    route: Route
    """What draws the release (:class:`Route`), an object of the layer that prepared it. A caller's own
    function ``run(source) -> Release`` (the form this field took before routes) is accepted too, and
    held as a :class:`RunRoute`."""
    input_bytes: Callable[[], bytes] | None = None
    """The canonical encoding of the exact aggregate the noise step consumes
    (:func:`canonical_input`), computed only when asked for; ``None`` for a
    mechanism that declares none, or whose aggregate is only known per
    execution (then :meth:`executed` gives it)."""
    delta: Fraction | None = field(default=None, kw_only=True)
    """The ``delta`` the release spends (partition selection of a table's private keys), else ``None``."""
    bounded_range: bool = field(default=False, kw_only=True)
    """An ``epsilon`` release that is ``epsilon``-bounded range
    (:func:`~securedp.ledger.release_record.bounded_range`), priced by the sharp bounded-range bound in a rho budget
    (:func:`~securedp.privacy.conversions.bounded_range_to_zcdp`, at most ``epsilon**2 / 8``)."""
    accuracy: Callable[[Any], Mapping[str, Fraction]] | None = field(default=None, kw_only=True)
    """The release's accuracy at level ``1 - alpha``, stated from its public parameters before anything
    is drawn: the half-width of each noisy integer in output units, or a selection's rank error bound
    (:meth:`~securedp.mechanisms.statistic.Statistic.accuracy`); ``None`` when the mechanism states none."""
    value_halfwidth: Callable[[Fraction, int], Fraction | None] | None = field(default=None, kw_only=True)
    """The half-width of the released value in the column's units at level ``1 - alpha`` in a cell (here,
    the column) of ``n`` rows, for a statistic whose error depends on that private count, a mean or a
    variance (:meth:`~securedp.mechanisms.statistic.CellStatistic.value_halfwidth`); it returns ``None``,
    or is ``None``, for the others."""

    def __post_init__(self) -> None:
        if not hasattr(self.route, "execution") and callable(self.route):
            object.__setattr__(self, "route", RunRoute(self.route, self.input_bytes))

    @property
    def cost(self) -> Cost:
        """The release's exact price, its ``epsilon`` or ``rho`` and its ``delta``, as one
        :class:`~securedp.privacy.cost.Cost`."""
        return Cost.of(self.epsilon, self.rho, self.delta, bounded_range=self.bounded_range)

    def executed(self, source: RandomSource) -> Execution:
        """One execution on ``source``: the release and the input bytes of *this* execution.

        Each execution carries its own input, so concurrent executions of one
        prepared release never read each other's aggregate.
        """
        return self.route.execution(source)

    def run(self, source: RandomSource) -> Release:
        """The release of one execution on ``source``, without an input commitment (:meth:`execute` adds it)."""
        return self.executed(source).release

    def execute(self, rng: Any = None) -> Release:
        """Draw the noise from ``rng`` (default: the system source) and return the release.

        From a :class:`~securedp.ChaChaSource`, the release carries an
        :attr:`Release.input_commitment` to the input bytes of this
        execution (computed after the draw, from a key derived without
        consuming the stream, so the seeded values are those of a release
        without it).
        """
        source = resolve_source(rng)
        done = self.executed(source)
        release = done.release
        if done.input_bytes is not None and isinstance(source, ChaChaSource):
            commitment = commit_input(source, done.input_bytes(), os.urandom(NONCE_BYTES))
            release = dataclasses.replace(release, input_commitment=commitment)
        return release


@dataclass(frozen=True)
class Execution:
    """One execution of a :class:`PreparedRelease`: its release and the canonical bytes of the exact
    aggregate its noise step consumed (:func:`canonical_input`), or ``None``."""

    release: Release
    input_bytes: Callable[[], bytes] | None


@dataclass(frozen=True)
class RunRoute:
    """The :class:`Route` of a caller's function ``run(source) -> Release`` given as a prepared release's
    route (no prepared release of securedp is built so): each execution's input is ``input_bytes``."""

    run: Callable[[RandomSource], Release]
    input_bytes: Callable[[], bytes] | None = None

    def execution(self, source: RandomSource) -> Execution:
        return Execution(self.run(source), self.input_bytes)


# -- commitments to the exact input ---------------------------------------------------------------

INPUT_FORMAT = b"securedp/input/v1\x00"
COMMITMENT_LABEL = "securedp/input-commitment"
"""The substream label whose keystream keys the commitments of a seeded release."""
NONCE_BYTES = 16
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _int_bytes(value: int) -> bytes:
    size = (value + (value < 0)).bit_length() // 8 + 1
    return size.to_bytes(8, "big") + value.to_bytes(size, "big", signed=True)


def _text_bytes(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(8, "big") + data


def _encode_value(value: Any) -> list[bytes | memoryview]:
    """The pieces of one part's value (bytes-like, joined once by :func:`encode_input`: a sequence of
    int64 values is a view of its big-endian array, never copied into a second ``bytes``)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("an input aggregate is made of integers and rationals, not booleans")
    if isinstance(value, (int, np.integer)):
        return [b"i", _int_bytes(int(value))]
    if isinstance(value, Fraction):
        return [b"q", _int_bytes(value.numerator), _int_bytes(value.denominator)]
    if isinstance(value, str):
        return [b"s", _text_bytes(value)]
    array = np.asarray(value)
    if array.ndim != 1:
        raise TypeError("an input aggregate sequence must be one-dimensional")
    count = len(array).to_bytes(8, "big")
    if array.dtype.kind in "iu" and array.dtype.itemsize <= 8 and not (
        array.dtype.kind == "u" and array.size and int(array.max()) > _INT64_MAX
    ):
        return [b"L", count, np.ascontiguousarray(array, dtype=">i8").data.cast("B")]
    ints = [int(v) for v in array.tolist()]
    if all(_INT64_MIN <= v <= _INT64_MAX for v in ints):
        return [b"L", count, np.array(ints, dtype=">i8").data.cast("B")]
    return [b"V", count, *(_int_bytes(v) for v in ints)]


def encode_input(statistic: str, parts: Mapping[str, Any]) -> bytes:
    """The canonical bytes of an input aggregate: ``statistic`` and named parts, in sorted name order.

    Layout (all lengths 8-byte big-endian): ``"securedp/input/v1\\0"``, the
    statistic (length, UTF-8), the number of parts, then for each part in
    sorted name order its name (length, UTF-8) and its value: ``i`` + an
    integer (length, big-endian two's complement), ``q`` + numerator and
    denominator of a rational in lowest terms, ``s`` + a string, or a
    sequence of integers as ``L`` + count + 8-byte big-endian values when
    every value fits in a signed 64-bit integer, else ``V`` + count + each
    integer. The encoding depends on the values only (never on a dtype).
    """
    pieces: list[bytes | memoryview] = [INPUT_FORMAT, _text_bytes(statistic), len(parts).to_bytes(8, "big")]
    for name in sorted(parts):
        pieces += [_text_bytes(name), *_encode_value(parts[name])]
    return b"".join(pieces)


def canonical_input(statistic: str, **parts: Any) -> Callable[[], bytes]:
    """The :attr:`PreparedRelease.input_bytes` hook: ``encode_input(statistic, parts)``, computed when called.

    A mechanism passes the exact aggregate its noise step consumes, in a
    form that does not depend on the order of the rows (counts, integer sums
    in lattice units, per-category counts in declared order, sorted units,
    scores in candidate order), so that any engine computing the same
    aggregate produces the same bytes. A part may be a callable, evaluated
    only when the bytes are asked for (a sort, say).
    """
    return _once(lambda: encode_input(statistic, {k: v() if callable(v) else v for k, v in parts.items()}))


def _once(encode: Callable[[], bytes]) -> Callable[[], bytes]:
    """``encode``, evaluated on the first call only: a prepared release's input never changes,
    so executing it many times encodes it once."""
    cache: list[bytes] = []

    def cached() -> bytes:
        if not cache:
            cache.append(encode())
        return cache[0]

    return cached


def scores_input(scores: Any) -> Callable[[], bytes]:
    """The input hook of a selection: its exact scores, in candidate order, on their coarsest common unit.

    ``scores`` has ``.units`` (integers) and ``.unit`` (a rational) with
    ``score_i = units[i] * unit``; the encoding divides out the gcd of the
    units, so it depends on the score values only, not on how they were given.
    """

    def encode() -> bytes:
        units = np.asarray(scores.units)
        if units.dtype.kind == "i":  # int64: vectorised, the same values as the Python-int path
            g = int(np.gcd.reduce(units)) if units.size else 0
            reduced: Any = units // g if g else units
        else:
            ints = [int(v) for v in units.tolist()]
            g = math.gcd(*ints)
            reduced = [v // g for v in ints] if g else ints
        unit = Fraction(1) if g == 0 else Fraction(scores.unit) * g
        return encode_input("selection", {"score_unit": unit, "scores": reduced})

    return _once(encode)


def commitment_key(source: ChaChaSource) -> bytes:
    """The commitment key of a seeded source: the first 32 bytes of its ``"securedp/input-commitment"`` substream.

    Deriving a substream does not consume the source's own stream, so the
    release's seeded values are unchanged; without the seed the key is a
    ChaCha20 output, unpredictable.
    """
    return source.substream(COMMITMENT_LABEL).random_bytes(32)


def commit_input(source: RandomSource, data: bytes, nonce: bytes) -> dict[str, str]:
    """``{"scheme", "nonce", "mac"}``: HMAC-SHA256 under :func:`commitment_key` of ``nonce || data``.

    The random ``nonce`` (recorded) makes two commitments to equal inputs
    under one stream differ, so a log reveals nothing, not even equality of
    inputs, to anyone without the seed. With the seed, anyone recomputes the
    MAC from the data (binding, as SHA-256 is collision resistant).
    """
    if not isinstance(source, ChaChaSource):
        raise TypeError("only a seeded ChaChaSource can key an input commitment")
    mac = hmac.new(commitment_key(source), nonce, hashlib.sha256)
    mac.update(data)  # the MAC of nonce || data, without copying the data
    return {"scheme": COMMITMENT_SCHEME, "nonce": nonce.hex(), "mac": mac.hexdigest()}
