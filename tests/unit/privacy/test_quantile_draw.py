"""Issue 42.3: an epsilon-priced quantile over few candidates draws by permute-and-flip, exactly and epsilon-DP.

The law is rebuilt from the code (the window and the coins :class:`~securedp.mechanisms.quantile_draw.FlipDraw`
flips) and computed exactly (MPFR, 200 bits) from permute-and-flip's definition: candidate ``i`` is released
with probability ``p_i * integral_0^1 prod_{j != i} (1 - t p_j) dt`` (its coin shows heads and every candidate
whose uniform key is smaller shows tails), checked against the enumeration of every order on a small case.
On every pair of neighbouring datasets of a small lattice (one row added) the largest privacy loss is at most
the ``epsilon`` charged, and a control at twice the rate is caught. The draws follow the law (chi-square, fixed
seed); the one-column release is the one-cell table's, byte for byte; an earlier record (every selection by the
exponential mechanism) and a new one replay; a ``rho`` session keeps the exponential mechanism.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import gmpy2
import numpy as np
import polars as pl
import pytest
from scipy import stats

import securedp
from securedp import AuditLog, ChaChaSource, Session
from securedp.audit.replay import replay_log
from securedp.mechanisms.quantile import Quantile
from securedp.mechanisms.quantile_draw import FlipDraw, whole_range
from securedp.mechanisms.rank_utility import LevelLaw, Window, fallback_weight
from securedp.mechanisms.record_rules import EXPONENTIAL, PERMUTE_AND_FLIP, RecordRules, rules_scope
from securedp.mechanisms.records import LatticeColumn
from securedp.privacy.bounded_range_zcdp import bounded_range_zcdp
from securedp.privacy.conversions import pure_to_zcdp
from securedp.privacy.cost import Cost
from securedp.tables import Median
from securedp.tables.query import Query

PRECISION = 200
EPSILON = Fraction(1)


def _coins(points: list[int], counts: list[int], q: Fraction, p: Fraction, hi: int, m: int = 1,
           rate_factor: int = 1) -> tuple[FlipDraw, list]:
    """The draw the code builds for one cell (bounds ``(0, hi)``, step 1) and its coins' exact probabilities."""
    definition = Quantile(Cost.of(EPSILON, None), LatticeColumn.of(bounds=(0, hi), lattice=1, max_contributions=m),
                          (q,), fallback=p)
    assert definition.selection == PERMUTE_AND_FLIP
    rate = LevelLaw(q, EPSILON, m).rate * rate_factor
    window = Window(points, counts, 0, hi, q, whole_range(q, counts), fallback_weight(p, hi + 1),
                    LevelLaw(q, EPSILON, m).tie_margin)
    draw = FlipDraw(window, rate)
    with gmpy2.context(precision=PRECISION):
        r = gmpy2.mpq(rate.numerator, rate.denominator)
        return draw, [gmpy2.exp(-r * int(g)) for g in draw.coins.gaps]


def _polynomial_integral(factors: Counter) -> gmpy2.mpfr:
    """``integral_0^1 prod (1 - t c)**k dt`` over ``factors`` ``{c: k}``, by expanding the polynomial."""
    with gmpy2.context(precision=PRECISION):
        poly = [gmpy2.mpfr(1)]
        for c, k in factors.items():
            for _ in range(k):
                poly = [a - c * b for a, b in zip([*poly, gmpy2.mpfr(0)], [gmpy2.mpfr(0), *poly], strict=True)]
        return sum(a / (i + 1) for i, a in enumerate(poly))


def flip_law(coins: list) -> list:
    """Permute-and-flip's law over ``coins`` (each candidate's heads probability), exactly (module docstring)."""
    multiset = Counter(coins)
    with gmpy2.context(precision=PRECISION):
        per_value = {}
        for c in multiset:
            rest = Counter(multiset)
            rest[c] -= 1
            per_value[c] = c * _polynomial_integral(+rest)
        return [per_value[c] for c in coins]


def point_law(draw: FlipDraw, coins: list) -> dict[int, gmpy2.mpfr]:
    """The released point's law: the coins' law, the fallback's copies all releasing the fallback point."""
    law: dict[int, gmpy2.mpfr] = {}
    with gmpy2.context(precision=PRECISION):
        for k, mass in enumerate(flip_law(coins)):
            y = draw.lo_u + k if k < draw.size else draw.fallback_point
            law[y] = law.get(y, gmpy2.mpfr(0)) + mass
    return law


def test_the_integral_is_the_enumeration_of_every_order() -> None:
    with gmpy2.context(precision=PRECISION):
        coins = [gmpy2.mpfr(1), gmpy2.exp(gmpy2.mpfr(-1)), gmpy2.exp(gmpy2.mpfr(-1)), gmpy2.exp(gmpy2.mpfr(-3))]
        enumerated = [gmpy2.mpfr(0)] * len(coins)
        for order in itertools.permutations(range(len(coins))):
            tails = gmpy2.mpfr(1)
            for i in order:
                enumerated[i] += tails * coins[i] / math.factorial(len(coins))
                tails *= 1 - coins[i]
        for a, b in zip(flip_law(coins), enumerated, strict=True):
            assert abs(a - b) < gmpy2.mpfr(2) ** -150
        assert abs(sum(enumerated) - 1) < gmpy2.mpfr(2) ** -150


def _cells(hi: int, rows: int) -> list[tuple[list[int], list[int]]]:
    """Every multiset of at most ``rows`` values in ``0 .. hi``, as (distinct points, counts)."""
    cells = []
    for n in range(rows + 1):
        for values in itertools.combinations_with_replacement(range(hi + 1), n):
            held = Counter(values)
            cells.append((sorted(held), [held[v] for v in sorted(held)]))
    return cells


def _worst_loss(q: Fraction, p: Fraction, rate_factor: int = 1, hi: int = 4, rows: int = 2) -> gmpy2.mpfr:
    worst = gmpy2.mpfr(0)
    for points, counts in _cells(hi, rows):
        law = point_law(*_coins(points, counts, q, p, hi, rate_factor=rate_factor))
        for v in range(hi + 1):
            held = Counter(dict(zip(points, counts, strict=True)))
            held[v] += 1
            more = point_law(*_coins(sorted(held), [held[u] for u in sorted(held)], q, p, hi, rate_factor=rate_factor))
            assert law.keys() == more.keys()
            with gmpy2.context(precision=PRECISION):
                worst = max(worst, *(abs(gmpy2.log(law[y] / more[y])) for y in law))
    return worst


@pytest.mark.parametrize("p", [Fraction(0), Fraction(1, 2)])
@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(1, 3), Fraction(0), Fraction(1)])
def test_permute_and_flip_loses_at_most_the_epsilon_charged(q: Fraction, p: Fraction) -> None:
    worst = _worst_loss(q, p)
    with gmpy2.context(precision=PRECISION):
        assert worst <= gmpy2.mpfr(1) + gmpy2.mpfr(2) ** -100  # epsilon = 1
        assert worst >= gmpy2.mpfr("0.4")  # not vacuous: the neighbours move the law


@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(0)])
def test_control_twice_the_rate_loses_more_than_epsilon(q: Fraction) -> None:
    assert _worst_loss(q, Fraction(1, 2), rate_factor=2) > gmpy2.mpfr("1.2")


@pytest.mark.parametrize(("q", "p"), [(Fraction(1, 2), Fraction(3, 4)), (Fraction(0), Fraction(0)),
                                      (Fraction(1, 3), Fraction(1, 2))])
def test_the_draws_follow_the_exact_law(q: Fraction, p: Fraction) -> None:
    """Chi-square of 20,000 draws of the definition's own sampler (fixed seed) against the exact pmf."""
    points, counts = [1, 2, 5], [1, 2, 1]
    definition = Quantile(Cost.of(EPSILON, None), LatticeColumn.of(bounds=(0, 8), lattice=1, max_contributions=1),
                          (q,), fallback=p)
    draw = definition.cell_points(points, counts)
    source = ChaChaSource(bytes([42]) * 32)
    drawn = Counter(draw(source)[0] for _ in range(20000))
    law = point_law(*_coins(points, counts, q, p, 8))
    keys = sorted(law)
    assert set(drawn) <= set(keys)
    expected = np.array([float(law[k]) * 20000 for k in keys])
    assert abs(expected.sum() - 20000) < 1e-6
    assert stats.chisquare([drawn.get(k, 0) for k in keys], expected).pvalue > 1e-6


def test_the_one_column_release_is_the_one_cell_table_byte_for_byte() -> None:
    data = [3, 7, 7, 12, 15, 15, 15, 40, 41, 60]
    for seed in range(6):
        one_column = securedp.median(pl.Series("v", data), bounds=(0, 100), epsilon="1/2",
                                     rng=ChaChaSource(bytes([seed]) * 32))
        table = securedp.table(pl.DataFrame({"v": data}), aggregations=[Median("v", (0, 100))], epsilon="1/2",
                               rng=ChaChaSource(bytes([seed]) * 32))
        assert one_column.mechanism == PERMUTE_AND_FLIP == table.parameters["v_median"]["selection"]
        assert one_column.value == table.value[0][0]


def test_an_earlier_record_and_a_new_one_replay(tmp_path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("x\n" + "\n".join(str(v) for v in range(0, 300, 7)) + "\n")
    query = Query.of_column("median", "x", Fraction(1, 20), bounds=(Fraction(0), Fraction(1000)), lattice=Fraction(1))
    seed = bytes(range(32))
    values = []
    for label, rule in (("old", EXPONENTIAL), ("new", PERMUTE_AND_FLIP)):
        # the earlier version drew every selection by the exponential mechanism
        with rules_scope(RecordRules(quantile_draw=rule)):
            release = query.prepare(data).execute(ChaChaSource(seed).substream(label))
        assert release.mechanism == rule
        values.append(release.value)
        AuditLog(tmp_path / "a.jsonl").append({**release.record(), "query": query.to_json()})
    results = replay_log(tmp_path / "a.jsonl", seed, data)
    assert [r.ok for r in results] == [True, True], [r.problem for r in results]


def test_a_rho_session_keeps_the_exponential_mechanism_and_its_charge() -> None:
    x = np.arange(100)
    session = Session(rho=10)
    assert session.median(x, bounds=(0, 100), epsilon=2).mechanism == EXPONENTIAL
    bounded_range = bounded_range_zcdp(Fraction(2))  # the certified sharp bound, below 2**2 / 8
    assert session.spent == bounded_range < Fraction(1, 2)
    released = securedp.prepare_median(x, bounds=(0, 100), epsilon=2)  # prepared outside: permute-and-flip
    assert session.release(released).mechanism == PERMUTE_AND_FLIP
    assert session.spent == bounded_range + pure_to_zcdp(2)  # not bounded range: the pure charge
    pure = Session(epsilon=10)
    assert pure.median(x, bounds=(0, 100), epsilon=2).mechanism == PERMUTE_AND_FLIP and pure.spent == 2


def test_the_rule_reads_the_price_and_the_coins_only() -> None:
    from securedp.mechanisms.quantile_draw import PERMUTE_AND_FLIP_COINS, quantile_selection

    eps, rho, rate = Cost.of(EPSILON, None), Cost.of(None, Fraction(1, 8)), Fraction(1, 2)
    most = PERMUTE_AND_FLIP_COINS
    assert quantile_selection(eps, most // 4, 3 * most // 4, rate) == PERMUTE_AND_FLIP
    assert quantile_selection(eps, most // 4, 3 * most // 4 + 1, rate) == EXPONENTIAL
    assert quantile_selection(eps, 9, 27, Fraction(1, 1950)) == PERMUTE_AND_FLIP  # a table of 262,080 gaps
    assert quantile_selection(eps, 9, 27, Fraction(1, 1951)) == EXPONENTIAL  # 262,215 > 2**18: beyond its bound
    assert quantile_selection(rho, 9, 27, rate) == EXPONENTIAL  # bounded range: a quarter of the charge
    with rules_scope(RecordRules(quantile_draw=EXPONENTIAL)):
        assert quantile_selection(eps, 9, 27, rate) == EXPONENTIAL
    large = securedp.prepare_median([1, 2], bounds=(0, 2**15), lattice=1, epsilon=1)  # 32,769 + 98,307 coins
    small = securedp.prepare_median([1, 2], bounds=(0, 2**15 - 1), lattice=1, epsilon=1)  # 2**15 + 3 * 2**15
    assert [p.execute(ChaChaSource(bytes(32))).mechanism for p in (large, small)] == [EXPONENTIAL, PERMUTE_AND_FLIP]
