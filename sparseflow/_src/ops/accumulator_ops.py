"""Gradient accumulators (TensorFlow's ``data_flow_ops``): ``tf.ConditionalAccumulator`` and
``tf.SparseConditionalAccumulator``, the aggregation points of synchronous replicated training.

An accumulator collects gradients for its current global step: ``apply_grad(g, local_step)``
adds ``g`` unless it is stale (``local_step`` lower than the accumulator's step: dropped
silently), and ``take_grad(n)`` waits for ``n`` gradients, returns their average (or sum, with
``reduction_type="SUM"``), empties the accumulator and advances its step. The sparse one takes
IndexedSlices and averages each row over the gradients that contain it. Accumulators made with
the same ``shared_name`` on one device are one accumulator (every worker of
``tf.train.SyncReplicasOptimizer`` pushes into the one next to the variable).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    ...     g = tf.placeholder(tf.float32, [2])
    ...     push = acc.apply_grad(g, local_step=0)
    ...     mean = acc.take_grad(2)
    ...     with tf.Session() as sess:
    ...         sess.run(push, {g: [1.0, 2.0]})
    ...         sess.run(push, {g: [3.0, 6.0]})
    ...         print(sess.run(mean))
    [2. 4.]
"""

from __future__ import annotations

import collections

from sparseflow._src.framework import dtypes as _dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.ops import math_ops

__all__ = ["ConditionalAccumulatorBase", "ConditionalAccumulator", "SparseConditionalAccumulator"]

ACCUMULATOR_OP_TYPES = (
    "ResourceConditionalAccumulator", "ResourceAccumulatorApplyGradient", "ResourceAccumulatorTakeGradient",
    "ResourceAccumulatorNumAccumulated", "ResourceAccumulatorSetGlobalStep", "ConditionalAccumulator",
    "AccumulatorApplyGradient", "AccumulatorTakeGradient", "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep",
    "SparseConditionalAccumulator", "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient")

_NUMBER = ("{float, double, int32, uint8, int16, int8, complex64, int64, bfloat16, uint16, complex128, half, "
           "uint32, uint64}")
_ACCUMULATOR_ATTRS = [f"dtype: {_NUMBER}", "shape: shape", "container: string = ''", "shared_name: string = ''",
                      "reduction_type: {'MEAN', 'SUM'} = 'MEAN'"]


def _scalar(op):
    return [TensorShape([])]


def _none(op):
    return []


for _prefix, _handle in (("Resource", "resource"), ("", "Ref(string)")):
    register_op(f"{_prefix}ConditionalAccumulator", outputs=[f"handle: {_handle}"], attrs=_ACCUMULATOR_ATTRS,
                shape_fn=_scalar, is_stateful=True)
    register_op(f"{_prefix}AccumulatorApplyGradient",
                inputs=[f"handle: {_handle}", "local_step: int64", "gradient: dtype"], attrs=[f"dtype: {_NUMBER}"],
                shape_fn=_none, is_stateful=True)
    register_op(f"{_prefix}AccumulatorTakeGradient", inputs=[f"handle: {_handle}", "num_required: int32"],
                outputs=["average: dtype"], attrs=[f"dtype: {_NUMBER}"], shape_fn=lambda op: [unknown_shape()],
                is_stateful=True)
    register_op(f"{_prefix}AccumulatorNumAccumulated", inputs=[f"handle: {_handle}"],
                outputs=["num_accumulated: int32"], shape_fn=_scalar, is_stateful=True)
    register_op(f"{_prefix}AccumulatorSetGlobalStep", inputs=[f"handle: {_handle}", "new_global_step: int64"],
                shape_fn=_none, is_stateful=True)
register_op("SparseConditionalAccumulator", outputs=["handle: Ref(string)"], attrs=_ACCUMULATOR_ATTRS,
            shape_fn=_scalar, is_stateful=True)
register_op("SparseAccumulatorApplyGradient",
            inputs=["handle: Ref(string)", "local_step: int64", "gradient_indices: int64", "gradient_values: dtype",
                    "gradient_shape: int64"], attrs=[f"dtype: {_NUMBER}", "has_known_shape: bool"],
            shape_fn=_none, is_stateful=True)
register_op("SparseAccumulatorTakeGradient", inputs=["handle: Ref(string)", "num_required: int32"],
            outputs=["indices: int64", "values: dtype", "shape: int64"], attrs=[f"dtype: {_NUMBER}"],
            shape_fn=lambda op: [TensorShape([None]), unknown_shape(), TensorShape([None])], is_stateful=True)

SparseAccumulatorTakeGradientOutput = collections.namedtuple("SparseAccumulatorTakeGradient",
                                                             ["indices", "values", "shape"])


def _int64(value):
    return math_ops.cast(convert_to_tensor(value), _dtypes.int64)


class ConditionalAccumulatorBase:
    """What both accumulators share: the handle, dtype, ``num_accumulated`` and ``set_global_step``."""

    _prefix = "Resource"

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = _dtypes.as_dtype(dtype)
        self._shape = TensorShape(shape) if shape is not None else unknown_shape()
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    accumulator_ref = property(lambda self: self._accumulator_ref, doc="The accumulator's handle.")
    name = property(lambda self: self._name, doc="The name of the accumulator op (last path component).")
    dtype = property(lambda self: self._dtype, doc="The dtype of the gradients.")

    def num_accumulated(self, name=None):
        """An int32 scalar: how many gradients are in the accumulator now."""
        return apply_op(f"{self._prefix}AccumulatorNumAccumulated", [self._accumulator_ref],
                        name=name or f"{self._name}_NumAccumulated").outputs[0]

    def set_global_step(self, new_global_step, name=None):
        """The op that sets the accumulator's global step (a warning is logged when it goes down)."""
        return apply_op(f"{self._prefix}AccumulatorSetGlobalStep", [self._accumulator_ref, _int64(new_global_step)],
                        name=name)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Averages dense gradients of ``shape``, applied for its current global step."""

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator", reduction_type="MEAN"):
        attrs = {"dtype": dtype, "shape": TensorShape(shape) if shape is not None else unknown_shape(),
                 "shared_name": shared_name or "", "reduction_type": reduction_type}
        ref = apply_op("ResourceConditionalAccumulator", [], attrs, name=name).outputs[0]
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name=None):
        """The op that adds ``grad`` (computed at ``local_step``) unless it is stale."""
        grad = convert_to_tensor(grad, self._dtype)
        grad.shape.assert_is_compatible_with(self._shape)
        return apply_op("ResourceAccumulatorApplyGradient", [self._accumulator_ref, _int64(local_step), grad],
                        name=name)

    def take_grad(self, num_required, name=None):
        """The average of ``num_required`` gradients (waits for them); empties the accumulator and
        advances its global step. InvalidArgumentError when ``num_required < 1``."""
        out = apply_op("ResourceAccumulatorTakeGradient", [self._accumulator_ref, num_required],
                       {"dtype": self._dtype}, name=name).outputs[0]
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Averages IndexedSlices gradients row by row (each row over the gradients that have it)."""

    _prefix = ""

    def __init__(self, dtype, shape=None, shared_name=None, name="sparse_conditional_accumulator",
                 reduction_type="MEAN"):
        attrs = {"dtype": dtype, "shape": TensorShape(shape) if shape is not None else unknown_shape(),
                 "shared_name": shared_name or "", "reduction_type": reduction_type}
        ref = apply_op("SparseConditionalAccumulator", [], attrs, name=name).outputs[0]
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        """``apply_grad`` of an IndexedSlices."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step=local_step, name=name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """The op that adds the rows ``grad_values`` at ``grad_indices`` unless the gradient is stale;
        ``grad_shape`` (optional) is checked against the accumulator's shape."""
        values = convert_to_tensor(grad_values, self._dtype)
        return apply_op("SparseAccumulatorApplyGradient",
                        [self._accumulator_ref, _int64(local_step), _int64(grad_indices), values,
                         _int64([] if grad_shape is None else grad_shape)],
                        {"has_known_shape": grad_shape is not None}, name=name)

    def take_grad(self, num_required, name=None):
        """(indices, values, shape) of the average of ``num_required`` gradients (waits for them)."""
        op = apply_op("SparseAccumulatorTakeGradient", [self._accumulator_ref, num_required], {"dtype": self._dtype},
                      name=name)
        return SparseAccumulatorTakeGradientOutput(*op.outputs)

    def take_indexed_slices_grad(self, num_required, name=None):
        """``take_grad`` as an IndexedSlices."""
        out = self.take_grad(num_required, name=name)
        return IndexedSlices(indices=out.indices, values=out.values, dense_shape=out.shape)
