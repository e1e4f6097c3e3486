"""``tf.debugging``: assertions, numerics checks and printing, re-exported from the implementation."""

# ruff: noqa: F401, F403
from sparseflow._src.ops.check_ops import *
from sparseflow._src.ops.control_flow_ops import Assert
from sparseflow._src.ops.math_ops import is_finite, is_inf, is_nan
from sparseflow._src.ops.numerics_ops import check_numerics
from sparseflow._src.ops.numerics_ops import verify_tensor_all_finite as assert_all_finite
