"""Grouped table releases: exact aggregates per group by an engine, noise and selection once, here.

See :mod:`securedp.tables.table` for the release, :mod:`securedp.tables.spec` for the aggregations
and their privacy maps.
"""

from securedp.tables.spec import IQR, Count, Mean, Median, Persons, Quantile, Sum, TrimmedMean, Variance
from securedp.tables.split_quantiles import QuantilesBySplit
from securedp.tables.table import PreparedTable, TableRelease, prepare_table, table

__all__ = ["IQR", "Count", "Mean", "Median", "Persons", "PreparedTable", "Quantile", "QuantilesBySplit", "Sum",
           "TableRelease", "TrimmedMean", "Variance", "prepare_table", "table"]
