"""Per-person bounding, below both the statistics and the engines: the salted SHA-256 rule and its limits.

:mod:`securedp.bounding.messages` defines the message format of the bounding digests once (and a
hashlib encoder that needs no Polars), :mod:`securedp.bounding.digest` builds it in Polars,
:mod:`securedp.bounding.heads` computes their leading 64 bits with the CPU's SHA instructions (the
optional C extension), :mod:`securedp.bounding.per_person` keeps each person's smallest digests of a column, and
:mod:`securedp.bounding.limits` reads a per-person bound.
One-column releases (:mod:`securedp.bounding.contributions`) and the table engines
(:mod:`securedp.engines`) both stand on this package, so neither imports the other.
"""
