"""Building the documentation site as CI builds it (``mkdocs build --strict``), warnings shown.

The build is run without ``--quiet``: ``--quiet`` raises MkDocs' log level to errors, so its warnings
never reach the counter that ``--strict`` aborts on, and a site with broken references then builds
"successfully". A :class:`Built` keeps the exit status *and* every warning line, so that a check can
fail on either and neither can hide the other.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Built:
    """A finished build: the site's directory, MkDocs' exit status and what it wrote to its output streams."""

    site: Path
    status: int
    output: str

    @property
    def warnings(self) -> list[str]:
        """Every line of the build's output that MkDocs logged as a warning or an error."""
        return [line for line in self.output.splitlines() if line.startswith(("WARNING", "ERROR"))]


def build_site(config: Path, site: Path) -> Built:
    """``mkdocs build --strict`` of ``config`` into ``site``, warnings shown (never ``--quiet``)."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        cwd=config.parent, capture_output=True, text=True, timeout=300, check=False,
    )
    return Built(site, done.returncode, done.stdout + done.stderr)
