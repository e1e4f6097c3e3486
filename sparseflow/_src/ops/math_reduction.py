"""Reductions (Sum, Mean, Prod, Max, Min, All, Any, EuclideanNorm), ArgMax/ArgMin, Cumsum/Cumprod,
AddN, and the composites built on them (logsumexp, count_nonzero, variance, std, accumulate_n).

The ``reduce_*`` wrappers take TF1's arguments: ``axis`` (or legacy ``reduction_indices``),
``keepdims`` (or legacy ``keep_dims``); ``axis=None`` reduces every dimension. Integer means
divide with truncation, as TensorFlow does.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([[1, 2], [3, 4]])
    ...     print(sess.run(tf.reduce_sum(x, axis=1, keepdims=True)).tolist(), sess.run(tf.reduce_mean(x)))
    [[3], [7]] 2
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.ops.constant_op import constant
from sparseflow._src.ops.math_cwise import (
    FLOATS,
    NUMBER_T,
    REAL_NUMBER_T,
    apply1,
    op_scope,
    unchanged_shape,
)

__all__ = ["accumulate_n", "add_n", "arg_max", "arg_min", "argmax", "argmin", "count_nonzero", "cumprod",
           "cumsum", "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max", "reduce_mean",
           "reduce_min", "reduce_prod", "reduce_sum"]
MATH_ONLY = ["cumulative_logsumexp", "reduce_euclidean_norm", "reduce_std", "reduce_variance"]


# ---------------------------------------------------------------- shape functions
def _axes(value, rank, what="reduction dimension"):
    out = set()
    for a in np.asarray(value).reshape(-1).tolist():
        if a < -rank or a >= rank:
            raise ValueError(f"Invalid {what} {a} for input with {rank} dimensions.")
        out.add(a + rank if a < 0 else a)
    return out


def _reduction_shape(op):
    shape = op.inputs[0].shape
    op.inputs[1].shape.with_rank_at_most(1)
    keep = op._attrs["keep_dims"]
    value = constant_value(op.inputs[1])
    if value is None or shape.ndims is None:
        return [unknown_shape(shape.ndims) if keep and shape.ndims is not None else unknown_shape()]
    axes = _axes(value, shape.ndims)
    dims = []
    for i, d in enumerate(shape.dims):
        if i in axes:
            if keep:
                dims.append(1)
        else:
            dims.append(d)
    return [TensorShape(dims)]


def _arg_shape(op):
    shape = op.inputs[0].shape
    op.inputs[1].shape.with_rank(0)
    if shape.ndims is None:
        return [unknown_shape()]
    if shape.ndims <= 1:
        return [TensorShape([])]
    value = constant_value(op.inputs[1])
    if value is None:
        return [unknown_shape(shape.ndims - 1)]
    dim = int(value)
    axis = dim + shape.ndims if dim < 0 else dim
    if axis < 0 or axis >= shape.ndims:
        raise ValueError(f"Dimension ({dim}) must be in the range [{-shape.ndims}, {shape.ndims}), where "
                         f"{shape.ndims} is the number of dimensions in the input.")
    return [TensorShape([d for i, d in enumerate(shape.dims) if i != axis])]


def _add_n_shape(op):
    cur = op.inputs[-1].shape
    for i in range(len(op.inputs) - 2, -1, -1):
        try:
            cur = op.inputs[i].shape.merge_with(cur)
        except ValueError as e:
            raise ValueError(f"{e} From merging shape {i} with other shapes.") from None
    return [cur]


def _scan_shape(op):
    op.inputs[1].shape.with_rank(0)
    return unchanged_shape(op)


_TIDX = "Tidx: {int32, int64} = DT_INT32"
for _op, _types in [("Sum", NUMBER_T), ("Mean", NUMBER_T), ("Prod", NUMBER_T), ("EuclideanNorm", NUMBER_T),
                    ("Max", REAL_NUMBER_T), ("Min", REAL_NUMBER_T)]:
    register_op(_op, inputs=["input: T", "reduction_indices: Tidx"], outputs=["output: T"],
                attrs=["keep_dims: bool = false", f"T: {_types}", _TIDX], shape_fn=_reduction_shape)
for _op in ("All", "Any"):
    register_op(_op, inputs=["input: bool", "reduction_indices: Tidx"], outputs=["output: bool"],
                attrs=["keep_dims: bool = false", _TIDX], shape_fn=_reduction_shape)
for _op in ("ArgMax", "ArgMin"):
    register_op(_op, inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
                attrs=["T: " + REAL_NUMBER_T.replace("}", ", bool}"), "Tidx: {int16, int32, int64} = DT_INT32",
                       "output_type: {int16, uint16, int32, int64} = DT_INT64"], shape_fn=_arg_shape)
for _op, _types in [("Cumsum", NUMBER_T), ("Cumprod", NUMBER_T), ("CumulativeLogsumexp", f"{{{FLOATS}}}")]:
    register_op(_op, inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
                attrs=["exclusive: bool = false", "reverse: bool = false", f"T: {_types}", _TIDX],
                shape_fn=_scan_shape)
register_op("AddN", inputs=["inputs: N * T"], outputs=["sum: T"],
            attrs=["N: int", "T: " + NUMBER_T.replace("}", ", variant}")], shape_fn=_add_n_shape)


# ---------------------------------------------------------------- reduce_* wrappers
def _lookup(new_name, new_value, old_name, old_value):
    if old_value is not None:
        if new_value is not None:
            raise ValueError(f"Cannot specify both '{old_name}' and '{new_name}'.")
        return old_value
    return new_value


def _reduction_dims(x, axis):
    """``axis``, or every dimension of ``x``: a constant when its rank is known, else Range(Rank(x))."""
    if axis is not None:
        return axis
    shape = getattr(x, "shape", None)
    rank = shape.ndims if isinstance(shape, TensorShape) else np.ndim(x)
    if rank is not None:
        return constant(np.arange(rank, dtype=np.int32))
    from sparseflow._src.ops import array_ops

    if not hasattr(array_ops, "rank") or not hasattr(array_ops, "range"):
        raise NotImplementedError("Reducing a tensor of unknown rank over all axes needs tf.rank and "
                                  "tf.range (array ops), which are not available.")
    return array_ops.range(0, array_ops.rank(x))


def _may_reduce_to_scalar(keepdims, axis, output):
    if not output.shape.is_fully_defined() and not keepdims and axis is None:
        output.set_shape(())
    return output


def _reduce(op_type, input_tensor, axis, keepdims, name):
    keepdims = False if keepdims is None else bool(keepdims)
    dims = _reduction_dims(input_tensor, axis)
    out = apply1(op_type, [input_tensor, dims], {"keep_dims": keepdims}, name=name)
    return _may_reduce_to_scalar(keepdims, axis, out)


_REDUCE_DOC = """{what} of ``input_tensor`` over ``axis`` (all axes when None), op {op}.

    Reduced dimensions are dropped unless ``keepdims``; negative axes count from the end.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.{public}({example}, axis=0)))
        {output}
    """


def _make_reduce(public, op_type, what, example, output):
    def reduce_fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        axis = _lookup("axis", axis, "reduction_indices", reduction_indices)
        keepdims = _lookup("keepdims", keepdims, "keep_dims", keep_dims)
        return _reduce(op_type, input_tensor, axis, keepdims, name)

    reduce_fn.__name__ = reduce_fn.__qualname__ = public
    reduce_fn.__doc__ = _REDUCE_DOC.format(what=what, op=op_type, public=public, example=example,
                                           output=output)
    return reduce_fn


reduce_sum = _make_reduce("reduce_sum", "Sum", "Sum", "[[1, 2], [3, 4]]", "[4 6]")
reduce_mean = _make_reduce("reduce_mean", "Mean", "Mean (integer division for integers)", "[[1, 2], [4, 4]]",
                           "[2 3]")
reduce_prod = _make_reduce("reduce_prod", "Prod", "Product", "[[1, 2], [3, 4]]", "[3 8]")
reduce_max = _make_reduce("reduce_max", "Max", "Maximum", "[[1, 5], [3, 4]]", "[3 5]")
reduce_min = _make_reduce("reduce_min", "Min", "Minimum", "[[1, 5], [3, 4]]", "[1 4]")
reduce_all = _make_reduce("reduce_all", "All", "Logical and", "[[True, True], [False, True]]",
                          "[False  True]")
reduce_any = _make_reduce("reduce_any", "Any", "Logical or", "[[True, False], [False, False]]",
                          "[ True False]")
reduce_euclidean_norm = _make_reduce("reduce_euclidean_norm", "EuclideanNorm", "Euclidean norm",
                                     "[[3.0, 0.0], [4.0, 1.0]]", "[5. 1.]")


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                     keep_dims=None):
    """``log(sum(exp(x)))`` over ``axis``, computed stably (the maximum is subtracted first).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     lse = sess.run(tf.reduce_logsumexp([[0.0, 0.0], [1000.0, 1000.0]], axis=1))
        ...     print(lse.astype(float).round(3).tolist())
        [0.693, 1000.693]
    """
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.core_ops import stop_gradient
    from sparseflow._src.ops.math_arith import add

    axis = _lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    with op_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        raw_max = reduce_max(input_tensor, axis=axis, keepdims=True)
        my_max = stop_gradient(apply1("SelectV2", [apply1("IsFinite", [raw_max]), raw_max, 0]))
        result = apply1("Log", [reduce_sum(
            apply1("Exp", [apply1("Sub", [input_tensor, my_max])]), axis=axis, keepdims=keepdims)])
        if not keepdims:
            my_max = array_ops.reshape(my_max, array_ops.shape(result))
        result = add(result, my_max, name=scope)
        return _may_reduce_to_scalar(keepdims, axis, result)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The variance (mean squared deviation) of floating-point ``input_tensor`` over ``axis``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.reduce_variance([[1.0, 2.0], [3.0, 4.0]])))
        1.25
    """
    with op_scope(None, name if name else "reduce_variance", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor)
        means = reduce_mean(input_tensor, axis=axis, keepdims=True)
        if means.dtype.is_integer:
            raise TypeError(f"Input must be either real or complex. Received integer type {means.dtype}.")
        diff = apply1("Sub", [input_tensor, means], name="sub")
        if diff.dtype.is_complex:
            from sparseflow._src.ops.math_arith import conj

            squared = apply1("Real", [apply1("Mul", [conj(diff), diff])],
                             {"Tout": dtypes.float32 if diff.dtype == dtypes.complex64 else dtypes.float64})
        else:
            squared = apply1("Square", [diff])
        return reduce_mean(squared, axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation of floating-point ``input_tensor`` over ``axis``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.reduce_std([[1.0, 3.0], [1.0, 3.0]], axis=1)))
        [1. 1.]
    """
    with op_scope(None, name if name else "reduce_std", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor)
        return apply1("Sqrt", [reduce_variance(input_tensor, axis=axis, keepdims=keepdims)])


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002 - TF's argument name
    """The number of nonzero (non-empty for strings) elements over ``axis``, as ``dtype``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.count_nonzero([[0, 1, 2], [0, 0, 3]], axis=1)))
        [2 1]
    """
    from sparseflow._src.ops.math_cast_select import cast

    input_tensor = _lookup("input", input, "input_tensor", input_tensor)
    axis = _lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    with op_scope(name, "count_nonzero", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input")
        dtype_in = input_tensor.dtype.base_dtype
        zero = constant(b"" if dtype_in == dtypes.string else 0, dtype=dtype_in, name="zeros")
        nonzero = cast(apply1("NotEqual", [input_tensor, zero]), dtypes.int64)
        return cast(reduce_sum(nonzero, axis=axis, keepdims=keepdims), dtype=dtype)


def _arg(op_type, input, axis, name, dimension, output_type):  # noqa: A002
    axis = _lookup("axis", axis, "dimension", dimension)
    if axis is None:
        axis = 0
    return apply1(op_type, [input, axis], {"output_type": output_type}, name=name)


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    """The index of the largest value along ``axis`` (default 0), as ``output_type`` (ArgMax).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.argmax([[1, 9, 3], [7, 2, 8]], axis=1)))
        [1 2]
    """
    return _arg("ArgMax", input, axis, name, dimension, output_type)


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    """The index of the smallest value along ``axis`` (default 0), as ``output_type`` (ArgMin).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.argmin([[1, 9, 3], [7, 2, 8]], axis=1, output_type=tf.int32)))
        [0 1]
    """
    return _arg("ArgMin", input, axis, name, dimension, output_type)


def arg_max(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    """TF1's ``tf.arg_max``: ArgMax along ``dimension`` (see ``argmax``)."""
    return apply1("ArgMax", [input, dimension], {"output_type": output_type}, name=name)


def arg_min(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    """TF1's ``tf.arg_min``: ArgMin along ``dimension`` (see ``argmin``)."""
    return apply1("ArgMin", [input, dimension], {"output_type": output_type}, name=name)


def _scan(op_type, default_name, x, axis, exclusive, reverse, name):
    with op_scope(name, default_name, [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply1(op_type, [x, axis], {"exclusive": exclusive, "reverse": reverse}, name=scope)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative sum along ``axis``; ``exclusive`` leaves out the current element, ``reverse`` scans
    from the end.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.cumsum([1, 2, 3])))
        ...     print(sess.run(tf.cumsum([1, 2, 3], exclusive=True, reverse=True)))
        [1 3 6]
        [5 3 0]
    """
    return _scan("Cumsum", "Cumsum", x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative product along ``axis`` (see ``cumsum`` for ``exclusive`` and ``reverse``).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.cumprod([1, 2, 3])), sess.run(tf.cumprod([1, 2, 3], exclusive=True)))
        [1 2 6] [1 1 2]
    """
    return _scan("Cumprod", "Cumprod", x, axis, exclusive, reverse, name)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative ``log(sum(exp(x)))`` along ``axis``, computed stably.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.cumulative_logsumexp([0.0, 0.0])))
        [0.        0.6931472]
    """
    return _scan("CumulativeLogsumexp", "CumulativeLogsumexp", x, axis, exclusive, reverse, name)


_ADD_N_ERROR = ("Inputs must be an iterable of at least one Tensor/IndexedSlices with the same dtype and "
                "shape.")


def add_n(inputs, name=None):
    """The element-wise sum of a list of tensors of one dtype and shape (AddN; no broadcasting).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.add_n([[1, 2], [3, 4], [5, 6]])))
        [ 9 12]
    """
    if not inputs or isinstance(inputs, (str, bytes)) or not hasattr(inputs, "__iter__"):
        raise ValueError(_ADD_N_ERROR)
    inputs = [x if isinstance(x, IndexedSlices) else convert_to_tensor(x) for x in inputs]
    if not inputs:
        raise ValueError(_ADD_N_ERROR)
    if len(inputs) == 1:
        values = convert_to_tensor(inputs[0]) if isinstance(inputs[0], IndexedSlices) else inputs[0]
        if name:
            from sparseflow._src.ops.core_ops import identity

            return identity(values, name=name)
        return values
    return apply1("AddN", [inputs], name=name)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The element-wise sum of ``inputs`` (TF1's ``accumulate_n``; computed with AddN).

    ``shape`` and ``tensor_dtype``, when given, are checked against the inputs.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.accumulate_n([[1.0, 1.0], [1.0, 1.0]], shape=[2])))
        [2. 2.]
    """
    message = "inputs must be a list of at least one Tensor/IndexedSlices with the same dtype and shape"
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError(message)
    inputs = [x if isinstance(x, IndexedSlices) else convert_to_tensor(x) for x in inputs]
    if not all(isinstance(x, (Tensor, IndexedSlices)) for x in inputs):
        raise ValueError(message)
    if not all(x.dtype == inputs[0].dtype for x in inputs):
        raise ValueError(message)
    merged = TensorShape(shape) if shape is not None else unknown_shape()
    for x in inputs:
        if isinstance(x, Tensor):
            merged = merged.merge_with(x.get_shape())
    if tensor_dtype is not None and dtypes.as_dtype(tensor_dtype) != inputs[0].dtype:
        raise TypeError(f"tensor_dtype is {tensor_dtype}, but input is of type {inputs[0].dtype}")
    if len(inputs) == 1 and name is None:
        return inputs[0]
    return add_n(inputs, name=name)
