"""Privacy maps checked exactly on tiny domains.

For every dataset over a tiny domain and every neighbour (one person, i.e.
up to ``max_contributions`` rows, added or removed), the exact output
distributions are compared. A release ``f(D) + Z`` with ``Z`` discrete
Laplace of scale ``b`` has ``P[out = k] = C * exp(-|k - f(D)| / b)``, so the
privacy loss at ``k`` is exactly ``(|k - f(D')| - |k - f(D)|) / b``, a
rational computed over a window containing every maximiser; mean and
variance add the losses of their independent noisy moments. For Gaussian
noise the Renyi divergence of order ``alpha`` between shifts is exactly
``alpha * d**2 / (2 sigma**2)``, so zCDP holds iff ``d**2 / (2 sigma**2) <= rho``.
"""

import itertools
from fractions import Fraction

import pytest

import securedp
from securedp.lattice import Lattice

DOMAIN = [Fraction(-1), Fraction(0), Fraction(1, 3), Fraction(1, 2), Fraction(2)]
BOUNDS = (Fraction(-1, 2), Fraction(3, 2))
STEP = Fraction(1, 4)


def datasets(max_len=3):
    for n in range(max_len + 1):
        yield from itertools.combinations_with_replacement(DOMAIN, n)


def neighbours(d, m):
    for extra in itertools.chain.from_iterable(itertools.combinations_with_replacement(DOMAIN, k)
                                               for k in range(1, m + 1)):
        yield d + extra


def units(x):
    lat = Lattice(STEP)
    lo_u, hi_u = lat.bounds_units(*BOUNDS)
    return lat.clamp_units(list(x), *BOUNDS).tolist(), lo_u, hi_u


def laws(release):
    """The noise laws of a release of one column: its one cell's (the release is the one-cell table)."""
    return release.parameters[next(iter(release.parameters["shares"]))]["noise"]


def max_loss(a, b, scale):
    """max over k of (|k - b| - |k - a|) / scale, scanning k over a window around a and b (exact)."""
    ks = range(min(a, b) - 3, max(a, b) + 4)
    return max(Fraction(abs(k - b) - abs(k - a)) / scale for k in ks)


@pytest.mark.parametrize("m", [1, 2])
def test_count_and_sum_laplace_maps(m):
    eps = Fraction(1, 2)
    for d in datasets():
        for d2 in neighbours(d, m):
            for name in ("count", "sum"):
                kw = {} if name == "count" else {"bounds": BOUNDS, "lattice": STEP}
                p = getattr(securedp, "prepare_" + name)(list(d), epsilon=eps, max_contributions=m, **kw)
                rel = p.execute(securedp.ChaChaSource(b"\0" * 32))
                scale = laws(rel)[0]["scale_units"]
                if name == "count":
                    a, b = len(d), len(d2)
                else:
                    a, b = sum(units(d)[0]), sum(units(d2)[0])
                assert max_loss(a, b, scale) <= eps and max_loss(b, a, scale) <= eps
                assert p.epsilon == eps


def test_sum_gaussian_map():
    rho = Fraction(1, 3)
    for d in datasets(2):
        for d2 in neighbours(d, 1):
            rel = securedp.sum(list(d), bounds=BOUNDS, lattice=STEP, rho=rho, rng=securedp.ChaChaSource(b"\0" * 32))
            shift = sum(units(d)[0]) - sum(units(d2)[0])
            assert Fraction(shift**2) / (2 * laws(rel)[0]["variance_units"]) <= rho


def test_mean_and_variance_maps_compose_exactly():
    eps = Fraction(2, 3)
    for d in datasets(2):
        for d2 in neighbours(d, 1):
            u, _lo_u, _hi_u = units(d)
            u2, _, _ = units(d2)
            rel_m = securedp.mean(list(d), bounds=BOUNDS, lattice=STEP, epsilon=eps,
                                  rng=securedp.ChaChaSource(b"\0" * 32))
            rel_v = securedp.variance(list(d), bounds=BOUNDS, lattice=STEP, epsilon=eps,
                                      rng=securedp.ChaChaSource(b"\0" * 32))
            c = rel_m.parameters["data_mean"]["centre_units"]
            moments = [(len(u), len(u2)), (sum(x - c for x in u), sum(x - c for x in u2)),
                       (sum((x - c) ** 2 for x in u), sum((x - c) ** 2 for x in u2))]
            pm, pv = [law["scale_units"] for law in laws(rel_m)], [law["scale_units"] for law in laws(rel_v)]
            loss_m = max_loss(*moments[0], pm[0]) + max_loss(*moments[1], pm[1])
            loss_v = max_loss(*moments[0], pv[0]) + max_loss(*moments[1], pv[1]) + max_loss(*moments[2], pv[2])
            assert loss_m <= eps and loss_v <= eps
            assert rel_m.epsilon == eps == rel_v.epsilon


@pytest.mark.parametrize("m", [1, 2])
def test_histogram_map_is_parallel(m):
    eps = Fraction(1)
    cats = ["x", "y", "z"]
    for d in itertools.chain.from_iterable(itertools.product(cats, repeat=n) for n in range(3)):
        for extra in itertools.chain.from_iterable(itertools.product(cats, repeat=k) for k in range(1, m + 1)):
            d2 = d + extra
            rel = securedp.histogram(list(d), categories=cats, epsilon=eps, max_contributions=m,
                                     rng=securedp.ChaChaSource(b"\0" * 32))
            a = [d.count(c) for c in cats]
            b = [d2.count(c) for c in cats]
            scale = laws(rel)[0]["scale_units"]
            assert sum(max_loss(x, y, scale) for x, y in zip(a, b, strict=True)) <= eps
            assert sum(max_loss(y, x, scale) for x, y in zip(a, b, strict=True)) <= eps


def test_contribution_bound_enforced_by_ids_keeps_maps_valid():
    """With ids, a person adding any number of rows moves the kept sum by at most m * bound."""
    eps, m = Fraction(1), 2
    base = [1, 2], [10, 11]
    for extra_rows in range(1, 5):
        data = base[0] + [2] * extra_rows
        ids = base[1] + [99] * extra_rows
        a = securedp.prepare_sum(base[0], bounds=(0, 2), lattice=1, ids=base[1], max_contributions=m, epsilon=eps)
        b = securedp.prepare_sum(data, bounds=(0, 2), lattice=1, ids=ids, max_contributions=m, epsilon=eps)
        ra, rb = (p.execute(securedp.ChaChaSource(b"\0" * 32)) for p in (a, b))
        shift = abs(min(extra_rows, m) * 2)
        assert Fraction(shift) / laws(ra)[0]["scale_units"] <= eps
        assert laws(rb)[0]["cell_sensitivity_units"] == m * 2
