"""``tf.saved_model.builder``."""

# ruff: noqa: F401
from sparseflow._src.training.saved_model.builder import SavedModelBuilder
