"""Accounting errors."""


class BudgetExceeded(RuntimeError):
    """A release would spend more than the remaining budget; nothing was drawn or charged."""


class IncompatibleCost(ValueError):
    """A release's privacy cost cannot be charged to this budget (e.g. a zCDP release on a pure-epsilon budget)."""
