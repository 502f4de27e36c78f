"""Layer 4: privacy budgets, sessions and conversions between privacy definitions."""
