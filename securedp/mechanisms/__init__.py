"""Releases built on the exact samplers, each with its privacy map.

Each statistic is defined once, as a :class:`~securedp.mechanisms.statistic.Statistic`
subclass, and released in two steps: an **exact aggregate** of the data on
lattice units after contribution bounding (integers any engine can compute
by grouping and adding), then a **noise or selection step** that reads only
that aggregate, draws and prices the release (see
:mod:`securedp.mechanisms.statistic` and :mod:`securedp.mechanisms.selection`).
"""
