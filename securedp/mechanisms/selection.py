"""Selections as statistics: the exact scores are the aggregate, the selection is the noise step.

A selection (:mod:`~securedp.mechanisms.exponential`,
:mod:`~securedp.mechanisms.noisy_max`, :mod:`~securedp.mechanisms.permute_and_flip`)
picks one of ``n`` public candidates from one exact score each. In the terms
of :mod:`securedp.mechanisms.statistic`:

1. **exact aggregate**: the scores, read exactly
   (:class:`~securedp.mechanisms.scores.Scores`). They are computed by the
   caller, or by an engine (a score per candidate is typically a count or a
   sum of lattice units per group); their ``sensitivity`` is the caller's
   promise, and carries any contribution bound;
2. **selection step**: :meth:`Selection.noise_step` of the scores draws the
   index (the release's value is it, or its candidate) and prices it at
   ``epsilon``. The candidates and their number are public.

Selections are pure-DP (``epsilon``) releases, recorded with
``max_contributions = 1``: the scores' sensitivity states the bound.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from securedp.hazmat.bits.source import RandomSource
from securedp.mechanisms.noise import Cost
from securedp.mechanisms.release import PreparedRelease, scores_input
from securedp.mechanisms.scores import Scores, parse_scores, selection_inputs
from securedp.mechanisms.statistic import Statistic


@dataclass(frozen=True)
class Selection(Statistic[Scores]):
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
        return cls(Cost(eps, None), sens, cands, len(parsed), **public).noise_step(parsed)

    @property
    def epsilon(self) -> Fraction:
        assert self.cost.epsilon is not None  # selections are priced in epsilon
        return self.cost.epsilon

    @property
    def mechanism(self) -> str:
        return self.selection

    def aggregate(self, data: Any, ids: Any = None) -> Scores:
        """The exact scores: ``data`` is one score per candidate (person ids play no part)."""
        if ids is not None:
            raise TypeError("a selection takes no ids: the scores' sensitivity bounds each person's influence")
        return parse_scores(data)

    def input_bytes(self, aggregate: Scores) -> Callable[[], bytes]:
        return scores_input(aggregate)

    @abstractmethod
    def chooser(self, scores: Scores) -> Callable[[RandomSource], int]:
        """The selection's set-up for ``scores``: a function drawing the selected index."""

    def sampler(self, aggregate: Scores) -> Callable[[RandomSource], Any]:
        if len(aggregate) != self.size:
            raise ValueError(f"{self.size} candidates but {len(aggregate)} scores")
        choose, candidates = self.chooser(aggregate), self.candidates
        if candidates is None:
            return choose
        return lambda source: candidates[choose(source)]


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
