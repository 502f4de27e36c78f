"""Issue 28, item 2 ("The report"): every number labelled, the real charge, a red headline when a replay
fails, parameters explained, a mean's half-width in the column's units.

The logs are written by the command itself (in-process, with replayable labels) and by a session; the
page is read as HTML here (the browser's view of it is tested in ``test_report_browser.py``).
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from test_report_records import DATA, FORMAT_1, format_1_log

from securedp import AuditLog, ChaChaSource, Session
from securedp.audit.report import render_report
from securedp.audit.report_model import MeanWidth, ReviewReport, build_report, mean_widths
from securedp.audit.report_words import UNDESCRIBED
from securedp.mechanisms.mean import mean_units
from securedp.privacy.accuracy import laplace_halfwidth
from securedp.tables import Count, Mean

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


def released_table(part: str) -> tuple[list[str], list[list[str]]]:
    """Header and body cells of the first released-value table in ``part``."""
    table = re.search(r'<table class="released">(.*?)</table>', part, re.S)
    assert table is not None
    head = [html.unescape(h) for h in re.findall(r"<th\b[^>]*>(.*?)</th>", table.group(1).split("</thead>")[0])]
    body = table.group(1).split("<tbody>")[1]
    rows = [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
    return head, rows


def test_a_bounds_release_is_one_row_with_lo_and_hi(cli_log: Path) -> None:
    report = build_report(cli_log)
    entry = report.entries[4]
    assert entry.kind == "bounds" and entry.record["labels"] == ["lo", "hi"]
    head, rows = released_table(section(render_report(report), 5))
    assert head == ["lo", "hi"] and rows == [[str(v) for v in entry.record["value"]]]


def test_a_histogram_is_one_row_per_bin(cli_log: Path) -> None:
    report = build_report(cli_log)
    entry = report.entries[5]
    head, rows = released_table(section(render_report(report), 6))
    assert head == ["bin", "count"]
    assert rows == [[f"{lo} to {hi}", str(n)] for (lo, hi), n in zip(entry.record["labels"], entry.record["value"],
                                                                          strict=True)]


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


def session_means(tmp_path: Path) -> ReviewReport:
    path = tmp_path / "means.jsonl"
    session = Session(epsilon=4, rng=ChaChaSource(SEED), audit=AuditLog(path))
    ages = [23, 35, 41, 29, 62, 57, 38] * 20
    session.mean(ages, bounds=(0, 120), epsilon="1/2")
    frame = pd.DataFrame({"g": ["a", "b"] * 70, "x": [float(a % 17) for a in ages]})
    session.table(frame, group_by=["g"], keys=["a", "b"], aggregations=[Count(), Mean("x", (0, 20))], epsilon="1")
    return build_report(path)


def mean_record(record: dict[str, Any]) -> dict[str, Any]:
    """A one-column mean's own parameters: its aggregation's record (format 2, ``data_mean``, its two laws as
    ``count_scale_units`` and ``sum_scale_units``), or its flat parameters (format 1)."""
    parameters = record["parameters"]
    if "format" not in record:
        return parameters
    own = parameters["data_mean"]
    count, total = own["noise"]
    return {**own, "count_scale_units": count["scale_units"], "sum_scale_units": total["scale_units"]}


def check_mean_width(record: dict[str, Any], page: str) -> MeanWidth:
    """The mean's stated half-width is the bound of :class:`MeanWidth` from its own laws, bounds and centre,
    and the page states it at five counts, rounded up and exactly."""
    (width,) = mean_widths(record)
    assert isinstance(width, MeanWidth) and width.label == "mean" and width.cells is None
    parameters = mean_record(record)
    t_n = laplace_halfwidth(parameters["count_scale_units"], Fraction(1, 40))  # each moment at alpha / 2
    t_s = laplace_halfwidth(parameters["sum_scale_units"], Fraction(1, 40))
    lo_u, hi_u = parameters["bounds_units"]
    half = max(hi_u - parameters["centre_units"], parameters["centre_units"] - lo_u)
    step = Fraction(parameters["lattice_step"])
    assert (width.count_halfwidth, width.sum_halfwidth, width.half_range, width.step) == (t_n, t_s, half, step)
    assert width.at(1000) == (Fraction(t_s + half * t_n, 1000 - t_n) + Fraction(1, 2)) * step
    assert width.at(t_n) is None  # no bound at a count the count's noise can reach zero from
    assert "Half-width of the mean in the column's units" in text_of(page)
    assert not re.search(r"<td[^>]*>\s*</td>", page), "an empty cell"
    rows = re.findall(r"<tr><td>([\d,]+)</td><td>([^<]+)</td><td>([^<]+)</td></tr>", page)
    assert [int(n.replace(",", "")) for n, _, _ in rows] == width.counts()
    for n, rounded, exactly in rows:
        at = width.at(int(n.replace(",", "")))
        assert at is not None and Fraction(exactly) == at
        assert at <= exact(rounded) <= at * Fraction(1001, 1000)  # rounded up, to 4 significant digits
    return width


def test_a_mean_states_its_half_width_in_the_columns_units(tmp_path: Path) -> None:
    report = session_means(tmp_path)
    one, table = report.entries
    page = render_report(report)
    width = check_mean_width(one.record, section(page, 1))
    assert width.counts() == [100, 1000, 10**4, 10**5, 10**6]
    (table_width,) = mean_widths(table.record)
    assert isinstance(table_width, MeanWidth)
    assert (table_width.label, table_width.cells, table_width.step) == ("x_mean", "x_mean", Fraction(1, 4096))
    part = section(page, 2)
    assert "Half-width of the mean in the column's units" in text_of(part) and "x_mean_low to x_mean_high" in part
    assert not re.search(r"<td[^>]*>\s*</td>", part), "an empty cell in line 2"


def test_a_format_1_mean_states_its_half_width_in_the_columns_units(tmp_path: Path) -> None:
    """The same, for a mean as securedp 0.1 recorded it (its laws flat in its parameters)."""
    report = build_report(format_1_log(tmp_path / "old.jsonl", ["mean"]))
    check_mean_width(report.entries[0].record, section(render_report(report), 1))


@pytest.mark.parametrize("written", [1, 2])
@pytest.mark.parametrize("n", [13, 20, 57, 400, 5000])
def test_the_mean_half_width_bounds_every_release_the_noise_can_give(tmp_path: Path, n: int, written: int) -> None:
    """Soundness: the library's own post-processing (:func:`mean_units`), at the extremes of both noises and of
    the data, never lands farther from the true mean than the stated half-width, in either format."""
    record = session_means(tmp_path).entries[0].record if written == 2 else FORMAT_1["mean"]
    (width,) = mean_widths(record)
    assert isinstance(width, MeanWidth)
    parameters = mean_record(record)
    lo_u, hi_u = parameters["bounds_units"]
    c = parameters["centre_units"]
    bound = width.at(n)
    if bound is None:
        assert n <= width.count_halfwidth
        return
    t_n, t_s = width.count_halfwidth, width.sum_halfwidth
    for total in (n * (lo_u - c), 0, n * (hi_u - c), n * (hi_u - c) // 3):
        for x in (-t_n, 0, t_n):
            for y in (-t_s, 0, t_s):
                (released,), _, _ = mean_units([n + x], [total + y], c, lo_u, hi_u, 0, 0)
                assert abs(released - c - Fraction(total, n)) * width.step <= bound


def test_a_variance_says_in_words_that_it_states_no_half_width(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    Session(epsilon=1, rng=ChaChaSource(SEED), audit=AuditLog(path)).variance([1, 5, 9] * 30, bounds=(0, 10),
                                                                               epsilon="1/2")
    part = section(render_report(build_report(path)), 1)
    assert "a variance is stated from three noisy moments" in text_of(part)
    assert not re.search(r"<td[^>]*>\s*</td>", part)


def test_parameters_are_explained_in_words_not_dumped(cli_log: Path) -> None:
    report = build_report(cli_log)
    page = render_report(report)
    bounds = section(page, 5)
    parameters = report.entries[4].record["parameters"]
    (name,) = [key for key in parameters if key.endswith("_histogram")]  # the column's name: the command's file
    edges = parameters[name]["edges"]  # the bins' aggregation's own record
    assert len(edges) > 80
    shown = re.sub(r"<details>.*?</details>", "", bounds, flags=re.S)  # the full list is folded away
    run = ", ".join(str(x) for x in edges[40:43])  # three edges in a row: only the full list holds them
    assert json.dumps(edges) not in html.unescape(shown) and run not in html.unescape(shown)
    assert run in html.unescape(bounds)
    assert f"{len(edges)} values, from {edges[0]} to {edges[-1]}" in text_of(bounds)
    for line in range(1, 8):  # the record's parameters, and each aggregation's, every one explained
        tables = re.findall(r'<table class="parameters">(.*?)</table>', section(page, line), re.S)
        assert len(tables) >= 2, f"line {line}: no table of its aggregation's parameters"
        for name, explanation in re.findall(
                r'<tr><th scope="row">(.*?)</th><td class="num">.*?</td><td>(.*?)</td></tr>', "".join(tables), re.S):
            assert explanation.strip() and UNDESCRIBED not in explanation, f"line {line}: {name} is not explained"
    for line in range(1, 8):  # no raw JSON object or list where a reviewer expects words
        assert not re.search(r"\{&quot;|\[&quot;|\{\"", section(page, line)), f"raw JSON in line {line}"
    assert "hmac-sha256/securedp-input/v1" in page and "the seed's SHA-256 commitment" in text_of(page)


def test_a_mean_of_one_column_reads_alike_in_both_formats(tmp_path: Path) -> None:
    """A mean of one column is the one-cell table of it (format 2: its laws in a ``noise`` list under
    ``data_mean``); securedp 0.1 stated the same mean's laws flat (format 1). The report reads both alike."""
    before = build_report(format_1_log(tmp_path / "old.jsonl", ["mean"]))  # securedp.mean(DATA, (0, 5), epsilon=1)
    path = tmp_path / "new.jsonl"
    Session(epsilon=1, rng=ChaChaSource(bytes(32)), audit=AuditLog(path)).mean(DATA, bounds=(0, 5), epsilon=1)
    after = build_report(path)
    (old,), (new,) = before.entries, after.entries
    assert "format" not in old.record and new.record["format"] == 2
    assert [(law.label, law.halfwidth) for law in new.noise] == [(law.label, law.halfwidth) for law in old.noise]
    assert [law.label for law in new.noise] == ["mean: count", "mean: centred sum"]
    assert new.widths == old.widths and new.trouble is None and old.trouble is None
    for report in (before, after):
        page = section(render_report(report), 1)
        assert "Half-width of the mean in the column's units" in text_of(page)
        assert not re.search(r"\[\{|\{&quot;", page)
    page = text_of(section(render_report(after), 1))
    assert "noise 1: count discrete Laplace noise" in page and "noise 2: centred sum discrete Laplace noise" in page


def test_a_median_states_its_fallback_point_or_that_it_has_none(tmp_path: Path) -> None:
    """The selections table says, per selection, the fallback probability and the rows from which it is rarer than
    alpha (as recorded), and the words explain the atom; a selection with ``fallback=0`` says none."""
    path = tmp_path / "log.jsonl"
    session = Session(epsilon=2, rng=ChaChaSource(SEED), audit=AuditLog(path))
    session.median([float(v) for v in range(40)], bounds=(0, 40), epsilon=1)
    session.median([float(v) for v in range(40)], bounds=(0, 40), epsilon=1, fallback=0)
    report = build_report(path)
    page = render_report(report)
    with_one, without = text_of(section(page, 1)), text_of(section(page, 2))
    rows = report.entries[0].record["parameters"]["data_median"]["fallback_rows_bound"]
    assert f"probability 3/4 without records; at most alpha from {rows:,} rows" in with_one
    assert "A fallback point f" in with_one and "A fallback point f" not in without
    assert "<td>none</td>" in section(page, 2) and "<td>none</td>" not in section(page, 1)
    assert UNDESCRIBED not in page
