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


# (op type, NumPy function, function for integer T or None, float/complex only)
UNARY_KERNELS = [
    ("Abs", np.abs, None, False),
    ("Neg", np.negative, None, False),
    ("Sign", np.sign, None, False),
    ("Inv", np.reciprocal, _reciprocal_int, False),
    ("Reciprocal", np.reciprocal, _reciprocal_int, False),
    ("Square", np.square, None, False),
    ("Sqrt", np.sqrt, None, False),
    ("Rsqrt", lambda x: 1.0 / np.sqrt(x), None, False),
    ("Exp", np.exp, None, False),
    ("Expm1", np.expm1, None, False),
    ("Log", np.log, None, False),
    ("Log1p", np.log1p, None, False),
    ("Sin", np.sin, None, False),
    ("Cos", np.cos, None, False),
    ("Tan", np.tan, None, True),
    ("Asin", np.arcsin, None, True),
    ("Acos", np.arccos, None, True),
    ("Atan", np.arctan, None, True),
    ("Sinh", np.sinh, None, False),
    ("Cosh", np.cosh, None, False),
    ("Tanh", np.tanh, None, False),
    ("Asinh", np.arcsinh, None, False),
    ("Acosh", np.arccosh, None, False),
    ("Atanh", np.arctanh, None, False),
    ("Sigmoid", _sigmoid, None, False),
    ("Floor", np.floor, _identity, False),
    ("Ceil", np.ceil, _identity, False),
    ("Round", _round, None, False),
    ("Rint", np.rint, _identity, False),
    ("Erf", sp.erf, None, False),
    ("Erfc", sp.erfc, None, False),
    ("Erfinv", sp.erfinv, None, False),
    ("Ndtri", sp.ndtri, None, False),
    ("Lgamma", sp.gammaln, None, False),
    ("Digamma", sp.psi, None, False),
    ("IsNan", np.isnan, None, False),
    ("IsInf", np.isinf, None, False),
    ("IsFinite", np.isfinite, None, False),
    ("LogicalNot", np.logical_not, None, False),
    ("Invert", np.invert, None, False),
    ("Conj", np.conj, None, False),
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


def _unary_factory(op_type, fn, int_fn, float_only):
    def factory(node):
        out = np.dtype(node.output_dtypes[0].as_numpy_dtype)
        t = _input_type(node)
        is_int = t is not None and (t.is_integer or t.is_bool)
        if float_only and is_int:
            raise errors.NotFoundError(None, None, f"No registered '{op_type}' OpKernel for 'CPU' devices "
                                                   f"compatible with node {node.name} (T={t.name})")
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
            return r if r.dtype == out else r.astype(out)

        return compute

    return factory


for _op, _fn, _int_fn, _float_only in UNARY_KERNELS:
    register_kernel(_op)(_unary_factory(_op, _fn, _int_fn, _float_only))
for _op, _fn, _int_fn in BINARY_KERNELS:
    register_kernel(_op)(_binary_factory(_op, _fn, _int_fn))
