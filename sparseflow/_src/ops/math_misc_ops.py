"""Assorted math ops of the TF1 namespace: bit shifts (``tf.bitwise``), HistogramFixedWidth,
Cross, Fingerprint, Timestamp and EditDistance, with ``tf.histogram_fixed_width(_bins)``,
``tf.cross``, ``tf.fingerprint``, ``tf.timestamp``, ``tf.edit_distance`` and ``tf.floor_div``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.bitwise.left_shift([1, 2], [3, 1])), sess.run(tf.cross([1, 0, 0], [0, 1, 0])))
    [8 4] [0 0 1]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.sparse_tensor import SparseTensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.ops.array_util import debug_shape
from sparseflow._src.ops.math_cwise import INTEGER_T, apply1, broadcast_shape_fn, op_scope

__all__ = ["left_shift", "right_shift", "histogram_fixed_width", "histogram_fixed_width_bins", "cross",
           "fingerprint", "timestamp", "edit_distance", "floor_div"]

for _op_type in ("LeftShift", "RightShift"):
    register_op(_op_type, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[f"T: {INTEGER_T}"],
                shape_fn=broadcast_shape_fn)


def left_shift(x, y, name=None):
    """``x << y`` element-wise with broadcasting; shifts are clamped to ``[0, bits - 1]``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.bitwise.left_shift(tf.constant([1, -1], tf.int8), tf.constant([2, 7], tf.int8))))
        [   4 -128]
    """
    return apply1("LeftShift", [x, y], name=name)


def right_shift(x, y, name=None):
    """``x >> y`` element-wise (arithmetic for signed types); shifts clamped to ``[0, bits - 1]``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.bitwise.right_shift([-8, 8], [1, 2])))
        [-4  2]
    """
    return apply1("RightShift", [x, y], name=name)


def floor_div(x, y, name=None):
    """``x // y`` rounded toward negative infinity (the FloorDiv op, TF1's ``tf.floor_div``).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.floor_div([-7, 7], 2)))
        [-4  3]
    """
    return apply1("FloorDiv", [x, y], name=name)


# ---------------------------------------------------------------- HistogramFixedWidth
def _histogram_shape(op):
    op.inputs[1].shape.with_rank(1)
    op.inputs[2].shape.with_rank(0)
    nbins = constant_value(op.inputs[2])
    if nbins is not None and int(nbins) <= 0:
        raise ValueError(f"nbins should be a positive number, but got '{int(nbins)}' for '{op.name}' "
                         f"(op: 'HistogramFixedWidth')")
    return [TensorShape([None if nbins is None else int(nbins)])]


register_op("HistogramFixedWidth", inputs=["values: T", "value_range: T", "nbins: int32"], outputs=["out: dtype"],
            attrs=["T: {int32, int64, float, double}", "dtype: {int32, int64} = DT_INT32"],
            shape_fn=_histogram_shape)


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """Counts of ``values`` in ``nbins`` equal bins over ``value_range = [lo, hi]``; values below
    ``lo`` count in the first bin, values at or above ``hi`` in the last.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0], [0.0, 5.0], nbins=5)))
        [2 1 1 0 1]
    """
    with op_scope(name, "histogram_fixed_width", [values, value_range, nbins]) as scope:
        return apply_op("HistogramFixedWidth", [values, value_range, nbins], {"dtype": dtypes.as_dtype(dtype)},
                        name=scope).outputs[0]


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """The bin of each of ``values`` (same shape) among ``nbins`` equal bins over ``value_range``,
    clipped to ``[0, nbins - 1]``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.histogram_fixed_width_bins([-1.0, 0.0, 1.5, 2.0, 5.0], [0.0, 5.0], nbins=5)))
        [0 0 1 2 4]
    """
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.math_arith import truediv
    from sparseflow._src.ops.math_cast_select import cast, clip_by_value
    from sparseflow._src.ops.math_cwise import WRAPPERS

    with op_scope(name, "histogram_fixed_width", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        shape = array_ops.shape(values)
        values = array_ops.reshape(values, [-1])
        value_range = convert_to_tensor(value_range, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        nbins_float = cast(nbins, values.dtype)
        scaled = truediv(values - value_range[0], value_range[1] - value_range[0], name="scaled_values")
        indices = WRAPPERS["floor"](nbins_float * scaled, name="indices")
        indices = cast(clip_by_value(indices, 0, nbins_float - 1), dtypes.as_dtype(dtype))
        return array_ops.reshape(indices, shape)


# ---------------------------------------------------------------- Cross
def _cross_shape(op):
    a, b = (t.shape.with_rank_at_least(1) for t in op.inputs)
    if not a.is_compatible_with(b):
        raise ValueError(f"Dimensions must be equal for the inputs of '{op.name}' (op: 'Cross'): "
                         f"{debug_shape(a)} and {debug_shape(b)}")
    out = a.merge_with(b)
    if out.ndims is not None and out[-1].value is not None and out[-1].value != 3:
        raise ValueError(f"Dimension must be 3 but is {out[-1].value} for '{op.name}' (op: 'Cross') with input "
                         f"shapes: {debug_shape(a)}, {debug_shape(b)}")
    return [out]


register_op("Cross", inputs=["a: T", "b: T"], outputs=["product: T"],
            attrs=["T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"],
            shape_fn=_cross_shape)


def cross(a, b, name=None):
    """The cross product of the 3-vectors in the last dimension of ``a`` and ``b``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.cross([0.0, 1.0, 0.0], [0.0, 0.0, 1.0])))
        [1. 0. 0.]
    """
    return apply1("Cross", [a, b], name=name)


# ---------------------------------------------------------------- Fingerprint, Timestamp
def _fingerprint_shape(op):
    data = op.inputs[0].shape.with_rank_at_least(1)
    op.inputs[1].shape.with_rank(0)
    method = constant_value(op.inputs[1])
    if method is not None:
        method = np.asarray(method, dtype=object).item()
        if (method.decode() if isinstance(method, bytes) else str(method)) != "farmhash64":
            raise ValueError(f"Unsupported fingerprint method: {method!r} for '{op.name}' (op: 'Fingerprint'); "
                             f"the only method is 'farmhash64'")
    return [TensorShape([data[0] if data.ndims else None, 8])]


register_op("Fingerprint", inputs=["data: T", "method: string"], outputs=["fingerprint: uint8"],
            attrs=["T: type"], shape_fn=_fingerprint_shape)
register_op("Timestamp", outputs=["ts: double"], shape_fn=lambda op: [TensorShape([])], is_stateful=True)


def fingerprint(data, method="farmhash64", name=None):
    """An 8-byte fingerprint (uint8 ``[batch, 8]``) of each slice ``data[i]``, FarmHash's
    Fingerprint64 of its bytes (for strings: of each string, then of their fingerprints),
    the same as TensorFlow's on every machine.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.fingerprint(tf.constant([[1, 2], [1, 2]]))).shape)
        (2, 8)
    """
    return apply_op("Fingerprint", [data, method], name=name).outputs[0]


def timestamp(name=None):
    """Seconds since the Unix epoch (float64) when the op runs.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.timestamp()) > 1.5e9)
        True
    """
    return apply_op("Timestamp", [], name=name).outputs[0]


# ---------------------------------------------------------------- EditDistance
def _edit_distance_shape(op):
    hyp_shape = constant_value(op.inputs[2])
    truth_shape = constant_value(op.inputs[5])
    for i in (0, 3):
        op.inputs[i].shape.with_rank(2)
    for i in (1, 4):
        op.inputs[i].shape.with_rank(1)
    if hyp_shape is None or truth_shape is None:
        rank = op.inputs[2].shape.with_rank(1)[0].value
        if rank is None:
            rank = op.inputs[5].shape.with_rank(1)[0].value
        return [unknown_shape() if rank is None else TensorShape([None] * (rank - 1))]
    hyp_shape, truth_shape = np.asarray(hyp_shape).reshape(-1), np.asarray(truth_shape).reshape(-1)
    if hyp_shape.size != truth_shape.size:
        raise ValueError(f"Inputs hypothesis_shape and truth_shape must have the same length for '{op.name}' "
                         f"(op: 'EditDistance'): {hyp_shape.tolist()} and {truth_shape.tolist()}")
    return [TensorShape([max(int(h), int(t)) for h, t in zip(hyp_shape[:-1], truth_shape[:-1])])]


register_op("EditDistance", inputs=["hypothesis_indices: int64", "hypothesis_values: T", "hypothesis_shape: int64",
                                    "truth_indices: int64", "truth_values: T", "truth_shape: int64"],
            outputs=["output: float"], attrs=["normalize: bool = true", "T: type"], shape_fn=_edit_distance_shape)


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """The Levenshtein distance between the sequences of two SparseTensors (their last
    dimension), per position of the other dimensions; ``normalize`` divides by the truth's length.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     h = tf.SparseTensor([[0, 0], [0, 1]], ["a", "b"], [1, 2])
        ...     t = tf.SparseTensor([[0, 0], [0, 1], [0, 2]], ["a", "c", "b"], [1, 3])
        ...     print(sess.run(tf.edit_distance(h, t, normalize=False)))
        [1.]
    """
    for what, value in (("Hypothesis", hypothesis), ("Truth", truth)):
        if not isinstance(value, SparseTensor) and type(value).__name__ != "SparseTensorValue":
            raise TypeError(f"{what} must be a SparseTensor.")
    if not isinstance(hypothesis, SparseTensor):
        hypothesis = SparseTensor.from_value(hypothesis)
    if not isinstance(truth, SparseTensor):
        truth = SparseTensor.from_value(truth)
    inputs = [hypothesis.indices, hypothesis.values, hypothesis.dense_shape, truth.indices, truth.values,
              truth.dense_shape]
    return apply_op("EditDistance", inputs, {"normalize": normalize}, name=name).outputs[0]
