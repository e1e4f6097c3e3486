"""Numerics checks: ``check_numerics`` (the CheckNumerics op) and ``verify_tensor_all_finite``.

``check_numerics(x, message)`` passes ``x`` through and fails the run with InvalidArgumentError
when ``x`` holds a NaN or an infinity; its gradient checks the gradient the same way.

Example:
    >>> import numpy as np
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None])
    ...     y = tf.debugging.check_numerics(x, "input x")
    ...     with tf.Session() as sess:
    ...         print(sess.run(y, {x: [1.0, 2.0]}))
    ...         try:
    ...             sess.run(y, {x: [1.0, np.nan]})
    ...         except tf.errors.InvalidArgumentError as e:
    ...             print(e.message.splitlines()[0])
    [1. 2.]
    input x : Tensor had NaN values
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.api_graph import control_dependencies
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor

__all__ = ["check_numerics", "verify_tensor_all_finite", "add_check_numerics_ops"]

register_op("CheckNumerics", inputs=["tensor: T"], outputs=["output: T"],
            attrs=["T: {bfloat16, half, float, double}", "message: string"],
            shape_fn=lambda op: [op.inputs[0].shape], is_stateful=True)


def check_numerics(tensor, message, name=None):
    """``tensor``, checked at run time to hold no NaN and no infinity (else InvalidArgumentError
    starting with ``message``)."""
    tensor = convert_to_tensor(tensor)
    if not tensor.dtype.base_dtype.is_floating:
        raise TypeError(f"check_numerics needs a floating-point tensor, got {tensor.dtype.base_dtype.name} "
                        f"({tensor.name}).")
    return apply_op("CheckNumerics", [tensor], {"message": str(message)}, name=name or "CheckNumerics").outputs[0]


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """``t`` (or ``x``), checked to hold only finite values (TensorFlow's ``verify_tensor_all_finite``
    / ``debugging.assert_all_finite``)."""
    t = x if t is None else t
    msg = message if msg is None else msg
    t = convert_to_tensor(t)
    if t.dtype.base_dtype == dtypes.bfloat16 or t.dtype.base_dtype.is_floating:
        return check_numerics(t, msg or "", name=name or "VerifyFinite")
    raise TypeError(f"verify_tensor_all_finite needs a floating-point tensor, got {t.dtype.base_dtype.name}.")


def add_check_numerics_ops():
    """A group of CheckNumerics ops, one per float16/32/64 output of every op in the default graph
    (message ``<op name>:<output index>``), chained so that they run one after another. Run it with
    the fetches to check every intermediate value.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.placeholder(tf.float32, [None], name="x")
    ...     y = tf.log(x, name="log")
    ...     check = tf.add_check_numerics_ops()
    ...     try:
    ...         sess.run([y, check], {x: [-1.0]})
    ...     except tf.errors.InvalidArgumentError as e:
    ...         print(e.message.splitlines()[0])
    log:0 : Tensor had NaN values
    """
    from sparseflow._src.ops import core_ops

    checks = []
    for op in get_default_graph().get_operations():
        for output in op.outputs:
            if output.dtype.base_dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
                with control_dependencies(checks):
                    checks = [check_numerics(output, message=f"{op.name}:{output.value_index}")]
    return core_ops.group(*checks)
