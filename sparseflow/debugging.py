"""``tf.debugging``: numerics checks and assertions, re-exported from the implementation."""

# ruff: noqa: F401
from sparseflow._src.ops.control_flow_ops import Assert
from sparseflow._src.ops.numerics_ops import check_numerics
from sparseflow._src.ops.numerics_ops import verify_tensor_all_finite as assert_all_finite
