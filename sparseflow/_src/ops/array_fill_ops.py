"""Tensors made from a shape or a pattern: Fill, ZerosLike, OnesLike, Range, LinSpace, OneHot;
``tf.zeros`` / ``tf.ones`` (constants when small, like TensorFlow), ``zeros_like`` / ``ones_like``
and ``meshgrid``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     z = tf.zeros([2, 3])
    ...     r = tf.range(3, 15, 4)
    ...     h = tf.one_hot([0, 2], depth=3)
    >>> z.op.name, z.op.type, r.shape.as_list(), h.shape.as_list(), h.dtype.name
    ('zeros', 'Const', [3], [2, 3], 'float32')
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.ops.array_util import constant_value, constant_value_as_shape, folder, input_values
from sparseflow._src.ops.constant_op import constant

__all__ = ["fill", "zeros", "ones", "zeros_like", "ones_like", "range", "lin_space", "linspace", "one_hot",
           "meshgrid"]


# ---------------------------------------------------------------------------- Fill, ZerosLike, OnesLike
def _fill_shape(op):
    op.inputs[0].shape.with_rank(1)
    op.inputs[1].shape.with_rank(0)
    dims = constant_value(op.inputs[0])
    if dims is not None and np.any(np.asarray(dims) < 0):
        raise ValueError("Fill dimensions must be >= 0")
    return [constant_value_as_shape(op.inputs[0])]


register_op("Fill", inputs=["dims: index_type", "value: T"], outputs=["output: T"],
            attrs=["T: type", "index_type: {int32, int64} = DT_INT32"], shape_fn=_fill_shape)
register_op("ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"],
            shape_fn=lambda op: [op.inputs[0].shape])
register_op("OnesLike", inputs=["x: T"], outputs=["y: T"],
            attrs=["T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, "
                   "uint64, "
                   "complex64, complex128, bool}"],
            shape_fn=lambda op: [op.inputs[0].shape])


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with the scalar ``value``.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.fill([2, 2], 7)).tolist()
    [[7, 7], [7, 7]]
    """
    return apply_op("Fill", [dims, value], name=name or "Fill").outputs[0]


def _zero_of(dtype):
    if dtype == dtypes.bool:
        return False
    if dtype == dtypes.string:
        return ""
    return 0


def _one_of(dtype):
    return True if dtype == dtypes.bool else 1


def _filled(shape, value, dtype, default_name, name):
    dtype = dtypes.as_dtype(dtype).base_dtype
    g = get_default_graph()
    with g.name_scope(name or default_name) as scope:
        if not isinstance(shape, Tensor):
            try:
                listed = shape.as_list() if isinstance(shape, TensorShape) else np.reshape(shape, -1)
                dims = [int(d) for d in listed]
                n = int(np.prod(dims, dtype=np.int64))
                if n < 1000:
                    return constant(value, dtype=dtype, shape=dims, name=scope)
                big = any(d >= 2**31 for d in dims)
                shape = constant(dims, dtype=dtypes.int64 if big else dtypes.int32, name="shape_as_tensor")
            except (TypeError, ValueError):
                shape = convert_to_tensor(shape, dtype=dtypes.int32)
        if shape.shape.ndims == 0:
            from sparseflow._src.ops.array_shape_ops import reshape

            shape = reshape(shape, [-1])
        return fill(shape, constant(value, dtype=dtype), name=scope)


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of ``shape`` filled with zeros (a constant named "zeros" when it is small).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     tf.zeros([2, 3]).op.name, tf.zeros([100, 100]).op.type
    ('zeros', 'Fill')
    """
    return _filled(shape, _zero_of(dtypes.as_dtype(dtype)), dtype, "zeros", name)


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ``shape`` filled with ones (a constant named "ones" when it is small)."""
    return _filled(shape, _one_of(dtypes.as_dtype(dtype)), dtype, "ones", name)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """Zeros with the shape of ``tensor`` (and its dtype unless ``dtype`` is given)."""
    from sparseflow._src.ops.array_shape_ops import shape as shape_of

    g = get_default_graph()
    with g.name_scope(name or "zeros_like") as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        out_dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else tensor.dtype.base_dtype
        if optimize and tensor.shape.is_fully_defined() and tensor.dtype.base_dtype != dtypes.variant:
            return zeros(tensor.shape, dtype=out_dtype, name=scope)
        if dtype is not None and out_dtype != tensor.dtype.base_dtype:
            return zeros(shape_of(tensor), dtype=out_dtype, name=scope)
        return apply_op("ZerosLike", [tensor], name=scope).outputs[0]


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """Ones with the shape of ``tensor`` (and its dtype unless ``dtype`` is given).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.ones_like([[1, 2]])).tolist()
    [[1, 1]]
    """
    from sparseflow._src.ops.array_shape_ops import shape as shape_of

    g = get_default_graph()
    with g.name_scope(name or "ones_like") as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        if optimize and tensor.shape.is_fully_defined():
            dims = constant(tensor.shape.as_list(), dtypes.int32, name="Shape")
        else:
            dims = shape_of(tensor)
        out = ones(dims, dtype=dtype if dtype is not None else tensor.dtype.base_dtype, name=scope)
        out.set_shape(tensor.shape)
        return out


@folder("Fill")
def _fold_fill(op):
    vals = input_values(op)
    return None if vals is None else np.full([int(d) for d in vals[0]], vals[1])


# ---------------------------------------------------------------------------- Range, LinSpace
def range_size(start, limit, delta, np_dtype):
    """The number of elements of Range(start, limit, delta) in dtype; ValueError on bad arguments."""
    start, limit, delta = (np_dtype(v) for v in (start, limit, delta))
    if start > limit and delta > 0:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if start < limit and delta < 0:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if delta == 0:
        raise ValueError("Requires delta != 0")
    if np.issubdtype(np_dtype, np.integer):
        return int((abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta)))
    return int(np.ceil(np.abs((limit - start) / delta)))


def _range_shape(op):
    for t, what in zip(op.inputs, ("start", "limit", "delta")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {t.shape.ndims} for '{what}'")
    vals = input_values(op)
    if vals is None:
        return [TensorShape([None])]
    return [TensorShape([range_size(*vals, op._attrs["Tidx"].as_numpy_dtype)])]


register_op("Range", inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"], outputs=["output: Tidx"],
            attrs=["Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, uint32, uint64} = "
                   "DT_INT32"],
            shape_fn=_range_shape)

_RANGE_ORDER = [dtypes.int32, dtypes.int64, dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF's public name
    """The numbers ``start, start + delta, ...`` below ``limit`` (``range(n)`` counts from 0).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.range(3, 15, 4)).tolist()
    [3, 7, 11]
    """
    if limit is None:
        start, limit = 0, start
    g = get_default_graph()
    with g.name_scope(name or "Range") as scope:
        args = []
        for value, arg_name in ((start, "start"), (limit, "limit"), (delta, "delta")):
            if not isinstance(value, Tensor):
                value = convert_to_tensor(value, dtype=dtype, name=arg_name)
            args.append(value)
        if dtype is None:
            for a in args:
                if a.dtype.base_dtype not in _RANGE_ORDER:
                    raise TypeError(f"Range does not support dtype {a.dtype.name}")
            target = max((a.dtype.base_dtype for a in args), key=_RANGE_ORDER.index)
        else:
            target = dtypes.as_dtype(dtype).base_dtype
        args = [a if a.dtype.base_dtype == target else apply_op("Cast", [a], {"DstT": target}).outputs[0]
                for a in args]
        return apply_op("Range", args, name=scope).outputs[0]


@folder("Range")
def _fold_range(op):
    vals = input_values(op)
    if vals is None:
        return None
    t = op._attrs["Tidx"].as_numpy_dtype
    n = range_size(*vals, t)
    return (np.arange(n).astype(t) * t(vals[2]) + t(vals[0])).astype(t)


def _lin_space_shape(op):
    for t, what in zip(op.inputs, ("start", "stop", "num")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {t.shape.ndims} for '{what}'")
    num = constant_value(op.inputs[2])
    if num is None:
        return [TensorShape([None])]
    if int(num) <= 0:
        raise ValueError(f"Requires num > 0: {int(num)}")
    return [TensorShape([int(num)])]


register_op("LinSpace", inputs=["start: T", "stop: T", "num: Tidx"], outputs=["output: T"],
            attrs=["T: {bfloat16, half, float, double}", "Tidx: {int32, int64} = DT_INT32"],
            shape_fn=_lin_space_shape)


def lin_space(start, stop, num, name=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (both included).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.lin_space(0.0, 1.0, 3)).tolist()
    [0.0, 0.5, 1.0]
    """
    return apply_op("LinSpace", [start, stop, num], name=name or "LinSpace").outputs[0]


linspace = lin_space


# ---------------------------------------------------------------------------- OneHot
def _one_hot_shape(op):
    axis = op._attrs["axis"]
    if axis < -1:
        raise ValueError("axis must be >= -1")
    depth = constant_value(op.inputs[1])
    depth = None if depth is None else int(depth)
    s = op.inputs[0].shape
    if s.ndims is None:
        return [unknown_shape()]
    dims = s.as_list()
    k = (axis + len(dims) + 1) % (len(dims) + 1)
    return [TensorShape(dims[:k] + [depth] + dims[k:])]


register_op("OneHot", inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"],
            outputs=["output: T"],
            attrs=["axis: int = -1", "T: type", "TI: {uint8, int8, int32, int64} = DT_INT64"],
            shape_fn=_one_hot_shape)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot rows: ``on_value`` at ``indices`` along a new ``axis`` of size ``depth``, else ``off_value``.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.one_hot([2, 0], 3)).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    g = get_default_graph()
    with g.name_scope(name or "one_hot") as scope:
        dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else None
        on_exists, off_exists = on_value is not None, off_value is not None
        if on_exists:
            on_value = convert_to_tensor(on_value, preferred_dtype=dtype)
        if off_exists:
            off_value = convert_to_tensor(off_value, preferred_dtype=dtype)
        on_dtype = on_value.dtype.base_dtype if on_exists else None
        off_dtype = off_value.dtype.base_dtype if off_exists else None
        if on_exists or off_exists:
            if dtype is not None:
                if on_exists and on_dtype != dtype:
                    raise TypeError(f"dtype {on_dtype} of on_value does not match dtype parameter {dtype}")
                if off_exists and off_dtype != dtype:
                    raise TypeError(f"dtype {off_dtype} of off_value does not match dtype parameter {dtype}")
            else:
                dtype = on_dtype if on_exists else off_dtype
        elif dtype is None:
            dtype = dtypes.float32
        if not on_exists:
            on_value = convert_to_tensor(1, dtype, name="on_value")
            on_dtype = dtype
        if not off_exists:
            off_value = convert_to_tensor(0, dtype, name="off_value")
            off_dtype = dtype
        if on_dtype != off_dtype:
            raise TypeError(f"dtype {on_dtype} of on_value does not match dtype {off_dtype} of off_value")
        attrs = {} if axis is None else {"axis": axis}
        return apply_op("OneHot", [indices, depth, on_value, off_value], attrs, name=scope).outputs[0]


# ---------------------------------------------------------------------------- meshgrid
def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D ``args`` ("xy" Cartesian or "ij" matrix indexing)."""
    from sparseflow._src.ops.array_join_ops import stack
    from sparseflow._src.ops.array_shape_ops import reshape, size

    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        key = list(kwargs.keys())[0]
        raise TypeError(f"'{key}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'")
    g = get_default_graph()
    with g.name_scope(name or "meshgrid"):
        ndim = len(args)
        if not ndim:
            return []
        s0 = (1,) * ndim
        output = [reshape(stack(x), s0[:i] + (-1,) + s0[i + 1:]) for i, x in enumerate(args)]
        shapes = [size(x) for x in args]
        out_dtype = convert_to_tensor(args[0]).dtype.base_dtype
        if indexing == "xy" and ndim > 1:
            output[0] = reshape(output[0], (1, -1) + (1,) * (ndim - 2))
            output[1] = reshape(output[1], (-1, 1) + (1,) * (ndim - 2))
            shapes[0], shapes[1] = shapes[1], shapes[0]
        mult = ones(shapes, out_dtype)
        return [apply_op("Mul", [x, mult], name="mul").outputs[0] for x in output]

