"""``tf.dtypes``: the DType class, its constants and the casts.

Example:
    >>> import sparseflow as tf
    >>> tf.dtypes.as_dtype("float32") is tf.dtypes.float32
    True
"""

# ruff: noqa: F401
from sparseflow._src.framework.dtypes import (
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from sparseflow._src.ops.math_arith import complex
from sparseflow._src.ops.math_cast_select import cast, saturate_cast
from sparseflow._src.ops.string_ops import as_string
