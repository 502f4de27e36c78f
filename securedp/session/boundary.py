"""The error boundary of an analyst-facing session: one place where data-dependent errors are mapped.

In an analyst-facing session (``Session(..., analyst_facing=True)``) no
exception that depends on the data may reach the analyst. That is enforced
here, once, around every preparation of a release (:meth:`Session.prepare`),
around the reading of a partition (:meth:`Session.partition`) and around the
command ``securedp release --analyst-facing``, rather than by auditing every
reader:

* **Public arguments are validated before any data is read.** Each path
  that reads data marks the moment it starts
  (:func:`securedp.bounding.data_phase.reading_data`); an exception raised
  before the mark was raised by the validation of public arguments, with
  nothing of the data touched, and passes through unchanged (a bad
  ``epsilon``, reversed ``bounds``, an unknown policy ...).
* **Everything after the mark is mapped.** Any :class:`Exception` raised once
  the data has started to be read, whatever its type (``ValueError`` of a
  screen, ``TypeError`` of a dtype, a Polars ``ComputeError``, ``OverflowError``,
  ``MemoryError`` ...), is replaced by :class:`~securedp.ledger.errors.DataRefused`
  with its one fixed message, raised outside the handler so that it carries
  no ``__cause__`` or ``__context__`` (and the original, with the frames that
  hold the data, is released). The only exceptions let through after the mark
  are :class:`DataRefused` itself (from an inner boundary) and the types the
  caller lists in ``passes``, which must be raised only about public state
  (the command passes its budget-file and audit-log errors).
* ``KeyboardInterrupt`` and other :class:`BaseException` that are not
  :class:`Exception` are never mapped.

In an analyst-facing session the readers drop what they cannot use rather than raise:

* records without a usable value (``None``, NaN, pandas ``NA``, strings,
  other objects) are dropped (``missing="raise"``, the default, acts as
  ``"drop"``) or imputed with ``missing="impute", fill=c``; infinities and
  huge numbers are clamped as always;
* records outside the declared categories or partition keys are dropped
  (``unknown="raise"`` acts as ``"drop"``);
* rows whose person id or key is unusable by the one rule of ids and keys
  (:mod:`securedp.reading.keys`: blank or undecodable text, a negative or
  fractional number, a value of a type that is no id) are dropped;
* a line of a CSV file that is not a record of its grammar
  (:mod:`securedp.reading.delimited`) is dropped;
* a record that is itself a tuple or list is unusable like any other (the
  data holder's mode refuses it: the data looks like a table).

The errors that remain depend only on the public arguments and the schema (column names, declared
types) and name no row and count nothing: a bad ``epsilon``, reversed ``bounds``, an unknown policy
name, ``BudgetExceeded``, a 2-D table instead of one column, ``ids`` or ``by`` of another length than
the data. Each is raised before anything is charged or drawn. Sub-sessions of a partition inherit the
mode.

Outside an analyst-facing session the boundary maps nothing: the data
holder's errors name the offending column, row and value.

Whether a release is refused can still depend on the data (a reader that
raises on one neighbour and not on the other); the boundary guarantees that
the refusal says nothing more than that. The readers are written never to
raise on values in an analyst-facing session (unusable records are dropped),
and the differential test ``tests/security/test_error_policy.py`` checks that
neighbouring datasets give the same outcome class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from securedp.bounding.contributions import analyst_facing_scope
from securedp.bounding.data_phase import PublicArgumentsChecked, phase_scope
from securedp.ledger.errors import DataRefused

T = TypeVar("T")


def data_boundary(analyst_facing: bool, prepare: Callable[[], T], *, reading: bool = False,
                  passes: tuple[type[Exception], ...] = ()) -> T:
    """``prepare()`` in the given error mode; when analyst-facing, its data-dependent errors are mapped.

    ``reading``: the data is read from the start (nothing public is
    validated inside). ``passes``: exception types raised only about public
    state, let through even after the data was read. See the module docstring.
    """
    with analyst_facing_scope(analyst_facing), phase_scope(reading) as phase:
        try:
            return prepare()
        except DataRefused:
            raise
        except passes:
            raise
        except Exception:
            if not (analyst_facing and phase.reading):
                raise
    raise DataRefused()  # reached only from the handler above; raised here, it has no cause and no context


def check_public_arguments(prepare: Callable[[], object]) -> None:
    """Run ``prepare()`` (analyst-facing) only up to the point where it would start to read its data.

    Its public arguments are checked exactly as a real preparation checks
    them, and their errors raised as they are; no record is read, so ``prepare``
    may be given a placeholder for the data (an empty column or table). The
    command uses it to check every option before it opens the data file.
    """
    with analyst_facing_scope(True), phase_scope(checking=True):
        try:
            prepare()
        except PublicArgumentsChecked:
            return
