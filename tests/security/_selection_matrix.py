"""The selections the library knows and the neighbouring inputs they are audited on (issue 40 C).

:func:`selections` lists every selection from the code, not by hand: each concrete
:class:`~securedp.mechanisms.selection.Selection` subclass (a new one is driven through
``Selection.of_scores`` with no change here), the quantile release with and without its fallback
point by each of its draws (permute-and-flip priced in epsilon, the exponential mechanism in rho),
several quantiles by the recursive split, and every partition-selection rule (a class of
:mod:`securedp.mechanisms` with a
``select(persons, rng)`` method: :data:`PARTITION_PLANS` builds each, and a test fails when a rule
has no plan here). Each selection is paired with every shape of its input kind (:data:`SCORE_SHAPES`,
integer and float, :data:`QUANTILE_SHAPES`, :data:`COUNT_SHAPES`): a pair of neighbouring inputs and a
function mapping a released value to a small output class.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

import securedp
import securedp.mechanisms
from securedp.mechanisms.gaussian_threshold import GaussianThreshold, gaussian_threshold
from securedp.mechanisms.partition_selection import (
    LaplaceThreshold,
    OptimalSelection,
    laplace_threshold,
    optimal_selection,
)
from securedp.mechanisms.selection import Selection

N_SCORES = 200
"""Candidates of every score shape but issue 40's example (1,000 candidates)."""


@dataclass(frozen=True)
class Shape:
    """Neighbouring inputs ``x0``, ``x1`` (scores, records or per-key person counts) and their output classes."""

    name: str
    x0: Any
    x1: Any
    output_class: Callable[[Any], Any]


def _score_shape(name: str, base: list[int], moved: int, by: int, floats: bool) -> Shape:
    x0 = np.array(base, dtype=np.float64 if floats else np.int64)
    if floats:  # distinct float values (the float route): quarter units, and an arbitrary fraction in one of 7
        x0[1::2] += 0.25
        x0[::7] += np.linspace(0.01, 0.3, len(x0[::7]))
    x1 = x0.copy()
    x1[moved] += by  # the neighbour: one score moved by the sensitivity

    def output_class(index: Any) -> Any:
        return int(index) == moved  # the moved candidate or another (coarse: each class needs many draws)

    return Shape(f"{name}, {'float' if floats else 'int'}", x0, x1, output_class)


_SCORE_BASES = {  # name: (scores, the index moved, by how much)
    "issue 40: 1,000 tied, one up": ([0] * 1000, 0, 1),
    "all tied, one up": ([0] * N_SCORES, 0, 1),
    "all tied, one down": ([0] * N_SCORES, 0, -1),
    "top group large, one top down": ([0] * 180 + [-2] * 20, 0, -1),
    "top group small, one other up": ([0] * 3 + [-2] * (N_SCORES - 3), 3, 1),
    "far entries, one top down": ([0] * 10 + [-10**6] * (N_SCORES - 10), 0, -1),
    "far entries, one far up": ([0] * 10 + [-10**6] * (N_SCORES - 10), 10, 1),
}
SCORE_SHAPES = [_score_shape(name, base, moved, by, floats)
                for floats in (False, True) for name, (base, moved, by) in _SCORE_BASES.items()]


def _value_class(value: Any) -> Any:
    return int(value) // 25  # a released point, by quarters of the bounds 0 .. 100


QUANTILE_SHAPES = [Shape(name, x0, x1, _value_class) for name, x0, x1 in (
    ("records tied, one more tied", [50] * 30, [50] * 31),
    ("records spread, one more above", list(range(0, 100, 4)), [*range(0, 100, 4), 99]),
    ("records spread, one more below", list(range(0, 100, 4)), [*range(0, 100, 4), 0]),
    ("few records (fallback), one more", [40, 60], [40, 60, 50]),
    ("far entries (window), one more", [i % 100 for i in range(400)], [i % 100 for i in range(400)] + [99]),
    ("float records, one more", [10.25 + i / 2 for i in range(40)], [10.25 + i / 2 for i in range(40)] + [90.5]),
)]


def _count_shape(name: str, base: list[int], moved: int) -> Shape:
    x0 = np.array(base, dtype=np.int64)
    x1 = x0.copy()
    x1[moved] += 1  # one person added to one key

    def output_class(keep: np.ndarray) -> Any:
        return bool(keep[moved])  # whether the key moved is kept

    return Shape(name, x0, x1, output_class)


COUNT_SHAPES = [
    _count_shape("all keys small, one more person", [1] * 20, 0),
    _count_shape("keys at the threshold, one more person", [20] * 20, 0),
    _count_shape("all keys certain, one more person", [60] * 20, 0),
    _count_shape("mixed keys, the largest one more", [1] * 5 + [20] * 5 + [60] * 10, 19),
]

PARTITION_PLANS: dict[type, Callable[[], Any]] = {
    OptimalSelection: lambda: optimal_selection(1, "1e-9", 1),
    LaplaceThreshold: lambda: laplace_threshold(1, "1e-9", 1),
    GaussianThreshold: lambda: gaussian_threshold(Fraction(1, 2), "1e-9", 1),
}
"""A plan of every partition-selection rule (:func:`partition_rules` finds the rules)."""


def partition_rules() -> set[type]:
    """Every class of :mod:`securedp.mechanisms` with a ``select(persons, rng)`` method."""
    found = set()
    for info in pkgutil.iter_modules(securedp.mechanisms.__path__):
        module = importlib.import_module(f"securedp.mechanisms.{info.name}")
        for cls in vars(module).values():
            select = getattr(cls, "select", None)
            if inspect.isclass(cls) and cls.__module__ == module.__name__ and callable(select) \
                    and list(inspect.signature(select).parameters)[:3] == ["self", "persons", "rng"]:
                found.add(cls)
    return found


def score_selections() -> list[type[Selection]]:
    """Every concrete :class:`Selection` subclass, found by walking the subclasses."""
    found, todo = [], [Selection]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if not inspect.isabstract(cls):
            found.append(cls)
    return sorted(found, key=lambda cls: cls.selection)


@dataclass(frozen=True)
class Cell:
    """One selection on one shape: ``prepare(x)`` gives a function of a source returning the released value."""

    selection: str
    shape: Shape
    prepare: Callable[[Any], Callable[[Any], Any]]

    @property
    def name(self) -> str:
        return f"{self.selection} | {self.shape.name}"


def _scores_selection(cls: type[Selection]) -> Callable[[Any], Callable[[Any], Any]]:
    def prepare(x: Any) -> Callable[[Any], Any]:
        prepared = cls.of_scores(x, 1, 1, None, None)
        return lambda source: prepared.execute(source).value
    return prepare


def _quantile(fallback: Any, price: dict[str, Any]) -> Callable[[Any], Callable[[Any], Any]]:
    """A median over 401 candidates: priced in epsilon it draws by permute-and-flip, in rho (``1/8``: epsilon 1)
    by the exponential mechanism (:mod:`securedp.mechanisms.quantile_draw`)."""
    def prepare(x: Any) -> Callable[[Any], Any]:
        prepared = securedp.prepare_median(x, bounds=(0, 100), lattice="0.25", fallback=fallback, **price)
        return lambda source: prepared.execute(source).value
    return prepare


def _quantiles_split(x: Any) -> Callable[[Any], Any]:
    """Three quartiles by the recursive split (:mod:`securedp.mechanisms.quantile_split`): two depths."""
    prepared = securedp.prepare_quantiles(x, ["1/4", "1/2", "3/4"], bounds=(0, 100), lattice="0.25", epsilon=1)
    return lambda source: prepared.execute(source).value


def _values_class(values: Any) -> Any:
    return tuple(_value_class(value) for value in values)


def _partition(rule: type) -> Callable[[Any], Callable[[Any], Any]]:
    def prepare(x: Any) -> Callable[[Any], Any]:
        plan = PARTITION_PLANS[rule]()  # a rule with no plan here fails its cells

        def run(source: Any) -> Any:
            out = plan.select(x, source)
            return np.asarray(getattr(out, "keep", out))  # the kept keys (thresholds also release noisy counts)
        return run
    return prepare


def selections() -> list[Cell]:
    """Every selection on every shape of its input."""
    cells = [Cell(cls.selection, shape, _scores_selection(cls)) for cls in score_selections() for shape in SCORE_SHAPES]
    for draw, price in (("permute-and-flip", {"epsilon": 1}), ("exponential", {"rho": "1/8"})):
        for label, fallback in (("no fallback", 0), ("fallback", None)):
            cells += [Cell(f"quantile ({draw}), {label}", shape, _quantile(fallback, price))
                      for shape in QUANTILE_SHAPES]
    cells += [Cell("quantiles, recursive split", Shape(shape.name, shape.x0, shape.x1, _values_class),
                   _quantiles_split) for shape in QUANTILE_SHAPES]
    for rule in sorted(partition_rules(), key=lambda cls: cls.__name__):
        cells += [Cell(f"partition, {rule.__name__}", shape, _partition(rule)) for shape in COUNT_SHAPES]
    return cells
