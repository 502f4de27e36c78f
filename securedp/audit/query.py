"""A release described as data: what the ``securedp release`` command ran, so that replay can re-run it.

A :class:`Query` names the statistic, the file's column, the exact privacy
parameter (``epsilon`` for pure DP, or ``rho`` for zCDP: exactly one) and
the public inputs (bounds, quantile, trim, bins or categories, contribution bound,
id column, missing-value policy and fill, declared types, and the mode it ran
in: analyst-facing or not). The command stores ``query.to_json()`` in
each audit record under ``"query"``; :mod:`securedp.audit.replay` rebuilds
the query with :meth:`Query.from_json` and calls :meth:`Query.prepare` on
the same data, in the same mode, to re-derive the release. The release is the
one-cell table of the file's column (:func:`securedp.tables.one_column.one_cell`),
as every release of one column is.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from securedp.hazmat.exact.rational import format_rational, positive_rational, probability, to_int, to_rational
from securedp.mechanisms.release import PreparedRelease
from securedp.mechanisms.trimmed_mean import DEFAULT_TRIM
from securedp.privacy.cost import Cost, Currency
from securedp.reading.delimited import MissingColumns
from securedp.reading.files import TableFile, column_names
from securedp.reading.types import declared_schema
from securedp.tables.one_column import POINTS, one_cell, request

STATISTICS = ("count", "sum", "mean", "variance", "median", "quantile", "histogram", "iqr", "trimmed_mean")
"""The statistics of the command (``--stat``)."""
NEEDS_BOUNDS = frozenset({"sum", "mean", "variance", "median", "quantile", "iqr", "trimmed_mean"})


def _text(q: Fraction) -> str:
    return format_rational(q)


@dataclass(frozen=True)
class Query:
    """One release of the command, with every public input exact.

    ``epsilon`` / ``rho``, ``bounds``, ``q`` and ``bins`` are rationals;
    ``categories`` are strings compared with the cells verbatim. Exactly one
    of ``epsilon`` (pure DP, Laplace-type noise) and ``rho`` (zCDP, discrete
    Gaussian noise) is set (a median or quantile priced in ``rho`` runs its
    selection at the epsilon :func:`~securedp.mechanisms.quantile.selection_epsilon`
    gives). :meth:`check` enforces which inputs each statistic needs.
    """

    statistic: str
    column: str
    epsilon: Fraction | None
    bounds: tuple[Fraction, Fraction] | None = None
    q: Fraction | None = None
    bins: tuple[Fraction, ...] | None = None
    categories: tuple[str, ...] | None = None
    max_contributions: int = 1
    id_column: str | None = None
    rho: Fraction | None = None
    encoding: str = "utf-8"
    """The CSV file's declared encoding (:func:`securedp.reading.files.read_file`); recorded when not UTF-8."""
    lattice: Fraction | None = None
    """The lattice step (``--step``); ``None``: the statistic's rule from the bounds and the column's declared
    type. Recorded when given."""
    missing: str = "raise"
    """Unusable values: ``"raise"``, ``"drop"`` or ``"impute"`` with :attr:`fill` (``--missing``)."""
    fill: Fraction | None = None
    schema: tuple[tuple[str, str], ...] = ()
    """Declared column types (``--schema hours:int``), as ``(column, type)`` pairs."""
    analyst_facing: bool = False
    """The release ran in an analyst-facing session (``--analyst-facing``): unusable records dropped."""
    trim: Fraction | None = None
    """A trimmed mean's trim level (``--trim``; ``None``: the default, 1/10). Recorded when given."""
    fallback: Fraction | None = None
    """A selection's fallback probability (``--fallback``; ``None``: the default, 3/4). Recorded when given; a
    replay gives a query without it the one its record states (:mod:`securedp.audit.replay`)."""

    @property
    def currency(self) -> Currency:
        """What this query's privacy cost is counted in: epsilon or rho."""
        return Cost.of(self.epsilon, self.rho).currency

    @property
    def cost(self) -> Fraction:
        """The exact privacy cost in :attr:`currency`."""
        return Cost.of(self.epsilon, self.rho).amount

    def check(self) -> Query:
        """Return ``self`` if the inputs fit the statistic, else raise :class:`ValueError`."""
        if self.statistic not in STATISTICS:
            raise ValueError(f"unknown statistic {self.statistic!r} (choose from {', '.join(STATISTICS)})")
        if (self.epsilon is None) == (self.rho is None):
            raise ValueError("give exactly one of --epsilon (pure DP) and --rho (zCDP)")
        if self.statistic in NEEDS_BOUNDS and self.bounds is None:
            raise ValueError(f"{self.statistic} needs --bounds LO,HI (public bounds on one value)")
        if self.statistic == "quantile" and self.q is None:
            raise ValueError("quantile needs --q Q (a number in [0, 1])")
        if self.statistic != "quantile" and self.q is not None:
            raise ValueError("--q applies to the quantile statistic only")
        if self.statistic == "histogram" and (self.bins is None) == (self.categories is None):
            raise ValueError("histogram needs exactly one of --bins E0,E1,... or --categories A,B,...")
        if self.statistic != "histogram" and (self.bins is not None or self.categories is not None):
            raise ValueError("--bins and --categories apply to the histogram statistic only")
        if self.bounds is not None and self.statistic not in NEEDS_BOUNDS:
            raise ValueError(f"--bounds does not apply to --stat {self.statistic}")
        if self.missing not in ("raise", "drop", "impute"):
            raise ValueError(f"--missing must be raise, drop or impute, got {self.missing!r}")
        if (self.fill is not None) != (self.missing == "impute"):
            raise ValueError("--fill goes with --missing impute (the public value imputed), and only with it")
        if self.trim is not None and self.statistic != "trimmed_mean":
            raise ValueError("--trim applies to the trimmed_mean statistic only")
        if self.fallback is not None and self.statistic not in POINTS:
            raise ValueError(f"--fallback applies to the selections ({', '.join(POINTS)}) only")
        if self.lattice is not None and self.statistic not in NEEDS_BOUNDS:
            raise ValueError(f"--step applies to the statistics with --bounds ({', '.join(sorted(NEEDS_BOUNDS))}), "
                             f"not to {self.statistic}")
        return self

    def prepare(self, data: Any) -> PreparedRelease:
        """The priced, not yet drawn, release of this query on ``data``: the file's path (read with this query's
        encoding, only the needed columns), or a table. It is the one-cell table of the column."""
        if self.statistic == "count" and isinstance(data, (str, Path)) and Path(data).is_file():  # a count reads
            names = column_names(data, encoding=self.encoding)  # no cell of its column: the header must hold it
            if self.column not in names:
                raise MissingColumns([self.column], names)
        table = TableFile(data, encoding=self.encoding) if isinstance(data, (str, Path)) else data
        levels = None if self.q is None else (probability(self.q, "q"),)
        cell, aggregations = request(self.statistic, self.column, bounds=self.bounds, lattice=self.lattice,
                                     levels=levels, bins=self.bins, categories=self.categories,
                                     trim=DEFAULT_TRIM if self.trim is None else self.trim, fallback=self.fallback)
        return one_cell(cell, aggregations, table, self.id_column, epsilon=self.epsilon, rho=self.rho,
                        max_contributions=self.max_contributions, missing=self.missing, fill=self.fill,
                        schema=dict(self.schema) or None)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with rationals as ``"num/den"`` strings; inverse of :meth:`from_json`.

        The cost appears as ``"epsilon"`` or as ``"rho"``, whichever is set (never both).
        """
        cost = {"epsilon": _text(self.epsilon)} if self.epsilon is not None else {"rho": _text(self.rho)}  # type: ignore[arg-type]
        return {
            "statistic": self.statistic,
            "column": self.column,
            **cost,
            "bounds": None if self.bounds is None else [_text(b) for b in self.bounds],
            "q": None if self.q is None else _text(self.q),
            "bins": None if self.bins is None else [_text(b) for b in self.bins],
            "categories": None if self.categories is None else list(self.categories),
            "max_contributions": self.max_contributions,
            "id_column": self.id_column,
            **({"encoding": self.encoding} if self.encoding != "utf-8" else {}),
            **({"lattice": _text(self.lattice)} if self.lattice is not None else {}),
            **({"missing": self.missing} if self.missing != "raise" else {}),
            **({"fill": _text(self.fill)} if self.fill is not None else {}),
            **({"schema": dict(self.schema)} if self.schema else {}),
            **({"analyst_facing": True} if self.analyst_facing else {}),
            **({"trim": _text(self.trim)} if self.trim is not None else {}),
            **({"fallback": _text(self.fallback)} if self.fallback is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Query:
        """Rebuild a query from :meth:`to_json` output; raises :class:`ValueError` if it is malformed."""
        try:
            if ("epsilon" in data) == ("rho" in data):
                raise ValueError("malformed query: exactly one of 'epsilon' and 'rho' must be given")
            bounds = data.get("bounds")
            bins = data.get("bins")
            categories = data.get("categories")
            return cls(
                statistic=str(data["statistic"]),
                column=str(data["column"]),
                epsilon=positive_rational(data["epsilon"], "epsilon") if "epsilon" in data else None,
                rho=positive_rational(data["rho"], "rho") if "rho" in data else None,
                bounds=None if bounds is None else (to_rational(bounds[0], "lo"), to_rational(bounds[1], "hi")),
                q=None if data.get("q") is None else to_rational(data["q"], "q"),
                bins=None if bins is None else tuple(to_rational(b, "bin edge") for b in bins),
                categories=None if categories is None else tuple(str(c) for c in categories),
                max_contributions=to_int(data.get("max_contributions", 1), "max_contributions"),
                id_column=data.get("id_column"),
                encoding=str(data.get("encoding", "utf-8")),
                lattice=None if data.get("lattice") is None else positive_rational(data["lattice"], "lattice"),
                missing=str(data.get("missing", "raise")),
                fill=None if data.get("fill") is None else to_rational(data["fill"], "fill"),
                schema=tuple(declared_schema(data.get("schema")).items()),
                analyst_facing=data.get("analyst_facing") is True,
                trim=None if data.get("trim") is None else to_rational(data["trim"], "trim"),
                fallback=None if data.get("fallback") is None else to_rational(data["fallback"], "fallback"),
            ).check()
        except (KeyError, IndexError, TypeError) as exc:
            raise ValueError(f"malformed query: {exc}") from None
