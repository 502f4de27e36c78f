"""The one list of statistics: each statistic is one :class:`Statistic` entry, and everything that names a
statistic reads it here.

An entry states, once: its name (``--stat NAME``, ``--NAME`` of a table, the function ``securedp.NAME``, the
method ``Session.NAME``, the name a one-column release records), how a table builds its aggregation
(:meth:`Statistic.build`: ``takes`` nothing, a column, or a column and a level), and, for a statistic
released of one column, its **signature**: a function with the exact parameters of ``prepare_NAME``, whose
docstring is ``prepare_NAME``'s. From the list are derived:

* the table aggregations of the command and of recorded queries (:data:`STATISTICS.kinds`);
* ``prepare_NAME`` and ``NAME`` of :mod:`securedp.tables.one_column` (and so ``securedp.NAME``);
* the checks of a recorded query (:mod:`securedp.tables.query`): an option a statistic's signature does not
  take is refused, a ``bounds`` or level it takes is required;
* ``--stat``'s choices, ``Session``'s methods and the report's words for the fields a statistic records
  (:attr:`securedp.mechanisms.statistic.CellStatistic.record_words`).

A new statistic is its definition (a :class:`~securedp.mechanisms.statistic.CellStatistic` and its table
aggregation) and one :meth:`Registry.register` call; listeners (:meth:`Registry.subscribe`) give it its
functions and its ``Session`` method.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from securedp.hazmat.exact.rational import exact_text
from securedp.ledger.release import Release
from securedp.mechanisms.quantile import check_levels
from securedp.mechanisms.records import exact_value

OPTIONS = ("trim", "fallback")
"""The keyword options of a table aggregation besides its level (``--trim``, ``--fallback``)."""


@dataclass(frozen=True)
class OneCell:
    """How the one cell of a table becomes a release of one column: the statistic's name, the table columns
    holding its value (one, or several for a tuple) and the labels of a tuple."""

    statistic: str
    names: tuple[str, ...]
    single: bool = True
    labels: tuple[Any, ...] | None = None

    def value(self, table: Release) -> Any:
        row = dict(zip(table.labels or (), table.value[0], strict=True))
        values = tuple(_exact(row[name]) for name in self.names)
        return values[0] if self.single else values


def _exact(value: Any) -> Any:
    return exact_value(value) if isinstance(value, Fraction) else value


Cells = Callable[..., tuple[OneCell, list[Any]]]
"""A statistic's cells of one column: ``cells(name, column, **options)`` is the :class:`OneCell` and the table
aggregations releasing it."""


def one_aggregation(name: str, column: str, **options: Any) -> tuple[OneCell, list[Any]]:
    """The default :data:`Cells`: the one aggregation ``make(column, **options)`` of the entry ``name``,
    whose one output column is the value."""
    made = STATISTICS[name].aggregation(column, **options)
    return OneCell(name, (made.name,)), [made]


@dataclass(frozen=True)
class Statistic:
    """One statistic: its name, its table aggregation and, released of one column, its signature.

    ``takes`` is ``"nothing"`` (``--count``), ``"column"`` (``--sum COLUMN:LO,HI[:STEP]``), ``"level"``
    (``--quantile COLUMN:Q:LO,HI[:STEP]``) or ``"levels"`` (``--quantiles COLUMN:Q1,Q2,...:LO,HI[:STEP]``: the one
    aggregation its ``cells`` make of them, see :meth:`build`); ``make`` is the aggregation's constructor;
    ``options`` the keyword options of :data:`OPTIONS` it takes. ``signature`` (``None``: a table aggregation only)
    is a function with the parameters and docstring of ``prepare_NAME``; ``doc`` the docstring of ``NAME``.
    ``table``: the command has ``--NAME`` for it; ``command``: ``--stat NAME``. ``cells`` (default:
    :func:`one_aggregation`) gives the aggregations of a column; ``hint`` the hint of a refused column.
    """

    name: str
    takes: str
    make: Callable[..., Any]
    options: frozenset[str] = frozenset()
    signature: Callable[..., None] | None = None
    doc: str = ""
    table: bool = True
    command: bool = True
    cells: Cells = field(default=one_aggregation)
    hint: Callable[[Mapping[str, Any]], str | None] = field(default=lambda _: None)

    def aggregation(self, column: str | None, **options: Any) -> Any:
        """The table aggregation of ``column`` with the one-column release's ``options`` (its signature's)."""
        return self.make() if self.takes == "nothing" else self.make(column, **options)

    def parameters(self) -> tuple[str, ...]:
        """The names of the one-column release's parameters (empty without a signature)."""
        return () if self.signature is None else tuple(inspect.signature(self.signature).parameters)

    def build(self, column: str | None = None, bounds: tuple[Any, Any] | None = None, lattice: Any = None,
              share: Any = None, q: Any = None, trim: Any = None, fallback: Any = None, *, qs: Any = None) -> Any:
        """The table aggregation of a recorded query or of the command (``--NAME COLUMN:LO,HI``). Several levels
        ``qs`` (``takes == "levels"``) are given in increasing order (:func:`increasing_levels`) and must make one
        aggregation of this statistic's ``cells``: the recursive split, from three levels on (one or two are that
        many ``--quantile``, each a share of its own)."""
        options = {name: value for name, value in (("trim", trim), ("fallback", fallback)) if value is not None}
        if (q is not None and self.takes != "level") or (qs is not None and self.takes != "levels"):
            raise ValueError("takes no level q" if q is not None else "takes no levels qs")
        if "trim" in options.keys() - self.options:
            raise ValueError(f"takes no trim level (--trim is a {STATISTICS.spelled('trim')}'s)")
        if "fallback" in options.keys() - self.options:
            raise ValueError(f"takes no fallback (--fallback is a selection's: {STATISTICS.spelled('fallback')})")
        if self.takes == "nothing":
            return self.make(share)
        if column is None or bounds is None:
            raise ValueError("needs a column and bounds (COLUMN:LO,HI)")
        if self.takes == "level":
            if q is None:
                raise ValueError("needs its level (COLUMN:Q:LO,HI)")
            return self.make(column, bounds, lattice, share, q, **options)
        if self.takes == "levels":
            try:
                levels = increasing_levels(qs)
            except ValueError as error:
                raise ValueError(f"levels: {error}") from None
            _, made = self.cells(self.name, column, qs=levels, bounds=bounds, lattice=lattice, **options)
            if len(made) != 1:
                raise ValueError("takes three or more levels (COLUMN:Q1,Q2,Q3...:LO,HI, released by the recursive "
                                 "split); give one or two levels as --quantile COLUMN:Q:LO,HI each")
            return dataclasses.replace(made[0], share=share)
        return self.make(column, bounds, lattice, share, **options)


def increasing_levels(qs: Any) -> tuple[Fraction, ...]:
    """Several quantile levels as the command and a recorded query give them: each once, in increasing order
    (``0.1,0.5,0.9``), in ``[0, 1]`` and at most :data:`~securedp.hazmat.exact.bounds.MAX_LEVELS`
    (:func:`~securedp.mechanisms.quantile.check_levels`). (A Python caller's ``qs`` may come in any order: the
    values come back in it.)"""
    if qs is None:
        raise ValueError("needs its levels (COLUMN:Q1,Q2,...:LO,HI, or --levels Q1,Q2,...)")
    levels = check_levels(qs)
    down = next((i for i in range(1, len(levels)) if levels[i] <= levels[i - 1]), None)
    if down is not None and levels[down] == levels[down - 1]:
        raise ValueError(f"the level {exact_text(levels[down])} is given twice: each quantile level is released once")
    if down is not None:
        raise ValueError(f"the levels must be given in increasing order (0.1,0.5,0.9): "
                         f"{exact_text(levels[down - 1])} comes before {exact_text(levels[down])}")
    return levels


Kind = Statistic
"""The old name of a table aggregation's entry (``securedp.tables.spec.Kind``)."""


class Registry(Mapping[str, Statistic]):
    """The statistics by name, in the order they were registered (the order of ``--stat``'s choices)."""

    def __init__(self) -> None:
        self._entries: dict[str, Statistic] = {}
        self._listeners: list[Callable[[Statistic], None]] = []

    def __getitem__(self, name: str) -> Statistic:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def register(self, entry: Statistic) -> Statistic:
        """Add ``entry`` (its name unused so far) and tell every listener."""
        if entry.name in self._entries:
            raise ValueError(f"a statistic named {entry.name!r} is registered already")
        self._entries[entry.name] = entry
        for listener in self._listeners:
            listener(entry)
        return entry

    def unregister(self, name: str) -> None:
        """Remove the entry ``name`` (a test's statistic); what listeners made of it stays."""
        del self._entries[name]

    def subscribe(self, listener: Callable[[Statistic], None]) -> None:
        """Call ``listener`` with every entry, those registered so far and every later one."""
        self._listeners.append(listener)
        for entry in list(self._entries.values()):
            listener(entry)

    @property
    def kinds(self) -> Mapping[str, Statistic]:
        """The table aggregations by their option's name (``--count``, ``--sum`` ...): the entries of tables, a
        live view (a statistic registered later is in it)."""
        return _Tables(self._entries)

    @property
    def commands(self) -> tuple[str, ...]:
        """``--stat``'s choices: the statistics of one column the command releases."""
        return tuple(name for name, entry in self._entries.items() if entry.command and entry.signature)

    def taking(self, parameter: str, *, commands: bool = False) -> tuple[str, ...]:
        """The statistics of one column whose signature takes ``parameter`` (only ``--stat``'s, if ``commands``)."""
        named = self.commands if commands else tuple(self._entries)
        return tuple(name for name in named if parameter in self._entries[name].parameters())

    def spelled(self, option: str) -> str:
        """The table aggregations taking ``option`` (of :data:`OPTIONS`), in words: ``median, quantile, iqr``."""
        return ", ".join(name.replace("_", " ") for name, entry in self.kinds.items() if option in entry.options)


class _Tables(Mapping[str, Statistic]):
    """The entries of tables of a registry (:attr:`Registry.kinds`)."""

    def __init__(self, entries: dict[str, Statistic]) -> None:
        self._entries = entries

    def __getitem__(self, name: str) -> Statistic:
        entry = self._entries[name]
        if not entry.table:
            raise KeyError(name)
        return entry

    def __iter__(self) -> Iterator[str]:
        return (name for name, entry in self._entries.items() if entry.table)

    def __len__(self) -> int:
        return sum(1 for _ in self)


STATISTICS = Registry()
"""The one list (filled by :mod:`securedp.tables.spec`, one line per statistic)."""
