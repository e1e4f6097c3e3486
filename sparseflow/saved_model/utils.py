"""``tf.saved_model.utils``."""

# ruff: noqa: F401
from sparseflow._src.training.saved_model.signature_def_utils import build_tensor_info, get_tensor_from_tensor_info
