"""Records of both formats and of every statistic in the reviewer's report.

A record of format 1 (securedp 0.1, no ``format`` field) states a release of one column flat:
``scale_units``, ``count_scale_units``, ``lattice_step``... at the top of its ``parameters``. A record of
format 2 (``"format": 2``) states every release of data as a table: each aggregation's record under its
name (``data_mean``, ``count``, ``x_histogram``...). The report must read both alike: every noise law
found, labelled by the release's statistic for a release of one column (``mean: count``), by the
aggregation's name in a table, with the half-width the library itself states; every selection
described; every parameter explained; no ``null``.

The format-1 records are real, written by securedp 0.1 (``test_report_records.py``), and the log of
both formats is written with the library's own :class:`~securedp.AuditLog`, so that it verifies.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import pytest
from test_report_content import released_table, section, text_of
from test_report_records import DATA, FORMAT_1, SOURCE, format_1_log, format_2_log

import securedp
from securedp import ChaChaSource
from securedp.audit.report import render_report
from securedp.audit.report_model import MeanWidth, ReviewReport, build_report, mean_widths, noise_laws, selections
from securedp.audit.report_words import UNDESCRIBED, explain
from securedp.mechanisms.rank_utility import fallback_weight, rank_error_bound


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> ReviewReport:
    """The report of one log: every format-1 record, then every statistic of format 2."""
    path = tmp_path_factory.mktemp("both") / "both.jsonl"
    return build_report(format_2_log(format_1_log(path)))


def declared(record: dict[str, Any]) -> int:
    """How many noise laws ``record`` declares, counted from the record as written."""
    parameters = record["parameters"]
    if record["statistic"] == "contribution_histogram":
        return len(parameters["scales"])
    if "format" not in record and record["statistic"] != "table":
        return sum(name.endswith(("scale_units", "variance_units")) for name in parameters)
    return sum(len(v["noise"]) for v in parameters.values() if isinstance(v, dict) and "noise" in v)


def test_every_statistic_of_both_formats_is_reported_with_every_noise_law(both: ReviewReport) -> None:
    report, page = both, render_report(both)
    assert report.ok and report.verification.valid == len(FORMAT_1) + 21
    assert [x.trouble for x in report.entries] == [None] * len(report.entries)
    formats = {(x.record.get("format", 1), x.kind) for x in report.entries}
    for statistic in ("count", "sum", "mean", "variance", "median", "quantile", "quantiles", "iqr", "histogram",
                      "bounds", "selection", "table", "contribution_histogram"):
        assert {(1, statistic), (2, statistic)} <= formats, statistic
    assert not re.search(r"\bnull\b|\bNone\b", text_of(page)), "an absent value printed as null"
    assert UNDESCRIBED not in page, "a recorded field the report does not explain"
    for entry in report.entries:
        part = section(page, entry.line)
        assert len(entry.noise) == declared(entry.record), (entry.line, entry.kind, [n.label for n in entry.noise])
        assert not re.search(r"\{&quot;|\[&quot;|\{\"", part), f"raw JSON in line {entry.line}"
        laws = re.search(r"<caption>Noise laws.*?</table>", part, re.S)
        for law in entry.noise:
            assert law.halfwidth is not None, f"line {entry.line}: {law.label} has no half-width in its own units"
            assert laws is not None and f"<td>{law.label}</td>" in laws.group(0).replace("&#x27;", "'")
        if entry.kind not in ("table", "contribution_histogram"):  # one column: labelled by its statistic
            assert all(n.label == entry.kind or n.label.startswith(f"{entry.kind}: ") for n in entry.noise)
        if entry.kind in ("median", "quantile", "quantiles", "iqr") or "x_median" in entry.record["parameters"]:
            assert entry.selections and all(s.rank_error_bound is not None for s in entry.selections)
            assert "Selections (no additive noise)" in text_of(part)


SAME = [("count", "count"), ("sum", "sum"), ("mean", "mean"), ("variance", "variance"),
        ("histogram_categories", "histogram"), ("histogram_bins", "histogram"), ("bounds", "bounds"),
        ("rho_mean", "mean"), ("rho_sum", "sum")]


@pytest.mark.parametrize(("name", "statistic"), SAME, ids=[name for name, _ in SAME])
def test_a_release_of_one_column_reads_alike_in_both_formats(both: ReviewReport, name: str, statistic: str) -> None:
    """securedp 0.1 and this version priced these releases alike: the same laws, labels, half-widths and means'
    half-widths, whichever format states them."""
    old = next(x for x in both.entries if x.record == FORMAT_1[name] | {"source": SOURCE})
    cost = "rho" if name.startswith("rho") else "epsilon"
    new = next(x for x in both.entries if x.record.get("format") == 2 and x.kind == statistic
               and x.record[cost] == old.record[cost] and (x.record["labels"] is None) == (old.record["labels"] is None)
               and (statistic != "histogram" or x.record["labels"] == old.record["labels"]))
    assert [(n.label, n.mechanism, n.halfwidth, n.measure) for n in new.noise] == [
        (n.label, n.mechanism, n.halfwidth, n.measure) for n in old.noise]
    assert new.widths == old.widths
    assert [n.label for n in new.noise][:1] == [statistic if len(new.noise) == 1 else f"{statistic}: count"]
    if statistic == "mean":
        page = render_report(both)
        for entry in (old, new):
            assert "Half-width of the mean in the column's units" in text_of(section(page, entry.line))


@pytest.mark.parametrize("statistic", ["median", "quantile", "quantiles", "iqr"])
def test_a_selection_of_either_format_states_the_bound_of_its_own_law(both: ReviewReport, statistic: str) -> None:
    """A format-1 selection (securedp 0.1's law, ``exp(-epsilon |#{x < y} - q n| / (2 m))``: rank rate
    ``epsilon / (2 m)``) and a format-2 one of the same release (the score ``g`` of ``q = a/b``, sensitivity
    ``m max(a, b - a)``, rank rate ``epsilon b / (2 m max(a, b - a))``, twice that for ``q`` 0 or 1) agree on
    what they share; each rank error bound is the one of its own law: the format-1 one derived by 0.1's rule."""
    old = next(x for x in both.entries if x.kind == statistic and "format" not in x.record)
    new = next(x for x in both.entries if x.kind == statistic and x.record.get("format") == 2)
    assert old.selections and all(s.derived for s in old.selections) and not any(s.derived for s in new.selections)
    assert [(s.label, s.rule, s.q, s.epsilon) for s in old.selections] == \
        [(s.label, s.rule, s.q, s.epsilon) for s in new.selections]
    for s in old.selections:
        assert s.epsilon is not None and s.sensitivity == 1 and s.candidates is not None
        assert s.rank_error_bound == rank_error_bound(s.epsilon / 2, s.candidates, s.alpha)
    for s in new.selections:
        q = Fraction(s.q.split(", ")[0])
        assert s.epsilon is not None and s.candidates is not None
        assert s.sensitivity == max(q.numerator, q.denominator - q.numerator)
        rate = s.epsilon / (s.sensitivity if q in (0, 1) else 2 * s.sensitivity)
        weight = 0 if s.fallback is None else fallback_weight(s.fallback, s.candidates)
        margin = 0 if q in (0, 1) else -(-1 // (rate * q.denominator))  # the tie margin ceil(1 / rank rate)
        assert s.rank_error_bound == rank_error_bound(rate * q.denominator, s.candidates + weight, s.alpha) + margin


ONE_COLUMN = [
    ("count", lambda: securedp.prepare_count(DATA, epsilon=1)),
    ("sum", lambda: securedp.prepare_sum(DATA, bounds=(0, 5), epsilon="1/3")),
    ("mean", lambda: securedp.prepare_mean(DATA, bounds=(0, 5), epsilon=1)),
    ("mean", lambda: securedp.prepare_mean(DATA, bounds=(0, 5), rho="1/2")),
    ("variance", lambda: securedp.prepare_variance(DATA, bounds=(-3, 5), epsilon=2)),
    ("histogram", lambda: securedp.prepare_histogram(DATA, bins=[0, 2, 4, 6], epsilon="1/2")),
    ("median", lambda: securedp.prepare_median(DATA, bounds=(0, 5), epsilon=1)),
    ("quantiles", lambda: securedp.prepare_quantiles(DATA, ["1/10", "1/2"], bounds=(0, 9), epsilon=1)),
    ("iqr", lambda: securedp.prepare_iqr(DATA, bounds=(0, 5), rho=1)),
]


@pytest.mark.parametrize(("statistic", "prepare"), ONE_COLUMN, ids=[f"{s}-{i}" for i, (s, _) in enumerate(ONE_COLUMN)])
def test_the_half_widths_are_those_the_library_states(statistic: str, prepare: Any) -> None:
    """Each noise law's half-width in its own units, each selection's rank error bound, and a mean's moments'
    half-widths (each at alpha / 2: its interval's) are what the release states of its accuracy before it
    draws (``PreparedRelease.accuracy``, at the record's level 1 - 1/20)."""
    prepared = prepare()
    record = prepared.execute(ChaChaSource(bytes(32))).record()
    assert record["format"] == 2 and record["statistic"] == statistic
    stated = prepared.accuracy(Fraction(1, 20))
    found = {law.label.partition(": ")[2].replace(" ", "_"): law.halfwidth for law in noise_laws(record)}
    if statistic == "mean":
        (width,) = mean_widths(record)
        assert isinstance(width, MeanWidth) and width.label == "mean" and width.cells is None
        found = {"count": Fraction(width.count_halfwidth), "centred_sum": width.sum_halfwidth * width.step}
    ranks = {f"rank_error_q{q}": Fraction(s.rank_error_bound or -1) for s in selections(record)
             for q in s.q.split(", ")}
    assert found | ranks == stated


GLOSSARY = ["format", "shares", "privacy_unit", "max_groups", "max_rows", "salt_commitment", "group_by", "keys",
            "alpha", "delta", "threshold", "selection", "selection_rho", "selection_variance", "guarantee", "method",
            "exponents", "beta", "noisy_counts", "labels", "epsilon", "sensitivity", "monotonic", "candidates",
            "noise_scale", "id_column", "groups_cap", "rows_cap", "scales", "sensitivities"]
INSIDE = ["noise", "column", "lattice_step", "bounds_units", "centre_units", "budget_split", "cell_sensitivity_units",
          "scale_units", "variance_units", "sensitivity_units", "selection", "q", "epsilon_cell", "sensitivity",
          "candidates", "utility", "rank_error_bound", "released", "rho_cells", "conversion", "labels", "kind", "edges"]


def test_the_glossary_explains_the_names_of_both_formats() -> None:
    for name in GLOSSARY:
        assert explain(name) != UNDESCRIBED, name
    for name in INSIDE:
        assert explain(name, inside=True) != UNDESCRIBED, name
    for name in ("scale_units", "count_scale_units", "sum_scale_units", "sum_of_squares_variance_units", "qs",
                 "epsilon_each", "bounds", "sensitivity_units"):  # format 1
        assert explain(name) != UNDESCRIBED, name
    assert "partition selection" in explain("selection") and "no noise" in explain("selection", inside=True)
    assert "utility" in explain("sensitivity", inside=True) and "score" in explain("sensitivity")


def test_histograms_are_one_row_per_bin_and_bounds_one_row_in_both_formats(both: ReviewReport) -> None:
    page = render_report(both)
    for entry in both.entries:
        labels, value = entry.record["labels"], entry.record["value"]
        if entry.kind == "histogram":
            head, rows = released_table(section(page, entry.line))
            kind = "bin" if isinstance(labels[0], list) else "category"
            assert head == [kind, "count"]
            assert rows == [[f"{x[0]} to {x[1]}" if kind == "bin" else x, str(n)] for x, n in zip(labels, value,
                                                                                                   strict=True)]
        elif entry.kind == "bounds":
            assert released_table(section(page, entry.line)) == (["lo", "hi"], [[str(v) for v in value]])
