"""Issue 25, item 9: ``audit report`` renders every log that ``audit verify`` accepts.

A record's ``parameters`` are free-form JSON to the verifier, so a log can verify with an ``alpha`` of
``"x"``, ``"0"`` or ``"2"`` or a ``scale_units`` of ``10**400`` (in an aggregation's noise law, format 2,
or flat, format 1). Each such log is written here with the library's own :class:`~securedp.AuditLog` (so
it verifies), and the report must show the odd value as it is, mark it, and never crash.
"""

from __future__ import annotations

import html
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_report_records import FORMAT_1

from securedp import AuditLog, ChaChaSource, Session, verify_log
from securedp.audit.report import render_report, write_report
from securedp.audit.report_model import build_report
from securedp.tables import Count, Mean

HUGE = 10**400


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """A count, a mean, a table with a mean and a rho sum, as sessions record them."""
    path = tmp_path_factory.mktemp("base") / "base.jsonl"
    session = Session(epsilon=4, rng=ChaChaSource(bytes(32)), audit=AuditLog(path))
    session.count([1, 2, 3], epsilon="1/2")
    session.mean([1, 2, 3] * 9, bounds=(0, 10), epsilon="1/2")
    frame = pd.DataFrame({"g": ["a", "b"] * 9, "x": [float(i) for i in range(18)]})
    session.table(frame, group_by=["g"], keys=["a", "b"], aggregations=[Count(), Mean("x", (0, 20))], epsilon="1/2")
    rho = Session(rho=1, rng=ChaChaSource(bytes(32)), audit=AuditLog(path))
    rho.sum([1, 2, 3], bounds=(0, 4), rho="1/2")
    found = [json.loads(line)["record"] for line in path.read_text(encoding="utf-8").splitlines()]
    old = {f"{name}1": FORMAT_1[name] for name in ("count", "mean", "rho_sum")}  # as securedp 0.1 recorded them
    return dict(zip(["count", "mean", "table", "rho_sum"], found, strict=True)) | old


def write(tmp_path: Path, name: str, record: dict[str, Any]) -> Path:
    """``record`` as the only line of a fresh log written by AuditLog; the log verifies."""
    path = tmp_path / f"{name}.jsonl"
    AuditLog(path).append(record)
    verified = verify_log(path)
    assert verified.ok, verified.problem
    return path


def with_parameters(record: dict[str, Any], /, **changes: Any) -> dict[str, Any]:
    """``record`` with ``changes`` to its parameters; a change named ``noise:<key>`` sets ``<key>`` of every noise
    law of every aggregation (a record of format 2 states its laws there)."""
    laws = {k.removeprefix("noise:"): v for k, v in changes.items() if k.startswith("noise:")}
    parameters = {**record["parameters"], **{k: v for k, v in changes.items() if not k.startswith("noise:")}}
    for name, value in parameters.items():
        if laws and isinstance(value, dict) and isinstance(value.get("noise"), list):
            parameters[name] = {**value, "noise": [{**law, **laws} for law in value["noise"]]}
    return {**record, "parameters": parameters}


ODD = [
    ("count", {"alpha": "x"}, "x"),
    ("count", {"alpha": "0"}, "0"),
    ("count", {"alpha": "2"}, "2"),
    ("table", {"alpha": "x"}, "x"),
    ("table", {"alpha": "0"}, "0"),
    ("table", {"alpha": "2"}, "2"),
    ("mean", {"alpha": "2"}, "2"),
    ("count1", {"alpha": "x"}, "x"),
    ("count", {"noise:scale_units": HUGE}, str(HUGE)),
    ("mean", {"noise:scale_units": HUGE}, str(HUGE)),
    ("table", {"noise:scale_units": HUGE}, str(HUGE)),
    ("rho_sum", {"noise:variance_units": HUGE}, str(HUGE)),
    ("count1", {"scale_units": HUGE}, str(HUGE)),
    ("mean1", {"sum_scale_units": HUGE, "count_scale_units": HUGE}, str(HUGE)),
    ("rho_sum1", {"variance_units": HUGE}, str(HUGE)),
]


@pytest.mark.parametrize(("kind", "changes", "shown"), ODD, ids=[f"{k}-{'-'.join(c)}" for k, c, _ in ODD])
def test_a_log_that_verifies_with_an_odd_value_is_reported(tmp_path: Path, records: dict[str, dict[str, Any]],
                                                           kind: str, changes: dict[str, Any], shown: str) -> None:
    path = write(tmp_path, kind, with_parameters(records[kind], **changes))
    report = write_report(path, tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert report.verification.ok and report.ok and '<p class="headline ok">' in page
    assert [x.trouble for x in report.entries] == [None], "the record was not read whole"
    assert shown in page, "the odd value is not shown as it is"
    if "alpha" in changes:
        odd = re.findall(r'<span class="odd">(.*?)</span>', page, re.S)
        assert any(f"alpha {shown} is not a rational in (0, 1)" in html.unescape(o) for o in odd), odd
        assert "1 - 1/20" in page  # the level the half-widths are shown at instead
    else:
        assert "<svg" in page and "Noise laws" in page  # drawn all the same: coordinates never overflow
        laws = [law for x in report.entries for law in x.noise]
        assert laws and all(law.parameter == HUGE for law in laws), "the huge law was not read"


@pytest.mark.parametrize(("kind", "changes"), [("count", {"noise:scale_units": HUGE}),
                                               ("count1", {"scale_units": HUGE})], ids=["format-2", "format-1"])
def test_a_huge_scale_is_drawn_with_exact_tick_labels(tmp_path: Path, records: dict[str, dict[str, Any]], kind: str,
                                                      changes: dict[str, Any]) -> None:
    path = write(tmp_path, "huge", with_parameters(records[kind], **changes))
    (law,) = build_report(path).entries[0].noise
    assert law.parameter == HUGE
    page = render_report(build_report(path))
    svg = re.findall(r"<svg.*?</svg>", page, re.S)[-1]
    ticks = re.search(r"<g class=\"x-ticks\">(.*?)</g>", svg, re.S)
    assert ticks is not None and re.search(r">-?\d(\.\d+)?e400<", ticks.group(1)), ticks.group(1)[:300]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**500), max_value=10**500)
    | st.sampled_from(["x", "0", "2", "-1", "1/0", "1/3", "1e-9", "", "NaN", "<b>", "0/1"]) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
NAMES = st.sampled_from(["alpha", "scale_units", "variance_units", "lattice_step", "count_scale_units",
                         "sum_scale_units", "bounds_units", "centre_units", "bounds", "edges", "noise", "count",
                         "x_mean", "delta", "shares", "q", "kind", "data_mean", "data_sum", "selection", "candidates",
                         "rank_error_bound", "epsilon_cell", "sensitivity", "qs", "epsilon_each", "labels", "column",
                         "cell_sensitivity_units", "mechanism"]) | st.text(min_size=1, max_size=6)


def changed_inside(record: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``record`` with ``changes`` to its first aggregation's record and to that record's first noise law."""
    parameters = dict(record["parameters"])
    name = next((k for k, v in parameters.items() if isinstance(v, dict) and "noise" in v), None)
    if name is None:
        return with_parameters(record, **changes)
    own = {**parameters[name], **changes}
    if isinstance(parameters[name]["noise"], list) and parameters[name]["noise"]:
        own["noise"] = [{**parameters[name]["noise"][0], **changes}, *parameters[name]["noise"][1:]]
    return {**record, "parameters": {**parameters, name: own}}


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["count", "mean", "table", "rho_sum", "count1", "mean1", "rho_sum1"]),
       changes=st.dictionaries(NAMES, JSON, min_size=1, max_size=4), inside=st.booleans())
def test_any_parameters_that_verify_are_reported_without_a_crash(records: dict[str, dict[str, Any]], kind: str,
                                                                  changes: dict[str, Any], inside: bool) -> None:
    """Odd values anywhere: in a record's parameters, or in its aggregation's record and noise law (format 2)."""
    changed = changed_inside(records[kind], changes) if inside else with_parameters(records[kind], **changes)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "odd.jsonl"
        AuditLog(path).append(changed)
        report = build_report(path)
    page = render_report(report)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    if report.verification.ok:
        assert '<p class="headline ok">' in page
        assert all(x.trouble is None for x in report.entries), [x.trouble for x in report.entries]
