"""``python -m sparseflow ...`` runs the ``sparseflow`` command line."""

import sys

from sparseflow.cli import main

sys.exit(main())
