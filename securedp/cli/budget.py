"""The command's budget file: :mod:`securedp.accounting.budget_file`, re-exported under its former name.

``Budget`` here is the state of a budget file
(:class:`~securedp.accounting.schema.BudgetState`).
"""

from securedp.accounting.budget_file import FORMAT, BudgetError, BudgetFile
from securedp.accounting.schema import BudgetState as Budget

__all__ = ["FORMAT", "Budget", "BudgetError", "BudgetFile"]
