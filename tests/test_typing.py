"""The package type-checks cleanly under mypy (configured in ``[tool.mypy]`` of pyproject.toml).

Skipped when mypy is not installed (it is in the ``test`` extra). The cache
goes to a fresh temporary directory, so the check is a full, cold run and
never reuses or pollutes the working tree's ``.mypy_cache``.
"""

from __future__ import annotations

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "securedp"
PYPROJECT = ROOT / "pyproject.toml"

USER_CODE = '''
import polars as pl
import securedp
from securedp.tables import Count, TableRelease

frame = pl.DataFrame({"g": ["a", "b"]})
released = securedp.table(frame, group_by=["g"], keys=["a", "b"], aggregations=[Count()], epsilon=1)
print(released.frame, released.delta)
session = securedp.Session(epsilon=2)
print(session.table(frame, group_by=["g"], keys=["a"], epsilon=1).frame)
prepared = securedp.prepare_table(frame, group_by=["g"], keys=["a"], epsilon=1)
print(prepared.execute().frame, prepared.plan)
one: TableRelease = securedp.table(frame, epsilon=1)
print(securedp.sum([1, 2], bounds=(0, 5), epsilon=1).value)
prepared_sum: securedp.PreparedRelease = securedp.prepare_sum([1, 2], bounds=(0, 5), epsilon=1)
print(prepared_sum.execute().value, session.median([1, 2], bounds=(0, 5), epsilon=1).value)
'''

MISTAKES = '''
import securedp

securedp.sum([1, 2], bonds=(0, 5), epsilon=1)
securedp.Session(epsilon=2).median([1, 2], bounds=(0, 5), epsilom=1)
size: int = securedp.prepare_mean([1, 2], bounds=(0, 5), epsilon=1)
'''
"""User code a static checker must refuse (issue 41.2: the statistics' functions are made from one list at run
time; ``securedp/tables/signatures.pyi``, generated from it, lets mypy see their signatures)."""


@pytest.mark.slow
def test_mypy_reports_no_errors(tmp_path: pathlib.Path) -> None:
    """The package, and the documented user code beside it (issue 19.8: ``securedp.table()`` was typed as
    returning ``Release``, so mypy rejected ``table.frame``), in one strict run."""
    pytest.importorskip("mypy")
    from mypy import api
    if not (PACKAGE / "__init__.py").is_file() or not PYPROJECT.is_file():
        pytest.skip("needs the source tree (securedp/ next to pyproject.toml)")
    script = tmp_path / "user_code.py"
    script.write_text(USER_CODE, encoding="utf-8")
    mistakes = tmp_path / "mistakes.py"
    mistakes.write_text(MISTAKES, encoding="utf-8")
    stdout, stderr, status = api.run([
        "--config-file", str(PYPROJECT),
        "--cache-dir", str(tmp_path / "mypy_cache"),
        "--no-error-summary",
        "--show-error-codes",
        str(PACKAGE),
        str(script),
        str(mistakes),
    ])
    found = [line for line in stdout.splitlines() if line.strip()]
    others = [line for line in found if not line.startswith(str(mistakes))]
    assert not others and not stderr.strip(), f"mypy found problems:\n{stdout}{stderr}"
    refused = {int(line.split(":")[1]) for line in found}
    assert status == 1 and refused == {4, 5, 6}, f"mypy missed a mistake of {MISTAKES}:\n{stdout}"
