"""Every charge against the privacy loss it pays for, computed exactly on small neighbouring instances (issue 42).

Each law is enumerated; its Rényi divergences are computed at 200 bits; the true zCDP of an instance,
``sup_alpha max(D_alpha(P||Q), D_alpha(Q||P)) / alpha``, is approached from below on a fine grid of ``alpha``,
so "true <= charge" checks that no release loses more than it is charged, and "charge <= 1.05 true" that it
is charged (nearly) what it loses.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import gmpy2
import pytest

from securedp import AuditLog, ChaChaSource, Session, verify_log
from securedp.audit.replay import replay_log
from securedp.mechanisms.record_rules import (
    EARLIER_ZCDP_CONVERSION,
    EIGHTH_ZCDP_CONVERSION,
    ZCDP_CONVERSION,
    RecordRules,
    rules_scope,
)
from securedp.mechanisms.selection_price import selection_epsilon
from securedp.privacy.conversions import approx_dp_to_zcdp, bounded_range_to_zcdp, pure_to_zcdp, zcdp_to_approx_dp
from securedp.privacy.cost import Cost, Currency
from securedp.tables.query import Query

ALPHAS = [1 + Fraction(1, 1 << 14)] + [1 + Fraction(k, 32) for k in range(1, 32)] + [Fraction(k, 2) for k in
                                                                                   range(5, 40)]
FEW_ALPHAS = [1 + Fraction(1, 1 << 14), 1 + Fraction(1, 64), Fraction(5, 4), Fraction(2), Fraction(5), Fraction(20)]


def mp(x: Fraction) -> gmpy2.mpfr:
    with gmpy2.context(precision=200):
        return gmpy2.mpfr(gmpy2.mpq(x.numerator, x.denominator))


def renyi(p: list, q: list, alpha: Fraction) -> gmpy2.mpfr:
    with gmpy2.context(precision=200):
        a = mp(alpha)
        return gmpy2.log(sum(pi ** a * qi ** (1 - a) for pi, qi in zip(p, q, strict=True))) / (a - 1)


def zcdp_of(p: list, q: list, alphas: list[Fraction] = ALPHAS) -> gmpy2.mpfr:
    """A lower bound (the sup over the grid) of the zCDP between two laws, both directions."""
    with gmpy2.context(precision=200):
        return max(max(renyi(p, q, a), renyi(q, p, a)) / mp(a) for a in alphas)


def exponential_law(scores: list[int], epsilon: Fraction) -> list:
    with gmpy2.context(precision=200):
        weights = [gmpy2.exp(mp(epsilon) * s / 2) for s in scores]
        total = sum(weights)
        return [w / total for w in weights]


def permute_and_flip_law(scores: list[int], epsilon: Fraction) -> list:
    """The law of permute-and-flip by its definition: every order, the first head."""
    n, top = len(scores), max(scores)
    with gmpy2.context(precision=200):
        coins = [gmpy2.exp(mp(epsilon) * (s - top) / 2) for s in scores]
        law = [gmpy2.mpfr(0)] * n
        for order in itertools.permutations(range(n)):
            tails = gmpy2.mpfr(1)
            for i in order:
                law[i] += tails * coins[i] / math.factorial(n)
                tails *= 1 - coins[i]
        return law


def neighbours(n: int, values: int = 3) -> list[tuple[list[int], list[int]]]:
    """Pairs of score vectors in {0 .. values - 1}**n whose every score moves by at most 1 (sensitivity 1)."""
    vectors = list(itertools.product(range(values), repeat=n))
    close = [(u, v) for u in vectors for v in vectors if max(abs(a - b) for a, b in zip(u, v, strict=True)) <= 1]
    return [(list(u), list(v)) for u, v in close]


@pytest.mark.parametrize(("epsilon", "slack"), [(Fraction(1, 2), "1.01"), (Fraction(1), "1.01"), (Fraction(2), "1.03")])
def test_the_exponential_mechanism_loses_at_most_its_bounded_range_charge(epsilon: Fraction, slack: str) -> None:
    pairs = neighbours(2) + neighbours(3, 2)
    worst = max(zcdp_of(exponential_law(u, epsilon), exponential_law(v, epsilon)) for u, v in pairs)
    charge = Cost.of(epsilon=epsilon, bounded_range=True).in_currency(Currency.RHO)
    assert charge == bounded_range_to_zcdp(epsilon) <= epsilon * epsilon / 8
    # (0, 1) against (1, 0) loses (epsilon / 2) tanh(epsilon / 4): x1.007 below the charge at 1, x1.027 at 2 (the
    # sharp bound's worst instances are two candidates at other gaps: test_bounded_range_zcdp.py)
    assert worst <= mp(charge) <= worst * gmpy2.mpfr(slack)


def test_permute_and_flip_is_not_epsilon_bounded_range_so_it_keeps_the_pure_charge() -> None:
    epsilon = Fraction(1)
    p, q = permute_and_flip_law([0, 0], epsilon), permute_and_flip_law([1, -1], epsilon)
    with gmpy2.context(precision=200):
        losses = [gmpy2.log(a / b) for a, b in zip(p, q, strict=True)]
        assert max(losses) - min(losses) > mp(epsilon) * gmpy2.mpfr("1.3")  # eps + ln(2 - e**-eps): not eps-BR
    pairs = neighbours(2) + neighbours(3, 2)
    worst = max(zcdp_of(permute_and_flip_law(u, epsilon), permute_and_flip_law(v, epsilon)) for u, v in pairs)
    assert worst > mp(epsilon * epsilon / 8)  # the bounded-range charge would be too small
    session = Session(rho=10)
    session.permute_and_flip([1, 2, 3], epsilon=1, sensitivity=1)
    assert session.spent == pure_to_zcdp(1) >= Fraction(str(float(worst)))


def randomized_response(epsilon: Fraction) -> tuple[list, list]:
    with gmpy2.context(precision=200):
        e = gmpy2.exp(mp(epsilon))
        return [e / (e + 1), 1 / (e + 1)], [1 / (e + 1), e / (e + 1)]


def discrete_laplace_shift(epsilon: Fraction, shift: int) -> tuple[list, list]:
    """Discrete Laplace of scale ``shift / epsilon`` at 0 and at ``shift``, truncated far out (mass below 1e-60)."""
    reach = math.ceil(150 * shift / epsilon)
    with gmpy2.context(precision=200):
        r = gmpy2.exp(-mp(epsilon) / shift)
        norm = (1 - r) / (1 + r)
        zs = range(-reach, reach + shift + 1)
        return [norm * r ** abs(z) for z in zs], [norm * r ** abs(z - shift) for z in zs]


@pytest.mark.parametrize("epsilon", [Fraction(3, 4), Fraction(1), Fraction(2), Fraction(4), Fraction(10)])
def test_a_pure_release_is_charged_the_sharp_bound_and_a_count_loses_exactly_that(epsilon: Fraction) -> None:
    charge = pure_to_zcdp(epsilon)
    count = zcdp_of(*randomized_response(epsilon))  # a count's discrete Laplace (sensitivity 1) is this
    exact = mp(epsilon) * gmpy2.tanh(mp(epsilon) / 2)  # its KL, the sup at alpha -> 1
    assert count <= exact <= mp(charge) <= exact * gmpy2.mpfr("1.001")
    assert charge <= epsilon * epsilon / 2
    if epsilon <= 4:
        wider = zcdp_of(*discrete_laplace_shift(epsilon, 3), FEW_ALPHAS)  # sensitivity 3 units: a smaller true loss
        assert wider <= mp(charge)
    assert Session(rho=100).count([1, 2], epsilon=epsilon) is not None


def test_the_pure_charge_below_three_quarters_is_the_classic_one_within_five_percent() -> None:
    for epsilon in (Fraction(1, 10), Fraction(1, 3), Fraction(1, 2), Fraction(74, 100)):
        assert pure_to_zcdp(epsilon) == epsilon * epsilon / 2
        assert epsilon * epsilon / 2 <= 1.05 * float(epsilon) * math.tanh(float(epsilon) / 2)


def cks(rho: Fraction, delta: Fraction) -> gmpy2.mpfr:
    """Canonne-Kamath-Steinke's infimum, independently: ternary search on log(alpha - 1) at 200 bits."""
    with gmpy2.context(precision=200):
        r, log_inv = mp(rho), gmpy2.log(mp(1 / delta))

        def f(t: gmpy2.mpfr) -> gmpy2.mpfr:
            a = 1 + gmpy2.exp(t)
            return a * r + (log_inv - gmpy2.log(a)) / (a - 1) + gmpy2.log(1 - 1 / a)

        lo, hi = gmpy2.mpfr(-40), gmpy2.mpfr(40)
        for _ in range(300):
            m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
            lo, hi = (lo, m2) if f(m1) < f(m2) else (m1, hi)
        return f(lo)


def gaussian_delta(rho: Fraction, epsilon: Fraction) -> float:
    """The exact delta(epsilon) of a Gaussian mechanism that is exactly rho-zCDP (Balle and Wang 2018)."""
    mu = math.sqrt(2 * float(rho))
    e = float(epsilon)
    upper = 0.5 * math.erfc((e / mu - mu / 2) / math.sqrt(2))
    return upper - math.exp(e) * 0.5 * math.erfc((e / mu + mu / 2) / math.sqrt(2))


CASES = [(Fraction(1, 10), Fraction(1, 10**6)), (Fraction(2), Fraction(1, 100)),
         (Fraction(1, 1000), Fraction(1, 10**9)), (Fraction(1, 2), Fraction(1, 10**5))]


@pytest.mark.parametrize(("rho", "delta"), CASES)
def test_zcdp_to_approx_dp_is_the_cks_infimum_rounded_up(rho: Fraction, delta: Fraction) -> None:
    eps = zcdp_to_approx_dp(rho, delta)
    truth = cks(rho, delta)
    assert truth <= mp(eps) <= truth * (1 + gmpy2.mpfr(2) ** -40)
    bun_steinke = float(rho) + 2 * math.sqrt(float(rho) * math.log(1 / float(delta)))
    assert float(eps) < bun_steinke / 1.03  # 3-21 % smaller than the Bun-Steinke epsilon
    assert gaussian_delta(rho, eps) <= float(delta)  # the Gaussian, exactly rho-zCDP, is within it


@pytest.mark.parametrize(("epsilon", "delta"), [(Fraction(1), Fraction(1, 10**6)), (Fraction(3), Fraction(1, 10**9)),
                                                (Fraction(1, 10), Fraction(1, 10**5))])
def test_approx_dp_to_zcdp_grants_the_cks_rho_rounded_down(epsilon: Fraction, delta: Fraction) -> None:
    rho = approx_dp_to_zcdp(epsilon, delta)
    assert zcdp_to_approx_dp(rho, delta) <= epsilon
    assert cks(rho, delta) <= mp(epsilon)
    assert zcdp_to_approx_dp(rho * (1 + Fraction(1, 10**6)), delta) > epsilon  # no more than a hair below the max
    log_inv = math.log(1 / float(delta))
    bun_steinke = (math.sqrt(log_inv + float(epsilon)) - math.sqrt(log_inv)) ** 2
    assert float(rho) > 1.18 * bun_steinke


def test_a_rho_priced_selection_runs_at_twice_the_epsilon() -> None:
    rho = Cost.of(rho=Fraction(1, 8))
    assert selection_epsilon(rho) > Fraction(1005, 1000)  # the sharp bound: more than 1**2 / 8 <= 1/8 allows
    assert bounded_range_to_zcdp(selection_epsilon(rho)) <= Fraction(1, 8)
    with rules_scope(RecordRules(conversion=EIGHTH_ZCDP_CONVERSION)):
        assert selection_epsilon(rho) == 1  # the earlier rules, kept to replay earlier records
        assert selection_epsilon(Cost.of(rho=Fraction(1, 8)), 4) == Fraction(1, 2)
    with rules_scope(RecordRules(conversion=EARLIER_ZCDP_CONVERSION)):
        assert selection_epsilon(rho) == Fraction(1, 2)
    assert selection_epsilon(Cost.of(rho=Fraction(1, 8)), 4) == Fraction(1, 2)  # below 3/4: epsilon**2 / 8


def test_the_session_charges_each_selection_its_proven_loss_and_the_log_verifies(tmp_path) -> None:
    path = tmp_path / "audit.jsonl"
    session = Session(rho=10, audit=AuditLog(path))
    session.exponential_mechanism([1, 2, 3], epsilon=2, sensitivity=1)
    assert session.spent == bounded_range_to_zcdp(2) < Fraction(1, 2) / Fraction(105, 100)  # under 2**2 / 8
    session.median([1, 2, 3, 4], bounds=(0, 10), epsilon=2)
    assert session.spent == 2 * bounded_range_to_zcdp(2)
    session.report_noisy_max([1, 2, 3], epsilon=2, sensitivity=1)  # not bounded range: the pure charge
    assert session.spent == 2 * bounded_range_to_zcdp(2) + pure_to_zcdp(2)
    report = verify_log(path)
    assert report.ok, report.problem


def test_a_record_charged_by_the_earlier_rule_still_verifies(tmp_path) -> None:
    path = tmp_path / "audit.jsonl"
    session = Session(rho=10, audit=AuditLog(path))
    session.exponential_mechanism([1, 2, 3], epsilon=2, sensitivity=1)
    session.count([1, 2], epsilon=2)
    lines = path.read_text().splitlines()
    from tests.audit.test_session_log import entries_of, rewrite

    entries = entries_of(path)
    entries[0]["record"].update(charged=2, spent=2, remaining=8)  # 2**2 / 2, as securedp 0.2 charged
    entries[1]["record"].update(charged=2, spent=4, remaining=6)
    rewrite(path, entries)
    assert len(lines) == 2 and verify_log(path).ok, verify_log(path).problem
    entries[1]["record"].update(charged=1, spent=3, remaining=7)  # neither rule's charge
    rewrite(path, entries)
    problem = verify_log(path).problem
    assert problem is not None and problem.field == "record.charged"


def test_a_rho_median_of_the_earlier_rule_replays_by_it(tmp_path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("x\n" + "\n".join(str(v) for v in range(100)) + "\n")
    query = Query.of_column("median", "x", None, bounds=(Fraction(0), Fraction(1000)), rho=Fraction(1, 50))
    seed = bytes(range(32))
    for label, conversion in (("old", EARLIER_ZCDP_CONVERSION), ("eighth", (
            "the epsilon-DP exponential mechanism is epsilon-bounded range, hence epsilon**2/8-zCDP "
            "(Durfee and Rogers 2019; Cesar and Rogers 2021)")), ("new", ZCDP_CONVERSION)):
        with rules_scope(RecordRules(conversion=conversion)):
            release = query.prepare(data).execute(ChaChaSource(seed).substream(label))
        AuditLog(tmp_path / "a.jsonl").append({**release.record(), "query": query.to_json()})
    results = replay_log(tmp_path / "a.jsonl", seed, data)
    assert [r.ok for r in results] == [True, True, True], [r.problem for r in results]


def laplace_tail(epsilon: Fraction, k: int, s: int, t: int) -> gmpy2.mpfr:
    """``P(Z >= t)`` for discrete Laplace of scale ``k s / epsilon``: the geometric sum, at 200 bits."""
    with gmpy2.context(precision=200):
        q = gmpy2.exp(-mp(epsilon / (k * s)))
        return q**t / (1 + q)


def gaussian_tail_sum(variance: Fraction, t: int) -> gmpy2.mpfr:
    """``P(Z >= t)`` for the discrete Gaussian, its law enumerated far out (200 bits)."""
    with gmpy2.context(precision=200):
        v, reach = mp(variance), 60 * math.isqrt(int(variance) + 1) + 60
        w = [gmpy2.exp(-mp(Fraction(z * z)) / (2 * v)) for z in range(-reach, reach + 1)]
        return sum(w[reach + t:]) / sum(w)


@pytest.mark.parametrize(("epsilon", "delta", "k", "s"), [(Fraction(1), Fraction(1, 10**9), 1, 1),
                                                          (Fraction(1, 2), Fraction(1, 10**6), 3, 1),
                                                          (Fraction(2), Fraction(1, 10**5), 10, 2)])
def test_laplace_thresholding_charges_the_delta_its_threshold_proves(epsilon, delta, k, s) -> None:
    from securedp.mechanisms.partition_selection import laplace_threshold

    plan = laplace_threshold(epsilon, delta, k, s)
    proven = k * laplace_tail(epsilon, k, s, plan.threshold - s)
    assert proven <= mp(plan.delta_spent) <= proven * gmpy2.mpfr("1.001") and plan.delta_spent <= delta
    assert k * laplace_tail(epsilon, k, s, plan.threshold - s - 1) > mp(delta) or plan.threshold == s  # minimal


@pytest.mark.parametrize(("rho", "delta", "k", "ratio"), [(Fraction(1, 2), Fraction(1, 10**9), 1, 100),
                                                          (Fraction(1, 10), Fraction(1, 10**6), 3, 1.4),
                                                          (Fraction(2), Fraction(1, 10**5), 10, 1.3)])
def test_gaussian_thresholding_charges_the_delta_its_threshold_proves(rho, delta, k, ratio) -> None:
    from securedp.mechanisms.gaussian_threshold import gaussian_threshold

    plan = gaussian_threshold(rho, delta, k)
    proven = k * gaussian_tail_sum(plan.variance, plan.threshold - 1)
    assert proven <= mp(plan.delta_spent) <= proven * gmpy2.mpfr("1.001")
    assert float(delta / plan.delta_spent) > ratio  # x109 at rho 1/2, delta 1e-9


def test_a_table_charges_the_delta_its_threshold_proves_and_an_earlier_record_replays(tmp_path, command) -> None:
    session = Session(epsilon=2, delta=Fraction(1, 10**6))
    table = session.table({"g": ["a"] * 40, "p": list(range(40))}, group_by=["g"], id_column="p", epsilon=1,
                          delta=Fraction(1, 10**6))
    assert session.delta_spent == table.delta < Fraction(1, 10**6)  # the saving stays in the session
    from securedp.mechanisms.partition_selection import laplace_threshold

    data = tmp_path / "data.csv"
    rows = [f"{i % 700},{['n', 's', 'e'][i % 3] if i % 500 else 'rare'}" for i in range(4000)]
    data.write_text("person,g\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "seed.bin").write_bytes(bytes(32))
    log = tmp_path / "log.jsonl"
    common = ["release", str(data), "--seed-file", str(tmp_path / "seed.bin"), "--audit-log", str(log),
              "--group-by", "g", "--id-column", "person", "--max-groups", "2", "--delta", "1e-6", "--persons",
              "--epsilon", "1"]
    with rules_scope(RecordRules(charges_asked_delta=True)):
        assert command(common)[0] == 0  # as securedp 0.2 charged: the delta asked
    assert command(common)[0] == 0
    import json

    old, new = (json.loads(line)["record"] for line in log.read_text().splitlines())
    plan = laplace_threshold(Fraction(1), Fraction(1, 10**6), 2)
    assert old["parameters"]["delta"] == "1/1000000" and "delta_asked" not in old["parameters"]
    assert new["parameters"]["delta_asked"] == "1/1000000"
    assert Fraction(new["parameters"]["delta"]) == plan.delta_spent < Fraction(1, 10**6)
    assert command(["audit", "verify", str(log)])[0] == 0
    status, out, err = command(["audit", "replay", str(log), "--seed-file", str(tmp_path / "seed.bin"),
                                "--data", str(data)])
    assert status == 0 and out.count(": table: reproduced exactly") == 2, out + err
