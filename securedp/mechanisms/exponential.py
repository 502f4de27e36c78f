"""The exponential mechanism (McSherry & Talwar 2007), sampled exactly.

**Law.** For scores ``s_1 .. s_n`` (exact rationals) the mechanism returns
candidate ``i`` with probability proportional to
``exp(epsilon * s_i / (2 * sensitivity))``, or
``exp(epsilon * s_i / sensitivity)`` when the scores are declared
``monotonic``. Every candidate keeps its exact, non-zero probability,
whatever the range of the scores (``10**9``, integers of hundreds of bits):
nothing underflows and no small weight is absorbed into a large one, the
failures of floating-point implementations shown by Ilvento (2020).

**Privacy map.** If changing the data (adding or removing one person) moves
every score by at most ``sensitivity``, the release is ``epsilon``-DP
(McSherry & Talwar 2007, Theorem 6). If moreover all scores move in the same
direction (``monotonic=True``, e.g. counts), the factor 2 can be dropped and
the release is still ``epsilon``-DP (Dwork & Roth 2014, Theorem 3.10, remark).
The candidates themselves must not depend on the data.

**Bounded range, hence zCDP** (what a rho budget is charged: the sharp bounded-range bound, at most
``epsilon**2 / 8``, not ``epsilon**2 / 2``). The
release is ``epsilon``-bounded range (Durfee & Rogers 2019, "Practical differentially private top-k
selection with pay-what-you-get composition", Lemma 3.1): for neighbours ``x, x'`` the privacy loss of
output ``y`` is ``f(y) = c (s_y(x) - s_y(x')) + t`` with ``t = log(Z(x') / Z(x))`` independent of ``y`` and
``c = epsilon / (2 sensitivity)``; ``s_y(x) - s_y(x')`` lies in ``[-sensitivity, sensitivity]``, so ``f`` lies
in an interval of width ``epsilon``. Declared ``monotonic`` (``c = epsilon / sensitivity``), every score moves
the same way, so the difference lies in ``[0, sensitivity]`` or ``[-sensitivity, 0]``: width ``epsilon``
again. The same holds with a base measure (the quantiles' fallback atom and the widths of their lattice
entries, :mod:`securedp.mechanisms.quantile`): a weight that does not depend on the data cancels from
``f``, and the fallback's score moves within the same bound (and the same way for the monotone levels).
An ``eta``-bounded-range release is ``eta**2 / 8``-zCDP (Cesar & Rogers 2021, "Bounding, concentrating, and
truncating: unifying privacy loss composition for data analytics", Lemma 3.2: by Hoeffding's lemma the
loss, supported on a width-``eta`` interval, has ``log E[exp(lambda f)] <= lambda E[f] + lambda**2 eta**2 / 8``,
and ``lambda = -1`` with ``E[exp(-f)] = 1`` gives ``E[f] <= eta**2 / 8``); the least valid bound is lower
(x1.014 at ``eta = 1``, x1.054 at 2) and is what is charged, certified from above
(:mod:`securedp.privacy.bounded_range_zcdp`, :func:`~securedp.privacy.conversions.bounded_range_to_zcdp`).
``tests/unit/privacy/test_proven_loss.py`` and ``test_bounded_range_zcdp.py`` compute the exact zCDP of small
neighbouring instances against the charge: two candidates whose scores move apart by the whole sensitivity lose
within x1.001 of it.

**Algorithm.** Scores become integers on a common rational unit
(:mod:`securedp.mechanisms.scores`), or, for float scores, stay float64
values read at their exact binary value; the exact gaps ``g_i = max - s_i``
feed the exact sampler
:class:`~securedp.hazmat.samplers.categorical.ExpCategorical` with
``rate = epsilon * unit / (2 * sensitivity)``. Its running time does
not depend on which candidate wins (except on events of probability below
``2**-60``; see that module).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.samplers import ExpCategorical
from securedp.mechanisms.scores import Scores
from securedp.mechanisms.selection import MonotonicSelection
from securedp.mechanisms.statistic import public_function, release_function


@dataclass(frozen=True)
class ExponentialMechanism(MonotonicSelection):
    """The exponential mechanism's definition: scores in, one exact draw out (see the module docstring)."""

    selection = "exponential"

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "monotonic": self.monotonic,
                "candidates": self.size}

    def chooser(self, scores: Scores) -> Callable[[RandomSource], int]:
        gaps, unit = scores.sampler_gaps()
        divisor = self.sensitivity if self.monotonic else 2 * self.sensitivity
        plan = ExpCategorical(gaps, self.epsilon * unit / divisor)
        return lambda source: plan.draw(source)[0]


prepare_exponential_mechanism = public_function(
    ExponentialMechanism.prepare, "prepare_exponential_mechanism",
    """Validate and price an exponential-mechanism selection; nothing is drawn until ``.execute(rng)``.

    ``scores``: a sequence or 1-d array of scores (one per candidate), or a
    utility function ``scores(data, candidate)`` evaluated here on every
    candidate (``candidates`` and ``data`` then required). The release value is
    ``candidates[i]``, or the index ``i`` when no candidates are given.
    A prepared release may be executed repeatedly, each time an independent
    selection (the set-up is computed once).
    """)
exponential_mechanism = release_function(prepare_exponential_mechanism, "exponential_mechanism", """Select a \
candidate with probability proportional to ``exp(epsilon * score / (2 * sensitivity))``, exactly.

See the module docstring for the law and privacy map, and
:func:`prepare_exponential_mechanism` for the arguments.
""")
