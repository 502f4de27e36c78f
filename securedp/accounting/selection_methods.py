"""Session methods for the selection mechanisms (exponential mechanism, median, quantiles ...)."""


class SelectionMethods:
    """Mixed into :class:`securedp.accounting.session.Session`; each method charges the budget."""
