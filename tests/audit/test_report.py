"""The reviewer's HTML report: its content from a real log, escaping, tampering, the CLI, and a real browser.

The browser tests run Debian's headless Chromium (``.ci/run`` installs it). They load the page, read
the rendered DOM, take a screenshot, and fail on any console message; a control page with one
console error and one blocked load shows that the check can fail. Without Chromium they are skipped
locally and fail in CI (``CI=true``), so CI cannot pass them by accident.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest
from test_report_records import format_1_log

import securedp
from securedp import AuditLog, ChaChaSource, Session
from securedp.audit.report import render_report, write_report
from securedp.audit.report_model import build_report, noise_laws, rational
from securedp.privacy.accuracy import laplace_halfwidth
from securedp.tables import Count, Mean, Median, Sum

REPO = Path(securedp.__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HOSTILE_KEY = "<script>alert(1)</script>"


def _log(tmp_path: Path) -> Path:
    """A log with one-column releases, tables with public and private keys, and a partition."""
    path = tmp_path / "audit.jsonl"
    session = Session(epsilon="4", delta="1e-6", rng=ChaChaSource(bytes(32)), audit=AuditLog(path))
    ages = [23, 35, 41, 29, 62, 57, 38]
    session.count(ages, epsilon="1/4")
    session.median(ages, bounds=(0, 120), epsilon="1/4")
    session.mean(ages, bounds=(0, 120), epsilon="1/4")
    frame = pd.DataFrame({"p": list(range(40)), "g": ["a", "b", HOSTILE_KEY, "=HYPERLINK(1)"] * 10,
                          "x": [float(i % 17) for i in range(40)]})
    session.table(frame, group_by=["g"], id_column="p", keys=["a", "b", HOSTILE_KEY],
                  aggregations=[Count(), Sum("x", (0, 20)), Mean("x", (0, 20))], epsilon="1/2")
    session.table(frame, group_by=["g"], id_column="p", aggregations=[Count(), Median("x", (0, 20))],
                  epsilon="1/2", delta="1e-9")
    parts = session.partition(ages, by=[a % 2 for a in ages], parts=[0, 1], budget="1/4")
    parts[0].session.count(parts[0].data, epsilon="1/8")
    return path


def test_the_report_states_every_record_with_its_exact_budget(tmp_path: Path) -> None:
    report = build_report(_log(tmp_path))
    assert report.verification.ok and len(report.entries) == 7
    kinds = [e.kind for e in report.entries]
    assert kinds == ["count", "median", "mean", "table", "table", "partition", "count"]
    assert [e.budget("spent") for e in report.entries[:6]] == [Fraction(1, 4), Fraction(1, 2), Fraction(3, 4),
                                                               Fraction(5, 4), Fraction(7, 4), Fraction(2)]
    table = report.entries[4]  # charged the delta its threshold proves, below the 1e-9 asked
    assert table.delta("spent") == table.delta("charged") == rational(table.record["parameters"]["delta"])
    assert table.record["parameters"]["delta_asked"] == "1/1000000000" and table.delta("spent") < Fraction(1, 10**9)
    assert report.entries[6].ledger.endswith("/ part 0")
    page = render_report(report)
    for heading in ("<h1>", "<h2>Verification</h2>", "<h2>Budget over time</h2>", "<h2>Releases</h2>"):
        assert heading in page
    assert page.count("<caption>") >= 7 * 2  # every table has a caption
    assert "delta spent after each record" in page


def test_the_stated_half_width_is_the_released_one(tmp_path: Path) -> None:
    """A table's count interval is value -/+ t; the report's half-width for it must be that t."""
    report = build_report(_log(tmp_path))
    table = report.entries[3]
    law = next(n for n in table.noise if n.label == "count")
    labels = table.record["labels"]
    for row in table.record["value"]:
        cell = dict(zip(labels, row, strict=True))
        assert Fraction(str(cell["count_high"])) - Fraction(str(cell["count"])) == law.halfwidth_units
    one = report.entries[0]  # a count of one column: the one-cell table's "count" aggregation states its law
    scale = Fraction(str(one.record["parameters"]["count"]["noise"][0]["scale_units"]))
    assert [(n.label, n.halfwidth_units) for n in one.noise] == [("count", laplace_halfwidth(scale, Fraction(1, 20)))]
    old = build_report(format_1_log(tmp_path / "old.jsonl", ["count"])).entries[0]  # securedp 0.1: flat
    scale = Fraction(str(old.record["parameters"]["scale_units"]))
    assert [(n.label, n.halfwidth_units) for n in old.noise] == [("count", laplace_halfwidth(scale, Fraction(1, 20)))]


def test_noise_laws_of_a_rho_record_are_gaussian() -> None:
    record = {"statistic": "sum", "mechanism": "discrete_gaussian",
              "parameters": {"lattice_step": "1/4", "variance_units": "50"}}
    (law,) = noise_laws(record)
    assert law.mechanism == "discrete_gaussian" and law.parameter == 50 and law.halfwidth == law.halfwidth_units / 4
    one_cell = {"format": 2, "statistic": "sum", "mechanism": "discrete_gaussian", "parameters": {"data_sum": {
        "noise": [{"mechanism": "discrete_gaussian", "cell_sensitivity_units": 4, "variance_units": "50"}],
        "column": "data", "lattice_step": "1/4", "bounds_units": [0, 4]}}}
    assert noise_laws(one_cell) == [law]


def test_values_from_the_log_are_escaped_and_nothing_is_loaded(tmp_path: Path) -> None:
    page = render_report(build_report(_log(tmp_path)))
    assert HOSTILE_KEY not in page and html.escape(HOSTILE_KEY) in page
    assert "<script" not in page.lower()
    assert re.findall(r"(?:src|href)=", page) == []
    external = set(re.findall(r"https?://[^\s\"'<>]+", page))
    assert external <= {"http://www.w3.org/2000/svg"}  # the SVG namespace is a name, never fetched


def test_a_tampered_log_is_reported_as_such(tmp_path: Path) -> None:
    path = _log(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"charged":"1/4"', '"charged":"1/8"')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = build_report(path)
    assert not report.verification.ok and len(report.entries) == 2
    assert "problem: line 3" in render_report(report)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "securedp", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_cli_writes_the_report_and_replays_a_cli_log(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    data.write_text("x\n" + "\n".join(str(i % 50) for i in range(200)) + "\n", encoding="utf-8")
    seed = tmp_path / "seed.bin"
    seed.write_bytes(bytes(range(32)))
    for options in (["--stat", "count"], ["--stat", "mean", "--bounds", "0,100"]):
        done = _cli("release", "data.csv", "--column", "x", *options, "--epsilon", "1/2", "--seed-file", "seed.bin",
                    "--audit-log", "log.jsonl", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    done = _cli("audit", "report", "log.jsonl", "--seed-file", "seed.bin", "--data", "data.csv", "-o", "r.html",
                cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.count('Replay: <span class="ok">reproduced exactly') == 2
    assert "2 of 2 releases reproduced exactly" in page
    half = _cli("audit", "report", "log.jsonl", "--seed-file", "seed.bin", "-o", "r2.html", cwd=tmp_path)
    assert half.returncode == 1 and "--seed-file and --data go together" in half.stderr
    assert half.stderr.count("\n") == 1 and "Traceback" not in half.stderr


def _chromium(page: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium (see .ci/run): the report is tested in a real browser")
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *flags, page.as_uri()],
            capture_output=True, text=True, timeout=120)


def _console(run: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in run.stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.slow
def test_the_page_renders_in_headless_chromium_without_console_errors(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    write_report(_log(tmp_path), page)
    dom = _chromium(page, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert _console(dom) == []
    text = re.sub(r"<[^>]+>", " ", dom.stdout)
    for expected in ("Audit report", "every line verifies", "Budget over time", "Line 4: table", "Line 6: partition",
                     "Noise laws", "Input commitment", html.escape(HOSTILE_KEY)):
        assert expected in text or expected in dom.stdout
    shot = tmp_path / "report.png"
    snap = _chromium(page, f"--screenshot={shot}", "--window-size=1200,2000")
    assert snap.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


@pytest.mark.slow
def test_the_console_check_catches_an_error_and_a_blocked_load(tmp_path: Path) -> None:
    """Control: the same check fails on a page that logs an error or tries to load a resource."""
    page = tmp_path / "control.html"
    page.write_text(render_report(build_report(_log(tmp_path))).replace(
        "</main>", '<img src="http://127.0.0.1:9/x.png" alt=""></main>'), encoding="utf-8")
    assert any("Content Security Policy" in line for line in _console(_chromium(page, "--dump-dom")))
    noisy = tmp_path / "noisy.html"
    noisy.write_text("<!DOCTYPE html><p>x</p><script>console.error('planted')</script>", encoding="utf-8")
    assert any("planted" in line for line in _console(_chromium(noisy, "--dump-dom")))
