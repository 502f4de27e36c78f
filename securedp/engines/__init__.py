"""Engines that compute a table release's exact integer aggregates from rows.

An engine bounds each person's contribution (:mod:`securedp.engines.polars.bounding`,
keyed by the canonical digests of :mod:`securedp.bounding.digest`) and returns
exact per-key integer aggregates; noise, partition selection and accounting
happen once, above it. Any engine (Polars here; Spark or DuckDB) that computes
the same digests keeps the same rows, hence the same aggregates.
"""
