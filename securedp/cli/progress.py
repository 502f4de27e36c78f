"""Stage-by-stage progress of a long command on standard error, drawn only when it is a terminal.

``with Stages(["read", "bound, aggregate and noise", "write"]) as stages: ... stages.next()`` shows
one ``tqdm`` bar whose label is the current stage and whose count is the stages done; with standard
error redirected (a pipe, a file, a test) nothing is drawn (``tqdm(disable=None)``), so no output a
program reads ever changes.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import TracebackType
from typing import Any, TextIO


class Stages:
    """A bar over named stages (see the module docstring)."""

    def __init__(self, names: Sequence[str], stream: TextIO | None = None) -> None:
        self.names = list(names)
        self.stream = sys.stderr if stream is None else stream
        self.bar: Any = None

    def __enter__(self) -> Stages:
        from tqdm import tqdm

        self.bar = tqdm(total=len(self.names), file=self.stream, disable=None, leave=False,
                        bar_format="{desc}: stage {n_fmt}/{total_fmt} [{elapsed}]")
        self.bar.set_description_str(self.names[0])
        return self

    def next(self) -> None:
        """The current stage is done; the next one starts."""
        self.bar.update(1)
        if self.bar.n < len(self.names):
            self.bar.set_description_str(self.names[self.bar.n])

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.bar.close()
