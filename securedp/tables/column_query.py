"""The record shape of a release of one column, and its checks: the column part of :class:`~securedp.tables.query.
Query` (``securedp release --column --stat``).

A release of one column records its query flat: ``{"statistic": NAME, "column": ..., "epsilon"`` or ``"rho",
"bounds", "q", "bins", "categories", "max_contributions", "id_column"}``, then ``encoding``, ``lattice``,
``missing``, ``fill``, ``schema``, ``analyst_facing``, ``trim``, ``fallback`` and several quantiles' levels ``qs``
only when set (every record written so far has this shape, byte for byte). Which options a statistic takes, and
which it needs, is read from its signature in the one list (:data:`securedp.tables.spec.STATISTICS`): a statistic
that takes ``bounds`` needs them (and only such a statistic takes ``--step``), one that takes a level ``q`` needs
it, one that takes levels ``qs`` needs them, each once and in increasing order (``--levels 0.1,0.5,0.9``), one that
takes ``bins`` needs exactly one of bins and categories; an option it does not take is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.hazmat.exact.bounds import levels
from securedp.hazmat.exact.rational import positive_rational, to_int, to_rational
from securedp.reading.types import declared_schema
from securedp.tables.registry import increasing_levels
from securedp.tables.spec import STATISTICS


@dataclass(frozen=True)
class ColumnFields:
    """The fields of a release of one column besides its statistic, column and ``epsilon`` (see the module
    docstring): the keyword arguments of :meth:`~securedp.tables.query.Query.of_column`."""

    bounds: tuple[Fraction, Fraction] | None = None
    q: Fraction | None = None
    bins: tuple[Fraction, ...] | None = None
    categories: tuple[str, ...] | None = None
    max_contributions: int = 1
    id_column: str | None = None
    rho: Fraction | None = None
    encoding: str = "utf-8"
    lattice: Fraction | None = None
    missing: str = "raise"
    fill: Fraction | None = None
    schema: tuple[tuple[str, str], ...] = ()
    analyst_facing: bool = False
    trim: Fraction | None = None
    fallback: Fraction | None = None
    qs: tuple[Fraction, ...] | None = None


def _names(option: str) -> str:
    return " and ".join(STATISTICS.taking(option, commands=True))


def column_check(statistic: str, options: Mapping[str, Any], epsilon: Fraction | None, rho: Fraction | None,
                 missing: str, fill: Fraction | None) -> None:
    """Raise :class:`ValueError` unless the set ``options`` (bounds, q, bins, categories, trim, fallback, lattice)
    fit ``statistic``'s signature, exactly one of ``epsilon`` and ``rho`` is set, and ``missing`` and ``fill``
    agree (see the module docstring)."""
    commands = STATISTICS.commands
    if statistic not in commands:
        raise ValueError(f"unknown statistic {statistic!r} (choose from {', '.join(commands)})")
    takes = STATISTICS[statistic].parameters()
    if (epsilon is None) == (rho is None):
        raise ValueError("give exactly one of --epsilon (pure DP) and --rho (zCDP)")
    if "bounds" in takes and "bounds" not in options:
        raise ValueError(f"{statistic} needs --bounds LO,HI (public bounds on one value)")
    if "q" in takes and "q" not in options:
        raise ValueError(f"{statistic} needs --q Q (a number in [0, 1])")
    if "q" not in takes and "q" in options:
        several = " (several quantiles' levels: --levels Q1,Q2,...)" if "qs" in takes else ""
        raise ValueError(f"--q applies to the {_names('q')} statistic only{several}")
    if "qs" in takes and "qs" not in options:
        raise ValueError(f"{statistic} needs --levels Q1,Q2,... (increasing, each in [0, 1])")
    if "qs" not in takes and "qs" in options:
        raise ValueError(f"--levels applies to the {_names('qs')} statistic only")
    if "qs" in options:
        try:
            increasing_levels(options["qs"])
        except ValueError as error:
            raise ValueError(f"--levels: {error}") from None
    if "bins" in takes and ("bins" in options) == ("categories" in options):
        raise ValueError(f"{statistic} needs exactly one of --bins E0,E1,... or --categories A,B,...")
    if "bins" not in takes and ("bins" in options or "categories" in options):
        raise ValueError(f"--bins and --categories apply to the {_names('bins')} statistic only")
    if "bounds" in options and "bounds" not in takes:
        raise ValueError(f"--bounds does not apply to --stat {statistic}")
    if missing not in ("raise", "drop", "impute"):
        raise ValueError(f"--missing must be raise, drop or impute, got {missing!r}")
    if (fill is not None) != (missing == "impute"):
        raise ValueError("--fill goes with --missing impute (the public value imputed), and only with it")
    if "trim" in options and "trim" not in takes:
        raise ValueError(f"--trim applies to the {_names('trim')} statistic only")
    if "fallback" in options and "fallback" not in takes:
        raise ValueError(f"--fallback applies to the selections ({', '.join(STATISTICS.taking('fallback'))}) only")
    if "lattice" in options and "bounds" not in takes:
        raise ValueError(f"--step applies to the statistics with --bounds "
                         f"({', '.join(sorted(STATISTICS.taking('bounds', commands=True)))}), not to {statistic}")


def read_column(data: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of :meth:`~securedp.tables.query.Query.of_column` that the record ``data`` of a release of one
    column states; raises :class:`ValueError` if it is malformed."""
    try:
        if ("epsilon" in data) == ("rho" in data):
            raise ValueError("malformed query: exactly one of 'epsilon' and 'rho' must be given")
        bounds, bins, categories = data.get("bounds"), data.get("bins"), data.get("categories")
        return {
            "statistic": str(data["statistic"]),
            "column": str(data["column"]),
            "epsilon": positive_rational(data["epsilon"], "epsilon") if "epsilon" in data else None,
            "rho": positive_rational(data["rho"], "rho") if "rho" in data else None,
            "bounds": None if bounds is None else (to_rational(bounds[0], "lo"), to_rational(bounds[1], "hi")),
            "q": None if data.get("q") is None else to_rational(data["q"], "q"),
            "bins": None if bins is None else tuple(to_rational(b, "bin edge") for b in bins),
            "categories": None if categories is None else tuple(str(c) for c in categories),
            "max_contributions": to_int(data.get("max_contributions", 1), "max_contributions"),
            "id_column": data.get("id_column"),
            "encoding": str(data.get("encoding", "utf-8")),
            "lattice": None if data.get("lattice") is None else positive_rational(data["lattice"], "lattice"),
            "missing": str(data.get("missing", "raise")),
            "fill": None if data.get("fill") is None else to_rational(data["fill"], "fill"),
            "schema": tuple(declared_schema(data.get("schema")).items()),
            "analyst_facing": data.get("analyst_facing") is True,
            "trim": None if data.get("trim") is None else to_rational(data["trim"], "trim"),
            "fallback": None if data.get("fallback") is None else to_rational(data["fallback"], "fallback"),
            "qs": read_levels(data.get("qs")),
        }
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"malformed query: {exc}") from None


def read_levels(recorded: Any) -> tuple[Fraction, ...] | None:
    """A record's several quantile levels (``"qs"``: a list of exact rationals), or ``None``; the count is checked
    before any level is read (:func:`~securedp.tables.registry.increasing_levels` checks the rest)."""
    if recorded is None:
        return None
    if not isinstance(recorded, list):
        raise ValueError("malformed query: 'qs' must be a list of quantile levels")
    levels(len(recorded), "qs")
    return tuple(to_rational(q, "qs") for q in recorded)
