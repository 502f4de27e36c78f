"""``securedp selftest``: run :mod:`securedp.hazmat.selftest` with a progress bar, a table and an optional plot.

The progress bar is drawn by ``tqdm`` on standard error **only when standard
error is a terminal** (``disable=None``): redirected to a file or a pipe (a
CI log), nothing is written there, so no ``\r`` frames end up in logs. The
results table goes to standard output in every case.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from securedp.hazmat.bits.default import default_source
from securedp.hazmat.selftest import ALPHA, CASES, Result, run_case

DEFAULT_DRAWS = 1_000_000


def table(results: list[Result]) -> str:
    """The results as an aligned text table."""
    rows = [("sampler", "draws", "bins", "G", "p-value", "result")]
    rows += [
        (r.name, f"{r.draws:,}", str(r.bins), f"{r.g:.1f}", f"{r.p_value:.3g}", "pass" if r.passed else "FAIL")
        for r in results
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(row: tuple[str, ...]) -> str:
        cells = enumerate(zip(row, widths, strict=True))
        return "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in cells)

    lines = [line(row) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def plot(results: list[Result], path: str) -> None:
    """Save a figure of empirical against exact bin probabilities, one panel per sampler."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 3
    rows = (len(results) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax, r in zip(axes.flat, results, strict=False):  # the grid may have spare axes
        ax.bar(r.values, [o / r.draws for o in r.observed], width=0.8, alpha=0.5, label="empirical")
        ax.plot(r.values, r.expected, "k.", markersize=3, label="exact")
        ax.set_title(f"{r.name}\np = {r.p_value:.3g}", fontsize=8)
        ax.tick_params(labelsize=6)
    for ax in list(axes.flat)[len(results):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _progress(bar: Any, label: str) -> Callable[[int], None]:
    """The progress callback of one case: it reports ``done`` draws of the case to ``bar`` (a ``tqdm``)."""
    state = {"done": 0}

    def progress(done: int) -> None:
        bar.set_description_str(label, refresh=False)
        bar.update(done - state["done"])
        state["done"] = done

    return progress


def run_selftest(draws: int | None, plot_path: str | None, err: TextIO | None = None) -> int:
    """Run every case; print the table; return 0 if all pass, 1 otherwise.

    Progress goes to ``err`` (default: ``sys.stderr`` as it is at the call, not at import).
    """
    err = sys.stderr if err is None else err
    draws = DEFAULT_DRAWS if draws is None else draws
    if draws < 1000:
        raise ValueError("--draws must be at least 1000")
    if plot_path is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise ValueError("--plot needs matplotlib (pip install matplotlib)") from None
    from tqdm import tqdm

    source = default_source()
    total = draws * len(CASES)
    start = time.perf_counter()
    results: list[Result] = []
    # disable=None: tqdm draws only when ``err`` is a terminal
    with tqdm(total=total, file=err, disable=None, unit=" draws", unit_scale=True, leave=True) as bar:
        results.extend(run_case(case, draws, source, _progress(bar, case.name)) for case in CASES)
    print(f"securedp selftest: {len(CASES)} samplers, G-test against the exact law, fail below p = {ALPHA:g}")
    print(table(results))
    failed = [r.name for r in results if not r.passed]
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed in {time.perf_counter() - start:.1f} s")
    if plot_path is not None:
        plot(results, plot_path)
        print(f"figure saved to {plot_path}")
    return 1 if failed else 0
