"""Selections as statistics: the exact scores are the aggregate, the selection is the noise step.

A selection (:mod:`~securedp.mechanisms.exponential`,
:mod:`~securedp.mechanisms.noisy_max`, :mod:`~securedp.mechanisms.permute_and_flip`)
picks one of ``n`` public candidates from one exact score each, in two steps:

1. **exact aggregate**: the scores, read exactly
   (:class:`~securedp.mechanisms.scores.Scores`). They are computed by the
   caller, or by an engine (a score per candidate is typically a count or a
   sum of lattice units per group); their ``sensitivity`` is the caller's
   promise, and carries any contribution bound;
2. **selection step**: :meth:`Selection.noise_step` of the scores draws the
   index (the release's value is it, or its candidate) and prices it at
   ``epsilon``; it never sees a row, so the scores can come from anywhere. The
   candidates and their number are public.

Selections are pure-DP (``epsilon``) releases, recorded with
``max_contributions = 1``: the scores' sensitivity states the bound.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from securedp.hazmat.bits.source import RandomSource
from securedp.ledger.release import Execution, PreparedRelease, Release, scores_input
from securedp.ledger.release_record import bounded_range
from securedp.mechanisms.scores import Scores, selection_inputs
from securedp.privacy.cost import Cost


@dataclass(frozen=True)
class Selection(ABC):
    """The definition shared by the selections: ``epsilon``, ``sensitivity``, the public candidates.

    A subclass names its ``selection`` mechanism and implements :meth:`chooser`.
    """

    statistic = "selection"
    selection: ClassVar[str]
    """The mechanism recorded in the release (``"exponential"`` ...)."""
    cost: Cost
    sensitivity: Fraction
    candidates: list[Any] | None
    size: int
    """The number of candidates (public)."""
    max_contributions: int = field(default=1, init=False)

    @classmethod
    def of_scores(cls, scores: Any, epsilon: Any, sensitivity: Any, candidates: Any, data: Any,
                  **public: Any) -> PreparedRelease:
        """Check the public inputs and the scores (``scores(data, candidate)`` when a utility), then prepare."""
        eps, sens, cands, parsed = selection_inputs(scores, epsilon, sensitivity, candidates, data)
        return cls(Cost.of(eps), sens, cands, len(parsed), **public).noise_step(parsed)

    @property
    def epsilon(self) -> Fraction:
        assert self.cost.epsilon is not None  # selections are priced in epsilon
        return self.cost.epsilon

    @property
    def mechanism(self) -> str:
        return self.selection

    @property
    @abstractmethod
    def parameters(self) -> Mapping[str, Any]:
        """The exact public parameters, as recorded."""

    @abstractmethod
    def chooser(self, scores: Scores) -> Callable[[RandomSource], int]:
        """The selection's set-up for ``scores``: a function drawing the selected index."""

    def sampler(self, scores: Scores) -> Callable[[RandomSource], Any]:
        """The selection's set-up for ``scores``: a function drawing the released value (index or candidate)."""
        if len(scores) != self.size:
            raise ValueError(f"{self.size} candidates but {len(scores)} scores")
        choose, candidates = self.chooser(scores), self.candidates
        if candidates is None:
            return choose
        return lambda source: candidates[choose(source)]

    def release(self, value: Any, source: RandomSource) -> Release:
        """The :class:`~securedp.ledger.release.Release` of ``value``, drawn from ``source``."""
        return Release(value=value, statistic=self.statistic, mechanism=self.mechanism, parameters=self.parameters,
                       epsilon=self.epsilon, rho=None, max_contributions=1, source=source.describe())

    def noise_step(self, scores: Scores) -> PreparedRelease:
        """The selection of ``scores``, priced at ``epsilon``; nothing is drawn until ``.execute(rng)``."""
        route = SelectionRoute(self, self.sampler(scores), scores_input(scores))
        return PreparedRelease(self.statistic, self.epsilon, None, route, route.input_bytes,
                               bounded_range=bounded_range(self.statistic, self.mechanism))


@dataclass(frozen=True)
class SelectionRoute:
    """The :class:`~securedp.ledger.release.Route` of a selection: its sampler set up for the scores,
    drawing the value and releasing it (the exact scores' encoding is the input of every execution)."""

    selection: Selection
    draw: Callable[[RandomSource], Any]
    input_bytes: Callable[[], bytes]

    def execution(self, source: RandomSource) -> Execution:
        return Execution(self.selection.release(self.draw(source), source), self.input_bytes)


@dataclass(frozen=True)
class MonotonicSelection(Selection):
    """A selection whose privacy map improves when the scores are declared ``monotonic``."""

    monotonic: bool = False

    @classmethod
    def prepare(cls, scores: Any, *, epsilon: Any, sensitivity: Any, candidates: Any = None,
                monotonic: bool = False, data: Any = None) -> PreparedRelease:
        if not isinstance(monotonic, bool):
            raise TypeError("monotonic must be True or False")
        return cls.of_scores(scores, epsilon, sensitivity, candidates, data, monotonic=monotonic)
