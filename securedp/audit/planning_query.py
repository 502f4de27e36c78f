"""The logged queries of ``securedp bounds`` and ``securedp analyze --epsilon``, and their replay.

Each command writes its query (every option, exact: rationals as ``"num/den"``) into the release
record, as ``securedp release`` does, and prepares its release from it; :mod:`securedp.audit.replay`
prepares the same release again from the logged query and the data file, so both read the file the
same way: through the one reader (:class:`securedp.reading.files.TableFile`: the needed columns, CSV
cells as text, ids and keys by the one rule), when the release starts reading its data.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from securedp.hazmat.exact.rational import format_rational, positive_rational, to_rational
from securedp.ledger.release import PreparedRelease
from securedp.planning.bounds import BoundsMethod, prepare_column_bounds
from securedp.planning.contributions import prepare_contribution_histogram
from securedp.reading.files import TableFile
from securedp.reading.types import declared_schema
from securedp.tables.checks import Reading


@dataclass(frozen=True)
class BoundsQuery:
    """``securedp bounds`` (and the bounds of a table's ``COLUMN:auto``): the column, its person ids, the options
    of :func:`prepare_private_bounds`, and how the file is read (``delimiter``, ``encoding``, declared types
    ``schema``: a ``COLUMN:auto`` column is read as its table reads it)."""

    column: str
    epsilon: Fraction
    id_column: str | None = None
    max_contributions: int = 1
    method: str = "histogram"
    exponents: tuple[int, int] = (-8, 40)
    quantiles: tuple[Fraction, Fraction] = (Fraction(1, 20), Fraction(19, 20))
    beta: Fraction = Fraction(1, 20)
    encoding: str = "utf-8"
    missing: str = "raise"
    fill: Fraction | None = None
    analyst_facing: bool = False
    delimiter: str = ","
    schema: tuple[tuple[str, str], ...] = ()

    def prepare(self, data: Any) -> PreparedRelease:
        """The release on ``data``: the file's path (read when the release reads its data), or a table."""
        table = TableFile(data, self.delimiter, self.encoding) if isinstance(data, (str, Path)) else data
        how = BoundsMethod(self.method, self.exponents, self.quantiles, self.beta)
        reading = Reading(id_column=self.id_column, missing=self.missing, fill=self.fill,
                          schema=dict(self.schema) or None)
        return prepare_column_bounds(table, self.column, how, reading, epsilon=self.epsilon,
                                     max_contributions=self.max_contributions)

    def to_json(self) -> dict[str, Any]:
        return {"statistic": "bounds", "column": self.column, "epsilon": format_rational(self.epsilon),
                "id_column": self.id_column, "max_contributions": self.max_contributions, "method": self.method,
                "exponents": list(self.exponents), "quantiles": [format_rational(q) for q in self.quantiles],
                "beta": format_rational(self.beta), "encoding": self.encoding,
                **({"missing": self.missing} if self.missing != "raise" else {}),
                **({"fill": format_rational(self.fill)} if self.fill is not None else {}),
                **({"analyst_facing": True} if self.analyst_facing else {}),
                **({"delimiter": self.delimiter} if self.delimiter != "," else {}),
                **({"schema": dict(self.schema)} if self.schema else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BoundsQuery:
        low, high = data["exponents"]
        q_lo, q_hi = (to_rational(q, "quantiles") for q in data["quantiles"])
        return cls(str(data["column"]), positive_rational(data["epsilon"], "epsilon"), data["id_column"],
                   int(data["max_contributions"]), str(data["method"]), (int(low), int(high)), (q_lo, q_hi),
                   to_rational(data["beta"], "beta"), str(data["encoding"]), str(data.get("missing", "raise")),
                   None if data.get("fill") is None else to_rational(data["fill"], "fill"),
                   data.get("analyst_facing") is True, str(data.get("delimiter", ",")),
                   tuple(declared_schema(data.get("schema")).items()))


@dataclass(frozen=True)
class HistogramQuery:
    """``securedp analyze --epsilon``: the options of :func:`prepare_contribution_histogram`."""

    id_column: str
    group_by: tuple[str, ...]
    epsilon: Fraction
    groups_cap: int = 16
    rows_cap: int = 16
    encoding: str = "utf-8"
    analyst_facing: bool = False
    missing_keys: str = "raise"

    def prepare(self, data: Any) -> PreparedRelease:
        """The release on ``data``: the file's path (read when the release reads its data), or a table."""
        table = TableFile(data, encoding=self.encoding) if isinstance(data, (str, Path)) else data
        return prepare_contribution_histogram(table, id_column=self.id_column, group_by=list(self.group_by),
                                              epsilon=self.epsilon, groups_cap=self.groups_cap,
                                              rows_cap=self.rows_cap, missing_keys=self.missing_keys)

    def to_json(self) -> dict[str, Any]:
        return {"statistic": "contribution_histogram", "id_column": self.id_column, "group_by": list(self.group_by),
                "epsilon": format_rational(self.epsilon), "groups_cap": self.groups_cap, "rows_cap": self.rows_cap,
                "encoding": self.encoding, **({"analyst_facing": True} if self.analyst_facing else {}),
                **({"missing_keys": self.missing_keys} if self.missing_keys != "raise" else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HistogramQuery:
        return cls(str(data["id_column"]), tuple(str(c) for c in data["group_by"]),
                   positive_rational(data["epsilon"], "epsilon"), int(data["groups_cap"]), int(data["rows_cap"]),
                   str(data["encoding"]), data.get("analyst_facing") is True,
                   str(data.get("missing_keys", "raise")))


def planning_query(data: dict[str, Any]) -> BoundsQuery | HistogramQuery:
    """The logged query ``data``: its ``statistic`` is ``"bounds"`` or ``"contribution_histogram"``."""
    if data.get("statistic") == "bounds":
        return BoundsQuery.from_json(data)
    return HistogramQuery.from_json(data)
