"""Where a release starts reading its data: the mark the analyst-facing error boundary relies on.

Preparing a release has two phases. First its **public arguments** are
validated (privacy parameters, bounds, lattice, policies, declared
categories, candidates, public keys, column names): nothing of the data is
touched, so an exception raised then depends only on those arguments. Then
the **data is read** (records, person ids, scores, tables): from that point
on an exception may depend on the data's values.

:func:`reading_data` marks the passage from the first phase to the second.
Every path that reads data calls it before its first access to the data
(:meth:`securedp.mechanisms.statistic.Statistic.prepare_data`, the scores of
the selections, the engine of a table, the parts of a partition). Outside
an error boundary (:func:`phase_scope`, opened by
:func:`securedp.session.boundary.data_boundary`) the mark does nothing.
Inside one, the boundary knows whether an exception that reaches it was
raised before any data was read (a public-argument error, passed through)
or after (mapped, in an analyst-facing session, to one fixed exception,
:class:`securedp.ledger.errors.DataRefused`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence, Sized
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from securedp.bounding.contributions import length_mismatch
from securedp.lattice.columns import check_one_column


@dataclass
class Phase:
    """The phase of one preparation: ``reading`` once its data has started to be read.

    ``checking``: the preparation only checks its public arguments; it stops
    (:class:`PublicArgumentsChecked`) where the data would start to be read.
    """

    reading: bool = False
    checking: bool = False


class PublicArgumentsChecked(BaseException):
    """Raised by :func:`reading_data` in a checking phase: the public arguments passed, no data was read.

    A :class:`BaseException`, so that no ``except Exception`` of the preparation intercepts it.
    """


_PHASE: ContextVar[Phase | None] = ContextVar("securedp_data_phase", default=None)


def reading_data() -> None:
    """Mark that the public arguments are validated and the data is about to be read (see the module docstring)."""
    phase = _PHASE.get()
    if phase is not None:
        if phase.checking:
            raise PublicArgumentsChecked
        phase.reading = True


def check_shape(columns: Sequence[tuple[str, Any, str]]) -> None:
    """Check, before reading any record, that each ``(name, column, hint)`` is one column and that they have one
    length; the first is the data, a ``None`` column is absent.

    Only types, shapes and ``len`` of sized columns (lists, arrays, Series)
    are looked at, never a record, so the errors raised here are errors of
    the arguments' shape, raised before :func:`reading_data`: the error
    boundary lets them through, and their messages count no row in an
    analyst-facing session (:func:`~securedp.bounding.contributions.length_mismatch`).
    Lengths of unsized iterables are compared by the readers.
    """
    present = [(name, column) for name, column, _ in columns if column is not None]
    for name, column, hint in columns:
        if column is not None:
            check_one_column(column, name, hint)
    sizes = [(name, len(column)) for name, column in present if _sized(column)]
    if sizes and sizes[0][0] == present[0][0]:
        n = sizes[0][1]
        for name, size in sizes[1:]:
            if size != n:
                raise length_mismatch(name, size, n)


def _sized(column: Any) -> bool:
    return isinstance(column, Sized) and not isinstance(column, (str, bytes, bytearray))


@contextlib.contextmanager
def phase_scope(reading: bool = False, checking: bool = False) -> Iterator[Phase]:
    """A fresh :class:`Phase` for the enclosed preparation (already ``reading``, or only ``checking``, if asked),
    restored on exit."""
    phase = Phase(reading, checking)
    token = _PHASE.set(phase)
    try:
        yield phase
    finally:
        _PHASE.reset(token)
