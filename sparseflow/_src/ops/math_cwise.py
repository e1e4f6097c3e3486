"""Elementwise math ops, declared as tables: one row per op type (TF's name, allowed dtypes, output).

Unary ops keep their input's shape; binary ops broadcast their inputs with the rules of
TensorFlow's ``BroadcastBinaryOpShapeFn`` (partially known shapes included). Rows that name
public wrappers also carry a doc example; those wrappers are thin, like TensorFlow's generated
ones: the node is named after the op type and Python values become constants ``<op>/x``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     y = tf.maximum(tf.placeholder(tf.float32, [None, 1, 3]), [[1.0], [2.0]])
    >>> y.op.type, y.shape.as_list()
    ('Maximum', [None, 2, 3])
"""

from __future__ import annotations

import contextlib

from sparseflow._src.framework.dtypes import DType
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import get_op_def, register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape

# ---------------------------------------------------------------- dtype sets (TF's spellings)
FLOATS = "bfloat16, half, float, double"
COMPLEX = "complex64, complex128"
SIGNED = "int8, int16, int32, int64"
UNSIGNED = "uint8, uint16, uint32, uint64"
REAL_T = f"{{{FLOATS}}}"
FLOAT_COMPLEX_T = f"{{{FLOATS}, {COMPLEX}}}"
UNARY_T = f"{{{FLOATS}, {SIGNED}, {COMPLEX}}}"
NUMBER_T = f"{{{FLOATS}, {SIGNED}, {UNSIGNED}, {COMPLEX}}}"
REAL_NUMBER_T = f"{{{FLOATS}, {SIGNED}, {UNSIGNED}}}"
INTEGER_T = f"{{{SIGNED}, {UNSIGNED}}}"
BINARY_MORE_T = NUMBER_T
BINARY_FEWER_T = f"{{{FLOATS}, int32, int64, {COMPLEX}}}"
NO_NAN_T = f"{{{FLOATS}, {COMPLEX}}}"


# ---------------------------------------------------------------- shape functions
def unchanged_shape(op):
    return [op.inputs[0].shape]


def broadcast_shapes(shape_x: TensorShape, shape_y: TensorShape, incompatible_shape_error: bool = True):
    """The static shape of broadcasting ``shape_x`` with ``shape_y`` (TF's BroadcastBinaryOpShapeFn).

    Example:
        >>> broadcast_shapes(TensorShape([None, 1, 3]), TensorShape([4, 3])).as_list()
        [None, 4, 3]
    """
    if shape_x.ndims is None or shape_y.ndims is None:
        return unknown_shape()
    xs, ys = shape_x.as_list(), shape_y.as_list()
    rank = max(len(xs), len(ys))
    pad_y = rank - len(ys)
    xs = [1] * (rank - len(xs)) + xs
    ys = [1] * pad_y + ys
    dims = []
    for i, (a, b) in enumerate(zip(xs, ys)):
        if a is None or b is None:
            if a is not None and a > 1 or b is not None and b > 1:
                if not incompatible_shape_error:
                    return unknown_shape()
                dims.append(a if a is not None and a > 1 else b)
            elif a == 1:
                dims.append(b)
            elif b == 1:
                dims.append(a)
            elif a is None and b is None:
                if not incompatible_shape_error:  # unequal sizes would make the result a scalar
                    return unknown_shape()
                dims.append(None)
            else:  # a known 0 against an unknown dimension
                if not incompatible_shape_error:
                    return unknown_shape()
                dims.append(None)
        elif a == 1 or b == 1:
            dims.append(b if a == 1 and i >= pad_y else a)
        elif a != b:
            if not incompatible_shape_error:
                return TensorShape([])
            raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
        else:
            dims.append(a)
    return TensorShape(dims)


def broadcast_shape_fn(op):
    flag = op._attrs.get("incompatible_shape_error", True)
    return [broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape, flag)]


# ---------------------------------------------------------------- scopes
def graph_of(values):
    """The graph of the first Tensor-like in ``values`` (else the default graph); inside a function
    body (cond branch, loop body) always the body, which captures outer tensors."""
    default = get_default_graph()
    if default.building_function:
        return default
    for v in values:
        g = getattr(v, "graph", None)
        if isinstance(v, Tensor) or (g is not None and hasattr(g, "_create_op_internal")):
            return g
    return default


@contextlib.contextmanager
def op_scope(name, default_name, values=()):
    """TF's ``ops.name_scope(name, default_name, values)``: yields the scope string ``"name/"``."""
    g = graph_of(values)
    with g.as_default(), g.name_scope(default_name if name is None else name) as scope:
        yield scope


def _dtype_of(value):
    d = getattr(value, "dtype", None)
    return d.base_dtype if isinstance(d, DType) and (isinstance(value, Tensor) or hasattr(
        value, "_as_graph_element")) else None


def check_input_types(op_type: str, inputs, attrs=None):
    """TypeError (as TensorFlow raises) when tensors given for one type attr, or for a fixed-type
    input, have the wrong dtypes: ``Input 'y' of 'AddV2' Op has type int32 that does not match...``."""
    seen: dict = {}
    for arg, value in zip(get_op_def(op_type).input_args, inputs):
        if arg.is_list:
            kinds = [_dtype_of(v) for v in (value if isinstance(value, (list, tuple)) else [])]
            if arg.type_attr and len({k for k in kinds if k is not None}) > 1:
                shown = ", ".join("<NOT CONVERTIBLE TO TENSOR>" if k is None else k.name for k in kinds)
                raise TypeError(f"Tensors in list passed to '{arg.name}' of '{op_type}' Op have types "
                                f"[{shown}] that don't all match.")
            continue
        have = _dtype_of(value)
        if have is None:
            continue
        if arg.type is not None and have != arg.type:
            raise TypeError(f"Input '{arg.name}' of '{op_type}' Op has type {have.name} that does not match "
                            f"expected type of {arg.type.name}.")
        if arg.type_attr:
            fixed = (attrs or {}).get(arg.type_attr)
            if fixed is not None and have != fixed:
                raise TypeError(f"Input '{arg.name}' of '{op_type}' Op has type {have.name} that does not "
                                f"match expected type of {fixed.name}.")
            first = seen.setdefault(arg.type_attr, (arg.name, have))
            if first[1] != have:
                raise TypeError(f"Input '{arg.name}' of '{op_type}' Op has type {have.name} that does not "
                                f"match type {first[1].name} of argument '{first[0]}'.")


def apply1(op_type: str, inputs, attrs=None, name=None) -> Tensor:
    """Creates op ``op_type`` and returns its only output."""
    check_input_types(op_type, inputs, attrs)
    return apply_op(op_type, list(inputs), attrs, name=name).outputs[0]


# ---------------------------------------------------------------- the tables
# (op type, T's allowed dtypes, output type, public wrapper names, doc example input, its output)
UNARY_OPS = [
    ("Abs", f"{{{FLOATS}, {SIGNED}}}", "T", (), "", ""),
    ("Neg", UNARY_T, "T", ("negative",), "[1.0, -2.0]", "[-1.  2.]"),
    ("Sign", UNARY_T, "T", (), "", ""),  # tf.sign: math_arith (x / |x| for complex x)
    ("Inv", UNARY_T, "T", (), "", ""),
    ("Reciprocal", UNARY_T, "T", ("reciprocal",), "[2.0, 4.0]", "[0.5  0.25]"),
    ("Square", f"{{{FLOATS}, {SIGNED}, {UNSIGNED}, {COMPLEX}}}", "T", ("square",), "[2, 3]", "[4 9]"),
    ("Sqrt", FLOAT_COMPLEX_T, "T", ("sqrt",), "[4.0, 9.0]", "[2. 3.]"),
    ("Rsqrt", FLOAT_COMPLEX_T, "T", ("rsqrt",), "[4.0, 16.0]", "[0.5  0.25]"),
    ("Exp", FLOAT_COMPLEX_T, "T", ("exp",), "[0.0]", "[1.]"),
    ("Expm1", FLOAT_COMPLEX_T, "T", ("expm1",), "[0.0]", "[0.]"),
    ("Log", FLOAT_COMPLEX_T, "T", ("log",), "[1.0]", "[0.]"),
    ("Log1p", FLOAT_COMPLEX_T, "T", ("log1p",), "[0.0]", "[0.]"),
    ("Sin", FLOAT_COMPLEX_T, "T", ("sin",), "[0.0]", "[0.]"),
    ("Cos", FLOAT_COMPLEX_T, "T", ("cos",), "[0.0]", "[1.]"),
    ("Tan", FLOAT_COMPLEX_T, "T", ("tan",), "[0.0]", "[0.]"),
    ("Asin", FLOAT_COMPLEX_T, "T", ("asin",), "[0.0]", "[0.]"),
    ("Acos", FLOAT_COMPLEX_T, "T", ("acos",), "[1.0]", "[0.]"),
    ("Atan", FLOAT_COMPLEX_T, "T", ("atan",), "[0.0]", "[0.]"),
    ("Sinh", FLOAT_COMPLEX_T, "T", ("sinh",), "[0.0]", "[0.]"),
    ("Cosh", FLOAT_COMPLEX_T, "T", ("cosh",), "[0.0]", "[1.]"),
    ("Tanh", FLOAT_COMPLEX_T, "T", ("tanh",), "[0.0]", "[0.]"),
    ("Asinh", FLOAT_COMPLEX_T, "T", ("asinh",), "[0.0]", "[0.]"),
    ("Acosh", FLOAT_COMPLEX_T, "T", ("acosh",), "[1.0]", "[0.]"),
    ("Atanh", FLOAT_COMPLEX_T, "T", ("atanh",), "[0.0]", "[0.]"),
    ("Sigmoid", FLOAT_COMPLEX_T, "T", (), "", ""),
    ("Floor", REAL_T, "T", ("floor",), "[-1.5, 1.5]", "[-2.  1.]"),
    ("Ceil", REAL_T, "T", ("ceil",), "[-1.5, 1.5]", "[-1.  2.]"),
    ("Round", UNARY_T, "T", (), "", ""),
    ("Rint", REAL_T, "T", ("rint",), "[0.5, 1.5, 2.5]", "[0. 2. 2.]"),
    ("Erf", REAL_T, "T", ("erf",), "[0.0]", "[0.]"),
    ("Erfc", REAL_T, "T", ("erfc",), "[0.0]", "[1.]"),
    ("Erfinv", REAL_T, "T", ("erfinv",), "[0.0]", "[0.]"),
    ("Ndtri", REAL_T, "T", ("ndtri",), "[0.5]", "[0.]"),
    ("Lgamma", REAL_T, "T", ("lgamma",), "[1.0, 3.0]", "[0.        0.6931472]"),
    ("Digamma", REAL_T, "T", ("digamma",), "[1.0]", "[-0.5772157]"),
    ("IsNan", REAL_T, "bool", ("is_nan",), "[1.0, float('nan')]", "[False  True]"),
    ("IsInf", REAL_T, "bool", ("is_inf",), "[1.0, float('inf')]", "[False  True]"),
    ("IsFinite", REAL_T, "bool", ("is_finite",), "[1.0, float('inf')]", "[ True False]"),
    ("LogicalNot", None, "bool", ("logical_not",), "[True, False]", "[False  True]"),
    ("Invert", INTEGER_T, "T", (), "", ""),
    ("Conj", f"{{{COMPLEX}, variant}}", "T", (), "", ""),
]

# (op type, T's allowed dtypes (None: bool inputs), output type, input names, public names, example, output)
BINARY_OPS = [
    ("Add", f"{{{FLOATS}, {SIGNED}, uint8, {COMPLEX}, string}}", "T", ("x", "y"), (), "", ""),
    ("AddV2", NUMBER_T, "T", ("x", "y"), (), "", ""),
    ("Sub", BINARY_MORE_T, "T", ("x", "y"), ("subtract",), "[3, 4], 1", "[2 3]"),
    ("Mul", BINARY_MORE_T, "T", ("x", "y"), ("multiply",), "[3, 4], 2", "[6 8]"),
    ("MulNoNan", NO_NAN_T, "T", ("x", "y"), (), "", ""),
    ("Div", BINARY_MORE_T, "T", ("x", "y"), (), "", ""),
    ("DivNoNan", NO_NAN_T, "T", ("x", "y"), (), "", ""),
    ("RealDiv", BINARY_MORE_T, "T", ("x", "y"), ("realdiv",), "[3.0, 4.0], 2.0", "[1.5 2. ]"),
    ("FloorDiv", BINARY_MORE_T, "T", ("x", "y"), (), "", ""),
    ("TruncateDiv", BINARY_MORE_T, "T", ("x", "y"), ("truncatediv",), "[-7, 7], 2", "[-3  3]"),
    ("FloorMod", f"{{{SIGNED}, {UNSIGNED}, {FLOATS}}}", "T", ("x", "y"), ("floormod", "mod"),
     "[-7, 7], 3", "[2 1]"),
    ("TruncateMod", f"{{int32, int64, {FLOATS}}}", "T", ("x", "y"), ("truncatemod",), "[-7, 7], 3",
     "[-1  1]"),
    ("Mod", f"{{int32, int64, {FLOATS}}}", "T", ("x", "y"), (), "", ""),
    ("Pow", f"{{{FLOATS}, {SIGNED}, {COMPLEX}}}", "T", ("x", "y"), (), "", ""),
    ("Maximum", f"{{{FLOATS}, {SIGNED}, {UNSIGNED}}}", "T", ("x", "y"), ("maximum",), "[1, 5], 3", "[3 5]"),
    ("Minimum", f"{{{FLOATS}, {SIGNED}, {UNSIGNED}}}", "T", ("x", "y"), ("minimum",), "[1, 5], 3", "[1 3]"),
    ("SquaredDifference", BINARY_FEWER_T, "T", ("x", "y"), ("squared_difference",), "[1, 5], 3", "[4 4]"),
    ("Atan2", REAL_T, "T", ("y", "x"), (), "", ""),
    ("Xlogy", NO_NAN_T, "T", ("x", "y"), ("xlogy",), "[0.0, 2.0], [0.0, 1.0]", "[0. 0.]"),
    ("Xdivy", NO_NAN_T, "T", ("x", "y"), ("xdivy",), "[0.0, 2.0], [0.0, 4.0]", "[0.  0.5]"),
    ("Xlog1py", NO_NAN_T, "T", ("x", "y"), ("xlog1py",), "[0.0, 2.0], [-1.0, 0.0]", "[0. 0.]"),
    ("Less", REAL_NUMBER_T, "bool", ("x", "y"), ("less",), "[1, 5], 3", "[ True False]"),
    ("LessEqual", REAL_NUMBER_T, "bool", ("x", "y"), ("less_equal",), "[1, 3], 3", "[ True  True]"),
    ("Greater", REAL_NUMBER_T, "bool", ("x", "y"), ("greater",), "[1, 5], 3", "[False  True]"),
    ("GreaterEqual", REAL_NUMBER_T, "bool", ("x", "y"), ("greater_equal",), "[1, 3], 3", "[False  True]"),
    ("Equal", "type", "bool", ("x", "y"), ("equal",), "[1, 3], 3", "[False  True]"),
    ("NotEqual", "type", "bool", ("x", "y"), ("not_equal",), "[1, 3], 3", "[ True False]"),
    ("LogicalAnd", None, "bool", ("x", "y"), ("logical_and",), "[True, False], True", "[ True False]"),
    ("LogicalOr", None, "bool", ("x", "y"), ("logical_or",), "[True, False], False", "[ True False]"),
    ("BitwiseAnd", INTEGER_T, "T", ("x", "y"), (), "", ""),
    ("BitwiseOr", INTEGER_T, "T", ("x", "y"), (), "", ""),
    ("BitwiseXor", INTEGER_T, "T", ("x", "y"), (), "", ""),
]

_EQUALITY = ("Equal", "NotEqual")
# TensorFlow's argument names where a unary op does not call them x -> y.
_UNARY_ARG_NAMES = {"Conj": ("input", "output")}


def _register_tables():
    for op_type, types, out, *_ in UNARY_OPS:
        if types is None:
            register_op(op_type, inputs=["x: bool"], outputs=["y: bool"], shape_fn=unchanged_shape)
        else:
            x, y = _UNARY_ARG_NAMES.get(op_type, ("x", "y"))
            register_op(op_type, inputs=[f"{x}: T"], outputs=[f"{y}: {out}"], attrs=[f"T: {types}"],
                        shape_fn=unchanged_shape)
    for op_type, types, out, (a, b), *_ in BINARY_OPS:
        if types is None:
            register_op(op_type, inputs=[f"{a}: bool", f"{b}: bool"], outputs=["z: bool"],
                        shape_fn=broadcast_shape_fn)
            continue
        attrs = [f"T: {types}"]
        if op_type in _EQUALITY:
            attrs.append("incompatible_shape_error: bool = true")
        register_op(op_type, inputs=[f"{a}: T", f"{b}: T"], outputs=[f"z: {out}"], attrs=attrs,
                    shape_fn=broadcast_shape_fn)


_register_tables()


# ---------------------------------------------------------------- thin public wrappers
_DOC = """Computes ``{op}`` of {args} element-wise (op ``{op}``{bcast}).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.math.{name}({example})))
    {output}
"""


def _make_unary(public: str, op_type: str, example: str, output: str):
    def wrapper(x, name=None):
        return apply1(op_type, [x], name=name)

    wrapper.__name__ = wrapper.__qualname__ = public
    wrapper.__doc__ = _DOC.format(op=op_type, args="``x``", bcast="", name=public, example=example,
                                  output=output)
    return wrapper


def _make_binary(public: str, op_type: str, arg_names, example: str, output: str):
    a, b = arg_names

    def wrapper(x, y, name=None):
        return apply1(op_type, [x, y], name=name)

    wrapper.__name__ = wrapper.__qualname__ = public
    wrapper.__doc__ = _DOC.format(op=op_type, args=f"``{a}`` and ``{b}``", bcast=", with broadcasting",
                                  name=public, example=example, output=output)
    return wrapper


def _build_wrappers() -> dict:
    out = {}
    for op_type, _, _, publics, example, output in UNARY_OPS:
        for p in publics:
            out[p] = _make_unary(p, op_type, example, output)
    for op_type, _, _, args, publics, example, output in BINARY_OPS:
        for p in publics:
            out[p] = _make_binary(p, op_type, args, example, output)
    return out


WRAPPERS = _build_wrappers()
globals().update(WRAPPERS)

__all__ = sorted(WRAPPERS)
