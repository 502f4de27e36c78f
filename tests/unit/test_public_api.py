"""The public surface: one definition per statistic, real signatures, the aggregate/noise seam, deprecations."""

from __future__ import annotations

import inspect
import pydoc
from fractions import Fraction

import numpy as np
import pytest

import securedp
from securedp import ChaChaSource, Session
from securedp.bounding.messages import draw_salt
from securedp.hazmat import samplers
from securedp.mechanisms.count import Count
from securedp.mechanisms.histogram import Categories, Histogram
from securedp.mechanisms.mean import Mean
from securedp.mechanisms.quantile import Median
from securedp.mechanisms.records import LatticeColumn
from securedp.mechanisms.sum import Sum
from securedp.mechanisms.variance import Variance
from securedp.privacy.cost import Cost

STATISTICS = ["count", "sum", "mean", "variance", "histogram", "median", "quantile", "quantiles",
              "exponential_mechanism", "report_noisy_max", "permute_and_flip"]
MOVED = ["bernoulli", "bernoulli_exp", "discrete_gaussian", "discrete_laplace", "geometric", "uniform_below"]


def seeded() -> ChaChaSource:
    return ChaChaSource(bytes([5]) * 32).substream("api")


@pytest.mark.parametrize("name", STATISTICS)
def test_function_prepare_and_session_method_share_one_real_signature(name: str) -> None:
    prepare = inspect.signature(getattr(securedp, f"prepare_{name}"))
    release = inspect.signature(getattr(securedp, name))
    method = inspect.signature(getattr(Session(epsilon=1), name))
    kinds = {p.kind for s in (prepare, release, method) for p in s.parameters.values()}
    assert inspect.Parameter.VAR_KEYWORD not in kinds and inspect.Parameter.VAR_POSITIONAL not in kinds
    assert list(release.parameters) == [*prepare.parameters, "rng"]
    assert release.parameters["rng"].kind is inspect.Parameter.KEYWORD_ONLY
    assert method.parameters == prepare.parameters
    assert "epsilon" in prepare.parameters
    text = pydoc.render_doc(getattr(securedp, name), renderer=pydoc.plaintext)
    assert "epsilon" in text and "rng" in text and "**" not in text.split("\n")[2]


def test_lattice_statistics_take_the_shared_options() -> None:
    for name in ("sum", "mean", "variance"):
        parameters = inspect.signature(getattr(securedp, f"prepare_{name}")).parameters
        assert {"bounds", "lattice", "ids", "max_contributions", "missing", "fill", "epsilon", "rho"} <= set(parameters)


def test_a_session_method_still_refuses_an_unknown_keyword_before_charging() -> None:
    session = Session(epsilon=1)
    with pytest.raises(TypeError):
        session.sum([1, 2], bounds=(0, 5), epsilon=1, bound=(0, 5))  # type: ignore[call-arg]
    assert session.spent == 0


def after_the_salt() -> ChaChaSource:
    """The seeded source as a release leaves it for its noise: every release draws its salt first."""
    source = seeded()
    draw_salt(source)
    return source


@pytest.mark.parametrize(("definition", "exact", "data"), [
    (Sum, [[10]], [1, 2, 3, 4]),
    (Mean, [[4], [2]], [1, 2, 3, 4]),
    (Variance, [[4], [2], [6]], [1, 2, 3, 4]),
])
def test_a_cell_released_from_its_exact_integers_is_the_release_of_the_data(definition, exact, data) -> None:
    """An engine that computes a cell's exact integers gets, from the statistic's noise step, the release of
    the data itself: the same noise from the same bits (the salt, then each noisy integer)."""
    column = LatticeColumn.of(bounds=(0, 5), lattice=1, max_contributions=1)
    statistic = definition(Cost.of(Fraction(1, 2), None), column)
    cell = statistic.release_cells(exact, after_the_salt(), Fraction(1, 20))
    from_data = getattr(securedp, definition.statistic)(data, epsilon="1/2", rng=seeded(), bounds=(0, 5), lattice=1)
    assert cell.values[0] * (cell.step or 1) == from_data.value


def test_count_and_histogram_cells_from_exact_integers() -> None:
    count = Count(Cost.of(1, None), 1)
    cell = count.release_cells([[3]], after_the_salt(), Fraction(1, 20))
    assert cell.values[0] == securedp.count([7, 8, 9], epsilon=1, rng=seeded()).value
    histogram = Histogram(Cost.of(1, None), 1, Categories(("a", "b", "c")))
    exact = histogram.exact_bins([[0, 1]], [[2, 1]])
    assert exact == [[2], [1], [0]]
    cells = histogram.release_bins(exact, after_the_salt(), Fraction(1, 20))
    assert tuple(c.values[0] for c in cells) == securedp.histogram(["a", "b", "a"], categories=["a", "b", "c"],
                                                                    epsilon=1, rng=seeded()).value


def test_quantiles_from_counts_per_lattice_point() -> None:
    data = [3, 1, 4, 1, 5, 9, 2, 6]
    column = LatticeColumn.of(bounds=(0, 10), lattice=1, max_contributions=1)
    median = Median(Cost.of(1, None), column, (Fraction(1, 2),))
    points, counts = np.unique(np.array(data), return_counts=True)
    chosen = median.value(median.cell_points(points.tolist(), counts.tolist())(after_the_salt()))
    assert chosen == securedp.median(data, bounds=(0, 10), lattice=1, epsilon=1, rng=seeded()).value
    both = securedp.quantiles(data, [Fraction(1, 4), Fraction(3, 4)], bounds=(0, 10), epsilon=1, rng=seeded())
    assert isinstance(both.value, tuple) and both.labels == (Fraction(1, 4), Fraction(3, 4))


def test_prepare_quantiles_has_one_shape_and_the_old_keyword_is_gone() -> None:
    data = [1, 2, 3, 4, 5]
    assert isinstance(securedp.prepare_quantiles(data, ["1/2"], bounds=(0, 10), epsilon=1).execute(seeded()).value,
                      tuple)
    with pytest.raises(TypeError, match="statistic"):  # deprecated in 0.1, removed in 0.2: prepare_median
        securedp.prepare_quantiles(data, ["1/2"], bounds=(0, 10), epsilon=1, statistic="median")  # type: ignore[call-arg]


@pytest.mark.parametrize("name", MOVED)
def test_moved_samplers_still_work_at_the_top_level_with_a_warning(name: str) -> None:
    assert name not in securedp.__all__
    with pytest.warns(DeprecationWarning, match=f"securedp.hazmat.samplers.{name}"):
        old = getattr(securedp, name)
    assert old is getattr(samplers, name)


def test_the_old_name_draws_what_the_new_one_does() -> None:
    with pytest.warns(DeprecationWarning):
        from securedp import discrete_laplace
    assert list(discrete_laplace(3, size=4, rng=seeded())) == list(samplers.discrete_laplace(3, size=4, rng=seeded()))


def test_every_exported_name_resolves_without_a_warning(recwarn: pytest.WarningsRecorder) -> None:
    for name in securedp.__all__:
        getattr(securedp, name)
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]
    with pytest.raises(AttributeError):
        securedp.no_such_name  # noqa: B018


def test_a_selection_is_the_noise_step_of_its_scores() -> None:
    from securedp.mechanisms.exponential import ExponentialMechanism
    from securedp.mechanisms.permute_and_flip import PermuteAndFlip
    from securedp.mechanisms.scores import parse_scores

    scores = [3, 1, 4, 1, 5]
    cost = Cost.of(1, None)
    for definition, function in [(ExponentialMechanism, securedp.exponential_mechanism),
                                 (PermuteAndFlip, securedp.permute_and_flip)]:
        selection = definition(cost, Fraction(1), list("abcde"), len(scores))
        from_scores = selection.noise_step(parse_scores(scores)).execute(seeded())
        assert from_scores == function(scores, epsilon=1, sensitivity=1, candidates=list("abcde"), rng=seeded())
        with pytest.raises(ValueError, match="5 candidates but 2 scores"):
            selection.noise_step(parse_scores([1, 2]))


@pytest.mark.parametrize(("old", "new", "name"),
                         [("securedp.engines.messages", "securedp.bounding.messages", "SALT_BYTES"),
                          ("securedp.engines.digest", "securedp.bounding.digest", "message")])
def test_the_moved_bounding_modules_keep_their_old_names_for_one_release(old: str, new: str, name: str) -> None:
    import importlib

    with pytest.warns(DeprecationWarning, match=new):
        value = getattr(importlib.import_module(old), name)
    assert value is getattr(importlib.import_module(new), name)
