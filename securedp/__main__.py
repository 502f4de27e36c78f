"""``python -m securedp`` runs the ``securedp`` command."""

import sys

from securedp.cli.main import main

sys.exit(main())
