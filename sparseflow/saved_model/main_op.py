"""``tf.saved_model.main_op``."""

# ruff: noqa: F401
from sparseflow._src.training.saved_model.main_op import main_op, main_op_with_restore
