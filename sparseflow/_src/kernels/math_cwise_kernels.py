"""CPU kernels of the elementwise math ops, as tables: one row per op type with its NumPy function.

Each kernel casts NumPy's result back to the op's declared output dtype (NumPy widens, e.g.
``int32 / int32`` to float64), turns broadcasting failures into TensorFlow's "Incompatible
shapes" error and integer division by zero into ``InvalidArgumentError``.

Example:
    >>> from sparseflow._src.framework import dtypes
    >>> from sparseflow._src.kernels.registry import KernelNode, get_kernel
    >>> node = KernelNode("d", "FloorDiv", {"T": dtypes.int32}, [], [dtypes.int32], "")
    >>> get_kernel("FloorDiv").factory(node)(np.array([-7, 7], np.int32), np.int32(2))
    array([-4,  3], dtype=int32)
"""

from __future__ import annotations

import numpy as np
import scipy.special as sp

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel


def _shape_str(v) -> str:
    return "[" + ",".join(str(d) for d in np.shape(v)) + "]"


def _check_nonzero(x, y):
    """Integer division by zero is an error, unless the result is empty (nothing is divided)."""
    if np.any(np.asarray(y) == 0) and np.size(x) and int(np.prod(np.broadcast_shapes(np.shape(x), np.shape(y)))):
        raise errors.InvalidArgumentError(None, None, "Integer division by zero")


# ---------------------------------------------------------------- integer-aware helpers
def _trunc_div_int(x, y):
    _check_nonzero(x, y)
    q = np.floor_divide(x, y)
    fix = (np.remainder(x, y) != 0) & ((np.asarray(x) < 0) != (np.asarray(y) < 0))
    return q + fix.astype(q.dtype) if np.any(fix) else q


def _floor_div_int(x, y):
    _check_nonzero(x, y)
    return np.floor_divide(x, y)


def _floor_mod_int(x, y):
    _check_nonzero(x, y)
    return np.remainder(x, y)


def _trunc_mod_int(x, y):
    _check_nonzero(x, y)
    return np.fmod(x, y)


def _floor_mod_float(x, y):
    m = np.fmod(x, y)
    adjust = (m != 0) & ((np.asarray(y) < 0) != (m < 0))
    return np.where(adjust, m + y, m)


def _sign(x):
    if np.iscomplexobj(x):  # x / |x| (0 at 0), each part divided by the real |x|, as TensorFlow does
        x = np.asarray(x)
        r = np.zeros_like(x)
        with np.errstate(all="ignore"):
            a = np.abs(x)
            nz = x != 0
            r.real[nz], r.imag[nz] = x.real[nz] / a[nz], x.imag[nz] / a[nz]
        return r
    return np.sign(x)


def _lgamma(x):
    return np.where(np.isneginf(x), np.inf, sp.gammaln(x))  # SciPy gives -inf at -inf; lgamma(-inf) = inf


def _digamma(x):
    """NaN at the poles 0, -1, -2, ... (and -inf), like TensorFlow; SciPy gives +-inf at 0."""
    x = np.asarray(x)
    return np.where((x <= 0) & (np.floor(x) == x), np.nan, sp.psi(x)).astype(x.dtype, copy=False)


def _pow_int(x, y):
    if np.any(np.asarray(y) < 0):
        raise errors.InvalidArgumentError(None, None, "Integers to negative integer powers are not allowed")
    return np.power(x, y)


def _reciprocal_int(x):
    return _trunc_div_int(np.ones_like(x), x)


def _squared_difference(x, y):
    d = np.subtract(x, y)
    return d * np.conj(d) if np.iscomplexobj(d) else d * d


def _sigmoid(x):
    if np.iscomplexobj(x):
        return 1.0 / (1.0 + np.exp(-x))
    return sp.expit(x)


def _round(x):
    return x if np.asarray(x).dtype.kind in "iub" else np.round(x)  # half to even, like TF


def _no_nan(fn, test_arg):
    def f(x, y):
        zero = np.asarray((x, y)[test_arg]) == 0
        return np.where(zero, np.zeros((), np.result_type(x, y)), fn(x, y))

    return f


def _identity(x):
    return x


# (op type, NumPy function, function for integer T or None)
UNARY_KERNELS = [
    ("Abs", np.abs, None),
    ("Neg", np.negative, None),
    ("Sign", _sign, None),
    ("Inv", np.reciprocal, _reciprocal_int),
    ("Reciprocal", np.reciprocal, _reciprocal_int),
    ("Square", np.square, None),
    ("Sqrt", np.sqrt, None),
    ("Rsqrt", lambda x: 1.0 / np.sqrt(x), None),
    ("Exp", np.exp, None),
    ("Expm1", np.expm1, None),
    ("Log", np.log, None),
    ("Log1p", np.log1p, None),
    ("Sin", np.sin, None),
    ("Cos", np.cos, None),
    ("Tan", np.tan, None),
    ("Asin", np.arcsin, None),
    ("Acos", np.arccos, None),
    ("Atan", np.arctan, None),
    ("Sinh", np.sinh, None),
    ("Cosh", np.cosh, None),
    ("Tanh", np.tanh, None),
    ("Asinh", np.arcsinh, None),
    ("Acosh", np.arccosh, None),
    ("Atanh", np.arctanh, None),
    ("Sigmoid", _sigmoid, None),
    ("Floor", np.floor, _identity),
    ("Ceil", np.ceil, _identity),
    ("Round", _round, None),
    ("Rint", np.rint, _identity),
    ("Erf", sp.erf, None),
    ("Erfc", sp.erfc, None),
    ("Erfinv", sp.erfinv, None),
    ("Ndtri", sp.ndtri, None),
    ("Lgamma", _lgamma, None),
    ("Digamma", _digamma, None),
    ("IsNan", np.isnan, None),
    ("IsInf", np.isinf, None),
    ("IsFinite", np.isfinite, None),
    ("LogicalNot", np.logical_not, None),
    ("Invert", np.invert, None),
    ("Conj", np.conj, None),
]

# (op type, NumPy function, function for integer T or None)
BINARY_KERNELS = [
    ("Add", np.add, None),
    ("AddV2", np.add, None),
    ("Sub", np.subtract, None),
    ("Mul", np.multiply, None),
    ("MulNoNan", _no_nan(np.multiply, 1), None),
    ("Div", np.true_divide, _trunc_div_int),
    ("DivNoNan", _no_nan(np.true_divide, 1), None),
    ("RealDiv", np.true_divide, _trunc_div_int),
    ("FloorDiv", lambda x, y: np.floor(np.true_divide(x, y)), _floor_div_int),
    ("TruncateDiv", lambda x, y: np.trunc(np.true_divide(x, y)), _trunc_div_int),
    ("FloorMod", _floor_mod_float, _floor_mod_int),
    ("TruncateMod", np.fmod, _trunc_mod_int),
    ("Mod", np.fmod, _trunc_mod_int),
    ("Pow", np.power, _pow_int),
    ("Maximum", np.maximum, None),
    ("Minimum", np.minimum, None),
    ("SquaredDifference", _squared_difference, None),
    ("Atan2", np.arctan2, None),
    ("Xlogy", _no_nan(lambda x, y: x * np.log(y), 0), None),
    ("Xdivy", _no_nan(np.true_divide, 0), None),
    ("Xlog1py", _no_nan(lambda x, y: x * np.log1p(y), 0), None),
    ("Less", np.less, None),
    ("LessEqual", np.less_equal, None),
    ("Greater", np.greater, None),
    ("GreaterEqual", np.greater_equal, None),
    ("Equal", np.equal, None),
    ("NotEqual", np.not_equal, None),
    ("LogicalAnd", np.logical_and, None),
    ("LogicalOr", np.logical_or, None),
    ("BitwiseAnd", np.bitwise_and, None),
    ("BitwiseOr", np.bitwise_or, None),
    ("BitwiseXor", np.bitwise_xor, None),
]


# Ops whose NumPy functions warn on ordinary inputs (division by zero, log of 0, domain edges): they
# run under np.errstate(all="ignore") -- TensorFlow returns inf/NaN silently. Others skip its cost.
QUIET = frozenset({
    "Reciprocal", "Inv", "Sqrt", "Rsqrt", "Exp", "Expm1", "Log", "Log1p", "Tan", "Asin", "Acos", "Acosh",
    "Atanh", "Sinh", "Cosh", "Lgamma", "Digamma", "Erfinv", "Ndtri", "Square", "Div", "RealDiv", "FloorDiv",
    "TruncateDiv", "FloorMod", "TruncateMod", "Mod", "Pow", "DivNoNan", "MulNoNan", "Xlogy", "Xdivy",
    "Xlog1py", "SquaredDifference", "Conj",
})


def _input_type(node):
    return node.attrs.get("T")


def _unary_factory(op_type, fn, int_fn):
    def factory(node):
        out = np.dtype(node.output_dtypes[0].as_numpy_dtype)
        t = _input_type(node)
        is_int = t is not None and (t.is_integer or t.is_bool)
        f = int_fn if (int_fn is not None and is_int) else fn
        if op_type in QUIET:
            def quiet(x):
                with np.errstate(all="ignore"):
                    return f(x)
            g = quiet
        else:
            g = f

        def compute(x):
            r = g(x)
            if not isinstance(r, np.ndarray):  # a 0-d object result (string Add) comes back as bytes
                return np.asarray(r, dtype=out)
            return r if r.dtype == out else r.astype(out)

        return compute

    return factory


def _binary_factory(op_type, fn, int_fn):
    def factory(node):
        out = np.dtype(node.output_dtypes[0].as_numpy_dtype)
        t = _input_type(node)
        f = int_fn if (int_fn is not None and t is not None and t.is_integer) else fn
        lenient = node.attrs.get("incompatible_shape_error", True) is False

        if op_type in QUIET:
            def g(x, y):
                with np.errstate(all="ignore"):
                    return f(x, y)
        else:
            g = f

        def compute(x, y):
            try:
                r = g(x, y)
            except ValueError:
                try:
                    np.broadcast_shapes(np.shape(x), np.shape(y))
                except ValueError:
                    if lenient:
                        return np.bool_(op_type == "NotEqual")
                    raise errors.InvalidArgumentError(
                        None, None, f"Incompatible shapes: {_shape_str(x)} vs. {_shape_str(y)}") from None
                raise
            if not isinstance(r, np.ndarray):  # a 0-d object result (string Add) comes back as bytes
                return np.asarray(r, dtype=out)
            return r if r.dtype == out else r.astype(out)

        return compute

    return factory


for _op, _fn, _int_fn in UNARY_KERNELS:
    register_kernel(_op)(_unary_factory(_op, _fn, _int_fn))
for _op, _fn, _int_fn in BINARY_KERNELS:
    register_kernel(_op)(_binary_factory(_op, _fn, _int_fn))
