"""Issue 43.8: the report's released table prints exact values in the command's one style (``29929.5``, never
``59859/2`` beside integers; keys as released), fits a 1400 px window (a long table scrolls inside its box) and
its column names never wrap letter by letter, in a real browser."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from _cdp import Browser
from test_report_browser import MEASURE, chromium, problems

from securedp.audit.report import write_report

MEASURE_TABLE = """(() => {
  const table = document.querySelector('table.released');
  const box = table.parentElement.getBoundingClientRect();
  const lines = e => { const r = document.createRange(); r.selectNodeContents(e); return r.getClientRects().length; };
  return {box: [box.width, box.height], scrollHeight: table.parentElement.scrollHeight,
          heads: [...table.querySelectorAll('th')].map(th => [th.textContent, lines(th)])};
})()"""


def job_log(tmp_path: Path, command: Any) -> Path:
    """A seeded table of 40 cities with long column names (count, sum, mean, median), logged."""
    lines = ["person,a_rather_long_city_column_name,income"]
    lines += [f"{i // 3},city-{i % 40:02d}-{'x' * (i % 40 // 4)},{(7919 * i) % 150001}" for i in range(16000)]
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "seed.bin").write_bytes(bytes(range(32)))
    status, _, err = command([
        "release", str(tmp_path / "data.csv"), "--group-by", "a_rather_long_city_column_name", "--count",
        "--sum", "income:0,150000", "--mean", "income:0,150000:0.5", "--median", "income:0,150000",
        "--id-column", "person", "--max-rows", "3", "--epsilon", "8", "--delta", "1e-6",
        "--seed-file", str(tmp_path / "seed.bin"), "--audit-log", str(tmp_path / "log.jsonl"), "--output",
        str(tmp_path / "t.csv")])
    assert status == 0, err
    return tmp_path / "log.jsonl"


def released_cells(page: str) -> list[str]:
    table = page[page.index('<table class="released">'):]
    return re.findall(r"<td>([^<]*)</td>", table[:table.index("</table>")])


def test_released_values_are_written_in_one_exact_style(tmp_path: Path, command: Any,
                                                         replayable_labels: None) -> None:
    page = tmp_path / "r.html"
    write_report(job_log(tmp_path, command), page)
    cells = released_cells(page.read_text(encoding="utf-8"))
    assert len(cells) >= 30 * 11
    assert not [c for c in cells if "/" in c], "a released number written as num/den"
    assert any(re.fullmatch(r"-?\d+\.5", c) for c in cells)  # the half-step means, as decimals
    assert any(c.startswith("city-") for c in cells)  # the keys, as released


@pytest.mark.slow
def test_the_released_table_fits_1400_px_and_scrolls_in_its_box(tmp_path: Path, command: Any,
                                                                 replayable_labels: None) -> None:
    page = tmp_path / "r.html"
    write_report(job_log(tmp_path, command), page)
    with Browser(chromium()) as browser:
        for width in (1400, 1024):
            tab = browser.open(page.as_uri(), width)
            assert problems(browser.evaluate(tab, MEASURE)) == []
            table = browser.evaluate(tab, MEASURE_TABLE)
            assert table["box"][0] <= width and table["box"][1] < 700 < table["scrollHeight"]
            assert [name for name, lines in table["heads"] if lines != 1] == []
        assert browser.console == []
