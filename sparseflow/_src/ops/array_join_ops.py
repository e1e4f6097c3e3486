"""Joining, splitting and padding: ConcatV2, Pack, Unpack, Split, SplitV, Tile, Pad, PadV2,
MirrorPad, ReverseV2, ReverseSequence; and the conversion of lists holding tensors ("autopacking").

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 6])
    ...     parts = tf.split(x, [1, 2, 3], axis=1)
    ...     both = tf.concat([x, x], axis=1)
    >>> [p.shape.as_list() for p in parts], both.shape.as_list(), both.op.type
    ([[None, 1], [None, 2], [None, 3]], [None, 12], 'ConcatV2')
"""

from __future__ import annotations

import numbers

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from sparseflow._src.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from sparseflow._src.ops.array_util import (
    attrs,
    constant_value,
    constant_value_as_shape,
    debug_shape,
    folder,
    input_values,
    merge_dim,
    scalar_int,
)
from sparseflow._src.ops.constant_op import constant
from sparseflow._src.ops.core_ops import identity

__all__ = ["concat", "stack", "unstack", "split", "tile", "pad", "reverse", "reverse_v2", "reverse_sequence"]


def _merge_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """Merges two partial shapes with TensorFlow's message on a mismatch."""
    if a.ndims is None:
        return b
    if b.ndims is None:
        return a
    if a.ndims != b.ndims:
        raise ValueError(f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
    dims = []
    for i, (x, y) in enumerate(zip(a.as_list(), b.as_list())):
        dims.append(merge_dim(x, y, f"Dimension {i} in both shapes must be equal, but are {x} and {y}. "
                                    f"Shapes are {debug_shape(a)} and {debug_shape(b)}."))
    return TensorShape(dims)


# ---------------------------------------------------------------------------- ConcatV2
def _concat_shape(op):
    values = op.inputs[:-1]
    axis = scalar_int(op.inputs[-1])
    if axis is None:
        r = next((v.shape.ndims for v in values if v.shape.ndims is not None), None)
        if r is None:
            return [unknown_shape()]
        if r == 0:
            raise ValueError("Can't concatenate scalars (use tf.stack instead)")
        for v in values:
            v.shape.with_rank(r)
        return [unknown_shape(r)]
    min_rank = -axis if axis < 0 else axis + 1
    before = after = unknown_shape()
    middle = 0
    for i, v in enumerate(reversed(values)):
        s = v.shape
        if s.ndims is not None and s.ndims < min_rank:
            raise ValueError(f"Shape must be at least rank {min_rank} but is rank {s.ndims}")
        if s.ndims is None:
            b, m, a = unknown_shape(), None, unknown_shape()
        else:
            ax = axis + s.ndims if axis < 0 else axis
            dims = s.as_list()
            b, m, a = TensorShape(dims[:ax]), dims[ax], TensorShape(dims[ax + 1:])
        if i == 0:
            before, middle, after = b, m, a
        else:
            before = _merge_shapes(b, before)
            middle = None if middle is None or m is None else middle + m
            after = _merge_shapes(a, after)
    return [before.concatenate(TensorShape([middle])).concatenate(after)]


register_op("ConcatV2", inputs=["values: N * T", "axis: Tidx"], outputs=["output: T"],
            attrs=attrs("N: int >= 2", "T: type", "Tidx: {int32, int64} = DT_INT32"), shape_fn=_concat_shape)


def concat(values, axis, name="concat"):
    """Concatenates the tensors ``values`` along dimension ``axis``.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.concat([[[1, 2]], [[3, 4]]], axis=0)).tolist()
    [[1, 2], [3, 4]]
    """
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        g = get_default_graph()
        with g.name_scope(name or "concat") as scope:
            axis_t = convert_to_tensor(axis, name="concat_dim", dtype=dtypes.int32)
            axis_t.shape.assert_has_rank(0)
            return identity(values[0], name=scope)
    return apply_op("ConcatV2", [list(values), axis], name=name or "concat").outputs[0]


def _concat_offset_shape(op):
    op.inputs[0].shape.with_rank(0)
    return [t.shape for t in op.inputs[1:]]


register_op("ConcatOffset", inputs=["concat_dim: int32", "shape: N * shape_type"],
            outputs=["offset: N * shape_type"],
            attrs=attrs("N: int >= 2", "shape_type: {int32, int64} = DT_INT32"),
            shape_fn=_concat_offset_shape)


# ---------------------------------------------------------------------------- Pack / Unpack
def _pack_axis(op, rank_after):
    axis = op._attrs["axis"]
    if axis < -rank_after or axis >= rank_after:
        raise ValueError(f"Invalid axis: {axis}; must be in [{-rank_after},{rank_after})")
    return axis + rank_after if axis < 0 else axis


def _pack_shape(op):
    inputs = op.inputs
    cur = inputs[-1].shape
    for i in range(len(inputs) - 2, -1, -1):
        try:
            cur = _merge_shapes(inputs[i].shape, cur)
        except ValueError as e:
            raise ValueError(f"{e}\n\tFrom merging shape {i} with other shapes.") from None
    if cur.ndims is None:
        return [unknown_shape()]
    axis = _pack_axis(op, cur.ndims + 1)
    dims = cur.as_list()
    return [TensorShape(dims[:axis] + [len(inputs)] + dims[axis:])]


register_op("Pack", inputs=["values: N * T"], outputs=["output: T"],
            attrs=attrs("N: int >= 1", "T: type", "axis: int = 0"), shape_fn=_pack_shape)


def stack(values, axis=0, name="stack"):
    """Stacks the rank-R tensors ``values`` into one rank-(R+1) tensor along ``axis``.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 3])
    ...     tf.stack([x, x], axis=1).shape.as_list()
    [None, 2, 3]
    """
    name = name or "stack"
    if axis == 0:
        try:
            return convert_to_tensor(values, name=name)
        except (TypeError, ValueError):
            pass
    first = values[0] if isinstance(values[0], Tensor) else convert_to_tensor(values[0], name=name)
    if first.shape.ndims is not None:
        n = first.shape.ndims + 1
        if axis < -n or axis >= n:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-n}, {n})")
    return apply_op("Pack", [list(values)], {"axis": axis}, name=name).outputs[0]


def _unpack_shape(op):
    s = op.inputs[0].shape
    num = op._attrs["num"]
    if s.ndims is None:
        return [unknown_shape()] * num
    axis = _pack_axis(op, s.ndims)
    dims = s.as_list()
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Dimension must be {num} but is {dims[axis]}")
    out = TensorShape(dims[:axis] + dims[axis + 1:])
    return [out] * num


register_op("Unpack", inputs=["value: T"], outputs=["output: num * T"],
            attrs=attrs("num: int >= 0", "T: type", "axis: int = 0"), shape_fn=_unpack_shape)


def unstack(value, num=None, axis=0, name="unstack"):
    """The list of tensors along dimension ``axis`` of ``value``.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     [t.shape.as_list() for t in tf.unstack(tf.zeros([2, 3]), axis=1)]
    [[2], [2], [2]]
    """
    value = convert_to_tensor(value)
    if num is None:
        s = value.shape
        if s.ndims is not None:
            if axis < -s.ndims or axis >= s.ndims:
                raise ValueError(f"Argument `axis` = {axis} not in range [{-s.ndims}, {s.ndims})")
            num = s[axis].value
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {s}")
    return apply_op("Unpack", [value], {"num": num, "axis": axis}, name=name or "unstack").outputs


# ---------------------------------------------------------------------------- Split / SplitV
def _split_axis(axis_t, rank):
    axis = scalar_int(axis_t)
    if axis is None:
        return None
    if rank is not None:
        if axis < -rank or axis >= rank:
            raise ValueError(f"Dimension size, given by scalar input {axis} must be in range [{-rank}, "
                             f"{rank})")
        if axis < 0:
            axis += rank
    elif axis < 0:
        return None
    return axis


def _split_shape(op):
    s = op.inputs[1].shape
    num = op._attrs["num_split"]
    axis = _split_axis(op.inputs[0], s.ndims)
    if axis is None:
        out = unknown_shape(s.ndims)
    else:
        s = s.with_rank_at_least(axis + 1)
        if s.ndims is None:
            return [unknown_shape()] * num
        dims = s.as_list()
        if dims[axis] is not None:
            if dims[axis] % num:
                raise ValueError(f"Dimension size must be evenly divisible by {num} but is {dims[axis]}\n\t"
                                 f"Number of ways to split should evenly divide the split dimension")
            dims[axis] //= num
        out = TensorShape(dims)
    return [out] * num


register_op("Split", inputs=["split_dim: int32", "value: T"], outputs=["output: num_split * T"],
            attrs=attrs("num_split: int >= 1", "T: type"), shape_fn=_split_shape)


def _split_v_shape(op):
    s = op.inputs[0].shape
    num = op._attrs["num_split"]
    axis = _split_axis(op.inputs[2], s.ndims)
    sizes = constant_value(op.inputs[1])
    if s.ndims is None:
        return [unknown_shape()] * num
    if s.ndims == 0:
        raise ValueError("Can't split scalars")
    if sizes is None or axis is None:
        if axis is None:
            return [unknown_shape(s.ndims)] * num
        dims = s.as_list()
        dims[axis] = None
        return [TensorShape(dims)] * num
    sizes = [int(x) for x in np.reshape(sizes, -1)]
    if len(sizes) != num:
        raise ValueError("Length of size_splits should be equal to num_outputs")
    if sizes.count(-1) > 1:
        raise ValueError("size_splits can only have one -1")
    total = sum(x for x in sizes if x != -1)
    dims = s.as_list()
    dim = dims[axis]
    outs = []
    for x in sizes:
        d = list(dims)
        d[axis] = (dim - total if dim is not None else None) if x == -1 else x
        outs.append(TensorShape(d))
    if dim is not None and (total > dim if -1 in sizes else total != dim):
        raise ValueError(f"can't split axis of size {dim} into pieces of size [{','.join(map(str, sizes))}]")
    return outs


register_op("SplitV", inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
            outputs=["output: num_split * T"],
            attrs=attrs("num_split: int >= 1", "T: type", "Tlen: {int8, int32, int64} = DT_INT64"),
            shape_fn=_split_v_shape)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits ``value`` along ``axis`` into ``num_or_size_splits`` equal parts, or parts of the given sizes
    (one size may be -1).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     [t.shape.as_list() for t in tf.split(tf.zeros([4, 6]), [1, -1], axis=1)]
    [[4, 1], [4, 5]]
    """
    name = name or "split"
    if isinstance(num_or_size_splits, (numbers.Integral, Dimension)) and \
            not isinstance(num_or_size_splits, bool):
        n = int(num_or_size_splits)
        return apply_op("Split", [axis, value], {"num_split": n}, name=name).outputs
    size_splits = convert_to_tensor(num_or_size_splits)
    if size_splits.shape.ndims == 0:
        raise ValueError(f"Rank-0 tensors are not supported as the num_or_size_splits argument to split. "
                         f"Argument provided: {num_or_size_splits}")
    if num is None:
        s = size_splits.shape
        if s.ndims:
            num = s[0].value
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {num_or_size_splits}")
    return apply_op("SplitV", [value, size_splits, axis], {"num_split": num}, name=name).outputs


# ---------------------------------------------------------------------------- Tile
def _tile_shape(op):
    s = op.inputs[0].shape
    multiples = constant_value_as_shape(op.inputs[1])
    if s.ndims is not None:
        multiples = multiples.with_rank(s.ndims)
    if multiples.ndims is None:
        return [unknown_shape()]
    s = s.with_rank(multiples.ndims)
    return [TensorShape([0 if a == 0 else None if a is None or b is None else a * b  # 0 times anything is 0
                         for a, b in zip(s.as_list(), multiples.as_list())])]


register_op("Tile", inputs=["input: T", "multiples: Tmultiples"], outputs=["output: T"],
            attrs=["T: type", "Tmultiples: {int32, int64} = DT_INT32"], shape_fn=_tile_shape)


def tile(input, multiples, name=None):  # noqa: A002 - TF's argument name
    """``input`` repeated ``multiples[i]`` times along each dimension ``i``.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.tile([[1, 2]], [2, 1])).tolist()
    [[1, 2], [1, 2]]
    """
    return apply_op("Tile", [input, multiples], name=name or "Tile").outputs[0]


# ---------------------------------------------------------------------------- Pad
def _pad_shape(op, sign=1):
    pshape = op.inputs[1].shape.with_rank(2)
    if pshape[1].value is not None and pshape[1].value != 2:
        raise ValueError(f"Dimension must be 2 but is {pshape[1].value}")
    s = op.inputs[0].shape
    n = pshape[0].value
    if n is not None:
        s = s.with_rank(n)
    elif s.ndims is not None:
        n = s.ndims
    paddings = constant_value(op.inputs[1])
    if paddings is None:
        return [unknown_shape(n)]
    paddings = np.asarray(paddings)
    s = s.with_rank(paddings.shape[0])
    dims = []
    for d, (a, b) in zip(s.as_list(), paddings):
        if a < 0 or b < 0:
            raise ValueError("Paddings must be non-negative")
        dims.append(None if d is None else d + sign * int(a + b))
    if any(d is not None and d < 0 for d in dims):
        raise ValueError(f"The paddings {paddings.tolist()} are larger than the input {s}")
    return [TensorShape(dims)]


_PAD_ATTRS = ["T: type", "Tpaddings: {int32, int64} = DT_INT32"]
register_op("Pad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"], attrs=_PAD_ATTRS,
            shape_fn=_pad_shape)
register_op("PadV2", inputs=["input: T", "paddings: Tpaddings", "constant_values: T"], outputs=["output: T"],
            attrs=_PAD_ATTRS, shape_fn=_pad_shape)
register_op("MirrorPad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
            attrs=_PAD_ATTRS + ["mode: {'REFLECT', 'SYMMETRIC'}"], shape_fn=_pad_shape)
# MirrorPad's gradient: folds the mirrored borders of ``input`` back onto the positions they copy.
register_op("MirrorPadGrad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
            attrs=_PAD_ATTRS + ["mode: {'REFLECT', 'SYMMETRIC'}"], shape_fn=lambda op: _pad_shape(op, -1))


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """``tensor`` padded by ``paddings[i] = [before, after]`` in each dimension.

    ``mode`` is "CONSTANT" (with ``constant_values``), "REFLECT" or "SYMMETRIC".

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.pad([1, 2, 3], [[1, 2]], mode="REFLECT")).tolist()
    [2, 1, 2, 3, 2, 1]
    """
    mode = mode.upper()
    if mode == "CONSTANT":
        if (not isinstance(constant_values, Tensor) and np.ndim(constant_values) == 0
                and not isinstance(constant_values, (str, bytes)) and constant_values == 0):
            return apply_op("Pad", [tensor, paddings], name=name or "Pad").outputs[0]
        return apply_op("PadV2", [tensor, paddings, constant_values], name=name or "PadV2").outputs[0]
    if mode in ("REFLECT", "SYMMETRIC"):
        return apply_op("MirrorPad", [tensor, paddings], {"mode": mode}, name=name or "MirrorPad").outputs[0]
    raise ValueError(f'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or "SYMMETRIC". '
                     f"Received `mode` = {mode}")


# ---------------------------------------------------------------------------- ReverseV2, ReverseSequence
def _reverse_shape(op):
    s = op.inputs[0].shape
    axes = constant_value(op.inputs[1])
    if axes is not None and s.ndims is not None:
        r = s.ndims
        seen = set()
        for i, a in enumerate(np.reshape(axes, -1)):
            a = int(a)
            c = a + r if a < 0 else a
            if c < 0 or c >= r:
                raise ValueError(f"'axis'[{i}] = {a} is out of valid range [0, {r - 1}")
            if c in seen:
                raise ValueError(f"axis {c} specified more than once.")
            seen.add(c)
    return [s]


register_op("ReverseV2", inputs=["tensor: T", "axis: Tidx"], outputs=["output: T"],
            attrs=["Tidx: {int32, int64} = DT_INT32", "T: type"], shape_fn=_reverse_shape)


def reverse(tensor, axis, name=None):
    """``tensor`` with the dimensions in ``axis`` reversed.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as s:
    ...     s.run(tf.reverse([[1, 2], [3, 4]], [1])).tolist()
    [[2, 1], [4, 3]]
    """
    return apply_op("ReverseV2", [tensor, axis], name=name or "ReverseV2").outputs[0]


reverse_v2 = reverse


def _reverse_sequence_shape(op):
    s = op.inputs[0].shape
    lens = op.inputs[1].shape.with_rank(1)
    seq_dim, batch_dim = op._attrs["seq_dim"], op._attrs["batch_dim"]
    if s.ndims is None:
        return [unknown_shape()]
    if batch_dim >= s.ndims:
        raise ValueError(f"batch_dim must be < input rank: {batch_dim} vs. {s.ndims}")
    if seq_dim >= s.ndims:
        raise ValueError(f"seq_dim must be < input rank: {seq_dim} vs. {s.ndims}")
    dims = s.as_list()
    dims[batch_dim] = merge_dim(dims[batch_dim], lens[0].value,
                                f"Dimensions must be equal, but are {dims[batch_dim]} and {lens[0].value}")
    return [TensorShape(dims)]


register_op("ReverseSequence", inputs=["input: T", "seq_lengths: Tlen"], outputs=["output: T"],
            attrs=["seq_dim: int", "batch_dim: int = 0", "T: type", "Tlen: {int32, int64} = DT_INT64"],
            shape_fn=_reverse_sequence_shape)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None,  # noqa: A002
                     seq_dim=None, batch_dim=None):
    """Reverses the first ``seq_lengths[b]`` entries along ``seq_axis`` of each batch entry ``b``."""
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = batch_dim if batch_axis is None else batch_axis
    if seq_axis is None:
        raise ValueError("reverse_sequence needs seq_axis")
    attrs = {"seq_dim": seq_axis}
    if batch_axis is not None:
        attrs["batch_dim"] = batch_axis
    return apply_op("ReverseSequence", [input, seq_lengths], attrs, name=name or "ReverseSequence").outputs[0]


# ---------------------------------------------------------------------------- autopacking
def _is_tensor_like(x):
    return isinstance(x, Tensor) or (hasattr(x, "_as_graph_element") and hasattr(x, "dtype")
                                     and not hasattr(x, "_is_sparse_tensor"))


def _nested_dtype(value):
    """The dtype of the first Tensor inside nested lists/tuples ``value`` (None if there is none)."""
    for x in value:
        if _is_tensor_like(x):
            return x.dtype.base_dtype
        if isinstance(x, (list, tuple)):
            d = _nested_dtype(x)
            if d is not None:
                return d
    return None


def _autopack(values, dtype, name):
    g = get_default_graph()
    with g.name_scope(name) as scope:
        converted = []
        must_pack = False
        for i, x in enumerate(values):
            if _is_tensor_like(x):
                x = convert_to_tensor(x)
                if x.dtype.base_dtype != dtype:
                    raise TypeError(f"Cannot convert a list containing a tensor of dtype {x.dtype.name} to "
                                    f"{dtype.name} (Tensor is: {x!r})")
                must_pack = True
            elif isinstance(x, (list, tuple)):
                x = _autopack(x, dtype, str(i))
                must_pack = must_pack or isinstance(x, Tensor)
            converted.append(x)
        if not must_pack:
            return converted
        tensors = [x if isinstance(x, Tensor) else constant(x, dtype=dtype, name=str(i))
                   for i, x in enumerate(converted)]
        return apply_op("Pack", [tensors], name=scope).outputs[0]


def _autopacking_conversion(value, dtype=None, name=None, as_ref=False):
    if as_ref:
        return NotImplemented
    inferred = _nested_dtype(value)
    if inferred is None:
        return NotImplemented
    if dtype is None:
        dtype = inferred
    else:
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype != inferred:
            value = _cast_nested(value, dtype)
    return _autopack(value, dtype, name or "packed")


def _cast_nested(value, dtype):
    out = []
    for x in value:
        if _is_tensor_like(x) and x.dtype.base_dtype != dtype:
            x = apply_op("Cast", [x], {"DstT": dtype}).outputs[0]
        elif isinstance(x, (list, tuple)):
            x = _cast_nested(x, dtype)
        out.append(x)
    return out


register_tensor_conversion_function((list, tuple), _autopacking_conversion, priority=99)


@folder("Tile")
def _fold_tile(op):
    vals = input_values(op)
    return None if vals is None else np.tile(vals[0], [int(m) for m in np.reshape(vals[1], -1)])
