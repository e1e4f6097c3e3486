"""``python -m sparseflow ...`` runs the ``sparseflow`` command line."""

import sys

from sparseflow.cli import main

if __name__ == "__main__":
    sys.exit(main())
