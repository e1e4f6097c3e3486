"""``tensorflow.python.client``'s public part: ``timeline`` (Chrome traces of traced steps)."""

from sparseflow.client import timeline  # noqa: F401
