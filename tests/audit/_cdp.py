"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (no websocket, no dependency).

Chromium reads NUL-terminated JSON commands from file descriptor 3 and writes NUL-terminated JSON answers
and events to file descriptor 4. :class:`Browser` starts Debian's headless Chromium with those two pipes,
:meth:`Browser.open` loads a page at a given viewport width in a fresh tab and waits for its ``load``
event, and :meth:`Browser.evaluate` runs an expression in the page (DevTools evaluation is not subject to
the page's Content-Security-Policy) and returns its JSON value. Console messages, log entries and
uncaught exceptions of every page are kept in :attr:`Browser.console`.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from typing import Any

CONSOLE_EVENTS = ("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded")


class Browser:
    """Headless Chromium driven over a pipe; use as a context manager."""

    def __init__(self, chromium: str) -> None:
        self._profile = tempfile.TemporaryDirectory()
        command_read, self._command = os.pipe()
        self._answers, answer_write = os.pipe()

        def pipes_at_3_and_4() -> None:  # in the child, before exec: the protocol's fixed descriptors
            command, answer = os.dup(command_read), os.dup(answer_write)
            os.dup2(command, 3)
            os.dup2(answer, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={self._profile.name}", "--remote-debugging-pipe", "about:blank"],
            preexec_fn=pipes_at_3_and_4, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(command_read)
        os.close(answer_write)
        self._next = 0
        self._buffer = b""
        self._events: list[dict[str, Any]] = []
        self.console: list[dict[str, Any]] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except (OSError, TimeoutError, EOFError, RuntimeError):
            self.process.kill()
        self.process.wait(30)
        os.close(self._command)
        os.close(self._answers)
        self._profile.cleanup()

    def _receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._answers, 1 << 16)
            if not chunk:
                raise EOFError("Chromium closed its pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        found: dict[str, Any] = json.loads(message)
        if found.get("method") in CONSOLE_EVENTS:
            self.console.append(found)
        return found

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 60) -> dict[str, Any]:
        """Send one command and return its result (events received meanwhile are kept)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._command, json.dumps(message).encode() + b"\0")
        while True:
            got = self._receive(timeout)
            if got.get("id") == self._next:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                result: dict[str, Any] = got.get("result", {})
                return result
            self._events.append(got)

    def _wait(self, method: str, session: str, timeout: float = 60) -> None:
        while True:
            found = next((e for e in self._events if e.get("method") == method and e.get("sessionId") == session), None)
            if found is not None:
                self._events.remove(found)
                return
            self._events.append(self._receive(timeout))

    def open(self, url: str, width: int, height: int = 900) -> str:
        """Load ``url`` in a new tab of viewport ``width`` x ``height``; returns the tab's session id."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = str(self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"])
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        self._wait("Page.loadEventFired", session)
        return session

    def evaluate(self, session: str, expression: str) -> Any:
        """The JSON value of ``expression`` evaluated in the tab ``session``."""
        answer = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=session)
        if "exceptionDetails" in answer:
            raise RuntimeError(f"the page's evaluation failed: {answer['exceptionDetails']}")
        return answer["result"].get("value")
