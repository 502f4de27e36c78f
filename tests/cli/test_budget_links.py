"""A budget file reached through a link is the one budget (issue 40, part B).

A symbolic link is followed: the lock and the atomic replacement act on the file it points to, so a charge
through the link and a charge through the file draw on one total, and the link stays a link. A file with
more than one hard link is refused with a clear error before anything is charged: an atomic replacement
writes a new file under one name only, so its other names would keep a budget of their own.
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import pytest

from securedp.ledger.budget_file import BudgetError, BudgetFile, read_budget


def test_a_symbolic_link_is_followed_and_shares_the_total(tmp_path: Path) -> None:
    real, link = tmp_path / "b.json", tmp_path / "link.json"
    with BudgetFile(real, 1).charge(Fraction(9, 10)):
        pass
    link.symlink_to(real)
    with pytest.raises(BudgetError, match="budget exhausted"), BudgetFile(link, 1).charge(Fraction(9, 10)):
        pass
    with BudgetFile(link, 1).charge(Fraction(1, 10)):
        pass
    assert link.is_symlink() and read_budget(real).spent == 1 == read_budget(link).spent


def test_a_relative_symbolic_link_in_another_folder_is_followed(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "links").mkdir()
    real, link = tmp_path / "data" / "b.json", tmp_path / "links" / "b.json"
    with BudgetFile(real, 1).charge(Fraction(1, 2)):
        pass
    link.symlink_to(Path("..") / "data" / "b.json")
    with BudgetFile(link, 1).charge(Fraction(1, 2)):
        pass
    assert link.is_symlink() and read_budget(real).spent == 1
    assert not (tmp_path / "links" / "b.json.lock").exists()  # the lock is the real file's


@pytest.mark.parametrize("through", ["the first name", "the second name"])
def test_a_file_with_two_hard_links_is_refused_before_anything_is_charged(tmp_path: Path, through: str) -> None:
    real, other = tmp_path / "b.json", tmp_path / "hard.json"
    with BudgetFile(real, 1).charge(Fraction(9, 10)):
        pass
    os.link(real, other)
    before = real.read_bytes()
    name = real if through == "the first name" else other
    with pytest.raises(BudgetError, match="hard link"), BudgetFile(name, 1).charge(Fraction(1, 10)):
        pass
    assert real.read_bytes() == before == other.read_bytes() and os.stat(real).st_nlink == 2


def test_budget_create_through_a_dangling_link_creates_its_target_as_a_release_would(tmp_path: Path) -> None:
    """``budget create`` follows a link as every other use of the file does: through a link to a file that does
    not exist yet it creates that file (a release with ``--budget`` would); through a link to an existing file it
    refuses, the file unchanged."""
    real, link = tmp_path / "b.json", tmp_path / "link.json"
    link.symlink_to(real)
    state = BudgetFile(link, 1).create()
    assert link.is_symlink() and read_budget(real) == state and state.spent == 0
    with pytest.raises(BudgetError, match="already exists"):
        BudgetFile(link, 2).create()
    assert read_budget(real) == state
