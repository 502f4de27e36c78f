"""The logged queries of ``securedp bounds`` and ``securedp analyze --epsilon``, and their replay.

Each command writes its query (every option, exact: rationals as ``"num/den"``) into the release
record, as ``securedp release`` does, and prepares its release from it; :mod:`securedp.audit.replay`
prepares the same release again from the logged query and the data file, so both read the file the
same way: ``bounds`` by :func:`securedp.audit.table.read_column` (cells as text, person ids coded by
:func:`securedp.audit.table.person_code`), the contribution histogram by
:func:`securedp.reading.files.read_file` (the needed columns, cells as text).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from securedp.audit.table import read_column
from securedp.hazmat.exact.rational import format_rational, positive_rational, to_rational
from securedp.mechanisms.release import PreparedRelease
from securedp.planning.bounds import prepare_private_bounds
from securedp.planning.contributions import prepare_contribution_histogram
from securedp.reading.files import read_file


@dataclass(frozen=True)
class BoundsQuery:
    """``securedp bounds``: the column, its person ids, and the options of :func:`prepare_private_bounds`."""

    column: str
    epsilon: Fraction
    id_column: str | None = None
    max_contributions: int = 1
    method: str = "histogram"
    exponents: tuple[int, int] = (-8, 40)
    quantiles: tuple[Fraction, Fraction] = (Fraction(1, 20), Fraction(19, 20))
    beta: Fraction = Fraction(1, 20)
    encoding: str = "utf-8"

    def read(self, path: str | Path) -> tuple[list[str], list[int | None] | None]:
        """The column's cells and the rows' person ids (or ``None``), read from the file."""
        column = read_column(path, self.column, self.id_column, encoding=self.encoding)
        return column.values, column.ids

    def prepare(self, data: Any) -> PreparedRelease:
        """The release on ``data``, the pair :meth:`read` returns (any other value: no row, no id)."""
        values, ids = data if isinstance(data, tuple) else ([], None if self.id_column is None else [])
        return prepare_private_bounds(values, ids=ids, epsilon=self.epsilon, max_contributions=self.max_contributions,
                                      method=self.method, exponents=self.exponents, quantiles=self.quantiles,
                                      beta=self.beta)

    def to_json(self) -> dict[str, Any]:
        return {"statistic": "bounds", "column": self.column, "epsilon": format_rational(self.epsilon),
                "id_column": self.id_column, "max_contributions": self.max_contributions, "method": self.method,
                "exponents": list(self.exponents), "quantiles": [format_rational(q) for q in self.quantiles],
                "beta": format_rational(self.beta), "encoding": self.encoding}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BoundsQuery:
        low, high = data["exponents"]
        q_lo, q_hi = (to_rational(q, "quantiles") for q in data["quantiles"])
        return cls(str(data["column"]), positive_rational(data["epsilon"], "epsilon"), data["id_column"],
                   int(data["max_contributions"]), str(data["method"]), (int(low), int(high)), (q_lo, q_hi),
                   to_rational(data["beta"], "beta"), str(data["encoding"]))


@dataclass(frozen=True)
class HistogramQuery:
    """``securedp analyze --epsilon``: the options of :func:`prepare_contribution_histogram`."""

    id_column: str
    group_by: tuple[str, ...]
    epsilon: Fraction
    groups_cap: int = 16
    rows_cap: int = 16
    encoding: str = "utf-8"

    def read(self, path: str | Path) -> Any:
        """The id and group columns of the file (cells as text)."""
        return read_file(path, list(dict.fromkeys([self.id_column, *self.group_by])), encoding=self.encoding)

    def prepare(self, data: Any) -> PreparedRelease:
        return prepare_contribution_histogram(data, id_column=self.id_column, group_by=list(self.group_by),
                                              epsilon=self.epsilon, groups_cap=self.groups_cap,
                                              rows_cap=self.rows_cap)

    def to_json(self) -> dict[str, Any]:
        return {"statistic": "contribution_histogram", "id_column": self.id_column, "group_by": list(self.group_by),
                "epsilon": format_rational(self.epsilon), "groups_cap": self.groups_cap, "rows_cap": self.rows_cap,
                "encoding": self.encoding}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HistogramQuery:
        return cls(str(data["id_column"]), tuple(str(c) for c in data["group_by"]),
                   positive_rational(data["epsilon"], "epsilon"), int(data["groups_cap"]), int(data["rows_cap"]),
                   str(data["encoding"]))


def planning_query(data: dict[str, Any]) -> BoundsQuery | HistogramQuery:
    """The logged query ``data``: its ``statistic`` is ``"bounds"`` or ``"contribution_histogram"``."""
    if data.get("statistic") == "bounds":
        return BoundsQuery.from_json(data)
    return HistogramQuery.from_json(data)
