"""Keys selected by their released count, through whole table releases, against the exact laws.

A table that releases a count selects its private keys by thresholding that count (the rule ``"count"``):
a key with exact count ``n`` is kept iff ``n + Z >= tau`` and then released with the value ``n + Z``.
So, over many keys of the same ``n``:

* the kept fraction is ``P(Z >= tau - n)``, exactly (binomial test);
* the released values of the kept keys follow the law of ``n + Z`` given ``n + Z >= tau``, exactly
  (G-test of :func:`_exact_pmf.gof_pvalue`, with the law written independently of the library);
* a key only one person holds, with the most rows that person may have (``s``), is kept at the rate
  ``P(Z >= tau - s)``, and not more often than ``delta / k`` (one-sided binomial).

Fixed ChaCha seeds, every test at ``ALPHA = 1e-6``. Controls show that the same tests reject the law a
threshold one lower (or an untruncated law) would give.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction

import polars as pl
import pytest
from _exact_pmf import ONE, ZERO, Bounds, DiscreteGaussian, DiscreteLaplace, Law, gof_pvalue
from scipy import stats

from securedp import ChaChaSource
from securedp.tables import Count, prepare_table

ALPHA = 1e-6
DELTA = Fraction(1, 20)


class Kept(Law):
    """``n + Z`` given ``n + Z >= tau``, for a noise law ``Z``."""

    def __init__(self, noise: Law, n: int, tau: int) -> None:
        self.noise, self.n, self.tau = noise, n, tau
        self.kept = noise.cdf(tau - 1 - n).complement()
        self.name = f"{noise.name} + {n} given >= {tau}"

    def cdf(self, k: int) -> Bounds:
        if k < self.tau:
            return ZERO
        inside = self.noise.cdf(k - self.n) - self.noise.cdf(self.tau - 1 - self.n)
        value = inside / self.kept
        return Bounds(min(value.lo, ONE.lo), min(value.hi, ONE.hi))


def seeded(label: str) -> ChaChaSource:
    return ChaChaSource(hashlib.sha256(b"count-threshold-" + label.encode()).digest())


def keys_of_sizes(sizes: dict[int, int], rows: int = 1, groups: int = 1) -> pl.DataFrame:
    """``sizes[n]`` keys of ``n`` persons each; each person holds ``groups`` keys with ``rows`` rows in each."""
    key: list[str] = []
    person: list[int] = []
    k = p = 0
    for n, count in sizes.items():
        for _ in range(count):
            for _ in range(n):
                for g in range(groups):
                    key += [f"{k + g}"] * rows
                    person += [p] * rows
                p += 1
            k += groups
    return pl.DataFrame({"pid": person, "g": key})


def release(data: pl.DataFrame, label: str, **query: object) -> tuple[list[int], int]:
    prepared = prepare_table(data, group_by=["g"], aggregations=[Count()], id_column="pid", delta=DELTA, **query)
    r = prepared.execute(seeded(label))
    assert r.parameters["selection"] == "count"
    return [row[1] for row in r.value], r.parameters["threshold"]


CURRENCIES = {"epsilon": ({"epsilon": 1}, DiscreteLaplace(Fraction(1))),
              "rho": ({"rho": Fraction(1, 50)}, DiscreteGaussian(Fraction(25)))}


@pytest.mark.parametrize("currency", sorted(CURRENCIES))
def test_kept_keys_are_released_with_the_law_of_the_count_that_passed(currency: str) -> None:
    query, noise = CURRENCIES[currency]
    _, tau = release(keys_of_sizes({1: 1}), f"{currency}-tau", **query)
    sizes = [max(1, tau - 2), tau, tau + 3]
    keys = 6000
    for n in sizes:
        values, _ = release(keys_of_sizes({n: keys}), f"{currency}-{n}", **query)
        kept = noise.cdf(tau - 1 - n).complement()
        assert stats.binomtest(len(values), keys, float(kept)).pvalue > ALPHA  # float-ok: test statistic only
        assert min(values) >= tau
        assert gof_pvalue(values, Kept(noise, n, tau)) > ALPHA
        # controls: the untruncated law, and the law of a threshold one lower, are rejected
        assert gof_pvalue(values, Kept(noise, n, tau - 1)) < ALPHA or n > tau
        assert gof_pvalue(values, Kept(noise, n, -10**6)) < ALPHA or n > tau


@pytest.mark.parametrize("currency", sorted(CURRENCIES))
def test_a_key_one_person_holds_appears_at_most_delta_over_k(currency: str) -> None:
    """Each person holds k = 2 keys with s = max_rows = 2 rows in each: the worst case of the bound."""
    query = {"epsilon": 1} if currency == "epsilon" else {"rho": Fraction(1, 2)}
    noise = DiscreteLaplace(Fraction(4)) if currency == "epsilon" else DiscreteGaussian(Fraction(8))
    persons = 60_000
    values, tau = release(keys_of_sizes({1: persons}, rows=2, groups=2), f"{currency}-one", max_groups=2,
                          max_rows=2, **query)
    keys = 2 * persons
    law = noise.cdf(tau - 3).complement()  # P(Z >= tau - 2)
    assert float(law.hi) <= DELTA / 2
    assert stats.binomtest(len(values), keys, float(law)).pvalue > ALPHA  # float-ok: test statistic only
    assert stats.binomtest(len(values), keys, float(DELTA / 2), alternative="greater").pvalue > ALPHA
    lower = noise.cdf(tau - 4).complement()  # control: a threshold one lower
    assert stats.binomtest(len(values), keys, float(lower)).pvalue < ALPHA  # float-ok: test statistic only
    assert all(v >= tau for v in values)
