"""Audit records of both formats for the report's tests (no tests here: the name only lets it sit beside them).

A record of format 1 (securedp 0.1, no ``format`` field) states a release of one column flat:
``scale_units``, ``count_scale_units``, ``lattice_step``... at the top of its ``parameters``. A record of
format 2 (``"format": 2``) states every release of data as a table: each aggregation's record under its
name (``data_mean``, ``count``, ``x_histogram``...).

The format-1 records of :data:`FORMAT_1` are real: written by securedp 0.1 (the commit before "One reader,
one route") with ``ChaChaSource(bytes(32))`` from :data:`DATA` (and the frame of :func:`frame`), their random
source shared (:data:`SOURCE`) and their input commitments left out. :func:`format_1_log` writes them with the
library's own :class:`~securedp.AuditLog`, so that the log verifies; :func:`format_2_log` writes every
statistic of this version, the same releases and more.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

import securedp
from securedp import AuditLog, ChaChaSource, Session
from securedp.tables import IQR, Count, Mean, Median, Persons, Quantile, Sum, TrimmedMean, Variance
from securedp.tables.spec import Histogram

DATA = [1, 2, 2, 3, 4, 5, 1, 2] * 5
SOURCE = {"kind": "chacha20", "reproducible": True, "substream": [],
          "seed_commitment": "344af6a77939f876bc402a902bc27d19772a6eda3b10be29c69a9c94fac15c6f"}
_FORMAT_1 = {
    "count": '{"statistic": "count", "value": 41, "labels": null, "mechanism": "discrete_laplace", '
        '"parameters": {"lattice_step": 1, "sensitivity_units": 1, "scale_units": 1}, "epsilon": 1, "rho": null, '
        '"max_contributions": 1}',
    "sum": '{"statistic": "sum", "value": "1661033/16384", "labels": null, "mechanism": "discrete_laplace", '
        '"parameters": {"lattice_step": "1/16384", "bounds": [0, 5], "bounds_units": [0, 81920], '
        '"sensitivity_units": 81920, "scale_units": 81920}, "epsilon": 1, "rho": null, "max_contributions": 1}',
    "mean": '{"statistic": "mean", "value": "18803/8192", "labels": null, "mechanism": "discrete_laplace", '
        '"parameters": {"lattice_step": "1/16384", "bounds": [0, 5], "bounds_units": [0, 81920], '
        '"centre_units": 40960, "budget_split": "count 1/2, centred sum 1/2", "count_sensitivity_units": 1, '
        '"count_scale_units": 2, "sum_sensitivity_units": 40960, "sum_scale_units": 81920}, "epsilon": 1, '
        '"rho": null, "max_contributions": 1}',
    "variance": '{"statistic": "variance", "value": "211640899/134217728", "labels": null, '
        '"mechanism": "discrete_laplace", "parameters": {"lattice_step": "1/16384", "bounds": [0, 5], '
        '"bounds_units": [0, 81920], "centre_units": 40960, '
        '"budget_split": "count 1/3, centred sum 1/3, centred sum of squares 1/3", "count_sensitivity_units": 1, '
        '"count_scale_units": 3, "sum_sensitivity_units": 40960, "sum_scale_units": 122880, '
        '"sum_of_squares_sensitivity_units": 1677721600, "sum_of_squares_scale_units": 5033164800}, "epsilon": 1, '
        '"rho": null, "max_contributions": 1}',
    "median": '{"statistic": "median", "value": "17/8", "labels": null, "mechanism": "exponential", '
        '"parameters": {"lattice_step": "1/32", "bounds": [0, 5], "bounds_units": [0, 160], "qs": ["1/2"], '
        '"epsilon_each": 1, "sensitivity": 1, "utility": "-|#{x < y} - q n|", "q": "1/2"}, "epsilon": 1, '
        '"rho": null, "max_contributions": 1}',
    "quantile": '{"statistic": "quantile", "value": "33/8", "labels": null, "mechanism": "exponential", '
        '"parameters": {"lattice_step": "1/32", "bounds": [0, 5], "bounds_units": [0, 160], "qs": ["9/10"], '
        '"epsilon_each": 1, "sensitivity": 1, "utility": "-|#{x < y} - q n|", "q": "9/10"}, "epsilon": 1, '
        '"rho": null, "max_contributions": 1}',
    "quantiles": '{"statistic": "quantiles", "value": ["9/8", 3], "labels": ["1/4", "3/4"], '
        '"mechanism": "exponential", "parameters": {"lattice_step": "1/32", "bounds": [0, 5], "bounds_units": [0, '
        '160], "qs": ["1/4", "3/4"], "epsilon_each": "1/2", "sensitivity": 1, "utility": "-|#{x < y} - q n|"}, '
        '"epsilon": 1, "rho": null, "max_contributions": 1}',
    "iqr": '{"statistic": "iqr", "value": "15/8", "labels": null, "mechanism": "exponential", '
        '"parameters": {"lattice_step": "1/32", "bounds": [0, 5], "bounds_units": [0, 160], "qs": ["1/4", "3/4"], '
        '"epsilon_each": "1/2", "sensitivity": 1, "utility": "-|#{x < y} - q n|", "released": "max(Q3 - Q1, 0)"}, '
        '"epsilon": 1, "rho": null, "max_contributions": 1}',
    "histogram_categories": '{"statistic": "histogram", "value": [11, 5, 5], "labels": ["a", "b", "c"], '
        '"mechanism": "discrete_laplace", "parameters": {"kind": "categories", "sensitivity_units": 1, '
        '"scale_units": 1}, "epsilon": 1, "rho": null, "max_contributions": 1}',
    "histogram_bins": '{"statistic": "histogram", "value": [11, 20, 10], "labels": [[0, 2], [2, 4], [4, 6]], '
        '"mechanism": "discrete_laplace", "parameters": {"kind": "bins", "edges": [0, 2, 4, 6], '
        '"sensitivity_units": 1, "scale_units": 1}, "epsilon": 1, "rho": null, "max_contributions": 1}',
    "bounds": '{"statistic": "bounds", "value": [8, 16], "labels": ["lo", "hi"], "mechanism": "discrete_laplace", '
        '"parameters": {"method": "histogram", "exponents": [-2, 4], "kind": "bins", "edges": [-16, -8, -4, -2, -1, '
        '"-1/2", "-1/4", 0, "1/4", "1/2", 1, 2, 4, 8, 16], "sensitivity_units": 1, "scale_units": 1, "beta": "1/20", '
        '"threshold": 6, "noisy_counts": [-1, 0, 0, 1, -1, 0, 0, 2, -1, 0, 1, -1, 4, 291]}, "epsilon": 1, '
        '"rho": null, "max_contributions": 1}',
    "selection": '{"statistic": "selection", "value": 2, "labels": null, "mechanism": "exponential", '
        '"parameters": {"epsilon": 1, "sensitivity": 1, "monotonic": false, "candidates": 3}, "epsilon": 1, '
        '"rho": null, "max_contributions": 1}',
    "table": '{"statistic": "table", "value": [["a", 20, 11, 29, "6061/512", 0, 20, "17/8"], ["b", 18, 9, 27, '
        '"2795/512", 0, 20, "19/2"]], "labels": ["g", "count", "count_low", "count_high", "x_mean", "x_mean_low", '
        '"x_mean_high", "x_median"], "mechanism": "discrete_laplace", "parameters": {"group_by": ["g"], '
        '"keys": "public", "max_groups": 1, "max_rows": 1, "privacy_unit": "p", "alpha": "1/20", '
        '"shares": {"count": "1/3", "x_mean": "1/3", "x_median": "1/3"}, '
        '"salt_commitment": "e2812287219e8ff121b309f32c45b890f77a0ac8124497521e170adae92c324e", '
        '"count": {"noise": [{"mechanism": "discrete_laplace", "cell_sensitivity_units": 1, "scale_units": 3}]}, '
        '"x_mean": {"noise": [{"mechanism": "discrete_laplace", "cell_sensitivity_units": 1, "scale_units": 6}, '
        '{"mechanism": "discrete_laplace", "cell_sensitivity_units": 40960, "scale_units": 245760}], "column": "x", '
        '"lattice_step": "1/4096", "bounds_units": [0, 81920]}, "x_median": {"noise": [], "column": "x", '
        '"lattice_step": "1/8", "bounds_units": [0, 160], "selection": "exponential", "q": "1/2", '
        '"epsilon_cell": "1/3", "sensitivity": 1, "candidates": 161, "rank_error_bound": 49}}, "epsilon": 1, '
        '"rho": null, "max_contributions": 1}',
    "rho_mean": '{"statistic": "mean", "value": "40515/16384", "labels": null, "mechanism": "discrete_gaussian", '
        '"parameters": {"lattice_step": "1/16384", "bounds": [0, 5], "bounds_units": [0, 81920], '
        '"centre_units": 40960, "budget_split": "count 1/2, centred sum 1/2", "count_sensitivity_units": 1, '
        '"count_variance_units": 1, "sum_sensitivity_units": 40960, "sum_variance_units": 1677721600}, '
        '"epsilon": null, "rho": 1, "max_contributions": 1}',
    "rho_sum": '{"statistic": "sum", "value": "175901/16384", "labels": null, "mechanism": "discrete_gaussian", '
        '"parameters": {"lattice_step": "1/16384", "bounds": [0, 4], "bounds_units": [0, 65536], '
        '"sensitivity_units": 65536, "variance_units": 4294967296}, "epsilon": null, "rho": "1/2", '
        '"max_contributions": 1}',
    "contribution_histogram": '{"statistic": "contribution_histogram", "value": [39, 0, 43, -10, -12], '
        '"labels": ["groups=1", "groups>=2", "rows=1", "rows>=2", "cells"], "mechanism": "discrete_laplace", '
        '"parameters": {"id_column": "p", "group_by": ["g"], "groups_cap": 2, "rows_cap": 2, "shares": ["1/3", '
        '"1/3", "1/3"], "sensitivities": [1, 2, 2], "scales": [3, 6, 6]}, "epsilon": 1, "rho": null, '
        '"max_contributions": 1}',
}
FORMAT_1: dict[str, dict[str, Any]] = {name: {**json.loads(text), "source": SOURCE} for name, text in _FORMAT_1.items()}
"""securedp 0.1's records: ``count(DATA, epsilon=1)``, ``sum``/``mean``/``variance``/``median``/``quantile("9/10")``/
``quantiles(["1/4", "3/4"])``/``iqr`` with ``bounds=(0, 5)``, histograms of ``["a", "b", "a", "c"] * 5`` by
categories and of DATA by bins ``[0, 2, 4, 6]``, ``private_bounds(range(300), exponents=(-2, 4))``, an
exponential mechanism over scores ``[1, 2, 3]``, a table of :func:`frame` (count, mean and median of x by g),
a rho mean and a rho sum, and a contribution histogram."""


def frame() -> pd.DataFrame:
    return pd.DataFrame({"p": list(range(40)), "g": ["a", "b"] * 20, "x": [float(i % 17) for i in range(40)],
                         "c": ["u", "v", "w", "u"] * 10})


def format_1_log(path: Path, names: list[str] | None = None) -> Path:
    """A log of the format-1 records ``names`` (all by default), written by AuditLog: it verifies."""
    log = AuditLog(path)
    for name in names or list(FORMAT_1):
        log.append(FORMAT_1[name])
    return path


def format_2_log(path: Path) -> Path:
    """Every statistic of this version, the same releases as :data:`FORMAT_1` and more, appended to ``path``."""
    session = Session(epsilon=40, delta="1e-6", rng=ChaChaSource(bytes(32)), audit=AuditLog(path))
    session.count(DATA, epsilon=1)
    for statistic in ("sum", "mean", "variance", "median", "iqr", "trimmed_mean"):
        getattr(session, statistic)(DATA, bounds=(0, 5), epsilon=1)
    session.quantile(DATA, "9/10", bounds=(0, 5), epsilon=1)
    session.quantiles(DATA, ["1/4", "3/4"], bounds=(0, 5), epsilon=1)
    session.histogram(["a", "b", "a", "c"] * 5, categories=["a", "b", "c"], epsilon=1)
    session.histogram(DATA, bins=[0, 2, 4, 6], epsilon=1)
    securedp.private_bounds(list(range(300)), epsilon=1, exponents=(-2, 4), session=session)
    session.exponential_mechanism([1, 2, 3], epsilon=1, sensitivity=1)
    session.report_noisy_max([1, 2, 3], epsilon=1, sensitivity=1)
    session.permute_and_flip([1, 2, 3], epsilon=1, sensitivity=1)
    session.table(frame(), group_by=["g"], id_column="p", epsilon=2, delta="1e-7", aggregations=[
        Count(), Persons(), Sum("x", (0, 20)), Mean("x", (0, 20)), Variance("x", (0, 20)), Median("x", (0, 20)),
        Quantile("x", (0, 20), q="9/10"), IQR("x", (0, 20)), TrimmedMean("x", (0, 20)),
        Histogram("x", bins=[0, 5, 10, 20])])
    securedp.analyze_contributions(frame(), id_column="p", group_by="g", epsilon=1, groups_cap=2, rows_cap=2,
                                   session=session)
    rho = Session(rho=4, delta="1e-6", rng=ChaChaSource(bytes(32)), audit=AuditLog(path))
    rho.sum([1, 2, 3, 4], bounds=(0, 4), rho="1/2")
    rho.mean(DATA, bounds=(0, 5), rho=1)
    rho.median(DATA, bounds=(0, 5), rho="1/2")
    rho.table(frame(), group_by=["g"], id_column="p", rho="1/2", delta="1e-7", aggregations=[
        Count(), Mean("x", (0, 20)), Histogram("c", categories=["u", "v", "w"])])
    return path
