"""Releases accept pandas Series (data and person ids) exactly as they accept NumPy arrays.

pandas is in the ``test`` extra so this runs in CI; the library itself does not depend on it.
Each comparison uses the same ChaCha seed for both inputs, so equal inputs must give equal releases.
"""

from fractions import Fraction

import numpy as np
import pytest

import securedp
from securedp import ChaChaSource

pd = pytest.importorskip("pandas")

SEED = bytes(range(32))


def both(release_fn, series, array, **kwargs):
    a = release_fn(series, rng=ChaChaSource(SEED), **kwargs)
    b = release_fn(array, rng=ChaChaSource(SEED), **kwargs)
    return a, b


@pytest.mark.parametrize(
    "release_fn, kwargs",
    [
        (securedp.count, {"epsilon": 1}),
        (securedp.sum, {"bounds": (0, 10), "epsilon": 1}),
        (securedp.mean, {"bounds": (0, 10), "epsilon": "1/2"}),
        (securedp.variance, {"bounds": (0, 10), "rho": "1/2"}),
        (securedp.median, {"bounds": (0, 10), "epsilon": 1}),
    ],
    ids=["count", "sum", "mean", "variance", "median"],
)
def test_series_and_array_give_identical_releases(release_fn, kwargs):
    values = [1.5, 2.25, 9.0, 3.0, 7.75, 0.5]
    a, b = both(release_fn, pd.Series(values), np.array(values), **kwargs)
    assert a.value == b.value and a.parameters == b.parameters and a.epsilon == b.epsilon and a.rho == b.rho


def test_series_with_a_non_default_index_is_read_by_position():
    s = pd.Series([4, 5, 6], index=[10, 3, 7])
    a, b = both(securedp.sum, s, np.array([4, 5, 6]), bounds=(0, 10), epsilon=1)
    assert a.value == b.value


def test_integer_series_and_person_ids_enforce_the_contribution_bound():
    df = pd.DataFrame({"person": [1, 1, 1, 2, 3, 3], "value": [5, 5, 5, 2, 9, 9]})
    kept = securedp.sum(df["value"], bounds=(0, 10), epsilon=1, ids=df["person"], max_contributions=1,
                        rng=ChaChaSource(SEED))
    # every release draws its salt first, then the noise: the same bits with or without ids
    reference = securedp.sum(pd.Series([5, 2, 9]), bounds=(0, 10), epsilon=1, rng=ChaChaSource(SEED))  # step 1 too
    assert kept.value == reference.value  # one row per person (their rows are equal, whichever is kept)


def test_missing_values_in_a_series_are_refused_before_drawing():
    source = ChaChaSource(SEED)
    with pytest.raises(ValueError):
        securedp.mean(pd.Series([1.0, None, 3.0]), bounds=(0, 10), epsilon=1, rng=source)
    with pytest.raises(ValueError):
        securedp.mean(pd.Series([1, pd.NA, 3], dtype="Int64"), bounds=(0, 10), epsilon=1, rng=source)
    assert source.bytes_served == 0


def test_decimal_strings_in_an_object_series_are_exact():
    s = pd.Series(["0.1", "0.2", "0.3"], dtype=object)
    release = securedp.sum(s, bounds=("0", "1"), epsilon=1, lattice=securedp.Lattice("1/10"), rng=ChaChaSource(SEED))
    reference = securedp.sum([Fraction(1, 10), Fraction(2, 10), Fraction(3, 10)], bounds=("0", "1"), epsilon=1,
                             lattice=securedp.Lattice("1/10"), rng=ChaChaSource(SEED))
    assert release.value == reference.value
