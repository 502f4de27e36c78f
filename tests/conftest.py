"""Markers that decide where a test runs: the README's fast set, or CI's sequential set.

Every test of a module whose file name contains ``timing`` measures running time (the release-level
(output, time) audits of ``tests/security``): it is marked ``timing`` here, so that it never shares the
machine with parallel workers; every test of ``tests/statistical`` (goodness of fit against the exact
laws, each many thousand draws) is marked ``slow``. ``python -m pytest`` (the README's command) runs the
fast set in parallel; ``.ci/run`` then runs ``-m "slow and not timing"`` (the long audits, in parallel) and
``-m timing -n 0`` (every timing audit, one at a time, alone on the machine).
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "timing" in item.path.name:
            item.add_marker(pytest.mark.timing)
        elif item.path.parent.name == "statistical":  # goodness-of-fit against exact laws: long, run by CI
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def command(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run the command in-process: ``command(argv)`` is ``(exit status, standard output, standard error)``,
    and no traceback may reach either stream."""
    from securedp.cli.main import main

    def run(argv: list[str]) -> tuple[int, str, str]:
        capsys.readouterr()
        status = main(argv)
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        return status, out, err

    return run


@pytest.fixture
def replayable_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``--seed-file`` releases of the in-process command the same on every run.

    The command draws each release from ``ChaChaSource(seed).substream("release-<16 bytes of os.urandom>")``
    (``securedp.cli.pipeline.source``): a fresh substream per release, so two releases from one seed file
    never share noise, and a test that only passes ``--seed-file`` still sees OS-entropy noise. With this
    fixture the 16 bytes are a counter (1, 2, ... within the test), so releases stay distinct from one
    another but each test sees the same values on every run: an assertion on a noisy value then fails
    always or never. The library is not changed; only the command module's ``os.urandom`` is replaced.
    """
    import itertools
    import os
    import types

    from securedp.cli import pipeline

    counter = itertools.count(1)
    fake = types.ModuleType("os")
    fake.__dict__.update(os.__dict__)
    fake.urandom = lambda n: next(counter).to_bytes(n, "big")  # type: ignore[attr-defined]
    monkeypatch.setattr(pipeline, "os", fake)
