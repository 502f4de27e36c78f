"""One definition per statistic, and the seam between its exact aggregate and its noise.

A statistic is a subclass of :class:`Statistic`. An instance holds the
validated **public** inputs of one release (bounds, lattice, contribution
bound, privacy cost ...) and nothing read from the data. Every release is
made in two steps, with a typed aggregate between them:

1. **Exact aggregate** (:meth:`Statistic.aggregate`): the records of one
   column, after screening, clamping to the lattice and contribution bounding,
   reduced to integers: a row count, an integer sum of lattice units, centred
   sums of squares, counts per declared bin, the sorted units of a column
   (equivalently, counts per lattice point), or the exact scores of a
   selection. The aggregate is a frozen dataclass of integers whose field
   names are those of the release's input commitment
   (:func:`~securedp.mechanisms.release.canonical_input`). Any engine that can
   group and add integers can compute it (NumPy/pandas here; a grouped-table
   or Spark engine computes the same integers per group).
2. **Noise / selection step** (:meth:`Statistic.noise_step`): takes only that
   aggregate, and returns a :class:`~securedp.mechanisms.release.PreparedRelease`
   that draws the noise (or selection) and states its exact price. It runs
   once per released value, on the caller's machine, from the caller's
   random source; its privacy map is the statistic's, for any aggregate.

So ``Sum(...).noise_step(SumAggregate(rows=3, sum_units=12)).execute(rng)``
releases a sum from an aggregate computed anywhere, and
:meth:`Statistic.prepare_data` is ``noise_step(aggregate(data, ids))``.

**Pending choices.** With ``ids``, which rows a person over
``max_contributions`` keeps is decided by a secret salt drawn at execute
(:mod:`securedp.mechanisms.contributions`), so step (1) cannot finish in
``prepare``. It then returns a :class:`Pending` aggregate: ``settled``, the
aggregate of the rows kept under any salt (persons within the bound),
computed in ``prepare``; ``rows``, the pending rows
(:class:`~securedp.mechanisms.contributions.PendingRows`: the over-bound
persons' rows and their canonical integers); and ``reduce``, the
statistic's aggregate of a set of kept canonical integers. Aggregates are
*additive*: the aggregate of two disjoint sets of rows is the sum (``+``)
of theirs (integer sums field by field, counts per bin elementwise, sorted
units merged). The noise step of a pending aggregate draws the salt
**first** from the release's source, resolves
``settled + reduce(rows.chosen(salt))`` and then runs the usual noise step
on it; the input commitment of that execution is of the resolved aggregate
(:class:`~securedp.mechanisms.release.Execution`). A statistic whose
aggregate does not depend on which rows are kept (a count) never pends and
draws no salt; without ``ids`` nothing pends either, so those releases draw
exactly what they drew before.

**Derived entry points.** The public ``prepare_<name>`` function is the
statistic's one signature (a classmethod ``prepare``), given its public name
and docstring by :func:`public_function`; the module-level ``<name>``
function is :func:`release_function` of it (the same parameters plus
``rng``), and the ``Session`` method is derived from it in
:mod:`securedp.accounting.session`. Their signatures are real
(``inspect.signature`` and ``help()`` show them), never ``**options``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Generic, ParamSpec, TypeVar, overload

import numpy as np

from securedp.bounding.messages import draw_salt
from securedp.hazmat.bits.source import RandomSource
from securedp.lattice.columns import ONE_COLUMN_HINT
from securedp.mechanisms.contributions import PendingRows
from securedp.mechanisms.data_phase import check_shape, reading_data
from securedp.mechanisms.noise import Cost, Noise
from securedp.mechanisms.records import exact_value
from securedp.mechanisms.release import Execution, PreparedRelease, Release, canonical_input

P = ParamSpec("P")
R = TypeVar("R")
A = TypeVar("A")
S = TypeVar("S", bound="IntegerSums")


class IntegerSums:
    """An aggregate (a dataclass) whose fields are integer sums over rows: adding two adds them field by field."""

    def __add__(self: S, other: S) -> S:
        return dataclasses.replace(self, **{  # type: ignore[type-var]
            f.name: getattr(self, f.name) + getattr(other, f.name) for f in dataclasses.fields(self)})  # type: ignore[arg-type]


@dataclass(frozen=True)
class Pending(Generic[A]):
    """Step (1) with choices pending on the release's salt (see the module docstring).

    ``settled`` is the aggregate of the rows kept under any salt, ``rows``
    the rows among which the salt chooses, and ``reduce`` the statistic's
    aggregate of kept canonical integers; the aggregate is additive.
    """

    settled: A
    rows: PendingRows
    reduce: Callable[[np.ndarray], A]

    def resolve(self, salt: bytes) -> A:
        """The aggregate of the rows kept under ``salt``: ``settled + reduce(rows.chosen(salt))``."""
        resolved: A = operator.add(self.settled, self.reduce(self.rows.chosen(salt)))
        return resolved


def bounded(reduce: Callable[[np.ndarray], A], settled: np.ndarray, pending: PendingRows | None) -> A | Pending[A]:
    """Step (1) from the kept canonical integers: ``reduce(settled)``, or a :class:`Pending` aggregate
    when ``pending`` (the rows of persons over the bound, with ``ids``) is given."""
    done = reduce(settled)
    return done if pending is None else Pending(done, pending, reduce)


class Statistic(ABC, Generic[A]):
    """The definition of one statistic: its public inputs, exact aggregate ``A``, noise step and privacy map.

    A subclass is a frozen dataclass with a ``cost`` (:class:`~securedp.mechanisms.noise.Cost`)
    and a ``max_contributions``; it states its ``statistic`` name and
    implements :meth:`aggregate`, :meth:`sampler` and :attr:`parameters`
    (and :attr:`mechanism` when it is not additive noise). The release itself is assembled once, here.
    """

    statistic: ClassVar[str]
    """The name recorded in the release (``"sum"``, ``"median"`` ...)."""
    input_name: ClassVar[str | None] = None
    """The statistic named in the input commitment (default: :attr:`statistic`)."""
    cost: Cost
    max_contributions: int

    @abstractmethod
    def aggregate(self, data: Any, ids: Any = None) -> A | Pending[A]:
        """Step (1): the exact aggregate of ``data`` (one column; ``ids`` one person id per row, or None),
        or with ``ids`` a :class:`Pending` one whose choices the release's salt settles."""

    @abstractmethod
    def sampler(self, aggregate: A) -> Callable[[RandomSource], Any]:
        """Step (2)'s set-up for ``aggregate``: a function drawing the released value from a source.

        The set-up (noise plans, selection tables) is computed once here; the
        function may be called many times, each an independent release.
        """

    @property
    def mechanism(self) -> str:
        """The noise or selection mechanism, as recorded: by default the noise of :attr:`cost`
        (discrete Laplace for ``epsilon``, discrete Gaussian for ``rho``)."""
        return self.cost.mechanism

    @property
    @abstractmethod
    def parameters(self) -> Mapping[str, Any]:
        """The exact public parameters, as recorded (scale, sensitivity, lattice step ...)."""

    @property
    def column_hint(self) -> str:
        """What to pass instead when ``data`` is not one column (:func:`~securedp.lattice.columns.check_one_column`)."""
        return ONE_COLUMN_HINT

    @property
    def labels(self) -> tuple[Any, ...] | None:
        """The labels of a release with several values (bins, quantile levels), else None."""
        return None

    def accuracy(self, alpha: Fraction) -> Mapping[str, Fraction]:  # noqa: ARG002 - a statistic may state none
        """What the release states of its accuracy at level ``1 - alpha`` before it draws (default: nothing)."""
        return {}

    def input_bytes(self, aggregate: A) -> Callable[[], bytes]:
        """The canonical bytes of ``aggregate`` for the input commitment: its fields, by name."""
        parts = {f.name: getattr(aggregate, f.name) for f in dataclasses.fields(aggregate)}  # type: ignore[arg-type]
        return canonical_input(self.input_name or self.statistic, **parts)

    def release(self, value: Any, source: RandomSource) -> Release:
        """The :class:`~securedp.mechanisms.release.Release` of ``value``, drawn from ``source``."""
        return Release(
            value=value,
            statistic=self.statistic,
            mechanism=self.mechanism,
            parameters=self.parameters,
            epsilon=self.cost.epsilon,
            rho=self.cost.rho,
            max_contributions=self.max_contributions,
            labels=self.labels,
            source=source.describe(),
        )

    def noise_step(self, aggregate: A | Pending[A]) -> PreparedRelease:
        """Step (2): the release of ``aggregate``, priced at :attr:`cost`; nothing is drawn until ``.execute(rng)``.

        A :class:`Pending` aggregate is resolved at execute, by a salt drawn
        first from the release's source (see the module docstring).
        """
        epsilon, rho = self.cost.epsilon, self.cost.rho
        if isinstance(aggregate, Pending):
            pending = aggregate

            def execution(source: RandomSource) -> Execution:
                resolved = pending.resolve(draw_salt(source))
                return Execution(self.release(self.sampler(resolved)(source), source), self.input_bytes(resolved))

            return PreparedRelease(self.statistic, epsilon, rho, lambda source: execution(source).release,
                                   execution=execution, accuracy=self.accuracy)
        draw = self.sampler(aggregate)
        return PreparedRelease(self.statistic, epsilon, rho, lambda source: self.release(draw(source), source),
                               self.input_bytes(aggregate), accuracy=self.accuracy)

    def prepare_data(self, data: Any, ids: Any = None) -> PreparedRelease:
        """Both steps on one column: ``noise_step(aggregate(data, ids))``.

        The public inputs are validated when the statistic is built, and the
        shape of ``data`` and ``ids`` (one column each) here; their records
        are read from here on (:func:`~securedp.mechanisms.data_phase.reading_data`).
        """
        check_shape([("data", data, self.column_hint), ("ids", ids, ONE_COLUMN_HINT)])
        reading_data()
        return self.noise_step(self.aggregate(data, ids))


@dataclass(frozen=True)
class CellSums:
    """A table engine's exact integers per cell (lattice units): rows kept, distinct persons, and for a value
    column the sum of units and of squared units (``None`` when not computed)."""

    rows: list[int]
    persons: list[int]
    total: list[int] | None = None
    squares: list[int] | None = None


@dataclass(frozen=True)
class CellColumn:
    """A statistic released over ``n`` cells, in units: the values and their intervals' ends (or ``None``).

    The released value of cell ``i`` is ``values[i] * step`` (``step`` ``None``:
    an integer statistic, ``values[i]`` itself), exactly; ``low``/``high``
    bound it at the level the release was asked for. ``frame_step`` fixes the
    exact type of the column in a table's frame (``None``: ``Int64``; a step:
    a decimal of that step, :mod:`securedp.engines.frames`). Both depend on
    public parameters only.
    """

    values: list[Any]
    """Integers (units), or with ``step`` ``None`` the exact values themselves (``int`` or ``Fraction``)."""
    low: list[Any] | None
    high: list[Any] | None
    step: Fraction | None
    frame_step: Fraction | None

    @classmethod
    def within(cls, values: list[int], t: int, step: Fraction | None, frame_step: Fraction | None) -> CellColumn:
        """``values`` with the interval ``value -/+ t`` of each (one noisy integer, half-width ``t``)."""
        return cls(values, [v - t for v in values], [v + t for v in values], step, frame_step)


Draws = Callable[[Noise], list[int]]
"""The noise of every cell for one noisy integer: ``noise.draw(source, n)`` for ``n`` cells of a table,
``[noise.draw(source)]`` (the source's pool) for a one-column release."""


class AdditiveStatistic(Statistic[A]):
    """A statistic released as noisy integers plus post-processing, defined once for one cell or many.

    A subclass states :attr:`noises` (the law of each noisy integer, in draw
    order: its privacy map), :meth:`exact_cells` (its exact integers per cell
    from a table engine's per-key sums) and :meth:`finish` (the post-processing
    of the noisy integers, vectorised over cells). A one-column release is its
    one-cell case (:meth:`sampler`); a table calls :meth:`release_cells`.
    """

    max_groups: int

    @property
    @abstractmethod
    def noises(self) -> tuple[Noise, ...]:
        """The law of each noisy integer, in draw order (cell sensitivity, cost share, ``max_groups``)."""

    @abstractmethod
    def exact_cells(self, sums: CellSums) -> list[list[int]]:
        """The exact integers of each cell, in the order of :attr:`noises`, from a table engine's per-key sums."""

    @abstractmethod
    def finish(self, noisy: list[list[int]], alpha: Fraction | None) -> CellColumn:
        """The released cells from the noisy integers (and, with ``alpha``, their intervals)."""

    def draw_cells(self, exact: list[list[int]], draws: Draws, alpha: Fraction | None) -> CellColumn:
        """Noise each exact integer (one batch per noisy integer, in :attr:`noises` order) and post-process."""
        noisy = [[x + z for x, z in zip(column, draws(noise), strict=True)]
                 for column, noise in zip(exact, self.noises, strict=True)]
        return self.finish(noisy, alpha)

    @abstractmethod
    def halfwidths(self, alpha: Fraction) -> dict[str, Fraction]:
        """The half-width of each noisy integer's interval, in output units, at the level the table states
        (:meth:`finish`): public parameters only, so stated before anything is drawn."""

    def accuracy(self, alpha: Fraction) -> Mapping[str, Fraction]:
        """The half-widths of :meth:`halfwidths`."""
        return self.halfwidths(alpha)

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:  # noqa: ARG002 - a selection's record depends on it
        """What a table records of this statistic: the law of each noisy integer."""
        return {"noise": [noise.record() for noise in self.noises]}

    def release_cells(self, exact: list[list[int]], source: RandomSource, alpha: Fraction) -> CellColumn:
        """The cells of a table: each noisy integer drawn for all cells in one batch from ``source``."""
        n = len(exact[0]) if exact else 0
        return self.draw_cells(exact, lambda noise: noise.draw(source, n), alpha)

    def one_cell(self, aggregate: A) -> list[list[int]]:
        """The exact integers of the one cell of a one-column release: the aggregate's fields, in order."""
        return [[getattr(aggregate, f.name)] for f in dataclasses.fields(aggregate)]  # type: ignore[arg-type]

    def released(self, units: int, step: Fraction | None) -> Any:
        """A one-column release's value: ``units * step`` exactly (an ``int`` when whole)."""
        return units if step is None else exact_value(units * step)

    def sampler(self, aggregate: A) -> Callable[[RandomSource], Any]:
        exact = self.one_cell(aggregate)

        def draw(source: RandomSource) -> Any:
            cell = self.draw_cells(exact, lambda noise: [noise.draw(source)], None)
            return self.released(cell.values[0], cell.step)

        return draw


def public_function(function: Callable[P, R], name: str, doc: str) -> Callable[P, R]:
    """``function`` as a module-level function named ``name`` with docstring ``doc`` and the same signature."""

    @functools.wraps(function)
    def public(*args: P.args, **kwargs: P.kwargs) -> R:
        return function(*args, **kwargs)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = doc
    public.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
    del public.__wrapped__  # the signature above is the whole story
    return public


RNG_PARAMETER = inspect.Parameter("rng", inspect.Parameter.KEYWORD_ONLY, default=None,
                                  annotation="RandomSource | None")


RL = TypeVar("RL", bound=Release)


@overload
def release_function(prepare: Callable[..., PreparedRelease], name: str, doc: str) -> Callable[..., Release]: ...


@overload
def release_function(prepare: Callable[..., PreparedRelease], name: str, doc: str,
                     result: type[RL]) -> Callable[..., RL]: ...


def release_function(prepare: Callable[..., PreparedRelease], name: str, doc: str,
                     result: type[Release] = Release) -> Callable[..., Release]:
    """The module-level release function of ``prepare``: its parameters plus ``rng``, then ``.execute(rng)``.

    ``rng`` is the random source (default: the system CSPRNG); see
    :meth:`~securedp.mechanisms.release.PreparedRelease.execute`. ``result`` is the type of the release
    it returns (a :class:`~securedp.tables.table.TableRelease` for a table), so type checkers see it.
    """

    def release(*args: Any, rng: RandomSource | None = None, **kwargs: Any) -> Release:
        released = prepare(*args, **kwargs).execute(rng)
        assert isinstance(released, result)
        return released

    signature = inspect.signature(prepare)
    release.__name__ = release.__qualname__ = name
    release.__module__ = prepare.__module__
    release.__doc__ = doc
    release.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), RNG_PARAMETER], return_annotation=result.__name__)
    return release
