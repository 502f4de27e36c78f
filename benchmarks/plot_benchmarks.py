"""A bar chart of sampler throughput: securedp (scalar and batch) beside reference numbers for other libraries.

Run from the repository root::

    python benchmarks/bench_samplers.py --quick --json /tmp/bench.json
    python benchmarks/plot_benchmarks.py /tmp/bench.json --out docs/img/benchmarks.png

The securedp bars come from the JSON file written by ``bench_samplers.py
--json`` (discrete Laplace at scale 10, discrete Gaussian at sigma 10, and
``SecureGenerator.laplace`` at scale 1). The other bars are the reference
numbers in :data:`REFERENCE` (medians of 7 runs on the project's reference
machine, 2 cores, CPython 3.11: OpenDP 0.16 per call and vector API, NumPy's
insecure float sampler in batch), not measured here. The y axis is
logarithmic. Without matplotlib the script prints a note and exits with
status 0, writing nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "docs" / "img" / "benchmarks.png"

GROUPS = (
    ("discrete Laplace\nscale 10", ("sampler", "discrete_laplace", 10)),
    ("discrete Gaussian\nsigma 10", ("sampler", "discrete_gaussian", 10)),
    ("Laplace, scale 1\n(SecureGenerator)", ("generator", None, None)),
)
"""The x-axis groups, in order, and where their securedp numbers are in the JSON results."""

REFERENCE: dict[str, dict[str, float | None]] = {
    "OpenDP per call": {GROUPS[0][0]: 11e3, GROUPS[1][0]: 9e3, GROUPS[2][0]: 7e3},
    "OpenDP vector": {GROUPS[0][0]: 140e3, GROUPS[1][0]: 79e3, GROUPS[2][0]: 44e3},
    "NumPy float, batch (insecure)": {GROUPS[0][0]: 31e6, GROUPS[1][0]: None, GROUPS[2][0]: 58e6},
}
"""Samples per second of the other libraries (project notes, anchors.md); ``None``: not available."""

SERIES = ("securedp per call", "securedp batch", *REFERENCE)
COLOURS = ("#1b6ca8", "#63a4d8", "#c0504d", "#e8a09c", "#9b9b9b")


def load_results(path: str | Path) -> dict[str, dict[str, float | None]]:
    """securedp's rates per series and group from a ``bench_samplers.py --json`` file.

    Raises :class:`ValueError` if the file is not in that format or lacks a group.
    """
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or doc.get("format") != "securedp-bench-samplers/1":
        raise ValueError(f"{path}: not a bench_samplers.py --json results file")
    ours: dict[str, dict[str, float | None]] = {"securedp per call": {}, "securedp batch": {}}
    for label, (where, sampler, param) in GROUPS:
        if where == "generator":
            row: Any = doc.get("generator_laplace_scale_1")
        else:
            row = next((r for r in doc.get("samplers", []) if r.get("sampler") == sampler and r.get("param") == param),
                       None)
        if not row:
            raise ValueError(f"{path}: no result for {label.splitlines()[0]}")
        ours["securedp per call"][label] = float(row["scalar"])
        ours["securedp batch"][label] = float(row["batch"])
    return ours


def _rate(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.1f}M"
    return f"{value / 1e3:.0f}k"


def plot(ours: dict[str, dict[str, float | None]], out: str | Path, subtitle: str = "") -> Path:
    """Draw the grouped, log-scale bar chart to ``out`` (PNG) and return its path. Needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = {**ours, **REFERENCE}
    labels = [label for label, _ in GROUPS]
    width = 0.8 / len(SERIES)
    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=110)
    labelled: set[str] = set()
    for i, (series, colour) in enumerate(zip(SERIES, COLOURS, strict=True)):
        for j, label in enumerate(labels):
            value = data[series].get(label)
            x = j - 0.4 + width * (i + 0.5)
            if value is None:
                ax.text(x, 1.3e3, "n/a", ha="center", va="bottom", fontsize=7, color="#777777", rotation=90)
                continue
            ax.bar(x, value, width, color=colour, label=series if series not in labelled else None)
            labelled.add(series)
            ax.text(x, value * 1.12, _rate(value), ha="center", va="bottom", fontsize=7, rotation=90)
    ax.set_yscale("log")
    ax.set_ylim(1e3, 1e9)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels)
    ax.set_ylabel("samples per second (log scale)")
    title = "Exact sampler throughput: securedp vs reference numbers"
    ax.set_title(title + (f"\n{subtitle}" if subtitle else ""), fontsize=10)
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", ncol=2, frameon=False)
    fig.tight_layout()
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="JSON file written by bench_samplers.py --json")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help=f"PNG to write (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plot_benchmarks: matplotlib is not installed; no figure written", file=sys.stderr)
        return 0
    ours = load_results(args.results)
    doc = json.loads(Path(args.results).read_text(encoding="utf-8"))
    subtitle = (
        f"securedp {doc.get('securedp')}, Python {doc.get('python')}, "
        f"{'quick run' if doc.get('quick') else 'full run'}, median of {doc.get('runs')}; "
        "others: project reference numbers"
    )
    print(f"wrote {plot(ours, args.out, subtitle)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
