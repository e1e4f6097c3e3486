"""Shape ops: Reshape, Shape, ShapeN, Size, Rank, ExpandDims, Squeeze, Transpose,
InvertPermutation, BroadcastTo, BroadcastArgs, and the static broadcast helper.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 6])
    ...     y = tf.reshape(x, [-1, 2, 3])
    ...     t = tf.transpose(y)
    >>> y.shape.as_list(), t.shape.as_list(), t.op.type
    ([None, 2, 3], [3, 2, None], 'Transpose')
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from sparseflow._src.ops.array_util import (
    attrs,
    constant_value,
    constant_value_as_shape,
    debug_shape,
    folder,
    input_values,
)
from sparseflow._src.ops.constant_op import constant

__all__ = [
    "reshape", "shape", "shape_n", "size", "rank", "expand_dims", "squeeze", "transpose", "matrix_transpose",
    "invert_permutation", "broadcast_to", "broadcast_dynamic_shape", "broadcast_static_shape", "ensure_shape",
]


# ---------------------------------------------------------------------------- Reshape
def _known_product(dims):
    """(product of known dims, index of the single unknown dim or -1, more than one unknown)."""
    product, unknown_idx = 1, -1
    for i, d in enumerate(dims):
        if d is None:
            if unknown_idx >= 0:
                return product, unknown_idx, True
            unknown_idx = i
        else:
            product *= d
    return product, unknown_idx, False


def _reshape_shape(op):
    sizes = constant_value(op.inputs[1])
    if sizes is not None:
        for i, d in enumerate(np.reshape(sizes, -1).tolist()):
            if d < -1:
                raise ValueError(f"Size {i} of the shape of Reshape must be non-negative or -1, not {d}")
    out = constant_value_as_shape(op.inputs[1])
    in_shape = op.inputs[0].shape
    if out.ndims is None or in_shape.ndims is None:
        return [out]
    out_dims = out.as_list()
    known_out, out_unknown, many_out = _known_product(out_dims)
    known_in, in_unknown, many_in = _known_product(in_shape.as_list())
    if many_out or many_in:
        return [out]
    if in_unknown < 0 and out_unknown < 0:
        if known_in != known_out:
            raise ValueError(f"Cannot reshape a tensor with {known_in} elements to shape {debug_shape(out)} "
                             f"({known_out} elements)")
    elif in_unknown < 0 and out_unknown >= 0 and known_out > 0:
        if known_in % known_out:
            raise ValueError(f"Dimension size must be evenly divisible by {known_out} but is {known_in}")
        out_dims[out_unknown] = known_in // known_out
    elif in_unknown >= 0 and out_unknown < 0 and known_in != 0:
        if known_out % known_in:
            raise ValueError(f"Dimension size must be evenly divisible by {known_in} but is {known_out}")
    return [TensorShape(out_dims)]


register_op("Reshape", inputs=["tensor: T", "shape: Tshape"], outputs=["output: T"],
            attrs=["T: type", "Tshape: {int32, int64} = DT_INT32"], shape_fn=_reshape_shape)


def reshape(tensor, shape, name=None):
    """``tensor`` with the same elements in ``shape`` (one -1 is inferred).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.reshape([1, 2, 3, 4], [2, -1])).tolist()
    [[1, 2], [3, 4]]
    """
    return apply_op("Reshape", [tensor, shape], name=name).outputs[0]


@folder("Reshape")
def _fold_reshape(op):
    vals = input_values(op)
    return None if vals is None else np.reshape(vals[0], [int(d) for d in np.reshape(vals[1], -1)])


# ---------------------------------------------------------------------------- Shape, Size, Rank
def _shape_of_shape(op):
    return [TensorShape([t.shape.ndims]) for t in op.inputs]


register_op("Shape", inputs=["input: T"], outputs=["output: out_type"],
            attrs=["T: type", "out_type: {int32, int64} = DT_INT32"], shape_fn=_shape_of_shape)
register_op("ShapeN", inputs=["input: N * T"], outputs=["output: N * out_type"],
            attrs=["N: int", "T: type", "out_type: {int32, int64} = DT_INT32"], shape_fn=_shape_of_shape)
register_op("Size", inputs=["input: T"], outputs=["output: out_type"],
            attrs=["T: type", "out_type: {int32, int64} = DT_INT32"], shape_fn=lambda op: [TensorShape([])])
register_op("Rank", inputs=["input: T"], outputs=["output: int32"], attrs=["T: type"],
            shape_fn=lambda op: [TensorShape([])])


def _is_sparse(x):
    return hasattr(x, "_is_sparse_tensor") or type(x).__name__ == "SparseTensorValue"


def _cast(x, dtype):
    x = convert_to_tensor(x)
    if x.dtype.base_dtype == dtype:
        return x
    return apply_op("Cast", [x], {"DstT": dtype}).outputs[0]


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002 - TF's argument name
    """The shape of ``input`` as a 1-D tensor (a constant when it is fully known statically).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     tf.shape(tf.zeros([2, 3])).op.type, tf.shape(tf.placeholder(tf.float32)).op.type
    ('Const', 'Shape')
    """
    out_type = dtypes.as_dtype(out_type)
    g = get_default_graph()
    with g.name_scope(name or "Shape") as scope:
        if _is_sparse(input):
            from sparseflow._src.framework.sparse_tensor import SparseTensor

            return apply_op("Cast", [SparseTensor.from_value(input).dense_shape], {"DstT": out_type},
                            name=scope).outputs[0]
        input = convert_to_tensor(input)
        if input.shape.is_fully_defined():
            return constant(input.shape.as_list(), out_type, name=scope)
        return apply_op("Shape", [input], {"out_type": out_type}, name=scope).outputs[0]


def shape_n(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shapes of the tensors in ``input``, one 1-D tensor each."""
    return apply_op("ShapeN", [list(input)], {"out_type": out_type}, name=name or "ShapeN").outputs


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    """The number of elements of ``input`` as a scalar tensor.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     int(s.run(tf.size(tf.placeholder(tf.float32, [None, 2])), {'Placeholder:0': [[1, 2]]}))
    2
    """
    out_type = dtypes.as_dtype(out_type)
    g = get_default_graph()
    with g.name_scope(name or "Size") as scope:
        if _is_sparse(input):
            from sparseflow._src.framework.sparse_tensor import SparseTensor

            dense_shape = _cast(SparseTensor.from_value(input).dense_shape, out_type)
            return apply_op("Prod", [dense_shape, 0], name=scope).outputs[0]
        input = convert_to_tensor(input)
        s = input.shape
        if s.is_fully_defined():
            return constant(s.num_elements(), out_type, name=scope)
        if s.ndims is not None and any(d == 0 for d in s.as_list()):
            return constant(0, out_type, name=scope)
        return apply_op("Size", [input], {"out_type": out_type}, name=scope).outputs[0]


def rank(input, name=None):  # noqa: A002
    """The number of dimensions of ``input`` as a scalar int32 tensor."""
    g = get_default_graph()
    with g.name_scope(name or "Rank") as scope:
        if _is_sparse(input):
            from sparseflow._src.framework.sparse_tensor import SparseTensor

            return apply_op("Size", [SparseTensor.from_value(input).dense_shape], name=scope).outputs[0]
        input = convert_to_tensor(input)
        if input.shape.ndims is not None:
            return constant(input.shape.ndims, dtypes.int32, name=scope)
        return apply_op("Rank", [input], name=scope).outputs[0]


# ---------------------------------------------------------------------------- ExpandDims, Squeeze
def _expand_dims_shape(op):
    dim = constant_value(op.inputs[1])
    if dim is not None and np.size(dim) != 1:
        raise ValueError("'dim' input must be a tensor with a single value")
    in_shape = op.inputs[0].shape
    if dim is None or in_shape.ndims is None:
        return [unknown_shape()]
    dim = int(np.reshape(dim, -1)[0])
    r = in_shape.ndims
    if dim < -r - 1 or dim > r:
        raise ValueError(f"dim {dim} not in the interval [{-r - 1}, {r}].")
    if dim < 0:
        dim += r + 1
    dims = in_shape.as_list()
    return [TensorShape(dims[:dim] + [1] + dims[dim:])]


register_op("ExpandDims", inputs=["input: T", "dim: Tdim"], outputs=["output: T"],
            attrs=["T: type", "Tdim: {int32, int64} = DT_INT32"], shape_fn=_expand_dims_shape)


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    """``input`` with a dimension of size 1 inserted at ``axis``.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     tf.expand_dims([1, 2], 0).shape.as_list()
    [1, 2]
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op("ExpandDims", [input, axis], name=name or "ExpandDims").outputs[0]


@folder("ExpandDims")
def _fold_expand_dims(op):
    vals = input_values(op)
    return None if vals is None else np.expand_dims(vals[0], int(np.reshape(vals[1], -1)[0]))


def _squeeze_shape(op):
    in_shape = op.inputs[0].shape
    if in_shape.ndims is None:
        return [unknown_shape()]
    r = in_shape.ndims
    wanted = []
    for i, d in enumerate(op._attrs["squeeze_dims"]):
        if d < -r or d >= r:
            raise ValueError(f"squeeze_dims[{i}] not in [{-r},{r}).")
        wanted.append(d + r if d < 0 else d)
    out = []
    for i, d in enumerate(in_shape.as_list()):
        explicit = i in wanted
        if d is None:
            if explicit:
                continue
            if not wanted:
                return [unknown_shape()]
        elif d == 1:
            if explicit or not wanted:
                continue
        elif explicit:
            raise ValueError(f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
        out.append(d)
    return [TensorShape(out)]


register_op("Squeeze", inputs=["input: T"], outputs=["output: T"],
            attrs=attrs("T: type", "squeeze_dims: list(int) >= 0 = []"), shape_fn=_squeeze_shape)


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    """``input`` without its dimensions of size 1 (only those in ``axis`` if given).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     tf.squeeze(tf.zeros([1, 3, 1]), axis=[2]).shape.as_list()
    [1, 3]
    """
    if axis is not None and squeeze_dims is not None:
        raise ValueError("Cannot specify both 'axis' and 'squeeze_dims'")
    axis = squeeze_dims if axis is None else axis
    if axis is None:
        axis = []
    elif np.isscalar(axis):
        axis = [axis]
    return apply_op("Squeeze", [input], {"squeeze_dims": [int(a) for a in axis]},
                    name=name or "Squeeze").outputs[0]


@folder("Squeeze")
def _fold_squeeze(op):
    v = constant_value(op.inputs[0])
    if v is None:
        return None
    dims = op._attrs["squeeze_dims"]
    return np.squeeze(v, axis=tuple(dims)) if dims else np.squeeze(v)


# ---------------------------------------------------------------------------- Transpose
def _transpose_shape(op):
    in_shape = op.inputs[0].shape
    perm_shape = op.inputs[1].shape
    perm = constant_value(op.inputs[1])
    perm_elems = perm_shape.num_elements()
    if in_shape.ndims is None and perm_elems is None and perm is None:
        return [unknown_shape()]
    if in_shape.ndims is not None:
        r = in_shape.ndims
    elif perm_elems is not None:
        r = perm_elems
    else:
        r = int(np.size(perm))
    if in_shape.ndims is None and r < 2:
        return [in_shape]
    in_shape = in_shape.with_rank(r)
    perm_shape.with_rank(1)
    if perm_elems is not None and perm_elems != r:
        raise ValueError(f"Dimension must be {r} but is {perm_elems}")
    if perm is None:
        return [unknown_shape(r)]
    dims = in_shape.as_list()
    out = []
    for p in np.reshape(perm, -1):
        p = int(p)
        if p >= r:
            raise ValueError(f"perm dim {p} is out of range of input rank {r}")
        out.append(dims[p])
    return [TensorShape(out)]


register_op("Transpose", inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
            attrs=["T: type", "Tperm: {int32, int64} = DT_INT32"], shape_fn=_transpose_shape)
register_op("ConjugateTranspose", inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
            attrs=["T: type", "Tperm: {int32, int64} = DT_INT32"], shape_fn=_transpose_shape)


def transpose(a, perm=None, name="transpose", conjugate=False):
    """``a`` with its dimensions permuted by ``perm`` (default: reversed).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.transpose([[1, 2, 3]])).tolist()
    [[1], [2], [3]]
    """
    g = get_default_graph()
    with g.name_scope(name or "transpose") as scope:
        a = convert_to_tensor(a, name="a")
        op_type = "ConjugateTranspose" if conjugate and a.dtype.is_complex else "Transpose"
        if perm is None:
            r = a.shape.ndims
            if r is None:
                rk = apply_op("Rank", [a]).outputs[0]
                perm = apply_op("Sub", [apply_op("Sub", [rk, 1]).outputs[0],
                                        apply_op("Range", [0, rk, 1]).outputs[0]]).outputs[0]
            else:
                perm = np.arange(r - 1, -1, -1, dtype=np.int32)
        return apply_op(op_type, [a, perm], name=scope).outputs[0]


@folder("Transpose")
def _fold_transpose(op):
    vals = input_values(op)
    return None if vals is None else np.transpose(vals[0], [int(p) for p in np.reshape(vals[1], -1)])


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Transposes the last two dimensions of ``a`` (of unknown rank: a permutation computed when run).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.placeholder(tf.float32)  # unknown rank
        ...     print(sess.run(tf.linalg.matrix_transpose(x), {x: [[[1.0, 2.0]]]}).tolist())
        [[[1.0], [2.0]]]
    """
    g = get_default_graph()
    with g.name_scope(name or "matrix_transpose"):
        a = convert_to_tensor(a, name="a")
        r = a.shape.ndims
        if r is None:  # the permutation is computed when the graph runs, as TensorFlow does
            from sparseflow._src.ops.array_fill_ops import range as range_
            from sparseflow._src.ops.array_join_ops import concat

            a_rank = rank(a)
            perm = concat((range_(0, a_rank - 2, 1), [a_rank - 1, a_rank - 2]), 0)
            return transpose(a, perm, conjugate=conjugate)
        if r < 2:
            raise ValueError(f"Argument `a` should be a (batch) matrix with rank >= 2.  Received `a` = {a} "
                             f"with shape: {a.shape}")
        return transpose(a, list(range(r - 2)) + [r - 1, r - 2], conjugate=conjugate)


register_op("InvertPermutation", inputs=["x: T"], outputs=["y: T"], attrs=["T: {int32, int64} = DT_INT32"],
            shape_fn=lambda op: [op.inputs[0].shape.with_rank(1)])


def invert_permutation(x, name=None):
    """The inverse permutation of the 1-D permutation ``x``."""
    return apply_op("InvertPermutation", [x], name=name or "InvertPermutation").outputs[0]


# ---------------------------------------------------------------------------- broadcasting
def broadcast_static_shape(shape_x, shape_y) -> TensorShape:
    """The static shape that ``shape_x`` and ``shape_y`` broadcast to (NumPy rules).

    >>> broadcast_static_shape(TensorShape([None, 1, 3]), TensorShape([4, 1])).as_list()
    [None, 4, 3]
    """
    x, y = as_shape(shape_x), as_shape(shape_y)
    result = _broadcast_dims(x, y)
    if result is False:
        raise ValueError(f"Incompatible shapes for broadcasting: {x} and {y}")
    return result


def _broadcast_dims(x: TensorShape, y: TensorShape):
    if x.ndims is None or y.ndims is None:
        return unknown_shape()
    xs, ys = x.as_list(), y.as_list()
    n = max(len(xs), len(ys))
    xs = [1] * (n - len(xs)) + xs
    ys = [1] * (n - len(ys)) + ys
    out = []
    for a, b in zip(xs, ys):
        if a is None or b is None:
            if a is not None and a > 1:
                out.append(a)
            elif b is not None and b > 1:
                out.append(b)
            else:
                out.append(None)
        elif a == 1:
            out.append(b)
        elif b == 1 or a == b:
            out.append(a)
        else:
            return False
    return TensorShape(out)


def _broadcast_to_shape(op):
    op.inputs[1].shape.with_rank(1)
    out = constant_value_as_shape(op.inputs[1])
    in_shape = op.inputs[0].shape
    if out.ndims is None or in_shape.ndims is None:
        return [out]
    if in_shape.ndims > out.ndims:
        raise ValueError(f"Shape must be at most rank {out.ndims} but is rank {in_shape.ndims}")
    dims = out.as_list()
    ins = in_shape.as_list()
    for i in range(1, len(ins) + 1):
        d = ins[-i]
        if d is not None and d > 1:
            if dims[-i] is not None and dims[-i] != d:
                raise ValueError(f"Dimensions must be equal, but are {d} and {dims[-i]}")
            dims[-i] = d
    return [TensorShape(dims)]


register_op("BroadcastTo", inputs=["input: T", "shape: Tidx"], outputs=["output: T"],
            attrs=["T: type", "Tidx: {int32, int64} = DT_INT32"], shape_fn=_broadcast_to_shape)


def broadcast_to(input, shape, name=None):  # noqa: A002
    """``input`` broadcast to ``shape`` (NumPy rules).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.broadcast_to([1, 2], [2, 2])).tolist()
    [[1, 2], [1, 2]]
    """
    return apply_op("BroadcastTo", [input, shape], name=name or "BroadcastTo").outputs[0]


def _broadcast_args_shape(op):
    sx, sy = op.inputs[0].shape.with_rank(1), op.inputs[1].shape.with_rank(1)
    if sx[0].value is None or sy[0].value is None:
        return [TensorShape([None])]
    return [TensorShape([max(sx[0].value, sy[0].value)])]


register_op("BroadcastArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T"],
            attrs=["T: {int32, int64} = DT_INT32"], shape_fn=_broadcast_args_shape)


def broadcast_dynamic_shape(shape_x, shape_y):
    """The shape (a 1-D tensor) that shapes ``shape_x`` and ``shape_y`` broadcast to."""
    return apply_op("BroadcastArgs", [shape_x, shape_y], name="BroadcastArgs").outputs[0]


@folder("BroadcastArgs")
def _fold_broadcast_args(op):
    vals = input_values(op)
    if vals is None:
        return None
    return np.array(np.broadcast_shapes(tuple(vals[0]), tuple(vals[1])), dtype=vals[0].dtype)


def _bcast_grad_args_shape(op):
    op.inputs[0].shape.with_rank(1)
    op.inputs[1].shape.with_rank(1)
    return [TensorShape([None]), TensorShape([None])]


register_op("BroadcastGradientArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T", "r1: T"],
            attrs=["T: {int32, int64} = DT_INT32"], shape_fn=_bcast_grad_args_shape)


def broadcast_gradient_args(s0, s1, name=None):
    """The axes to sum a broadcast result's gradient over, for inputs of shapes ``s0`` and ``s1``."""
    return apply_op("BroadcastGradientArgs", [s0, s1], name=name or "BroadcastGradientArgs").outputs


def _ensure_shape_shape(op):
    want = op._attrs["shape"]
    have = op.inputs[0].shape
    if want.ndims is not None:
        have = have.with_rank(want.ndims)
    if not have.is_compatible_with(want):
        raise ValueError(f"Shapes {have} and {want} are incompatible")
    return [have.merge_with(want)]


register_op("EnsureShape", inputs=["input: T"], outputs=["output: T"], attrs=["shape: shape", "T: type"],
            shape_fn=_ensure_shape_shape)


def ensure_shape(x, shape, name=None):
    """``x``, checked at run time to have a shape compatible with ``shape``."""
    return apply_op("EnsureShape", [x], {"shape": as_shape(shape)}, name=name or "EnsureShape").outputs[0]
