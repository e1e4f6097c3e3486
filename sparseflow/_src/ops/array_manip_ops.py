"""Array manipulation ops TF1 programs reach for: Roll, the TensorScatter* family, UnravelIndex,
Bitcast, GuaranteeConst and ParallelConcat, with ``tf.roll``, ``tf.tensor_scatter_nd_*`` (and the
v1 ``tf.tensor_scatter_*`` aliases), ``tf.unravel_index``, ``tf.bitcast``, ``tf.guarantee_const``
and ``tf.parallel_stack``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([1, 2, 3, 4])
    ...     print(sess.run(tf.roll(x, 1, 0)), sess.run(tf.tensor_scatter_nd_add(x, [[0], [0]], [10, 5])))
    [4 1 2 3] [16  2  3  4]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.ops.array_util import attrs, debug_shape
from sparseflow._src.ops.math_cwise import op_scope

__all__ = ["roll", "tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
           "tensor_scatter_nd_min", "tensor_scatter_nd_max", "tensor_scatter_update", "tensor_scatter_add",
           "tensor_scatter_sub", "unravel_index", "bitcast", "guarantee_const", "parallel_stack"]

_INT_T = "{int32, int64}"


# ---------------------------------------------------------------- Roll
def _roll_shape(op):
    x = op.inputs[0].shape.with_rank_at_least(1)
    shift = op.inputs[1].shape.with_rank_at_most(1)
    axis = op.inputs[2].shape.with_rank_at_most(1)
    ns = shift.num_elements() if shift.is_fully_defined() else None
    na = axis.num_elements() if axis.is_fully_defined() else None
    if ns is not None and na is not None and ns != na:
        raise ValueError(f"shift and axis must have the same size, but are {ns} and {na} for '{op.name}' "
                         f"(op: 'Roll') with input shapes: {debug_shape(x)}, {debug_shape(shift)}, "
                         f"{debug_shape(axis)}")
    return [x]


register_op("Roll", inputs=["input: T", "shift: Tshift", "axis: Taxis"], outputs=["output: T"],
            attrs=["T: type", f"Tshift: {_INT_T}", f"Taxis: {_INT_T}"], shape_fn=_roll_shape)


def roll(input, shift, axis, name=None):  # noqa: A002 - TensorFlow's argument name
    """``input`` with the elements of each ``axis`` shifted by ``shift`` (wrapping around); a
    negative shift moves toward lower indices, and shifts of a repeated axis add up.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.roll([[1, 2, 3], [4, 5, 6]], shift=[1, -1], axis=[0, 1])).tolist())
        [[5, 6, 4], [2, 3, 1]]
    """
    return apply_op("Roll", [input, shift, axis], name=name).outputs[0]


# ---------------------------------------------------------------- TensorScatter*
def _tensor_scatter_shape(op):
    tensor = op.inputs[0].shape
    indices = op.inputs[1].shape.with_rank_at_least(1)
    updates = op.inputs[2].shape
    if tensor.ndims is None or indices.ndims is None or updates.ndims is None or indices[-1].value is None:
        return [tensor]
    ix = indices[-1].value
    if ix > tensor.ndims:  # TensorFlow's kernel reports it
        return [tensor]
    expected = indices[:-1].concatenate(tensor[ix:])
    if not expected.is_compatible_with(updates):
        raise ValueError(f"Dimensions of updates must be indices.shape[:-1] + tensor.shape[indices.shape[-1]:] = "
                         f"{debug_shape(expected)}, but updates have shape {debug_shape(updates)} for '{op.name}' "
                         f"(op: '{op.type}') with tensor shape {debug_shape(tensor)} and indices shape "
                         f"{debug_shape(indices)}")
    return [tensor]


_SCATTER_INDEX_T = {"TensorScatterUpdate": "{int16, int32, int64, uint16}"}
for _op_type in ("TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "TensorScatterMin",
                 "TensorScatterMax"):
    register_op(_op_type, inputs=["tensor: T", "indices: Tindices", "updates: T"], outputs=["output: T"],
                attrs=["T: type", f"Tindices: {_SCATTER_INDEX_T.get(_op_type, _INT_T)}",
                       "bad_indices_policy: string = ''"], shape_fn=_tensor_scatter_shape)


def _tensor_scatter(op_type, tensor, indices, updates, name):
    return apply_op(op_type, [tensor, indices, updates], name=name).outputs[0]


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with the slices at ``indices`` (index tuples in the last dimension)
    replaced by ``updates``; out-of-range indices fail with InvalidArgumentError.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tensor_scatter_nd_update([1, 2, 3], [[2]], [9])))
        [1 2 9]
    """
    return _tensor_scatter("TensorScatterUpdate", tensor, indices, updates, name)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with ``updates`` added at ``indices`` (duplicates add up).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tensor_scatter_nd_add([1, 2, 3], [[0], [0]], [5, 5])))
        [11  2  3]
    """
    return _tensor_scatter("TensorScatterAdd", tensor, indices, updates, name)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with ``updates`` subtracted at ``indices``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tensor_scatter_nd_sub([1, 2, 3], [[1]], [5])))
        [ 1 -3  3]
    """
    return _tensor_scatter("TensorScatterSub", tensor, indices, updates, name)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """A copy of ``tensor`` holding the minimum of each element and the ``updates`` at its index.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tensor_scatter_nd_min([1, 2, 3], [[1], [2]], [0, 7])))
        [1 0 3]
    """
    return _tensor_scatter("TensorScatterMin", tensor, indices, updates, name)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """A copy of ``tensor`` holding the maximum of each element and the ``updates`` at its index.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tensor_scatter_nd_max([1, 2, 3], [[1], [2]], [0, 7])))
        [1 2 7]
    """
    return _tensor_scatter("TensorScatterMax", tensor, indices, updates, name)


tensor_scatter_update = tensor_scatter_nd_update  # TF1's names
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub


# ---------------------------------------------------------------- UnravelIndex
def _unravel_index_shape(op):
    indices = op.inputs[0].shape  # a rank above 1 is reported by the kernel, as in TensorFlow
    dims = op.inputs[1].shape.with_rank(1)
    if indices.ndims == 0:
        return [TensorShape([dims[0]])]
    if indices.ndims == 1:
        return [TensorShape([dims[0], indices[0]])]
    return [unknown_shape()]


register_op("UnravelIndex", inputs=["indices: Tidx", "dims: Tidx"], outputs=["output: Tidx"],
            attrs=[f"Tidx: {_INT_T} = DT_INT32"], shape_fn=_unravel_index_shape)


def unravel_index(indices, dims, name=None):
    """The coordinates in an array of shape ``dims`` of each flat (row-major) index: shape
    ``[len(dims)]`` for a scalar index, ``[len(dims), n]`` for ``n`` indices.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.unravel_index([5, 7], [3, 3])).tolist())
        [[1, 2], [2, 1]]
    """
    return apply_op("UnravelIndex", [indices, dims], name=name).outputs[0]


# ---------------------------------------------------------------- Bitcast
_BITCAST_T = ("{bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, int8, int16, "
              "complex64, complex128}")  # TensorFlow also lists the quantized types


def _bitcast_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return [unknown_shape()]
    src, dst = op.inputs[0].dtype.base_dtype.size, op._attrs["type"].size
    if src == dst:
        return [shape]
    if src > dst:
        if src % dst:
            raise ValueError(f"Cannot bitcast from {op.inputs[0].dtype.name} to {op._attrs['type'].name}: "
                             f"the input's element size ({src}) is not a multiple of the output's ({dst})")
        return [shape.concatenate([src // dst])]
    if dst % src:
        raise ValueError(f"Cannot bitcast from {op.inputs[0].dtype.name} to {op._attrs['type'].name}: the "
                         f"output's element size ({dst}) is not a multiple of the input's ({src})")
    shape = shape.with_rank_at_least(1)
    last = shape[-1].value
    if last is not None and last != dst // src:
        raise ValueError(f"Cannot bitcast from {op.inputs[0].dtype.name} to {op._attrs['type'].name}: the last "
                         f"dimension must be {dst // src}, not {last} (input shape {debug_shape(shape)})")
    return [shape[:-1]]


register_op("Bitcast", inputs=["input: T"], outputs=["output: type"], attrs=[f"T: {_BITCAST_T}",
                                                                           f"type: {_BITCAST_T}"],
            shape_fn=_bitcast_shape)


def bitcast(input, type, name=None):  # noqa: A002 - TensorFlow's argument names
    """The bytes of ``input`` read as ``type``, without copying values: a wider input gains a
    last dimension of the size ratio, a narrower one loses a last dimension of that size.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.bitcast(tf.constant([1.0], tf.float32), tf.int32)))
        [1065353216]
    """
    return apply_op("Bitcast", [input], {"type": dtypes.as_dtype(type)}, name=name).outputs[0]


# ---------------------------------------------------------------- GuaranteeConst, ParallelConcat
register_op("GuaranteeConst", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=lambda op: [op.inputs[0].shape], is_stateful=True)


def guarantee_const(input, name=None):  # noqa: A002
    """``input`` unchanged, promising that it does not change between runs (TensorFlow's hint
    to its constant folding; sparseflow folds what is constant on its own).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.guarantee_const([1, 2])))
        [1 2]
    """
    return apply_op("GuaranteeConst", [input], name=name).outputs[0]


def _parallel_concat_shape(op):
    out = TensorShape(op._attrs["shape"])
    if out.ndims is None:
        return [out]
    row = TensorShape([1]).concatenate(out[1:])
    for i, t in enumerate(op.inputs):
        if not t.shape.is_fully_defined():
            raise ValueError(f"Input {i} of '{op.name}' (op: 'ParallelConcat') has shape {t.shape}: ParallelConcat "
                             f"needs inputs of fully known shape")
        if not t.shape.is_compatible_with(row):
            raise ValueError(f"Input {i} of '{op.name}' (op: 'ParallelConcat') has shape {debug_shape(t.shape)}, "
                             f"which is not compatible with {debug_shape(row)} (one row of the output shape "
                             f"{debug_shape(out)})")
    return [out]


register_op("ParallelConcat", inputs=["values: N * T"], outputs=["output: T"],
            attrs=attrs("N: int >= 1", "T: type", "shape: shape"), shape_fn=_parallel_concat_shape)


def parallel_stack(values, name="parallel_stack"):
    """Stacks same-shaped tensors of fully known shape along a new first axis (ParallelConcat:
    unlike ``tf.stack`` it has no gradient).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.parallel_stack([[1, 2], [3, 4]])).tolist())
        [[1, 2], [3, 4]]
    """
    from sparseflow._src.ops.array_shape_ops import expand_dims

    with op_scope(name, "parallel_stack", values) as scope:
        first = convert_to_tensor(values[0])
        out_shape = TensorShape([len(values)]).concatenate(first.shape)
        if not out_shape.is_fully_defined():
            raise ValueError(f"tf.parallel_stack needs inputs of fully known shape, got {first.shape}: use "
                             f"tf.stack instead")
        rows = [expand_dims(v, 0) for v in values]
        return apply_op("ParallelConcat", [rows], {"shape": out_shape}, name=scope).outputs[0]

