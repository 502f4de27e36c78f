"""The report in a real browser: every plotted number is labelled, legibly, and the page fits 1280 px.

Debian's headless Chromium (``.ci/run`` installs it) loads the report of a log with every kind of plot
(several ledgers and their totals, a delta ledger, noise laws of counts, sums and means) and of wide
content (a 36-bin histogram, a table of many columns, a bounds release with 99 edges), and the report
of a log of records of both formats (securedp 0.1's and this version's) and every statistic. Through
the DevTools protocol (``_cdp.py``) the test reads the *rendered* layout: in every plot both axes carry
at least two numbered ticks, placed where their values are; every dashed marker (a ledger's total, a
half-width) has its label; every label is visible inside its plot and overlaps no other; every point
has its exact value as a title; the document is no wider than the viewport, at 1280 and 1024 px; and
nothing is logged to the console. A control page shows that each of these checks can fail. Without
Chromium the tests are skipped locally and fail in CI (``CI=true``).
"""

from __future__ import annotations

import os
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _cdp import Browser
from test_report_records import format_1_log, format_2_log

from securedp import AuditLog, ChaChaSource, Session
from securedp.audit.report import write_report
from securedp.tables import Count

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

MEASURE = """(() => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return {
    width: document.documentElement.scrollWidth, viewport: window.innerWidth,
    plots: [...document.querySelectorAll('svg')].map(svg => ({
      title: svg.querySelector('title').textContent, box: box(svg),
      texts: [...svg.querySelectorAll('text')].map(t => ({
        text: t.textContent, id: t.id, group: t.parentElement.getAttribute('class') || '', box: box(t)})),
      markers: [...svg.querySelectorAll('line.marker')].map(m => m.getAttribute('data-label')),
      points: [...svg.querySelectorAll('circle')].map(c => (c.querySelector('title') || {}).textContent || ''),
    })),
  };
})()"""


def number(label: str) -> Fraction | None:
    """A tick label's exact value (``12``, ``-0.25``, ``2.5e399``), or None if it is no number."""
    mantissa, _, exponent = label.strip().partition("e")
    try:
        return Fraction(mantissa) * Fraction(10) ** int(exponent or 0)
    except ValueError:
        return None


def _inside(inner: list[float], outer: list[float]) -> bool:
    return (inner[0] >= outer[0] - 0.5 and inner[1] >= outer[1] - 0.5 and inner[2] <= outer[2] + 0.5
            and inner[3] <= outer[3] + 0.5)


def _overlap(a: list[float], b: list[float]) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5


def _ticks(plot: dict[str, Any], axis: str) -> list[str]:
    """What is wrong with one axis' ticks: too few, not numbers, or not where their values are."""
    ticks = [t for t in plot["texts"] if t["group"] == f"{axis}-ticks"]
    values = [number(t["text"]) for t in ticks]
    if len(ticks) < 2 or None in values:
        return [f"{plot['title']}: the {axis} axis has {len(ticks)} numbered ticks ({[t['text'] for t in ticks]})"]
    i = 0 if axis == "x" else 1
    centres = [(t["box"][i] + t["box"][i + 2]) / 2 for t in ticks]
    (c0, v0), (c1, v1) = (centres[0], values[0]), (centres[-1], values[-1])
    assert v0 is not None and v1 is not None
    wrong = [t["text"] for t, c, v in zip(ticks, centres, values, strict=True)
             if v is not None and abs(c - (c0 + (c1 - c0) * float((v - v0) / (v1 - v0)))) > 1.5]
    return [f"{plot['title']}: {axis} ticks {wrong} are not where their values are"] if wrong else []


def problems(measured: dict[str, Any]) -> list[str]:
    """Everything the rendered page gets wrong (see the module docstring); empty for a good page."""
    found = []
    if measured["width"] > measured["viewport"]:
        found.append(f"the page is {measured['width']} px wide in a {measured['viewport']} px window")
    for plot in measured["plots"]:
        found += _ticks(plot, "x") + _ticks(plot, "y")
        ids = {t["id"]: t for t in plot["texts"] if t["id"]}
        for label in plot["markers"]:
            text = ids.get(label)
            if text is None or (not any(ch.isdigit() for ch in text["text"]) and "t" not in text["text"]):
                found.append(f"{plot['title']}: a dashed marker without a numbered label")
        for text in plot["texts"]:
            width, height = text["box"][2] - text["box"][0], text["box"][3] - text["box"][1]
            if width <= 0 or height <= 0 or not _inside(text["box"], plot["box"]):
                found.append(f"{plot['title']}: label {text['text']!r} is not visible inside its plot")
        texts = plot["texts"]
        found += [f"{plot['title']}: labels {a['text']!r} and {b['text']!r} overlap"
                  for i, a in enumerate(texts) for b in texts[i + 1:] if _overlap(a["box"], b["box"])]
        found += [f"{plot['title']}: a point without its value" for p in plot["points"]
                  if not any(ch.isdigit() for ch in p)]
    return found


def chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium (see .ci/run): the report is tested in a real browser")
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    return CHROMIUM


def wide_log(tmp_path: Path, command: Any) -> Path:
    """A log with two writers: a budget file's releases (wide ones included) and a session's, with a partition."""
    data = tmp_path / "data.csv"
    rows = [f"{i // 2},{['n', 's', 'e'][i % 3]},{18 + i % 70},{(37 * i) % 200000}" for i in range(600)]
    data.write_text("person,g,age,income\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "seed.bin").write_bytes(bytes(range(32)))
    log = tmp_path / "log.jsonl"
    common = ["--seed-file", str(tmp_path / "seed.bin"), "--audit-log", str(log), "--budget-file",
              str(tmp_path / "budget.json"), "--id-column", "person"]
    for argv in (
        ["release", str(data), "--column", "age", "--stat", "count", "--epsilon", "1/2", "--budget", "20",
         "--max-contributions", "2"],
        ["release", str(data), "--column", "age", "--stat", "mean", "--bounds", "18,90", "--epsilon", "1/2",
         "--max-contributions", "2"],
        ["bounds", str(data), "--column", "income", "--epsilon", "1/2", "--max-contributions", "2"],
        ["release", str(data), "--column", "age", "--stat", "histogram", "--bins",
         ",".join(str(b) for b in range(18, 91, 2)), "--epsilon", "1/2", "--max-contributions", "2"],
        ["release", str(data), "--group-by", "g", "--keys", "n,s,e", "--count", "--sum", "income:0,200000",
         "--mean", "age:18,90", "--mean", "income:0,200000", "--sum", "age:0,100", "--variance", "age:18,90",
         "--epsilon", "1", "--max-rows", "2"],
    ):
        status, _, err = command([*argv, *common])
        assert status == 0, err
    session = Session(epsilon=4, delta="1e-6", rng=ChaChaSource(bytes(32)), audit=AuditLog(log))
    ages = [23, 35, 41, 29, 62, 57, 38] * 5
    session.sum(ages, bounds=(0, 120), epsilon="1/4")
    frame = pd.DataFrame({"p": list(range(60)), "g": ["a", "b", "c"] * 20})
    session.table(frame, group_by=["g"], id_column="p", aggregations=[Count()], epsilon="1/2", delta="1e-9")
    parts = session.partition(ages, by=[a % 2 for a in ages], parts=[0, 1], budget="1/4")
    parts[0].session.count(parts[0].data, epsilon="1/8")
    parts[1].session.count(parts[1].data, epsilon="1/4")
    return log


@pytest.mark.slow
def test_the_report_labels_every_plotted_number_in_a_real_browser(tmp_path: Path, command: Any,
                                                                   replayable_labels: None) -> None:
    page = tmp_path / "report.html"
    report = write_report(wide_log(tmp_path, command), page)
    assert report.ok and len(report.entries) == 10
    with Browser(chromium()) as browser:
        for width in (1280, 1024):
            measured = browser.evaluate(browser.open(page.as_uri(), width), MEASURE)
            assert len(measured["plots"]) >= 15 and sum(len(p["markers"]) for p in measured["plots"]) >= 25
            assert problems(measured) == []
        assert browser.console == []


@pytest.mark.slow
def test_a_log_of_both_formats_and_every_statistic_is_legible_in_a_real_browser(tmp_path: Path) -> None:
    """Records of format 1 (securedp 0.1) and of format 2, of every statistic, on one page: the same checks."""
    page = tmp_path / "both.html"
    report = write_report(format_2_log(format_1_log(tmp_path / "both.jsonl")), page)
    laws = sum(len(x.noise) for x in report.entries)
    assert report.ok and laws >= 40
    with Browser(chromium()) as browser:
        for width in (1280, 1024):
            measured = browser.evaluate(browser.open(page.as_uri(), width), MEASURE)
            assert len(measured["plots"]) >= laws + 1  # one per noise law, and the budget's
            assert problems(measured) == []
        assert browser.console == []


@pytest.mark.slow
def test_control_the_browser_checks_fail_on_a_bad_page(tmp_path: Path) -> None:
    """An unlabelled marker, overlapping and clipped labels, an unnumbered axis, an untitled point, a wide
    table and a console error: each is caught."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><body style="margin:0"><svg width="300" height="120" viewBox="0 0 300 120" '
        'xmlns="http://www.w3.org/2000/svg"><title>bad plot</title><g class="x-ticks"><text x="10" y="100">0</text>'
        '<text x="14" y="100">100</text><text x="290" y="100">20</text></g><g class="y-ticks"><text x="2" y="50">'
        'many</text></g><line class="marker" data-label="nowhere" x1="50" x2="50" y1="0" y2="90"/>'
        '<text x="295" y="10">clipped label</text><circle cx="5" cy="5" r="2"/></svg>'
        '<table><tr><td style="min-width:2000px">wide</td></tr></table>'
        "<script>console.error('planted')</script></body></html>", encoding="utf-8")
    with Browser(chromium()) as browser:
        found = problems(browser.evaluate(browser.open(page.as_uri(), 1280), MEASURE))
        assert browser.console, "the planted console error was not seen"
    for expected in ("px wide in a 1280 px window", "the y axis has 1 numbered ticks", "are not where their values",
                     "a dashed marker without a numbered label", "'clipped label' is not visible",
                     "labels '0' and '100' overlap", "a point without its value"):
        assert any(expected in p for p in found), (expected, found)
