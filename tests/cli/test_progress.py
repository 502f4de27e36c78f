"""Issue 19.12: long commands show their stages on a terminal, and nothing when standard error is not one."""

from __future__ import annotations

import io

from securedp.cli.progress import Stages


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_stages_are_drawn_on_a_terminal() -> None:
    stream = Terminal()
    with Stages(["read", "bound, aggregate and noise", "write"], stream) as stages:
        stages.next()
        stages.next()
    shown = stream.getvalue()
    assert "read" in shown and "bound, aggregate and noise" in shown and "write" in shown and "stage 2/3" in shown


def test_nothing_is_drawn_when_standard_error_is_not_a_terminal() -> None:
    stream = io.StringIO()
    with Stages(["read", "write"], stream) as stages:
        stages.next()
    assert stream.getvalue() == ""
