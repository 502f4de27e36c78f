"""The route of a release of exact counts, each part noised by its own law (the contribution histogram)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.ledger.release import Execution, Release
from securedp.privacy.noise import Noise


@dataclass(frozen=True)
class NoisyCounts:
    """The :class:`~securedp.ledger.release.Route` of exact integer ``parts`` (each an integer array, or one
    integer), each noised by its law in ``noises`` (in order: one batch of ``len(part)`` draws, or one draw)
    and released as ``template`` (its value the noisy integers in order, its source the one drawn from)."""

    parts: Sequence[np.ndarray | int]
    noises: Sequence[Noise]
    template: Release
    input_bytes: Callable[[], bytes]

    def execution(self, source: RandomSource) -> Execution:
        noisy: list[Any] = []
        for part, noise in zip(self.parts, self.noises, strict=True):
            if isinstance(part, np.ndarray):
                noisy += (part + np.asarray(noise.draw(source, len(part)), dtype=object)).tolist()
            else:
                noisy.append(part + noise.draw(source))
        release = dataclasses.replace(self.template, value=tuple(int(v) for v in noisy), source=source.describe())
        return Execution(release, self.input_bytes)
