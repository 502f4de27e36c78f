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

from typing import Any

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.samplers import ExpCategorical
from securedp.mechanisms.release import PreparedRelease, Release, scores_input
from securedp.mechanisms.scores import prepared_selection, selection_inputs


def prepare_exponential_mechanism(
    scores: Any,
    *,
    epsilon: Any,
    sensitivity: Any,
    candidates: Any = None,
    monotonic: bool = False,
    data: Any = None,
) -> PreparedRelease:
    """Validate and price an exponential-mechanism selection; nothing is drawn until ``.execute(rng)``.

    ``scores``: a sequence or 1-d array of scores (one per candidate), or a
    utility function ``scores(data, candidate)`` evaluated here on every
    candidate (``candidates`` and ``data`` then required). The release value is
    ``candidates[i]``, or the index ``i`` when no candidates are given.
    A prepared release may be executed repeatedly, each time an independent
    selection (the set-up is computed once).
    """
    if not isinstance(monotonic, bool):
        raise TypeError("monotonic must be True or False")
    eps, sens, cands, parsed = selection_inputs(scores, epsilon, sensitivity, candidates, data)
    gaps, unit = parsed.sampler_gaps()
    plan = ExpCategorical(gaps, eps * unit / (sens if monotonic else 2 * sens))
    parameters = {"epsilon": eps, "sensitivity": sens, "monotonic": monotonic, "candidates": len(parsed)}

    return prepared_selection("exponential", eps, cands, parameters, lambda source: plan.draw(source)[0]).with_input(scores_input(parsed))


def exponential_mechanism(
    scores: Any,
    *,
    epsilon: Any,
    sensitivity: Any,
    candidates: Any = None,
    monotonic: bool = False,
    data: Any = None,
    rng: RandomSource | None = None,
) -> Release:
    """Select a candidate with probability proportional to ``exp(epsilon * score / (2 * sensitivity))``, exactly.

    See the module docstring for the law and privacy map, and
    :func:`prepare_exponential_mechanism` for the arguments.
    """
    return prepare_exponential_mechanism(
        scores, epsilon=epsilon, sensitivity=sensitivity, candidates=candidates, monotonic=monotonic, data=data,
    ).execute(rng)
