"""Issue 20: the vectorised paths give exactly what the record-by-record and full-sort paths give.

* integer arrays (every dtype, steps that are powers of two or not, arrays of several blocks) and
  lists of Python ints or floats with ``None`` (nullable columns read exactly) are screened to the
  units of the per-record screen, with the same unusable records and the same errors;
* numeric pandas / Polars columns of scores are read as their arrays, pyarrow arrays as their
  exact values, and a missing value is still refused naming the caller's own object;
* the median's gaps from counts per lattice point and from a sort give the same seeded values,
  and the input commitment encodes the sorted units as before;
* a first draw locates its point by blocks exactly where a full cumulative count does;
* float64 arrays on a step ``2**-k n / d`` with a small odd ``d`` (``0.01``, ``1/3``) are screened in
  integer arithmetic to the exact rounding of each float's rational value: ties, near-ties,
  subnormals, signed zeros, values beyond the bounds, NaN, across blocks.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from securedp.hazmat.exact.kernels import round_half_even
from securedp.hazmat.samplers.categorical import LOCATE_BLOCK, ExpCategorical
from securedp.hazmat.samplers.envelope import FloatGaps
from securedp.lattice.arrays import BLOCK, FLOAT_BLOCK, float_array, int_array
from securedp.lattice.clamp import Clamp
from securedp.lattice.screen import screen_units
from securedp.mechanisms.rank_utility import Window
from securedp.mechanisms.scores import parse_scores

STEPS = [Fraction(1), Fraction(1, 4), Fraction(8), Fraction(3), Fraction(1, 3), Fraction(2**16), Fraction(10, 7)]


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint64, np.int8, np.uint8])
def test_integer_arrays_screen_to_the_per_record_units(step: Fraction, dtype: type) -> None:
    rng = np.random.default_rng(11)  # test data only
    for lo_u, hi_u in [(-7, 30), (0, 2**16), (3, 3), (-40, -2)]:
        clamp = Clamp(step, lo_u, hi_u)
        info = np.iinfo(dtype)
        span = int(max(abs(clamp.lo_v), abs(clamp.hi_v))) + 5
        records = rng.integers(max(-2 * span, info.min), min(2 * span, info.max) + 1, 2 * BLOCK + 77).astype(dtype)
        screen = clamp.record_function()
        assert int_array(records, clamp).tolist() == [screen(int(v)) for v in records]


def test_no_integer_inside_the_bounds() -> None:
    clamp = Clamp(Fraction(1, 4), 1, 3)  # [0.25, 0.75] holds no integer
    records = np.array([-5, 0, 1, 2], dtype=np.int64)
    assert int_array(records, clamp).tolist() == [1, 1, 3, 3]


@pytest.mark.parametrize("kind", ["int", "float", "mixed", "big", "bool", "nan"])
def test_python_numbers_with_none_screen_like_the_per_record_screen(kind: str) -> None:
    rng = np.random.default_rng(12)  # test data only
    values: list = []
    for k in range(3 * BLOCK):
        r = rng.random()
        if r < 0.05:
            values.append(None)
        elif kind == "int" or (kind == "mixed" and r < 0.5) or (kind in ("big", "bool") and r > 0.1):
            values.append(int(rng.integers(-300, 300)))
        elif kind == "big":
            values.append(2**70 if k % 2 else -(2**70))
        elif kind == "bool":
            values.append(True)
        elif kind == "nan" and r < 0.1:
            values.append(float("nan"))
        else:
            values.append(float(rng.uniform(-300, 300)))
    step = Fraction(1, 4)
    screen = Clamp(step, -400, 400).record_function()
    expected = [screen(v) for v in values]
    for column in (values, np.array(values, dtype=object)):
        units, kept = screen_units(column, step, -400, 400, missing="drop", refuse_rows=False)
        assert units.tolist() == [u for u in expected if u is not None]
        assert kept is not None and kept.tolist() == [u is not None for u in expected]
        with pytest.raises(ValueError, match=f"record {expected.index(None)}: "):
            screen_units(column, step, -400, 400)


def test_nullable_columns_are_screened_exactly() -> None:
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    big = 2**62 + 1  # beyond float64's integers: never read through a float
    assert screen_units(pd.Series([big, None, 5], dtype="Int64"), Fraction(1), 0, 2**63 - 1,
                        missing="drop")[0].tolist() == [big, 5]
    assert screen_units(pa.array([big, None, 5]), Fraction(1), 0, 2**63 - 1, missing="drop")[0].tolist() == [big, 5]
    with pytest.raises(ValueError, match="record 1: blank cell"):
        screen_units(pd.Series([1.5, None], dtype="Float64"), Fraction(1, 2), 0, 4)


@pytest.mark.filterwarnings("ignore::securedp.InexactFloatWarning")
def test_numeric_columns_of_scores_are_read_as_their_arrays() -> None:
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    ints = np.array([3, 2**62, -7], dtype=np.int64)
    floats = np.array([0.1, 2.5, -1e300])
    for column in (pd.Series(ints), pd.Series(ints, dtype="Int64"), pl.Series(ints), pa.array(ints)):
        parsed = parse_scores(column)
        assert parsed.unit == 1 and parsed.units.tolist() == ints.tolist()
    exact = [Fraction(v) for v in floats.tolist()]
    for column in (pd.Series(floats), pd.Series(floats, dtype="Float64"), pl.Series(floats), pa.array(floats)):
        parsed = parse_scores(column)
        assert [int(u) * parsed.unit for u in parsed.units] == exact
    with pytest.raises(TypeError, match=r"scores\[1\].*NAType"):
        parse_scores(pd.Series([1, None, 3], dtype="Int64"))
    with pytest.raises(TypeError, match=r"scores\[1\].*NoneType"):
        parse_scores(pa.array([1, None, 3]))


def _dense_scores(units: list[int], lo_u: int, hi_u: int, q: Fraction) -> np.ndarray:
    """The score of every point of the range by the definition: ``#{x < y}`` and ``#{x <= y}`` from a bincount
    over the whole range."""
    per_point = np.bincount(np.asarray(units, dtype=np.int64) - lo_u, minlength=hi_u - lo_u + 1)
    through = np.cumsum(per_point)
    below = through - per_point
    a, b, n = q.numerator, q.denominator, len(units)
    return np.maximum(0, np.maximum(b * below - a * n, a * n - b * through))


@pytest.mark.parametrize("bounds", [(0, 100), (-50, 1000), (0, 2**20)])
@pytest.mark.parametrize("far", [7, 40, 2**40])
def test_window_entries_from_counts_per_point_are_the_dense_construction(bounds: tuple[int, int], far: int) -> None:
    """A cell's window is cut from its distinct points alone (no pass over the whole range): its near entries'
    scores, spread over their widths, and the far candidates' :meth:`Window.score_at` equal the score of every
    point of the range, the near ones below ``far`` and the far ones at least ``far``."""
    rng = np.random.default_rng(13)  # test data only
    lo_u, hi_u = bounds
    for n in (0, 1, 7, 500):
        units = np.clip(rng.integers(lo_u - 3, min(hi_u, lo_u + 60) + 3, n), lo_u, hi_u)  # many ties, clamped
        points, counts = np.unique(units, return_counts=True)
        for q in (Fraction(1, 2), Fraction(1, 3), Fraction(0), Fraction(1), Fraction(9, 10)):
            window = Window(points.tolist(), counts.tolist(), lo_u, hi_u, q, far)
            assert window.n == n and int(window.widths.sum()) == hi_u - lo_u + 1
            near = [i for i in range(len(window.widths)) if i != window.far_entry]
            order = sorted(near, key=lambda i: (window.start(i), int(window.widths[i])))
            ends = np.cumsum(window.widths[order]) + window.near_lo
            assert [window.start(i) for i in order] == [window.near_lo, *ends[:-1].tolist()]
            assert ends[-1] == window.near_hi + 1
            dense = _dense_scores(units.tolist(), lo_u, hi_u, q)
            spread = np.repeat(window.scores[order], window.widths[order])
            assert np.array_equal(spread, dense[window.near_lo - lo_u:window.near_hi - lo_u + 1])
            assert (spread < far).all() and (np.delete(dense, np.s_[window.near_lo - lo_u:window.near_hi - lo_u + 1])
                                             >= far).all()
            for k in {0, window.far_width // 2, window.far_width - 1} if window.far_width else ():
                y = window.far_point(k)
                assert not window.near_lo <= y <= window.near_hi and window.score_at(y) == dense[y - lo_u]


@pytest.mark.parametrize(("with_counts", "floats"), [(False, False), (True, False), (False, True)])
def test_first_draws_locate_by_blocks_like_a_full_cumulative_count(with_counts: bool, floats: bool) -> None:
    rng = np.random.default_rng(15)  # test data only
    size = 3 * LOCATE_BLOCK + 123  # two blocks of the set-up's tally (BLOCK = 2 * LOCATE_BLOCK)
    gaps = rng.integers(0, 30, size)
    counts = rng.integers(0, 3, size) if with_counts else None
    plan = ExpCategorical(FloatGaps(gaps / 7) if floats else gaps, Fraction(1, 2), counts)
    weights = np.ones(size, dtype=np.int64) if plan.counts is None else plan.counts  # the tight counts of floats
    for group in (0, 5, 29, len(plan.ends) - 1):
        cumulative = np.cumsum(np.where(plan.slot_of == group, weights, 0))
        for position in {0, int(cumulative[-1]) // 2, int(cumulative[-1]) - 1} if cumulative[-1] else ():
            i = int(np.searchsorted(cumulative, position, side="right"))
            assert plan._locate(group, position) == (i, position - (int(cumulative[i - 1]) if i else 0))


FLOAT_STEPS = [Fraction(1, 100), Fraction(1, 10), Fraction(1, 3), Fraction(3), Fraction(5, 7), Fraction(1, 2**30),
               Fraction(1000), Fraction(1, 10**4), Fraction(1, 1023), Fraction(7, 2**40), Fraction(3 * 2**20),
               Fraction(1, 2**60), Fraction(2**900), Fraction(3 * 2**900, 1023)]


def _exact_units(x: float, clamp: Clamp) -> int:
    """The unit of one float by the rule itself: clamp its exact value, divide by the step, ties to even."""
    if x in (np.inf, -np.inf):
        return clamp.hi_u if x > 0 else clamp.lo_u
    q = min(max(Fraction(x), clamp.lo_v), clamp.hi_v) / clamp.step
    return round_half_even(q.numerator, q.denominator)


@pytest.mark.parametrize("step", FLOAT_STEPS)
def test_float_arrays_screen_to_the_exact_units(step: Fraction) -> None:
    rng = np.random.default_rng(12)  # test data only
    for lo_u, hi_u in [(-(2**40), 2**40), (0, 2**20), (-7, 3), (5, 5)]:
        clamp = Clamp(step, lo_u, hi_u)
        assert clamp.float_lattice is not None
        assert not clamp.exact_mult or step.numerator & (step.numerator - 1) == 0
        width = float(max(abs(clamp.lo_v), abs(clamp.hi_v)))
        k = rng.integers(-2 * abs(lo_u) - 9, 2 * abs(hi_u) + 9, 1000)
        ties = np.array([float((Fraction(int(v)) + Fraction(1, 2)) * step) for v in k])
        parts = [ties, np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf),
                 np.array([float(Fraction(int(v)) * step) for v in k]),
                 width * rng.uniform(-1.5, 1.5, 1000), width * 2.0 ** rng.uniform(-80, 1, 1000),
                 np.array([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, float(step) / 2, width, -width,
                           np.inf, -np.inf, np.nan, 1e308, -1e308])]
        one = np.concatenate(parts)
        x = np.tile(one, 1 + FLOAT_BLOCK // one.size)  # several blocks
        units, bad = float_array(x, clamp, clamp.record_function())
        assert bad.tolist() == np.isnan(x).tolist()
        expected = [0 if v != v else _exact_units(float(v), clamp) for v in one]
        assert units.tolist() == expected * (1 + FLOAT_BLOCK // one.size)
