"""Writes docs/configs.md from the config schema (sparseflow/_src/models/config_schema.py).

    python tools/gen_config_docs.py
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from sparseflow._src.models.config_schema import markdown  # noqa: E402

if __name__ == "__main__":
    with open(os.path.join(ROOT, "docs", "configs.md"), "w") as f:
        f.write(markdown())
