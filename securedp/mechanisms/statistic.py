"""One definition per statistic: what a cell of a release computes, its noise and its privacy map.

Every release of a column is a table (:mod:`securedp.tables`): a one-column release is the table with no
group-by, whose one cell holds the whole column. A statistic here is the definition of **one cell**, for
the engine that computes its exact integers and the table that noises them:

* what it **reads** from the engine: rows and persons per key, sums (and sums of squares) of a value
  column's lattice units, or counts per lattice point (:mod:`securedp.tables.spec` names it);
* its **exact cells**: the integers it noises, per cell, from the engine's per-key aggregates;
* its **noises**: the law of each noisy integer (cell sensitivity, cost share, ``k = max_groups`` cells
  per person): its privacy map, stated in its module docstring with its proof or citation;
* its **finish**: the post-processing of the noisy integers, with confidence intervals;
* its **half-widths** (or a selection's rank error bound): what a plan states before anything is drawn;
  for a mean or a variance also the half-width of the value itself at a stated row count
  (:meth:`CellStatistic.value_halfwidth`);
* its **record**: what the release states of it (:meth:`CellStatistic.cell_record`).

A :class:`CellStatistic` is a frozen dataclass of public inputs only (a cost, ``max_contributions = m``
rows per person in a cell, ``max_groups = k`` cells per person, bounds, lattice ...); nothing in it is
read from the data. Integer statistics (counts, sums, moments, histograms) are
:class:`AdditiveStatistic`; selections over a lattice (quantiles) draw one point per cell from the
cell's counts per lattice point (:mod:`securedp.mechanisms.quantile`).

The public ``prepare_<name>`` and ``<name>`` functions are made from one signature each: a statistic of
one column states it in its entry of the one list (:mod:`securedp.tables.registry`), from which
:mod:`securedp.tables.one_column` makes ``prepare_<name>`` and :func:`release_function` ``<name>``, and
``Session`` its method; a selection of this package wraps its own with :func:`public_function`. So the
signature is written exactly once and ``help()``, IDEs and the API reference all show it.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, ParamSpec, TypeVar, overload

from securedp.hazmat.bits.source import RandomSource
from securedp.ledger.release import PreparedRelease, Release
from securedp.privacy.cost import Cost
from securedp.privacy.noise import Law, Noise

P = ParamSpec("P")
R = TypeVar("R")


class CellStatistic(ABC):
    """The definition of one cell's statistic (see the module docstring): public inputs only."""

    statistic: ClassVar[str]
    """The name recorded in a one-column release (``"sum"``, ``"median"`` ...)."""
    record_words: ClassVar[Mapping[str, str]] = {}
    """What the fields this statistic adds to a cell's record mean, for the audit report (the words of the
    fields every statistic records are the report's own, :mod:`securedp.audit.report_words`)."""
    cost: Cost
    max_contributions: int
    """``m``: the rows one person may contribute to one cell."""
    max_groups: int
    """``k``: the cells one person may contribute to (1 without a group-by)."""

    @property
    def mechanism(self) -> str:
        """The noise or selection mechanism, as recorded: by default the noise of :attr:`cost`
        (discrete Laplace for ``epsilon``, discrete Gaussian for ``rho``)."""
        return Law.of(self.cost.currency).value

    @property
    def labels(self) -> tuple[Any, ...] | None:
        """The labels of a statistic with several values per cell (bins, quantile levels), else None."""
        return None

    def accuracy(self, alpha: Fraction) -> Mapping[str, Fraction]:  # noqa: ARG002 - a statistic may state none
        """What the release states of its accuracy at level ``1 - alpha`` before it draws (default: nothing)."""
        return {}

    def value_halfwidth(self, alpha: Fraction, rows: int) -> Fraction | None:  # noqa: ARG002 - most have none
        """The half-width of the released value in the column's units, at level ``1 - alpha``, in a cell that
        keeps ``rows`` rows: stated by a statistic whose error depends on the cell's (private) count, a mean
        or a variance, at a count the caller states; ``None`` for the others, whose :meth:`accuracy` holds
        whatever the count."""
        return None

    @abstractmethod
    def cell_record(self, alpha: Fraction) -> dict[str, Any]:
        """What a release records of this statistic in each cell: its noise laws or its selection."""


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


class AdditiveStatistic(CellStatistic):
    """A statistic released as noisy integers plus post-processing, the same for one cell or many.

    A subclass states :attr:`noises` (the law of each noisy integer, in draw order: its privacy map),
    :meth:`exact_cells` (its exact integers per cell from a table engine's per-key sums), :meth:`finish`
    (the post-processing of the noisy integers, vectorised over cells) and :meth:`halfwidths`.
    """

    @property
    @abstractmethod
    def noises(self) -> tuple[Noise, ...]:
        """The law of each noisy integer, in draw order (cell sensitivity, cost share, ``max_groups``)."""

    @abstractmethod
    def exact_cells(self, sums: CellSums) -> list[list[int]]:
        """The exact integers of each cell, in the order of :attr:`noises`, from a table engine's per-key sums."""

    @abstractmethod
    def finish(self, noisy: list[list[int]], alpha: Fraction) -> CellColumn:
        """The released cells from the noisy integers, with their intervals at level ``1 - alpha``."""

    @abstractmethod
    def halfwidths(self, alpha: Fraction) -> dict[str, Fraction]:
        """The half-width of each noisy integer's interval, in output units, at the level the table states
        (:meth:`finish`): public parameters only, so stated before anything is drawn."""

    def accuracy(self, alpha: Fraction) -> Mapping[str, Fraction]:
        """The half-widths of :meth:`halfwidths`."""
        return self.halfwidths(alpha)

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:  # noqa: ARG002 - a selection's record depends on it
        """What a release records of this statistic: the law of each noisy integer."""
        return {"noise": [noise.record() for noise in self.noises]}

    def release_cells(self, exact: list[list[int]], source: RandomSource, alpha: Fraction) -> CellColumn:
        """The cells: each noisy integer drawn for every cell in one batch from ``source`` (in :attr:`noises`
        order), then post-processed."""
        n = len(exact[0]) if exact else 0
        noisy = [[x + z for x, z in zip(column, noise.draw(source, n), strict=True)]
                 for column, noise in zip(exact, self.noises, strict=True)]
        return self.finish(noisy, alpha)


_UNEXPECTED = re.compile(r"got an unexpected keyword argument '(\w+)'")


def check_call(signature: inspect.Signature, called: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Raise :class:`TypeError` naming ``called`` (the function the caller wrote, ``securedp.count``) when
    ``args`` and ``kwargs`` do not fit ``signature``: a misspelt keyword is answered with the parameter it is
    closest to, and ``delta=`` where there is none with where a delta is spent."""
    try:
        signature.bind(*args, **kwargs)
    except TypeError as error:
        hint = ""
        unexpected = _UNEXPECTED.search(str(error))
        if unexpected is not None:
            name = unexpected.group(1)
            close = difflib.get_close_matches(name, list(signature.parameters), n=1, cutoff=0.6)
            if name == "delta":
                hint = ("; this release spends no delta (it is epsilon-DP, or rho-zCDP with rho=): a delta is spent "
                        "by a table with private keys, securedp.table(..., delta=)")
            elif close:
                hint = f"; did you mean {close[0]}=?"
        raise TypeError(f"{called}() {error}{hint}") from None


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
    :meth:`~securedp.ledger.release.PreparedRelease.execute`. ``result`` is the type of the release
    it returns (a :class:`~securedp.tables.table.TableRelease` for a table), so type checkers see it.
    """

    def release(*args: Any, rng: RandomSource | None = None, **kwargs: Any) -> Release:
        try:
            prepared = prepare(*args, **kwargs)
        except TypeError:  # a call that does not fit the signature fails before prepare's body runs
            check_call(signature, f"securedp.{name}", args, {**kwargs, "rng": rng})  # then named here
            raise
        released = prepared.execute(rng)
        assert isinstance(released, result)
        return released

    signature = inspect.signature(prepare)
    given = list(signature.parameters.values())
    extra = [p for p in given if p.kind == inspect.Parameter.VAR_KEYWORD]  # ``**kwargs`` stays last
    release.__name__ = release.__qualname__ = name
    release.__module__ = prepare.__module__
    release.__doc__ = doc
    signature = signature.replace(parameters=[*(p for p in given if p not in extra), RNG_PARAMETER, *extra],
                                  return_annotation=result.__name__)
    release.__signature__ = signature  # type: ignore[attr-defined]
    return release
