"""``tf.saved_model.tag_constants``."""

# ruff: noqa: F401
from sparseflow._src.training.saved_model.constants import EVAL, GPU, SERVING, TPU, TRAINING
