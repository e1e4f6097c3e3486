"""``tf.TensorArray`` as immutable tensor lists (TensorFlow's ``TensorList*`` ops).

A TensorArray is functional: its ``flow`` tensor (dtype variant) carries an immutable list value
through the graph, each ``write`` returns a new TensorArray with a new flow, and TensorArrays pass
through ``tf.while_loop`` and ``tf.cond`` as their flows. TensorArrays derived from one another
share their static element shape, refined by every write.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     ta = tf.TensorArray(tf.float32, size=2)
    ...     ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0])
    ...     stacked = ta.stack()
    ...     with tf.Session() as sess:
    ...         print(sess.run(stacked).tolist(), stacked.shape.as_list())
    [[1.0, 2.0], [3.0, 4.0]] [2, 2]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import Dimension, TensorShape, as_shape, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value, constant_value_as_shape

__all__ = ["TensorArray"]

_SCALAR = lambda op: [TensorShape([])]  # noqa: E731 - the handle of a list is a scalar variant


def _elem_shape_input(op, i) -> TensorShape:
    t = op.inputs[i]
    if t.shape.ndims == 0 and constant_value(t) is None:
        raise ValueError(f"Input tensor {t.name} (an element shape) must be rank 1, or if its rank is 0 it "
                         f"must be the constant -1 (an unknown shape)")
    try:
        return constant_value_as_shape(op.inputs[i])
    except ValueError:
        return unknown_shape()


def list_element_shape(handle, depth: int = 64) -> TensorShape:
    """What the graph tells of the element shape of the list ``handle`` (TensorFlow keeps this as the
    handle's shape data): the element_shape a list was made with, merged with the shapes written."""
    op = handle.op
    if depth <= 0:
        return unknown_shape()
    try:
        if op.type == "TensorListFromTensor":
            return op.inputs[0].shape[1:].merge_with(_elem_shape_input(op, 1)) \
                if op.inputs[0].shape.ndims else _elem_shape_input(op, 1)
        if op.type == "TensorListReserve":
            return _elem_shape_input(op, 0)
        if op.type == "TensorListSplit":
            return _elem_shape_input(op, 1)
        if op.type == "TensorListSetItem":
            return list_element_shape(op.inputs[0], depth - 1).merge_with(op.inputs[2].shape)
        if op.type == "TensorListScatterIntoExistingList":
            written = op.inputs[1].shape[1:] if op.inputs[1].shape.ndims else unknown_shape()
            return list_element_shape(op.inputs[0], depth - 1).merge_with(written)
    except ValueError:  # shapes written that contradict each other: known only at run time
        pass
    return unknown_shape()


def _element_shape(op, i) -> TensorShape:
    """The element_shape input ``i`` of a reading op, merged with what its list handle knows."""
    given = _elem_shape_input(op, i)
    try:
        return given.merge_with(list_element_shape(op.inputs[0]))
    except ValueError:
        return given


def _checked_handle(i):
    """The shape fn of an op making a list: a scalar handle, once element_shape input ``i`` checks out."""

    def shape_fn(op):
        _elem_shape_input(op, i)
        return [TensorShape([])]

    return shape_fn


def _stack_shape(op):
    n = op._attrs.get("num_elements", -1)
    return [TensorShape([None if n < 0 else n]).concatenate(_element_shape(op, 1))]


def _gather_shape(op):
    idx = op.inputs[1].shape
    lead = idx[0] if idx.ndims == 1 else Dimension(None)
    return [TensorShape([lead]).concatenate(_element_shape(op, 2))]


def _concat_shape(op):
    elem = _element_shape(op, 1)
    rest = elem[1:] if elem.ndims else unknown_shape()
    return [TensorShape([None]).concatenate(rest), TensorShape([None])]


register_op("TensorListReserve", inputs=["element_shape: shape_type", "num_elements: int32"],
            outputs=["handle: variant"], attrs=["element_dtype: type", "shape_type: {int32, int64}"],
            shape_fn=_SCALAR)
register_op("TensorListFromTensor", inputs=["tensor: element_dtype", "element_shape: shape_type"],
            outputs=["output_handle: variant"], attrs=["element_dtype: type", "shape_type: {int32, int64}"],
            shape_fn=_checked_handle(1))
register_op("TensorListSetItem", inputs=["input_handle: variant", "index: int32", "item: element_dtype"],
            outputs=["output_handle: variant"],
            attrs=["element_dtype: type", "resize_if_index_out_of_bounds: bool = false"], shape_fn=_SCALAR)
register_op("TensorListGetItem", inputs=["input_handle: variant", "index: int32", "element_shape: int32"],
            outputs=["item: element_dtype"], attrs=["element_dtype: type"],
            shape_fn=lambda op: [_element_shape(op, 2)])
register_op("TensorListStack", inputs=["input_handle: variant", "element_shape: int32"],
            outputs=["tensor: element_dtype"], attrs=["element_dtype: type", "num_elements: int = -1"],
            shape_fn=_stack_shape)
register_op("TensorListGather", inputs=["input_handle: variant", "indices: int32", "element_shape: int32"],
            outputs=["values: element_dtype"], attrs=["element_dtype: type"], shape_fn=_gather_shape)
register_op("TensorListScatterIntoExistingList",
            inputs=["input_handle: variant", "tensor: element_dtype", "indices: int32"],
            outputs=["output_handle: variant"], attrs=["element_dtype: type"], shape_fn=_SCALAR)
register_op("TensorListLength", inputs=["input_handle: variant"], outputs=["length: int32"],
            shape_fn=_SCALAR)
register_op("TensorListConcatV2", inputs=["input_handle: variant", "element_shape: shape_type",
                                          "leading_dims: int64"],
            outputs=["tensor: element_dtype", "lengths: int64"],
            attrs=["element_dtype: type", "shape_type: {int32, int64}"], shape_fn=_concat_shape)
register_op("TensorListSplit",
            inputs=["tensor: element_dtype", "element_shape: shape_type", "lengths: int64"],
            outputs=["output_handle: variant"], attrs=["element_dtype: type", "shape_type: {int32, int64}"],
            shape_fn=_SCALAR)


def build_element_shape(shape):
    """A static element shape as the int32 value TensorList ops take (-1 for unknown dims/rank)."""
    if isinstance(shape, Tensor):
        return shape
    shape = as_shape(shape) if shape is not None else unknown_shape()
    if shape.ndims is None:
        return convert_to_tensor(-1, dtype=dtypes.int32)
    return convert_to_tensor(np.array([-1 if d is None else d for d in shape.as_list()], dtype=np.int32),
                             dtype=dtypes.int32)


class TensorArray:
    """A list of tensors of one dtype, written and read by index inside graphs and loops.

    ``size`` is the initial length (``dynamic_size=True`` lets writes grow it). Reading an element
    never written gives zeros when the element shape is fully known. ``clear_after_read`` is
    accepted for compatibility; reads never clear (the list is immutable).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     ta = tf.TensorArray(tf.int32, size=3).unstack([7, 8, 9])
    ...     with tf.Session() as sess:
    ...         print(sess.run(ta.read(1)), sess.run(ta.size()))
    8 3
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None,
                 colocate_with_first_write_call=True, name=None):
        if handle is not None:
            raise ValueError("TensorArray handles do not exist in sparseflow: TensorArrays are lists "
                             "carried by their `flow` tensor. Pass `flow=` instead.")
        if flow is not None and (not isinstance(flow, Tensor) or flow.dtype.base_dtype != dtypes.variant):
            raise TypeError("flow must be a variant tensor")
        if flow is None and size is None:
            raise ValueError("Size must be provided if flow is not provided")
        if flow is not None and size is not None:
            raise ValueError("Cannot provide both a flow and size at the same time")
        if flow is not None and element_shape is not None:
            raise ValueError("Cannot provide both a flow and element_shape at the same time")
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        self._size = size
        self._infer_shape = infer_shape
        self._element_shape = [as_shape(element_shape) if element_shape is not None else unknown_shape()]
        if flow is None:
            g = get_default_graph()
            with g.name_scope(name or tensor_array_name or "TensorArrayV2") as scope:
                self._flow = apply_op("TensorListReserve", [build_element_shape(element_shape), size],
                                      {"element_dtype": self._dtype}, name=scope).outputs[0]
        else:
            self._flow = flow

    # ------------------------------------------------------------------ properties
    flow = property(lambda self: self._flow)
    dtype = property(lambda self: self._dtype)
    dynamic_size = property(lambda self: self._dynamic_size)
    handle = property(lambda self: None)

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape[0]

    def _with_flow(self, flow) -> TensorArray:
        """A TensorArray over ``flow`` that shares this one's settings and static element shape."""
        ta = TensorArray.__new__(TensorArray)
        ta._dtype, ta._dynamic_size, ta._size = self._dtype, self._dynamic_size, self._size
        ta._infer_shape, ta._element_shape, ta._flow = self._infer_shape, self._element_shape, flow
        return ta

    def _check_element_shape(self, shape):
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self.element_shape} ")
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    def _value(self, value):
        value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
        if value.dtype.base_dtype != self._dtype:
            raise TypeError(f"TensorArray dtype is {self._dtype.name} but Op is trying to write dtype "
                            f"{value.dtype.base_dtype.name}.")
        return value

    @staticmethod
    def _scope(name, default):
        return get_default_graph().name_scope(name or default)

    # ------------------------------------------------------------------ reading
    def read(self, index, name=None) -> Tensor:
        """Element ``index``."""
        with self._scope(name, "TensorArrayV2Read"):
            return apply_op("TensorListGetItem", [self._flow, index, build_element_shape(self.element_shape)],
                            {"element_dtype": self._dtype}).outputs[0]

    def stack(self, name=None) -> Tensor:
        """All elements stacked along a new first dimension."""
        with self._scope(name, "TensorArrayV2Stack"):
            n = -1
            if not self._dynamic_size and self._size is not None:
                known = constant_value(convert_to_tensor(self._size, dtype=dtypes.int32))
                n = -1 if known is None else int(known)
            return apply_op("TensorListStack", [self._flow, build_element_shape(self.element_shape)],
                            {"element_dtype": self._dtype, "num_elements": n}).outputs[0]

    def gather(self, indices, name=None) -> Tensor:
        """The elements at ``indices``, stacked."""
        with self._scope(name, "TensorArrayV2Gather"):
            shape = build_element_shape(self.element_shape)
            return apply_op("TensorListGather", [self._flow, indices, shape],
                            {"element_dtype": self._dtype}).outputs[0]

    def concat(self, name=None) -> Tensor:
        """All elements concatenated along their first dimension."""
        shape = self.element_shape
        elem = TensorShape([None]).concatenate(shape[1:]) if shape.ndims else unknown_shape()
        with self._scope(name, "TensorArrayV2Concat"):
            return apply_op("TensorListConcatV2", [self._flow, build_element_shape(elem),
                                                   convert_to_tensor(0, dtype=dtypes.int64)],
                            {"element_dtype": self._dtype}).outputs[0]

    def size(self, name=None) -> Tensor:
        """The number of elements (the static ``size`` unless ``dynamic_size``)."""
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtype=dtypes.int32)
        with self._scope(name, "TensorArrayV2Size"):
            return apply_op("TensorListLength", [self._flow]).outputs[0]

    # ------------------------------------------------------------------ writing (returns a new TensorArray)
    def write(self, index, value, name=None) -> TensorArray:
        """A TensorArray with element ``index`` set to ``value``."""
        with self._scope(name, "TensorArrayV2Write"):
            value = self._value(value)
            self._check_element_shape(value.shape)
            flow = apply_op("TensorListSetItem", [self._flow, index, value],
                            {"resize_if_index_out_of_bounds": self._dynamic_size}).outputs[0]
            return self._with_flow(flow)

    def unstack(self, value, name=None) -> TensorArray:
        """A TensorArray whose elements are the rows of ``value``."""
        with self._scope(name, "TensorArrayUnstack"):
            value = self._value(value)
            self._check_element_shape(value.shape[1:])
            flow = apply_op("TensorListFromTensor", [value, build_element_shape(value.shape[1:])]).outputs[0]
            return self._with_flow(flow)

    def scatter(self, indices, value, name=None) -> TensorArray:
        """A TensorArray with elements ``indices[i]`` set to rows ``value[i]``."""
        with self._scope(name, "TensorArrayScatter"):
            value = self._value(value)
            self._check_element_shape(value.shape[1:])
            flow = apply_op("TensorListScatterIntoExistingList", [self._flow, value, indices]).outputs[0]
            return self._with_flow(flow)

    def split(self, value, lengths, name=None) -> TensorArray:
        """A TensorArray whose element ``i`` is the next ``lengths[i]`` rows of ``value``."""
        with self._scope(name, "TensorArraySplit"):
            value = self._value(value)
            lengths = convert_to_tensor(lengths, dtype=dtypes.int64) if not isinstance(lengths, Tensor) \
                else lengths
            if lengths.dtype.base_dtype != dtypes.int64:
                from sparseflow._src.ops import math_ops

                lengths = math_ops.cast(lengths, dtypes.int64)
            known = constant_value(lengths)
            same = known is not None and known.size and known.max() == known.min()
            if value.shape.ndims is not None and same:
                self._check_element_shape(TensorShape([int(known[0])]).concatenate(value.shape[1:]))
            elem = TensorShape([None]).concatenate(value.shape[1:]) if value.shape.ndims else unknown_shape()
            flow = apply_op("TensorListSplit", [value, build_element_shape(elem), lengths]).outputs[0]
            return self._with_flow(flow)

    def identity(self) -> TensorArray:
        """A TensorArray over an Identity of the flow (e.g. to add control dependencies)."""
        return self._with_flow(apply_op("Identity", [self._flow]).outputs[0])

    def close(self, name=None):
        """A NoOp: lists need no closing."""
        return apply_op("NoOp", [], name=name or "TensorArrayV2Close")

    def __repr__(self):
        return f"<tf.TensorArray dtype={self._dtype.name} flow={self._flow.name}>"
