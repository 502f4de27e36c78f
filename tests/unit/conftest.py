"""The unit tests mirror the package, one folder per package; helpers shared across them live here."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _salted_rule, the tests' reference rule
