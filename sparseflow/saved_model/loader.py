"""``tf.saved_model.loader``."""

# ruff: noqa: F401
from sparseflow._src.training.saved_model.loader import load, maybe_saved_model_directory
