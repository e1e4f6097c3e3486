"""TopKV2, InTopKV2 and ApproxTopK: ``tf.nn.top_k``, ``tf.nn.in_top_k`` and ``tf.approx_top_k`` (exact on
CPU, as TensorFlow's CPU kernel: ``recall_target`` and ``reduction_input_size_override`` change nothing).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     values, indices = tf.nn.top_k([[1.0, 3.0, 3.0, 2.0]], k=2)
    ...     with tf.Session() as sess:
    ...         print(sess.run(values), sess.run(indices))
    [[3. 3.]] [[1 2]]
"""

from __future__ import annotations

import collections

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.ops.nn_util import REAL_T

__all__ = ["top_k", "in_top_k"]

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _top_k_shape(op):
    inp = op.inputs[0].shape.with_rank_at_least(1)
    op.inputs[1].shape.with_rank(0)
    k = constant_value(op.inputs[1])
    if k is not None:
        k = int(k)
        if k < 0:
            raise ValueError(f"Dimension size, given by scalar input {k}, must be non-negative but is {k}")
    if inp.ndims is None:
        return [unknown_shape(), unknown_shape()]
    last = inp.dims[-1].value
    if last is not None and k is not None and last < k:
        raise ValueError(f"input must have last dimension >= k = {k} but is {last}")
    out = inp[:-1].concatenate([k])
    return [out, out]


def _in_top_k_shape(op):
    pred = op.inputs[0].shape.with_rank(2)
    targets = op.inputs[1].shape.with_rank(1)
    op.inputs[2].shape.with_rank(0)
    a, b = pred.dims[0], targets.dims[0]
    if not a.is_compatible_with(b):
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return [TensorShape([a.merge_with(b)])]


register_op("TopKV2", inputs=["input: T", "k: Tk"], outputs=["values: T", "indices: index_type"],
            attrs=["sorted: bool = true", f"T: {REAL_T}", "Tk: {int16, int32, int64} = DT_INT32",
                   "index_type: {int16, int32, int64} = DT_INT32"], shape_fn=_top_k_shape)
register_op("InTopKV2", inputs=["predictions: float", "targets: T", "k: T"], outputs=["precision: bool"],
            attrs=["T: {int32, int64} = DT_INT32"], shape_fn=_in_top_k_shape)


def _approx_top_k_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return [unknown_shape(), unknown_shape()]
    dim = op._attrs["reduction_dimension"]
    if not -shape.ndims <= dim < shape.ndims:
        raise ValueError(f"reduction_dimension {dim} is out of range for an input of rank {shape.ndims}")
    dims = shape.as_list()
    k = op._attrs["k"]
    if dims[dim] is not None and dims[dim] < k:
        raise ValueError(f"input must have last dimension >= k = {k} but was {dims[dim]}")
    dims[dim] = op._attrs["k"] if op._attrs.get("aggregate_to_topk", True) else None
    out = TensorShape(dims)
    return [out, out]


register_op("ApproxTopK", inputs=["input: T"], outputs=["values: T", "indices: int32"],
            attrs=["k: int >= 0", "reduction_dimension: int = -1", "recall_target: float = 0.95",
                   "is_max_k: bool = true", "reduction_input_size_override: int = -1",
                   "aggregate_to_topk: bool = true", "T: {half, bfloat16, float}"], shape_fn=_approx_top_k_shape)
ApproxTopK = collections.namedtuple("ApproxTopK", ["values", "indices"])


def approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95, is_max_k=True,  # noqa: A002
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """The ``k`` largest (``is_max_k``) or smallest entries along ``reduction_dimension`` and their
    indices; computed exactly (equal values: the lower index first), as TensorFlow does on CPU.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.approx_top_k([[3.0, 1.0, 4.0, 1.0, 5.0]], 2)))
        ApproxTopK(values=array([[5., 4.]], dtype=float32), indices=array([[4, 2]], dtype=int32))
    """
    attrs = {"k": int(k), "reduction_dimension": int(reduction_dimension), "recall_target": float(recall_target),
             "is_max_k": bool(is_max_k), "reduction_input_size_override": int(reduction_input_size_override),
             "aggregate_to_topk": bool(aggregate_to_topk)}
    return ApproxTopK(*apply_op("ApproxTopK", [input], attrs, name=name or "ApproxTopK").outputs)


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):  # noqa: A002 - TF's names
    """The ``k`` largest entries of the last dimension and their indices, largest first; equal values
    keep their order (the lower index first)."""
    op = apply_op("TopKV2", [input, k], {"sorted": sorted, "index_type": index_type}, name=name)
    return TopKV2(*op.outputs)


def in_top_k(predictions, targets, k, name=None):
    """Whether ``targets[i]`` is among the top ``k`` classes of ``predictions[i]``.

    Ties count in favour of the target: it is in the top ``k`` when fewer than ``k`` classes have a
    strictly larger prediction. Rows with a non-finite prediction or an out-of-range target give False.
    """
    with name_scope(name, "in_top_k"):
        return apply_op("InTopKV2", [predictions, targets, k], name=name).outputs[0]
