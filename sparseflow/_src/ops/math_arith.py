"""Arithmetic wrappers with Python logic of their own, as in TensorFlow's ``math_ops.py``.

``tf.add`` makes an AddV2 node ("Add" for strings); ``tf.divide`` / ``tf.truediv`` cast
integers to floats first (int32 -> float64, int16 -> float32) and divide with RealDiv;
``tf.div`` keeps Python 2 semantics (FloorDiv for integers).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     q = tf.truediv(tf.constant([7, -7]), 2)
    ...     print(q.op.type, q.dtype.name, sess.run(q))
    RealDiv float64 [ 3.5 -3.5]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.framework.tensor_conversion import convert_to_tensor, is_tensor
from sparseflow._src.ops.math_cwise import apply1, broadcast_shape_fn, op_scope, unchanged_shape

__all__ = ["abs", "add", "angle", "atan2", "complex", "conj", "div", "div_no_nan", "divide", "floordiv",
           "logical_xor", "pow",
           "imag", "log_sigmoid", "real", "round", "scalar_mul", "sigmoid", "sign", "truediv"]
MATH_ONLY = ["divide_no_nan", "multiply_no_nan"]

_TO_REAL = ["T: {complex64, complex128} = DT_COMPLEX64", "Tout: {float, double} = DT_FLOAT"]
register_op("ComplexAbs", inputs=["x: T"], outputs=["y: Tout"], attrs=_TO_REAL, shape_fn=unchanged_shape)
for _op in ("Real", "Imag", "Angle"):
    register_op(_op, inputs=["input: T"], outputs=["output: Tout"], attrs=_TO_REAL, shape_fn=unchanged_shape)
register_op("Complex", inputs=["real: T", "imag: T"], outputs=["out: Tout"],
            attrs=["T: {float, double} = DT_FLOAT", "Tout: {complex64, complex128} = DT_COMPLEX64"],
            shape_fn=broadcast_shape_fn)

_TRUEDIV_TABLE = {
    dtypes.uint8: dtypes.float32, dtypes.int8: dtypes.float32, dtypes.uint16: dtypes.float32,
    dtypes.int16: dtypes.float32, dtypes.uint32: dtypes.float64, dtypes.uint64: dtypes.float64,
    dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64, dtypes.bfloat16: None, dtypes.float16: None,
    dtypes.float32: None, dtypes.float64: None, dtypes.complex64: None, dtypes.complex128: None,
}


def _same_dtype(x, y):
    xd, yd = x.dtype.base_dtype, y.dtype.base_dtype
    if xd != yd:
        raise TypeError(f"`x` and `y` must have the same dtype, got {xd!r} != {yd!r}.")
    return xd


def _float_operands(x, y, what):
    dt = _same_dtype(x, y)
    if dt not in _TRUEDIV_TABLE:
        allowed = ", ".join(repr(d) for d in _TRUEDIV_TABLE)
        raise TypeError(f"Invalid dtype {dt!r} in {what}. Expected one of {{{allowed}}}.")
    target = _TRUEDIV_TABLE[dt]
    if target is not None:
        from sparseflow._src.ops.math_cast_select import cast

        x, y = cast(x, target), cast(y, target)
    return x, y


def add(x, y, name=None):
    """``x + y`` element-wise with broadcasting; an AddV2 node named "Add" (Add for strings).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     s = tf.add([1, 2], 3)
        ...     print(s.op.name, s.op.type, sess.run(s))
        Add AddV2 [4 5]
    """
    with op_scope(name, "Add", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype_hint=x.dtype.base_dtype, name="y")
        return apply1("Add" if x.dtype.base_dtype == dtypes.string else "AddV2", [x, y], name=scope)


def truediv(x, y, name=None):
    """Division that always yields floats: integers are cast first (int32 -> float64), then RealDiv.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.truediv(tf.constant([1, 2], tf.int16), 4)))
        [0.25 0.5 ]
    """
    with op_scope(name, "truediv", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype_hint=x.dtype.base_dtype, name="y")
        x, y = _float_operands(x, y, "__truediv__")
        return apply1("RealDiv", [x, y], name=scope)


def divide(x, y, name=None):
    """``x / y`` with Python 3 semantics (see ``truediv``); a node named "truediv" unless named.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     d = tf.divide(tf.constant([3.0]), 2.0)
        ...     print(d.op.name, sess.run(d))
        truediv [1.5]
    """
    if name is not None:
        return truediv(x, y, name=name)
    if not is_tensor(x):
        x = convert_to_tensor(x, dtype=y.dtype.base_dtype if isinstance(y, Tensor) else None)
    from sparseflow._src.ops import tensor_operators

    return tensor_operators.truediv_op(x, y)


def div(x, y, name=None):
    """Python 2 division: RealDiv for floats, FloorDiv for integers (TF1's ``tf.div``).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.div([-7, 7], 2)), sess.run(tf.div([-7.0, 7.0], 2.0)))
        [-4  3] [-3.5  3.5]
    """
    with op_scope(name, "div", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        dt = _same_dtype(x, y)
        return apply1("RealDiv" if dt.is_floating or dt.is_complex else "FloorDiv", [x, y], name=scope)


def floordiv(x, y, name=None):
    """Division rounded toward negative infinity (FloorDiv), for floats and integers.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.floordiv([-7.0, 7.0], 2.0)))
        [-4.  3.]
    """
    with op_scope(name, "floordiv", [x, y]) as scope:
        return apply1("FloorDiv", [x, y], name=scope)


def div_no_nan(x, y, name=None):
    """``x / y``, but 0 where ``y`` is 0 (integers are cast to floats like ``truediv``).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.div_no_nan([1.0, 2.0], [0.0, 4.0])))
        [0.  0.5]
    """
    with op_scope(name, "div_no_nan", [x, y]) as scope:
        if not is_tensor(x) and is_tensor(y):
            y = convert_to_tensor(y, name="y")
            x = convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
        else:
            x = convert_to_tensor(x, name="x")
            y = convert_to_tensor(y, dtype_hint=x.dtype.base_dtype, name="y")
        x, y = _float_operands(x, y, "div_no_nan")
        return apply1("DivNoNan", [x, y], name=scope)


divide_no_nan = div_no_nan


def multiply_no_nan(x, y, name=None):
    """``x * y``, but 0 where ``y`` is 0 even if ``x`` is NaN or infinite (MulNoNan).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.multiply_no_nan([float("inf"), 2.0], [0.0, 3.0])))
        [0. 6.]
    """
    with op_scope(name, "multiply_no_nan", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        _same_dtype(x, y)
        return apply1("MulNoNan", [x, y], name=scope)


def scalar_mul(scalar, x, name=None):
    """Multiplies ``x`` (a Tensor or IndexedSlices) by a 0-D ``scalar`` of the same dtype.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.scalar_mul(2.0, tf.constant([1.0, 3.0]))))
        [2. 6.]
    """
    base = dtypes.as_dtype(x.dtype).base_dtype
    scalar = convert_to_tensor(scalar, dtype=base, name="scalar")
    shape = scalar.get_shape()
    if shape.ndims != 0:
        raise ValueError(f"The input scalar must be a 0-D value. Received shape {shape}.")
    if isinstance(x, IndexedSlices):
        return IndexedSlices(apply1("Mul", [scalar, x.values], name=name), x.indices, x.dense_shape)
    return apply1("Mul", [scalar, x], name=name)


def pow(x, y, name=None):  # noqa: A001 - TF's public name
    """``x ** y`` element-wise (Pow); integers to negative powers fail when run.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.pow([2.0, 9.0], 0.5)))
        [1.4142135 3.       ]
    """
    with op_scope(name, "Pow", [x]) as scope:
        return apply1("Pow", [x, y], name=scope)


def abs(x, name=None):  # noqa: A001 - TF's public name
    """``|x|`` element-wise (Abs; ComplexAbs with a real result for complex ``x``).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.abs([-1.5, 2.0])), sess.run(tf.abs(tf.constant([3 + 4j]))))
        [1.5 2. ] [5.]
    """
    with op_scope(name, "Abs", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            real = dtypes.float32 if x.dtype.base_dtype == dtypes.complex64 else dtypes.float64
            return apply1("ComplexAbs", [x], {"Tout": real}, name=scope)
        return apply1("Abs", [x], name=scope)


def sign(x, name=None):
    """-1, 0 or 1 by the sign of ``x`` element-wise (Sign); for complex ``x``, ``x / |x|`` (0 at 0) as
    TensorFlow's ``DivNoNan(x, ComplexAbs(x))``, whose gradient is the derivative of ``x / |x|`` (the
    Sign op's gradient is zero).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sign([-3.0, 0.0, 2.0])), sess.run(tf.sign(tf.constant([3 + 4j, 0j]))))
        [-1.  0.  1.] [0.6+0.8j 0. +0.j ]
    """
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_complex:
        real = dtypes.float32 if x.dtype.base_dtype == dtypes.complex64 else dtypes.float64
        magnitude = apply1("ComplexAbs", [x], {"Tout": real})
        return apply1("DivNoNan", [x, apply1("Cast", [magnitude], {"DstT": x.dtype.base_dtype})], name=name)
    return apply1("Sign", [x], name=name)


def round(x, name=None):  # noqa: A001 - TF's public name
    """Rounds half to even, element-wise (Round); integer tensors are returned unchanged.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.round([0.5, 1.5, 2.5, -0.5, 2.6])))
        [ 0.  2.  2. -0.  3.]
    """
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return apply1("Round", [x], name=name)


def sigmoid(x, name=None):
    """``1 / (1 + exp(-x))`` element-wise (Sigmoid).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sigmoid([0.0])))
        [0.5]
    """
    with op_scope(name, "Sigmoid", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply1("Sigmoid", [x], name=scope)


def logical_xor(x, y, name="LogicalXor"):
    """``x != y`` for booleans, built as ``(x or y) and not (x and y)`` like TensorFlow.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.logical_xor([True, True], [True, False])))
        [False  True]
    """
    either = apply1("LogicalOr", [x, y])
    both = apply1("LogicalAnd", [x, y])
    return apply1("LogicalAnd", [either, apply1("LogicalNot", [both])], name=name)


def atan2(y, x, name=None):
    """The angle of the point ``(x, y)``, element-wise (Atan2), in ``[-pi, pi]``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.atan2([1.0], [0.0])))
        [1.5707964]
    """
    return apply1("Atan2", [y, x], name=name)


def conj(x, name=None):
    """The complex conjugate (Conj); real and integer tensors are returned unchanged.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.conj(tf.constant([1 + 2j]))))
        [1.-2.j]
    """
    if isinstance(x, Tensor) and (x.dtype.is_floating or x.dtype.is_integer):
        return x
    with op_scope(name, "Conj", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex or x.dtype.base_dtype == dtypes.variant:
            return apply1("Conj", [x], name=scope)
        if x.dtype.is_floating or x.dtype.is_integer:
            return x
        raise TypeError(f"{x} is expected to be of type complex or real, but got {x.dtype}")


def _real_dtype(dtype):
    return dtypes.float64 if dtype.base_dtype == dtypes.complex128 else dtypes.float32


def complex(real, imag, name=None):  # noqa: A001 - TF's public name
    """``real + 1j * imag`` element-wise (Complex): float32 parts give complex64, float64 complex128.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.complex([1.0], [2.0])))
        [1.+2.j]
    """
    real = convert_to_tensor(real, name="real")
    imag = convert_to_tensor(imag, name="imag")
    with op_scope(name, "Complex", [real, imag]) as scope:
        kinds = (real.dtype.base_dtype, imag.dtype.base_dtype)
        if kinds == (dtypes.float64, dtypes.float64):
            tout = dtypes.complex128
        elif kinds == (dtypes.float32, dtypes.float32):
            tout = dtypes.complex64
        else:
            raise TypeError(f"The `real` and `imag` components have incorrect types: {real.dtype.name} "
                            f"{imag.dtype.name}. They must be consistent, and one of "
                            f"[tf.float32, tf.float64]")
        return apply1("Complex", [real, imag], {"Tout": tout}, name=scope)


def real(input, name=None):  # noqa: A002 - TF's argument name
    """The real part of a complex tensor (Real); a real tensor is returned as is.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.real(tf.constant([1 + 2j]))))
        [1.]
    """
    with op_scope(name, "Real", [input]) as scope:
        input = convert_to_tensor(input, name="input")
        if input.dtype.is_complex:
            return apply1("Real", [input], {"Tout": _real_dtype(input.dtype)}, name=scope)
        if input.dtype.is_floating or input.dtype.is_integer:
            return input
        raise TypeError(f"input must be a numeric tensor, but got tensor with dtype {input.dtype}")


def imag(input, name=None):  # noqa: A002
    """The imaginary part of a complex tensor (Imag); zeros for a real tensor.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.imag(tf.constant([1 + 2j]))))
        [2.]
    """
    with op_scope(name, "Imag", [input]) as scope:
        input = convert_to_tensor(input, name="input")
        if input.dtype.is_complex:
            return apply1("Imag", [input], {"Tout": _real_dtype(input.dtype)}, name=scope)
        from sparseflow._src.ops import array_ops

        return array_ops.zeros_like(input)


def angle(input, name=None):  # noqa: A002
    """The argument (angle) of complex numbers (Angle); 0 or pi for real ones.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.angle(tf.constant([1j], tf.complex64))))
        [1.5707964]
    """
    with op_scope(name, "Angle", [input]) as scope:
        input = convert_to_tensor(input, name="input")
        if input.dtype.is_complex:
            return apply1("Angle", [input], {"Tout": _real_dtype(input.dtype)}, name=scope)
        from sparseflow._src.ops.math_cast_select import where_v2

        return where_v2(input < 0, np.pi, 0.0 * input)


def log_sigmoid(x, name=None):
    """``log(1 / (1 + exp(-x)))`` computed stably as ``-softplus(-x)`` (needs nn's Softplus op).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.log_sigmoid([0.0, -1000.0])))
        [-6.931472e-01 -1.000000e+03]
    """
    with op_scope(name, "LogSigmoid", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply1("Neg", [apply1("Softplus", [apply1("Neg", [x])])], name=scope)
