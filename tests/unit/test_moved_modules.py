"""Every module path moved by the house of issue 41 still imports, for one release, with a warning.

Written by the move of issue 41 (tools/move_house.py, in git history): each old path is a
``securedp.deprecation.moved_module`` alias of the new one.
"""

from __future__ import annotations

import importlib

import pytest

MOVED = {
    "securedp.mechanisms.generator": "securedp.hazmat.generator",
    "securedp.mechanisms.generator_sampling": "securedp.hazmat.generator_sampling",
    "securedp.audit.selftest": "securedp.hazmat.selftest",
    "securedp.mechanisms.contributions": "securedp.bounding.contributions",
    "securedp.mechanisms.data_phase": "securedp.bounding.data_phase",
    "securedp.mechanisms.release": "securedp.ledger.release",
    "securedp.mechanisms.record_schema": "securedp.ledger.release_record",
    "securedp.accounting.schema": "securedp.ledger.audit_record",
    "securedp.accounting.budget": "securedp.ledger.budget",
    "securedp.accounting.budget_file": "securedp.ledger.budget_file",
    "securedp.accounting.errors": "securedp.ledger.errors",
    "securedp.accounting.session": "securedp.session.session",
    "securedp.accounting.methods": "securedp.session.methods",
    "securedp.accounting.partition": "securedp.session.partition",
    "securedp.accounting.recording": "securedp.session.recording",
    "securedp.accounting.boundary": "securedp.session.boundary",
}


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_resolves_each_name_to_the_new_one_with_a_warning(old: str, new: str) -> None:
    moved = importlib.import_module(new)
    alias = importlib.import_module(old)
    names = [n for n, v in vars(moved).items()
             if not n.startswith("_") and getattr(v, "__module__", None) == new]
    assert names, new
    for name in names:
        with pytest.warns(DeprecationWarning, match=f"{old}.{name} is deprecated.*use {new}.{name}"):
            assert getattr(alias, name) is getattr(moved, name)
