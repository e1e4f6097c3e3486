"""sparseflow's version (one place; ``sparseflow.__version__`` re-exports it)."""

__version__ = "0.1.0"
