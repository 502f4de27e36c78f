"""Session methods for the selection mechanisms (exponential mechanism, median, quantiles ...)."""

from __future__ import annotations

from typing import Any, Callable

from securedp.mechanisms.exponential import prepare_exponential_mechanism
from securedp.mechanisms.noisy_max import prepare_report_noisy_max
from securedp.mechanisms.permute_and_flip import prepare_permute_and_flip
from securedp.mechanisms.quantile import prepare_median, prepare_quantile, prepare_quantiles
from securedp.mechanisms.release import PreparedRelease, Release


class SelectionMethods:
    """Mixed into :class:`securedp.accounting.session.Session`; each method charges the budget.

    Every method validates its input completely (raising before anything is
    charged or drawn), then charges the exact ``epsilon`` and draws. The
    data of :meth:`median`, :meth:`quantile` and :meth:`quantiles` is read as
    by :meth:`Session.sum` (one column; in an analyst-facing session, unusable
    records and rows without a usable person id are dropped).
    """

    def _release(self, prepared: PreparedRelease) -> Release:  # provided by Session
        raise NotImplementedError

    def _prepare(self, prepare: Callable[..., PreparedRelease], *args: Any, **options: Any) -> PreparedRelease:
        return prepare(*args, **options)  # replaced by Session's, which sets the error mode

    def median(self, data: Any, **options: Any) -> Release:
        """:func:`securedp.median`, charged to this session."""
        return self._release(self._prepare(prepare_median, data, **options))

    def quantile(self, data: Any, q: Any, **options: Any) -> Release:
        """:func:`securedp.quantile`, charged to this session."""
        return self._release(self._prepare(prepare_quantile, data, q, **options))

    def quantiles(self, data: Any, qs: Any, **options: Any) -> Release:
        """:func:`securedp.quantiles`, charged to this session (``epsilon`` in total)."""
        return self._release(self._prepare(prepare_quantiles, data, qs, **options))

    def exponential_mechanism(self, scores: Any, **options: Any) -> Release:
        """:func:`securedp.exponential_mechanism`, charged to this session."""
        return self._release(self._prepare(prepare_exponential_mechanism, scores, **options))

    def report_noisy_max(self, scores: Any, **options: Any) -> Release:
        """:func:`securedp.report_noisy_max`, charged to this session."""
        return self._release(self._prepare(prepare_report_noisy_max, scores, **options))

    def permute_and_flip(self, scores: Any, **options: Any) -> Release:
        """:func:`securedp.permute_and_flip`, charged to this session."""
        return self._release(self._prepare(prepare_permute_and_flip, scores, **options))
