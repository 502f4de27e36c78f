"""Issue 40 A: every exact quantity has a declared bound, checked where it enters (securedp.hazmat.exact.bounds).

Found by review: an epsilon with a 1,003-digit expansion, or ~14 releases at coprime 250-bit denominators, made
a budget file unreadable (its reader takes 1,000 digits a term); ~71 releases at 200-bit denominators made an
audit record unwritable (``str(int)`` stops at 4,300 digits), a charge with no record; ``--max-rows 1e38``,
``--epsilon 1e-39``, ``--max-groups 10**39`` made a private-key table's plan, dry run and replay spin for minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import gmpy2
import pytest

import securedp
from securedp.audit.log import AuditLog
from securedp.audit.verify import verify_log
from securedp.cli.example_data import PATH as EXAMPLE
from securedp.ledger.budget import Budget
from securedp.ledger.budget_file import BudgetFile
from securedp.tables import Sum

REPO = Path(securedp.__file__).resolve().parent.parent


def _primes(bits: int, n: int) -> list[int]:
    """``n`` distinct primes of ``bits`` bits (coprime denominators)."""
    out, p = [], gmpy2.mpz(1) << (bits - 1)
    while len(out) < n:
        p = gmpy2.next_prime(p)
        out.append(int(p))
    return out


def _file_session(path: Path) -> securedp.Session:
    return securedp.Session(budget=Budget("epsilon", store=BudgetFile(path, total=100)),
                            rng=securedp.ChaChaSource(bytes(32)))


def test_an_epsilon_with_a_1003_digit_expansion_is_refused_and_the_budget_stays_readable(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    session = _file_session(path)
    session.count([1, 2, 3], epsilon="1/10")
    with pytest.raises(ValueError, match=r"epsilon .*at most 1400 bits"):
        session.count([1, 2, 3], epsilon="0.1" + "0" * 1000 + "1")
    assert BudgetFile(path).ledger and session.spent == Fraction(1, 10)
    assert json.loads(path.read_text())["spent"] == "1/10"


def test_coprime_250_bit_denominators_fill_the_budget_before_its_file_becomes_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    session = _file_session(path)
    released = refused = 0
    for p in _primes(250, 20):
        before = path.read_text() if path.exists() else None
        try:
            session.count([1, 2, 3], epsilon=Fraction(p - 1, p))  # near 1: a noise scale near 1
            released += 1
        except ValueError as error:
            assert "at most 1000 digits a term" in str(error) and "nothing was charged" in str(error)
            assert path.read_text() == before  # refused before anything was charged or drawn
            refused += 1
        with BudgetFile(path).hold() as state:  # readable after every release
            stored = state.spent
        assert stored == session.spent
    assert released >= 10 and refused >= 1


def test_a_session_with_an_audit_log_never_charges_a_release_it_cannot_record(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    session = securedp.Session(epsilon=100, audit=AuditLog(log), rng=securedp.ChaChaSource(bytes(32)))
    released = 0
    for p in _primes(200, 80):
        spent = session.spent
        try:
            session.count([1, 2, 3], epsilon=Fraction(p - 1, p))
            released += 1
        except ValueError as error:
            assert "at most 1000 digits a term" in str(error)
            assert session.spent == spent
    lines = log.read_text().splitlines()
    assert len(lines) == released >= 10
    assert json.loads(lines[-1])["record"]["spent"] == f"{session.spent.numerator}/{session.spent.denominator}"
    assert verify_log(log).ok


def _command(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "securedp", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=20)


TABLE = ["release", str(EXAMPLE), "--group-by", "region", "--count", "--sum", "hours:0,80", "--id-column",
         "person_id", "--delta", "1e-6"]


@pytest.mark.parametrize("extra, refusal", [
    (["--max-rows", "1e38", "--epsilon", "1"], "--max-rows must be at most 2**40"),
    (["--max-groups", str(10**39), "--epsilon", "1"], "--max-groups must be at most 2**40"),
    (["--epsilon", "1e-39"], None),
    (["--epsilon", "1e-39", "--max-groups", str(1 << 40)], None),
    (["--epsilon", "1e-3", "--max-groups", "1000", "--selection", "optimal"], "too small for the optimal rule"),
    (["--epsilon", "1e-300", "--max-groups", "1000"], "at most 2**256"),
], ids=["max-rows", "max-groups", "epsilon", "epsilon-and-groups", "optimal", "scale"])
def test_extreme_table_parameters_are_planned_or_refused_at_once(tmp_path: Path, extra: list[str],
                                                                  refusal: str | None) -> None:
    """Each command ends within 20 s (``subprocess.TimeoutExpired`` otherwise), with the bound named."""
    dry = _command(*TABLE, *extra, "--dry-run", cwd=tmp_path)
    if refusal is not None:
        assert dry.returncode != 0 and refusal in dry.stderr and "Traceback" not in dry.stderr, dry.stderr
        return
    assert dry.returncode == 0, dry.stderr
    (tmp_path / "seed").write_bytes(bytes(32))
    done = _command(*TABLE, *extra, "--seed-file", "seed", "--audit-log", "a.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    replayed = _command("audit", "replay", "a.jsonl", "--seed-file", "seed", "--data", str(EXAMPLE), cwd=tmp_path)
    assert replayed.returncode == 0 and "reproduced exactly" in replayed.stdout, replayed.stderr


@pytest.mark.parametrize("name, call", [
    ("bounds upper bound", lambda: securedp.sum([1], bounds=(0, "1e-10000"), epsilon=1)),
    ("lattice step", lambda: securedp.sum([1], bounds=(0, 1), lattice=Fraction(1, 3**900), epsilon=1)),
    ("rho", lambda: securedp.sum([1], bounds=(0, 1), rho=Fraction(1, 2**1500))),
    ("alpha", lambda: securedp.Session(epsilon=1).table({"v": [1]}, aggregations=[Sum("v", (0, 1))],
                                                        alpha=Fraction(1, 2**1500), epsilon=1)),
    ("qs[0]", lambda: securedp.quantiles([1, 2], qs=[Fraction(1, 2**1500)], bounds=(0, 1), epsilon=1)),
    ("epsilon", lambda: securedp.Session(epsilon=Fraction(1, 3**900))),
    ("budget", lambda: BudgetFile("unused.json", total=Fraction(1, 3**900))),
    ("delta", lambda: securedp.Session(epsilon=1, delta=Fraction(1, 3**900))),
    ("max_contributions", lambda: securedp.sum([1], ids=["a"], max_contributions=2**41, bounds=(0, 1), epsilon=1)),
])
def test_every_parameter_names_its_bound(name: str, call) -> None:
    with pytest.raises(ValueError) as caught:
        call()
    assert name in str(caught.value) and ("1400 bits" in str(caught.value) or "2**40" in str(caught.value))


def test_the_bounds_keep_a_full_budget_readable_and_its_record_writable() -> None:
    """The declared numbers hold together: one charge at the largest parameters fits a budget file, and what a
    budget may hold fits a record."""
    from securedp.hazmat.exact import bounds

    assert sys.get_int_max_str_digits() > bounds.STORED_DIGITS
    assert len(str(1 << (2 * bounds.PARAMETER_BITS + 1))) < bounds.STORED_DIGITS  # epsilon**2 / 2 in rho
    assert BudgetFile.__module__ and bounds.STORED_DIGITS == 1000
