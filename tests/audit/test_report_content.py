"""Issue 28, item 2 ("The report"): every number labelled, the real charge, a red headline when a replay
fails, parameters explained, a mean's half-width in the column's units.

The logs are written by the command itself (in-process, with replayable labels) and by a session; the
page is read as HTML here (the browser's view of it is tested in ``test_report_browser.py``).
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest

from securedp.audit.report import render_report
from securedp.audit.report_model import build_report

SEED = bytes(range(32))
SVG = "{http://www.w3.org/2000/svg}"



@pytest.fixture
def cli_log(tmp_path: Path, command, replayable_labels: None) -> Path:  # type: ignore[no-untyped-def]
    """A budget file's log from the command: count and mean of a, mean and sum of b, bounds, histogram, table of a."""
    data = tmp_path / "data.csv"
    rows = [f"{i // 2},{['n', 's'][i % 2]},{i % 50},{(7 * i) % 90}" for i in range(300)]
    data.write_text("person,g,a,b\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "seed.bin").write_bytes(SEED)
    common = ["--seed-file", str(tmp_path / "seed.bin"), "--audit-log", str(tmp_path / "log.jsonl"),
              "--budget-file", str(tmp_path / "budget.json")]
    runs = [
        ["release", str(data), "--column", "a", "--stat", "count", "--epsilon", "1/2", "--budget", "10"],
        ["release", str(data), "--column", "a", "--stat", "mean", "--bounds", "0,50", "--epsilon", "1/2"],
        ["release", str(data), "--column", "b", "--stat", "mean", "--bounds", "0,90", "--epsilon", "1/4"],
        ["release", str(data), "--column", "b", "--stat", "sum", "--bounds", "0,90", "--epsilon", "1/4"],
        ["bounds", str(data), "--column", "a", "--epsilon", "1/2"],
        ["release", str(data), "--column", "a", "--stat", "histogram", "--bins", "0,10,20,30,40,50",
         "--epsilon", "1/2"],
        ["release", str(data), "--group-by", "g", "--keys", "n,s", "--count", "--mean", "a:0,50", "--epsilon", "1",
         "--id-column", "person"],
    ]
    for argv in runs:
        status, _, err = command([*argv, *common])
        assert status == 0, err
    return tmp_path / "log.jsonl"


def text_of(page: str) -> str:
    """The page's visible text: tags dropped, entities decoded, whitespace collapsed."""
    body = re.sub(r"<(title|desc|style)>.*?</\1>", " ", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def section(page: str, line: int) -> str:
    """The HTML of the section about log line ``line``."""
    start = page.index(f'<section class="release" id="line-{line}"')
    return page[start:page.index("</section>", start)]


def svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(svg) for svg in re.findall(r"<svg.*?</svg>", page, re.S)]


def exact(label: str) -> Fraction:
    """A tick or marker label as an exact number: ``12``, ``-0.25``, ``2.5e399``, ``19/2`` (a leading ``±`` dropped)."""
    text = label.strip().lstrip("±+").replace("−", "-")
    mantissa, _, exponent = text.partition("e")
    return Fraction(mantissa) * Fraction(10) ** int(exponent or 0)


def ticks(svg: ET.Element, axis: str) -> list[tuple[float, Fraction]]:
    """(position along the axis, exact value) of every tick label of ``axis`` ("x" or "y")."""
    group = svg.find(f".//{SVG}g[@class='{axis}-ticks']")
    assert group is not None, f"a plot without {axis} ticks: {svg.findtext(f'{SVG}title')}"
    return [(float(t.get(axis) or "nan"), exact(t.text or "")) for t in group.iter(f"{SVG}text")]


def test_every_plot_has_numbered_axes_whose_labels_sit_where_their_values_are(cli_log: Path) -> None:
    page = render_report(build_report(cli_log))
    plots = svgs(page)
    assert len(plots) >= 8  # the budget plot, and one per noise law
    for svg in plots:
        for axis in ("x", "y"):
            found = ticks(svg, axis)
            assert len(found) >= 2, f"{axis} axis of {svg.findtext(f'{SVG}title')}"
            (p0, v0), (p1, v1) = found[0], found[-1]
            for p, v in found:  # linear: every label sits where its value is drawn
                assert p == pytest.approx(p0 + (p1 - p0) * float((v - v0) / (v1 - v0)), abs=0.6)
        labelled = {m.get("data-label") for m in svg.iter(f"{SVG}line") if "marker" in (m.get("class") or "")}
        texts = {t.get("id") for t in svg.iter(f"{SVG}text")}
        assert labelled <= texts and None not in labelled, "a dashed marker without its label"


def test_the_dashed_total_is_labelled_with_the_ledgers_exact_total(cli_log: Path) -> None:
    page = render_report(build_report(cli_log))
    budget = svgs(page)[0]
    markers = [m for m in budget.iter(f"{SVG}line") if "marker" in (m.get("class") or "")]
    assert len(markers) == 1
    label = next(t for t in budget.iter(f"{SVG}text") if t.get("id") == markers[0].get("data-label"))
    assert label.text == "total 10"


def test_a_command_line_release_shows_its_real_charge_and_no_null(cli_log: Path) -> None:
    report = build_report(cli_log)
    records = [e.record for e in report.entries]
    assert all("charged" not in r for r in records)  # the command writes no charge: the report derives it
    assert [e.charge.amount for e in report.entries] == [Fraction(r["epsilon"]) for r in records]
    page = render_report(report)
    assert not re.search(r"\bnull\b|\bNone\b", text_of(page)), "an absent field printed as null"
    budget_rows = re.findall(r"<tr><td>(\d+)</td><td>[^<]*</td><td>[^<]*</td><td>epsilon</td><td>([^<]*)</td>", page)
    assert [charged for _, charged in budget_rows] == [str(Fraction(r["epsilon"])) for r in records]
    assert "derived from the record's epsilon" in text_of(section(page, 1))


def test_a_rho_release_is_charged_its_rho_and_a_release_without_budget_says_so(tmp_path: Path, command) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "d.csv"
    data.write_text("x\n" + "\n".join(str(i % 9) for i in range(50)) + "\n", encoding="utf-8")
    log = str(tmp_path / "log.jsonl")
    assert command(["release", str(data), "--column", "x", "--stat", "count", "--rho", "1/8", "--audit-log", log,
                    "--budget-file", str(tmp_path / "rho.json"), "--budget", "1"])[0] == 0
    assert command(["release", str(data), "--column", "x", "--stat", "count", "--epsilon", "1/3",
                    "--audit-log", log])[0] == 0
    report = build_report(log)
    rho, free = report.entries
    assert (rho.charge.amount, rho.charge.currency) == (Fraction(1, 8), "rho")
    assert free.charge.amount is None
    page = render_report(report)
    assert "1/8 rho" in text_of(section(page, 1))
    assert "not charged to any budget" in text_of(section(page, 2))
    assert not re.search(r"\bnull\b", text_of(page))


def altered(path: Path) -> Path:
    """The data with every value of column b changed: releases of b no longer reproduce, those of a do."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = [lines[0]] + [",".join([*line.split(",")[:3], str((int(line.split(",")[3]) + 1) % 90)]) for line in lines[1:]]
    changed = path.with_name("altered.csv")
    changed.write_text("\n".join(out) + "\n", encoding="utf-8")
    return changed


def headline(page: str) -> tuple[str, str]:
    found = re.search(r'<p class="headline (ok|bad)">(.*?)</p>', page, re.S)
    assert found is not None
    return found.group(1), text_of(found.group(2))


def test_the_headline_is_red_and_says_so_when_any_replay_fails(cli_log: Path, command) -> None:  # type: ignore[no-untyped-def]
    data = cli_log.with_name("data.csv")
    good = build_report(cli_log, seed=SEED, data=data)
    assert good.ok and headline(render_report(good)) == ("ok", good.headline)
    assert "every line verifies" in good.headline and "7 of 7 releases reproduced exactly" in good.headline
    bad = build_report(cli_log, seed=SEED, data=altered(data))
    failed = [e.line for e in bad.entries if e.replay is not None and not e.replay.ok]
    assert failed == [3, 4]  # the mean and the sum of b
    colour, words = headline(render_report(bad))
    assert colour == "bad" and not bad.ok
    assert "2 of 7 releases do not reproduce (lines 3, 4)" in words and "every line verifies" in words
    status, out, _ = command(["audit", "report", str(cli_log), "--seed-file", str(cli_log.with_name("seed.bin")),
                              "--data", str(altered(data)), "-o", str(cli_log.with_name("r.html"))])
    assert status == 1 and "2 of 7 releases do not reproduce" in out


def test_a_replay_that_cannot_run_turns_the_headline_red(cli_log: Path) -> None:
    report = build_report(cli_log, seed=bytes(32), data=cli_log.with_name("data.csv"))  # the wrong seed
    colour, words = headline(render_report(report))
    assert colour == "bad" and "7 of 7 releases do not reproduce" in words
