"""TF1's assertions (``tf.assert_equal``, ``tf.assert_less``, ``tf.assert_positive``, ``tf.assert_rank``,
...): each returns an op that fails the run with InvalidArgumentError, showing TensorFlow's message,
when its condition does not hold. What is known while building the graph is checked then: equal
constants, static ranks and dtypes raise at once (as TensorFlow does), and a statically satisfied
rank or type check is a ``NoOp``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.placeholder(tf.float32, [None], name="x")
    ...     check = tf.assert_positive(x, message="need x > 0")
    ...     try:
    ...         sess.run(check, {x: [1.0, -2.0]})
    ...     except tf.errors.InvalidArgumentError as e:
    ...         print(e.message.splitlines()[0])
    assertion failed: [need x > 0.  ] [Condition x > 0 did not hold element-wise:] [x (x:0) = ] [1 -2]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes, errors
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.sparse_tensor import SparseTensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor, is_tensor
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.ops import array_ops, core_ops, math_ops
from sparseflow._src.ops.control_flow_ops import Assert

__all__ = ["assert_equal", "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater",
           "assert_greater_equal", "assert_positive", "assert_negative", "assert_non_negative",
           "assert_non_positive", "assert_near", "assert_rank", "assert_rank_at_least", "assert_rank_in",
           "assert_type", "assert_integer", "assert_scalar", "assert_proper_iterable", "assert_same_float_dtype",
           "is_numeric_tensor", "is_non_decreasing", "is_strictly_increasing"]

_NUMERIC = {dtypes.float16, dtypes.float32, dtypes.float64, dtypes.bfloat16, dtypes.int8, dtypes.int16,
            dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64,
            dtypes.complex64, dtypes.complex128}


def _prefix(message):
    return f"{message}.  " if message else ""


def _static_text(x):
    if is_tensor(x):
        v = constant_value(x)
        return str(v) if v is not None else str(x)
    return str(x)


def _binary_assert(sym, opname, test, static_test, x, y, data, summarize, message, name):
    with name_scope(name, opname, [x, y] + list(data or [])):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        if data is None:
            data = [f"Condition x {sym} y did not hold element-wise:", f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        if message is not None:
            data = [message] + list(data)
        condition = math_ops.reduce_all(test(x, y))
        x_static, y_static = constant_value(x), constant_value(y)
        if x_static is not None and y_static is not None and not np.all(static_test(x_static, y_static)):
            raise errors.InvalidArgumentError(None, None, "\n".join(_static_text(d) for d in data))
        return Assert(condition, data, summarize=summarize)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Fails the run unless ``x == y`` everywhere (broadcasting)."""
    with name_scope(name, "assert_equal", [x, y]):
        pass  # TensorFlow opens this scope, then builds the check in the next one ("assert_equal_1")
    if x is y:
        return core_ops.no_op()
    return _binary_assert("==", "assert_equal", math_ops.equal, np.equal, x, y, data, summarize, message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Fails the run if ``x == y`` anywhere."""
    return _binary_assert("!=", "assert_none_equal", math_ops.not_equal, np.not_equal, x, y, data, summarize,
                          message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    """Fails the run unless ``x < y`` everywhere."""
    return _binary_assert("<", "assert_less", math_ops.less, np.less, x, y, data, summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Fails the run unless ``x <= y`` everywhere."""
    return _binary_assert("<=", "assert_less_equal", math_ops.less_equal, np.less_equal, x, y, data, summarize,
                          message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    """Fails the run unless ``x > y`` everywhere."""
    return _binary_assert(">", "assert_greater", math_ops.greater, np.greater, x, y, data, summarize, message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Fails the run unless ``x >= y`` everywhere."""
    return _binary_assert(">=", "assert_greater_equal", math_ops.greater_equal, np.greater_equal, x, y, data,
                          summarize, message, name)


def _sign_assert(opname, condition_text, check, zero_first, x, data, summarize, message, name):
    message = _prefix(message)
    with name_scope(name, opname, [x] + list(data or [])):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [message, condition_text, f"x ({x.name}) = ", x]
        zero = convert_to_tensor(0, dtype=x.dtype.base_dtype)
        return check(zero, x, data=data, summarize=summarize) if zero_first else check(x, zero, data=data,
                                                                                           summarize=summarize)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    """Fails the run unless ``x > 0`` everywhere."""
    return _sign_assert("assert_positive", "Condition x > 0 did not hold element-wise:", assert_less, True, x, data,
                        summarize, message, name)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    """Fails the run unless ``x < 0`` everywhere."""
    return _sign_assert("assert_negative", "Condition x < 0 did not hold element-wise:", assert_less, False, x, data,
                        summarize, message, name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    """Fails the run unless ``x >= 0`` everywhere."""
    return _sign_assert("assert_non_negative", "Condition x >= 0 did not hold element-wise:", assert_less_equal,
                        True, x, data, summarize, message, name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    """Fails the run unless ``x <= 0`` everywhere (TensorFlow's message runs two of its parts together)."""
    message = _prefix(message)
    with name_scope(name, "assert_non_positive", [x] + list(data or [])):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [message, f"Condition x <= 0 did not hold element-wise:x ({x.name}) = ", x]
        zero = convert_to_tensor(0, dtype=x.dtype.base_dtype)
        return assert_less_equal(x, zero, data=data, summarize=summarize)


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None, name=None):
    """Fails the run unless ``|x - y| < atol + rtol * |y|`` everywhere (default tolerances 10 eps)."""
    message = _prefix(message)
    with name_scope(name, "assert_near", [x, y, rtol, atol] + list(data or [])):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        dtype = x.dtype.base_dtype
        real = dtypes.float32 if dtype == dtypes.complex64 else dtypes.float64 if dtype == dtypes.complex128 \
            else dtype
        eps = np.finfo(real.as_numpy_dtype).eps
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol", dtype=real)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol", dtype=real)
        if data is None:
            data = [message, f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}", f"x ({x.name}) = ", x,
                    f"y ({y.name}) = ", y]
        tol = atol + rtol * math_ops.abs(y)
        diff = math_ops.abs(x - y)
        return Assert(math_ops.reduce_all(math_ops.less(diff, tol)), data, summarize=summarize)


def _rank_assert(x, rank, static_ok, dynamic_test, opname, wording, data, summarize, message, name, describe):
    with name_scope(name, opname, [x, rank] + list(data or [])):
        if not isinstance(x, SparseTensor):
            x = convert_to_tensor(x, name="x")
        rank = convert_to_tensor(rank, name="rank")
        message = _prefix(message)
        x_name = "" if isinstance(x, SparseTensor) else x.name
        if rank.dtype.base_dtype != dtypes.int32:
            raise TypeError(f"{rank.name} must be of type tf.int32; got {rank.dtype!r}")
        rank_static = constant_value(rank)
        x_rank = x.shape.ndims if not isinstance(x, SparseTensor) else x.get_shape().ndims
        if rank_static is not None and x_rank is not None:
            if not static_ok(x_rank, rank_static):
                raise ValueError(f"{message}Tensor {x_name} must have rank {wording}{describe(rank_static)}.  "
                                 f"Received rank {x_rank}, shape {x.get_shape()}")
            return core_ops.no_op(name="static_checks_determined_all_ok")
        if data is None:
            data = [message, f"Tensor {x_name} must have rank {wording}".rstrip(), rank, "Received shape: ",
                    array_ops.shape(x)]
        return Assert(dynamic_test(array_ops.rank(x), rank), data, summarize=summarize)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """Checks ``x`` has rank ``rank``: ValueError now when both are static, else at run time."""
    return _rank_assert(x, rank, lambda a, r: a == r, lambda a, r: math_ops.equal(a, r), "assert_rank", "", data,
                        summarize, message, name, lambda r: int(r))


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """Checks ``x`` has rank ``rank`` or more."""
    return _rank_assert(x, rank, lambda a, r: a >= r, lambda a, r: math_ops.greater_equal(a, r),
                        "assert_rank_at_least", "at least ", data, summarize, message, name, lambda r: int(r))


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """Checks the rank of ``x`` is one of ``ranks``."""
    ranks = tuple(int(r) for r in ranks)

    def dynamic(a, r):
        return math_ops.reduce_any(math_ops.equal(a, r))

    return _rank_assert(x, list(ranks), lambda a, r: a in ranks, dynamic, "assert_rank_in", "in ", data, summarize,
                        message, name, lambda r: str(ranks))


def assert_type(tensor, tf_type, message=None, name=None):
    """TypeError now unless ``tensor`` has dtype ``tf_type``; else a NoOp."""
    tf_type = dtypes.as_dtype(tf_type)
    with name_scope(name, "assert_type", [tensor]):
        if not isinstance(tensor, SparseTensor):
            tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype.base_dtype != tf_type:
            raise TypeError(f"{_prefix(message)}{getattr(tensor, 'name', 'tensor')} must be of type {tf_type!r}; "
                            f"got {tensor.dtype.base_dtype!r}")
        return core_ops.no_op(name="statically_determined_correct_type")


def assert_integer(x, message=None, name=None):
    """TypeError now unless ``x`` has an integer dtype; else a NoOp."""
    with name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.base_dtype.is_integer:
            raise TypeError(f'{_prefix(message)}Expected "x" to be integer type.  Found: {x.name} of dtype '
                            f"{x.dtype.base_dtype}")
        return core_ops.no_op(name="statically_determined_was_integer")


def assert_scalar(tensor, name=None, message=None):
    """``tensor`` itself; ValueError now unless its static shape is a scalar's."""
    with name_scope(name, "assert_scalar", [tensor]):
        tensor = convert_to_tensor(tensor, name=name)
        shape = tensor.get_shape()
        if shape.ndims != 0:
            raise ValueError(f"{_prefix(message)}Expected scalar shape for {tensor.name}, saw shape: {shape}.")
        return tensor


def assert_proper_iterable(values):
    """TypeError unless ``values`` is an iterable other than a tensor, an array or a string."""
    unintentional = (np.ndarray, bytes, str)
    if is_tensor(values) or isinstance(values, (SparseTensor, *unintentional)):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}')
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common floating dtype of ``tensors`` (and ``dtype``); float32 when there is none."""
    dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else None
    if dtype is not None and not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype}.")
    for t in tensors or ():
        if t is None:
            continue
        d = t.dtype.base_dtype
        if not d.is_floating:
            raise ValueError(f"Expected floating point type, got {d} for {t.name}.")
        if dtype is None:
            dtype = d
        elif d != dtype:
            raise ValueError(f"{t.name}, type={d}: expected type {dtype}.")
    return dtype or dtypes.float32


def is_numeric_tensor(tensor):
    """Whether ``tensor`` is a Tensor of a numeric dtype."""
    return is_tensor(tensor) and not isinstance(tensor, SparseTensor) and tensor.dtype.base_dtype in _NUMERIC


def _ordered(x, test, opname, name):
    with name_scope(name, opname, [x]):
        x = convert_to_tensor(x, name="x")
        if not is_numeric_tensor(x):
            raise TypeError(f"Expected x to be numeric, instead found: {x}")
        flat = array_ops.reshape(x, [-1])
        diff = flat[1:] - flat[:-1]
        zero = convert_to_tensor(0, dtype=x.dtype.base_dtype)
        return math_ops.reduce_all(test(zero, diff))


def is_non_decreasing(x, name=None):
    """Whether ``x`` (flattened) never decreases (True for fewer than 2 elements)."""
    return _ordered(x, math_ops.less_equal, "is_non_decreasing", name)


def is_strictly_increasing(x, name=None):
    """Whether ``x`` (flattened) always increases (True for fewer than 2 elements)."""
    return _ordered(x, math_ops.less, "is_strictly_increasing", name)

