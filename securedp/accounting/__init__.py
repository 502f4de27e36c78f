"""Privacy budgets, sessions and conversions between privacy definitions."""
