"""The declared bound of every exact quantity that enters a release, a budget or an audit record.

Exactness makes numbers grow: a sum of rationals has the least common multiple of their denominators,
a power of a rational multiplies its terms' lengths. Nothing valid when it is written may become
unreadable, and nothing a release reads may make its time run away, so every exact quantity has a bound,
checked where it enters, from public things only (the parameters and the state of the budget, never the
data), failing at once with a :class:`ValueError` that names the quantity and the bound.

The bounds, and why each number:

* **A release parameter** (``epsilon``, ``rho``, ``delta``, ``alpha``, bounds, lattice step, quantile levels,
  ``trim``, ``fallback``, ``selection_share``, bin edges, a budget's total and delta): numerator and denominator of
  at most :data:`PARAMETER_BITS` (1,400) bits each. Every budget and record field is a sum or a product of a few
  of them: 1,400-bit terms (421 digits) keep one charge (``epsilon**2 / 2`` in a rho budget: 2,801 bits, 844
  digits) inside the budget file's 1,000 digits, and a record's noise scale (bounds / (step x epsilon): about
  4,200 bits, 1,265 digits) inside ``str(int)``'s 4,300 digits. It holds every finite float (``2**-1074`` to
  ``2**1024``), ``10**400``, every decimal of up to 420 digits, and what the library derives for a caller to
  pass back (a converted rho).
* **A per-person bound** (``max_groups``, ``max_rows``, ``max_contributions``, the planners' caps): at most
  :data:`MAX_COUNT` (``2**40``, about 1.1e12), more than any table an engine here holds (10**12 rows); it keeps
  a selection's sensitivity x groups below ``2**80``, so its threshold plan ends in milliseconds.
* **The levels of one release of several quantiles**: at most :data:`MAX_LEVELS` (1,023), a full split tree of
  10 depths (:mod:`securedp.mechanisms.quantile_split`), more than the 999 permilles. Each level is a selection
  of its own in every cell, with its fields in the record: the bound keeps a cell's time under 1,023 selections'
  set-ups (7 s for 1,023 levels of one cell of 1,200 rows over ``2 * 10**7`` candidates, on a loaded 2-core
  machine) and the record's levels under a megabyte (64 KB for 1,023 decimal levels); the count is checked
  before any level is read.
* **What a budget keeps** after a charge (``spent``, ``remaining``, its delta ledger's): at most
  :data:`STORED_DIGITS` (1,000) digits a term, the budget file reader's limit; a record's ``spent`` is then far
  inside ``str(int)``'s 4,300 digits. A charge that would pass it is refused before anything is drawn: the
  budget is full.
* **A value cell** (text, ``Decimal``, ``Fraction``, gmpy2, NumPy, pandas, Polars, pyarrow, CSV, Parquet, Spark)
  and a ``Decimal`` id: at most :data:`CELL_CHARS` (400) characters or coefficient digits, and a rational within
  the bounds at most :data:`CELL_BITS` (1,400) bits a term. A ``decimal256`` needs 77 digits and a ``float64``
  printed to round-trip 24 characters; 400 leave room for long exact decimals and keep the exact reading of the
  longest cell under about 20 us. A longer cell is unusable like a blank one.

A cell's length is read in constant time: ``len`` of its text, ``bit_length`` of an integer's or a
rational's terms, the coefficient of a ``Decimal`` from its size in memory (:func:`decimal_too_long`); so a
too-long cell costs what a short one costs, and its verdict (unusable: dropped, imputed or refused as the
release's ``missing`` policy says, in the error mode of every other unusable cell) tells nothing through
time. A huge *magnitude* with few digits (``1e999999``, ``10**400`` as an int) is not long: it is
clamped in constant time, as before.
"""

from __future__ import annotations

import decimal
import sys
from fractions import Fraction

PARAMETER_BITS = 1400
"""The most bits of a release parameter's numerator and of its denominator (lowest terms)."""

MAX_COUNT = 1 << 40
"""The largest per-person bound (``max_groups``, ``max_rows``, ``max_contributions``) a release takes."""

MAX_LEVELS = (1 << 10) - 1
"""The most quantile levels one release takes (``qs`` of :func:`securedp.quantiles`, ``--levels``)."""

STORED_DIGITS = 1000
"""The most decimal digits of each term of a rational a budget keeps (the budget file's reader's limit)."""

BUDGET_FILE_BYTES = 1 << 26
"""The most bytes of a budget file (64 MiB), checked when it is written and when it is read. It holds, while a
release is in flight, the record to append if the release dies, whose query names every public key (about 20 bytes
a key): over three million keys fit. (64 KiB refused a table of 6,000 public keys.)"""
CELL_CHARS = 400
"""The most characters of a text value cell, and digits of a ``Decimal`` value cell's or id's coefficient, that are
read; a longer one is unusable."""

CELL_BITS = 1400
"""The most bits of each term of a rational value cell within the bounds (``Fraction``, gmpy2 ``mpq``); above it,
unusable. (A rational or an integer beyond the bounds, or below half a step, is clamped by its terms' lengths.)"""

_DIGITS_PER_BIT = 0.30103  # log10(2), rounded up in the fifth digit: a bound on digits from bits, never below


def parameter(q: Fraction, name: str) -> Fraction:
    """``q``, a release parameter named ``name``, if its terms have at most :data:`PARAMETER_BITS` bits each."""
    bits = max(abs(q.numerator).bit_length(), q.denominator.bit_length())
    if bits > PARAMETER_BITS:
        raise ValueError(f"{name} has a term of {bits} bits: an exact parameter may have at most {PARAMETER_BITS} "
                         f"bits in its numerator and its denominator (about 421 decimal digits; "
                         "securedp.hazmat.exact.bounds.PARAMETER_BITS)")
    return q


def count(m: int, name: str) -> int:
    """``m``, a per-person bound named ``name``, if it is at most :data:`MAX_COUNT`."""
    if m > MAX_COUNT:
        raise ValueError(f"{name} must be at most 2**40 ({MAX_COUNT:,}), got a number of {m.bit_length()} bits "
                         "(securedp.hazmat.exact.bounds.MAX_COUNT)")
    return m


def levels(m: int, name: str) -> int:
    """``m``, the number of quantile levels named ``name``, if it is at most :data:`MAX_LEVELS`."""
    if m > MAX_LEVELS:
        raise ValueError(f"{name} holds {m:,} levels: one release takes at most {MAX_LEVELS:,} "
                         "(securedp.hazmat.exact.bounds.MAX_LEVELS)")
    return m


def term_digits(n: int) -> int:
    """The number of decimal digits of ``|n|`` (``str`` is used only below 4,300 digits, where it is fast)."""
    n = abs(n)
    if n.bit_length() * _DIGITS_PER_BIT > 4200:
        return int(n.bit_length() * _DIGITS_PER_BIT)  # far beyond every bound here: the estimate decides
    return len(str(n))


def storable(values: dict[str, Fraction], what: str) -> None:
    """Refuse, naming the field and the bound, a state of ``what`` (a budget) whose ``values`` a budget file
    or an audit record could not hold: a term of more than :data:`STORED_DIGITS` digits."""
    for field, q in values.items():
        digits = max(term_digits(q.numerator), term_digits(q.denominator))
        if digits > STORED_DIGITS:
            raise ValueError(
                f"{what}: this charge would make '{field}' a rational with a term of {digits} digits, and a budget "
                f"keeps at most {STORED_DIGITS} digits a term (its file and its records must stay readable; "
                "securedp.hazmat.exact.bounds.STORED_DIGITS); nothing was charged or drawn: charge amounts with "
                "shorter denominators (the budget's own, such as 1/10 or 1/1024)")


_DECIMAL_BASE = sys.getsizeof(decimal.Decimal(0))  # a coefficient of up to 4 words is held inline
_WORD_DIGITS = 19 if sys.maxsize > 2**32 else 9
_WORD_BYTES = 8 if sys.maxsize > 2**32 else 4


def decimal_too_long(x: decimal.Decimal) -> bool:
    """Whether the coefficient of a finite ``Decimal`` has more than :data:`CELL_CHARS` digits, in time that does not
    grow with them: its size in memory (libmpdec keeps 19 digits a 64-bit word) bounds its digits from above, and
    only a coefficient of at most ``CELL_CHARS + 2 * 19`` digits by that bound is counted exactly."""
    held = (sys.getsizeof(x) - _DECIMAL_BASE) // _WORD_BYTES * _WORD_DIGITS
    if held > CELL_CHARS + 2 * _WORD_DIGITS:
        return True
    return len(x.as_tuple().digits) > CELL_CHARS


def cell_too_long(x: object) -> bool:
    """Whether a value cell is too long to be read (unusable), judged by its length before any conversion and in
    constant time: text of more than :data:`CELL_CHARS` characters, or a finite ``Decimal`` whose coefficient has
    more than :data:`CELL_CHARS` digits. (A rational is judged by its terms' bits where it is screened: beyond
    the bounds by their lengths, it is clamped; within them, a term past :data:`CELL_BITS` makes it unusable.)"""
    if isinstance(x, str):
        return len(x) > CELL_CHARS
    if isinstance(x, decimal.Decimal):
        return x.is_finite() and decimal_too_long(x)
    return False
