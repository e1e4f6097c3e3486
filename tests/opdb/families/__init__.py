"""One module per op family, each exporting ``ENTRIES: list[OpEntry]``."""

import importlib
import pathlib

FAMILIES = sorted(p.stem for p in pathlib.Path(__file__).parent.glob("*.py") if p.stem != "__init__")


def family_entries(family: str) -> list:
    return importlib.import_module(f"tests.opdb.families.{family}").ENTRIES
