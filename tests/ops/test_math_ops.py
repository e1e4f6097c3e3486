"""Elementwise math ops and Tensor operators against NumPy references: dtypes, broadcasting, empty
tensors, static shapes, node names, and the errors TensorFlow raises."""

import math

import numpy as np
import pytest
import scipy.special as sp

import sparseflow as tf

RNG = np.random.default_rng(0)
FLOATS = [np.float32, np.float64, np.float16]
SIGNED = [np.int32, np.int64, np.int8, np.int16]


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def sample(dtype, shape, domain="any"):
    """Random values of ``dtype`` in the op's domain."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(shape) > 0.5
    lo, hi = {"any": (-3, 3), "positive": (0.1, 4), "unit": (-0.9, 0.9), "ge1": (1, 4), "gt-1": (-0.9, 3),
              "nonzero": (0.5, 4)}[domain]
    if dtype.kind in "iu":
        lo, hi = (max(lo, 1), max(hi, 2)) if domain in ("positive", "nonzero", "ge1") else (lo, hi)
        if dtype.kind == "u":
            lo = max(lo, 0)
        v = RNG.integers(int(np.floor(lo)), int(np.ceil(hi)) + 1, size=shape)
    else:
        v = RNG.uniform(lo, hi, size=shape)
        if domain == "nonzero":
            v = v * RNG.choice([-1, 1], size=shape)
    return np.asarray(v).astype(dtype)


def tol(dtype):
    return {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-12}.get(
        np.dtype(dtype), 0)


def check_close(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol(dtype) * 10,
                                   atol=tol(dtype) * 10, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def _vec(fn):
    return np.vectorize(fn, otypes=[np.float64])


# (public name, NumPy reference, dtypes, input domain)
UNARY = [
    ("abs", np.abs, FLOATS + SIGNED, "any"),
    ("negative", np.negative, FLOATS + SIGNED, "any"),
    ("sign", np.sign, FLOATS + [np.int32, np.int64], "any"),
    ("reciprocal", lambda x: 1.0 / x, FLOATS, "nonzero"),
    ("square", np.square, FLOATS + SIGNED + [np.uint8], "any"),
    ("sqrt", lambda x: np.sqrt(x.astype(np.float64)), FLOATS, "positive"),
    ("rsqrt", lambda x: 1.0 / np.sqrt(x.astype(np.float64)), FLOATS, "positive"),
    ("exp", lambda x: np.exp(x.astype(np.float64)), FLOATS, "any"),
    ("expm1", lambda x: np.expm1(x.astype(np.float64)), FLOATS, "any"),
    ("log", lambda x: np.log(x.astype(np.float64)), FLOATS, "positive"),
    ("log1p", lambda x: np.log1p(x.astype(np.float64)), FLOATS, "gt-1"),
    ("sin", _vec(math.sin), FLOATS, "any"),
    ("cos", _vec(math.cos), FLOATS, "any"),
    ("tan", _vec(math.tan), [np.float32, np.float64], "unit"),
    ("asin", _vec(math.asin), [np.float32, np.float64], "unit"),
    ("acos", _vec(math.acos), [np.float32, np.float64], "unit"),
    ("atan", _vec(math.atan), [np.float32, np.float64], "any"),
    ("sinh", _vec(math.sinh), FLOATS, "any"),
    ("cosh", _vec(math.cosh), FLOATS, "any"),
    ("tanh", _vec(math.tanh), FLOATS, "any"),
    ("asinh", _vec(math.asinh), FLOATS, "any"),
    ("acosh", _vec(math.acosh), FLOATS, "ge1"),
    ("atanh", _vec(math.atanh), FLOATS, "unit"),
    ("sigmoid", _vec(lambda v: 1.0 / (1.0 + math.exp(-v))), FLOATS, "any"),
    ("floor", _vec(math.floor), FLOATS, "any"),
    ("ceil", _vec(math.ceil), FLOATS, "any"),
    ("rint", _vec(round), FLOATS, "any"),  # Python's round() is half to even, like TF
    ("round", _vec(round), FLOATS, "any"),
    ("erf", _vec(math.erf), FLOATS, "any"),
    ("erfc", _vec(math.erfc), FLOATS, "any"),
    ("lgamma", _vec(math.lgamma), [np.float32, np.float64], "positive"),
    ("digamma", lambda x: sp.psi(x.astype(np.float64)), [np.float32, np.float64], "positive"),
    ("erfinv", lambda x: sp.erfinv(x.astype(np.float64)), [np.float32, np.float64], "unit"),
    ("ndtri", lambda x: sp.ndtri((x.astype(np.float64) + 1) / 2), [np.float64], "unit"),
    ("is_nan", np.isnan, FLOATS, "any"),
    ("is_inf", np.isinf, FLOATS, "any"),
    ("is_finite", np.isfinite, FLOATS, "any"),
    ("logical_not", np.logical_not, [np.bool_], "any"),
]
_UNARY_IDS = [f"{n}-{np.dtype(d).name}" for n, _, ds, _ in UNARY for d in ds]


@pytest.mark.parametrize("name,ref,dtype,domain",
                         [(n, r, d, dom) for n, r, ds, dom in UNARY for d in ds], ids=_UNARY_IDS)
def test_unary_matches_numpy(name, ref, dtype, domain):
    fn = getattr(tf.math, name)
    x = sample(dtype, (3, 4), domain)
    if name == "ndtri":
        x = ((x.astype(np.float64) + 1) / 2).astype(dtype)
        ref_in = x * 2 - 1
    else:
        ref_in = x
    if np.dtype(dtype).kind == "f" and name in ("is_nan", "is_inf", "is_finite"):
        x = x.copy()
        x[0, :3] = [np.nan, np.inf, -np.inf]
        ref_in = x
    if name in ("round", "rint") and np.dtype(dtype).kind == "f":
        x = x.copy()
        x[1, :4] = [0.5, 1.5, 2.5, -0.5]
        ref_in = x
    t = fn(tf.constant(x))
    empty = fn(tf.constant(np.zeros((0, 2), dtype)))
    scalar = fn(tf.constant(x[0, 0]))
    got, got_empty, got_scalar = run([t, empty, scalar])
    want = np.asarray(ref(ref_in))
    out_dtype = np.bool_ if name.startswith("is_") or name == "logical_not" else dtype
    assert got.dtype == out_dtype and got_empty.dtype == out_dtype
    assert t.dtype.as_numpy_dtype == out_dtype
    assert t.shape.as_list() == [3, 4] and empty.shape.as_list() == [0, 2] and scalar.shape.as_list() == []
    assert got_empty.shape == (0, 2) and np.shape(got_scalar) == ()
    check_close(got, want.astype(out_dtype) if want.dtype.kind == "b" else want, dtype)
    check_close(got_scalar, np.asarray(want).reshape(-1)[0], dtype)


def test_unary_node_names_and_types():
    x = tf.constant([1.0], name="x")
    assert tf.sqrt(x).op.name == "Sqrt" and tf.sqrt(x).op.name == "Sqrt_1"
    assert tf.negative(x).op.type == "Neg"
    a = tf.abs([-1.0])
    assert a.op.name == "Abs" and a.op.inputs[0].op.name == "Abs/x"
    assert tf.sigmoid(x, name="s").op.name == "s"
    assert tf.reciprocal(x).op.type == "Reciprocal"
    i = tf.constant([1, -2])
    assert tf.round(i) is i  # TF returns integer tensors unchanged


def test_unary_rejects_wrong_dtypes():
    with pytest.raises(TypeError, match="allowed values"):
        tf.sqrt(tf.constant([4]))
    with pytest.raises(TypeError, match="expected type of bool"):
        tf.logical_not(tf.constant([1.0]))
    with pytest.raises(TypeError):
        tf.floor(tf.constant([1]))


def test_integer_tan_is_refused_when_built():
    # TensorFlow 2.21's OpDef of Tan (and Asin, Acos, Atan) allows floating and complex types only.
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.tan(tf.constant([1]))


def test_complex_unary_and_abs():
    z = np.array([3 + 4j, -1 - 1j], np.complex64)
    a, s, c, e = run([tf.abs(z), tf.sqrt(tf.constant(z)), tf.conj(z), tf.exp(tf.constant(z))])
    assert a.dtype == np.float32
    np.testing.assert_allclose(a, np.abs(z), rtol=1e-6)
    np.testing.assert_allclose(s, np.sqrt(z), rtol=1e-6)
    np.testing.assert_allclose(c, np.conj(z))
    np.testing.assert_allclose(e, np.exp(z), rtol=1e-6)
    r, i, ang = run([tf.real(z), tf.imag(z), tf.angle(z)])
    np.testing.assert_allclose(r, z.real)
    np.testing.assert_allclose(i, z.imag)
    np.testing.assert_allclose(ang, np.angle(z), rtol=1e-6)
    x = tf.constant([1.0])
    assert tf.conj(x) is x and tf.real(x) is x
    np.testing.assert_allclose(run(tf.complex([1.0], [2.0])), [1 + 2j])
    with pytest.raises(TypeError, match="incorrect types"):
        tf.complex(tf.constant([1.0]), tf.constant([1.0], tf.float64))


def _floor_mod(x, y):
    return x - np.floor(x.astype(np.float64) / y) * y if x.dtype.kind == "f" else np.mod(x, y)


def _trunc_div(x, y):
    if x.dtype.kind in "iu":
        return (np.abs(x) // np.abs(y)) * np.sign(x) * np.sign(y)
    return np.trunc(x / y)


# (public name, NumPy reference, dtypes, domain of y, output dtype map or None)
BINARY = [
    ("add", np.add, FLOATS + SIGNED + [np.uint8, np.uint16, np.uint32, np.uint64], "any"),
    ("subtract", np.subtract, FLOATS + SIGNED + [np.uint8], "any"),
    ("multiply", np.multiply, FLOATS + SIGNED + [np.uint8], "any"),
    ("realdiv", np.true_divide, FLOATS, "nonzero"),
    ("floordiv", lambda x, y: np.floor(x / y) if x.dtype.kind == "f" else np.floor_divide(x, y),
     FLOATS + SIGNED, "nonzero"),
    ("floormod", _floor_mod, FLOATS + SIGNED, "nonzero"),
    ("truncatediv", _trunc_div, SIGNED + [np.float32], "nonzero"),
    ("truncatemod", lambda x, y: np.fmod(x, y), [np.int32, np.int64, np.float32, np.float64], "nonzero"),
    ("pow", lambda x, y: np.power(x.astype(np.float64), y), [np.float32, np.float64], "any"),
    ("maximum", np.maximum, FLOATS + SIGNED + [np.uint8], "any"),
    ("minimum", np.minimum, FLOATS + SIGNED + [np.uint8], "any"),
    ("squared_difference", lambda x, y: (x.astype(np.float64) - y) ** 2, [np.float32, np.float64, np.int32,
                                                                           np.int64], "any"),
    ("atan2", np.arctan2, [np.float32, np.float64], "any"),
    ("xlogy", lambda x, y: np.where(x == 0, 0, x * np.log(y.astype(np.float64))), [np.float32, np.float64],
     "positive"),
    ("xdivy", lambda x, y: np.where(x == 0, 0, x / y.astype(np.float64)), [np.float32, np.float64],
     "nonzero"),
    ("less", np.less, FLOATS + SIGNED + [np.uint8], "any"),
    ("less_equal", np.less_equal, FLOATS + SIGNED, "any"),
    ("greater", np.greater, FLOATS + SIGNED, "any"),
    ("greater_equal", np.greater_equal, FLOATS + SIGNED, "any"),
    ("equal", np.equal, FLOATS + SIGNED + [np.bool_], "any"),
    ("not_equal", np.not_equal, FLOATS + SIGNED + [np.bool_], "any"),
    ("logical_and", np.logical_and, [np.bool_], "any"),
    ("logical_or", np.logical_or, [np.bool_], "any"),
    ("logical_xor", np.logical_xor, [np.bool_], "any"),
    ("truediv", np.true_divide, FLOATS + [np.int32, np.int16, np.uint8], "nonzero"),
    ("divide", np.true_divide, [np.float32, np.int64], "nonzero"),
    ("div", lambda x, y: x / y if x.dtype.kind == "f" else np.floor_divide(x, y), [np.float32, np.int32],
     "nonzero"),
    ("div_no_nan", lambda x, y: np.where(y == 0, 0, x / np.where(y == 0, 1, y)), [np.float32, np.float64],
     "any"),
    ("mod", _floor_mod, [np.int32, np.float32], "nonzero"),
]
_TRUEDIV = {np.int32: np.float64, np.int64: np.float64, np.int16: np.float32, np.uint8: np.float32}
_BOOL_OUT = {"less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and",
             "logical_or", "logical_xor"}
_BINARY_IDS = [f"{n}-{np.dtype(d).name}" for n, _, ds, _ in BINARY for d in ds]


def _out_dtype(name, dtype):
    if name in _BOOL_OUT:
        return np.dtype(np.bool_)
    if name in ("truediv", "divide"):
        return np.dtype(_TRUEDIV.get(dtype, dtype))
    return np.dtype(dtype)


@pytest.mark.parametrize("name,ref,dtype,domain",
                         [(n, r, d, dom) for n, r, ds, dom in BINARY for d in ds], ids=_BINARY_IDS)
def test_binary_matches_numpy_with_broadcasting(name, ref, dtype, domain):
    fn = getattr(tf.math, name, None) or getattr(tf, name)
    x = sample(dtype, (2, 1, 3), "positive" if name == "pow" else ("gt-1" if "xlog" in name else "any"))
    y = sample(dtype, (4, 3), domain)
    if name == "div_no_nan":
        y[0, :2] = 0
    if name in ("xlogy", "xdivy"):
        x[0, 0, :2] = 0
    ys = sample(dtype, (), domain)
    cases = [(x, y, (2, 4, 3)), (x, ys, (2, 1, 3)), (ys, y, (4, 3)),
             (np.zeros((0, 3), dtype), y[0], (0, 3))]
    outs = [fn(tf.constant(a), tf.constant(b)) for a, b, _ in cases]
    got = run(outs)
    want_dtype = _out_dtype(name, dtype)
    for (a, b, shape), t, g in zip(cases, outs, got):
        assert t.shape.as_list() == list(shape)
        assert t.dtype.as_numpy_dtype == want_dtype
        assert np.asarray(g).dtype == want_dtype and np.shape(g) == shape
        check_close(g, np.asarray(ref(a, b)).astype(want_dtype), dtype)


def test_add_is_add_v2_and_strings_use_add():
    s = tf.add(tf.constant([1.0]), 2.0)
    assert (s.op.name, s.op.type, s.op.inputs[1].op.name) == ("Add", "AddV2", "Add/y")
    assert tf.add(1, 2, name="total").op.name == "total"
    words = tf.add(tf.constant(["a", "b"]), "c")
    assert words.op.type == "Add"
    assert run(words).tolist() == [b"ac", b"bc"]
    assert run(tf.constant("x") + tf.constant(["y"])).tolist() == [b"xy"]


def test_truediv_names_casts_and_errors():
    q = tf.truediv(tf.constant([7, -7]), 2)
    assert q.op.type == "RealDiv" and q.op.name == "truediv" and q.dtype == tf.float64
    assert [i.op.type for i in q.op.inputs] == ["Cast", "Cast"]
    np.testing.assert_array_equal(run(q), [3.5, -3.5])
    assert tf.divide(tf.constant([1.0]), 2.0, name="half").op.name == "half"
    with pytest.raises(TypeError, match="same dtype"):
        tf.truediv(tf.constant([1]), 1.5)
    with pytest.raises(TypeError, match="Invalid dtype"):
        tf.truediv(tf.constant([True]), True)
    assert tf.div(tf.constant([7]), 2).op.type == "FloorDiv"
    assert tf.floordiv(1.0, 2.0).op.name == "floordiv"
    assert tf.mod(tf.constant([1]), 2).op.type == "FloorMod"


def test_integer_division_by_zero_is_invalid_argument():
    for fn in (tf.floordiv, tf.floormod, tf.truncatediv, tf.truncatemod, tf.div):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
            run(fn(tf.constant([1, 2]), tf.constant([1, 0])))
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
        run(tf.pow(tf.constant([2]), tf.constant([-1])))
    np.testing.assert_array_equal(run(tf.pow(tf.constant([2, 3]), 3)), [8, 27])


def test_float_division_by_zero_gives_inf_and_nan():
    got = run(tf.constant([1.0, -1.0, 0.0]) / 0.0)
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])
    np.testing.assert_array_equal(run(tf.div_no_nan([1.0, 0.0], [0.0, 0.0])), [0.0, 0.0])
    np.testing.assert_array_equal(run(tf.math.multiply_no_nan([np.inf, np.nan], [0.0, 0.0])), [0.0, 0.0])


def test_binary_type_mismatch_is_type_error():
    f, i = tf.constant([1.0]), tf.constant([1])
    with pytest.raises(TypeError, match="Input 'y' of 'AddV2' Op has type int32 that does not match type "
                                         "float32 of argument 'x'"):
        _ = f + i
    with pytest.raises(TypeError):
        tf.multiply(i, 1.5)
    with pytest.raises(TypeError):
        tf.maximum(tf.constant([True]), True)
    with pytest.raises(TypeError, match="LogicalAnd"):
        tf.logical_and(f, f)


def test_static_broadcast_shapes_partial():
    a = tf.placeholder(tf.float32, [None, 1, 3])
    b = tf.placeholder(tf.float32, [4, 3])
    c = tf.placeholder(tf.float32, [None, None])
    u = tf.placeholder(tf.float32)
    assert (a + b).shape.as_list() == [None, 4, 3]
    assert (a * c).shape.as_list() == [None, None, 3]
    assert (b - c).shape.as_list() == [4, 3]
    assert (u + b).shape.ndims is None
    assert tf.equal(a, 1.0).shape.as_list() == [None, 1, 3]
    z = tf.placeholder(tf.float32, [0])
    assert (z + tf.placeholder(tf.float32, [None])).shape.as_list() == [None]
    assert (z + tf.placeholder(tf.float32, [1])).shape.as_list() == [0]
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.add(tf.placeholder(tf.float32, [2]), tf.placeholder(tf.float32, [3]))


def test_runtime_incompatible_shapes():
    x = tf.placeholder(tf.float32, [None])
    y = x * tf.constant([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(run(y, {x: [2.0]}), [2.0, 4.0, 6.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[2\] vs. \[3\]"):
        run(y, {x: [1.0, 2.0]})


def test_equal_incompatible_shape_error_attr():
    from sparseflow._src.ops.math_cwise import apply1

    e = apply1("Equal", [tf.constant([1, 2]), tf.constant([1, 2, 3])], {"incompatible_shape_error": False})
    n = apply1("NotEqual", [tf.constant([1, 2]), tf.constant([1, 2, 3])], {"incompatible_shape_error": False})
    assert e.shape.as_list() == []
    assert run([e, n]) == [False, True]
    assert tf.equal([1], [1]).op.attrs["incompatible_shape_error"] is True
    np.testing.assert_array_equal(run(tf.equal(["a", "b"], "a")), [True, False])


def test_scalar_mul_and_xor_structure():
    y = tf.scalar_mul(3, tf.constant([1, 2]))
    assert y.op.type == "Mul" and y.op.inputs[0].op.name == "scalar"
    np.testing.assert_array_equal(run(y), [3, 6])
    with pytest.raises(ValueError, match="0-D"):
        tf.scalar_mul([1.0, 2.0], tf.constant([1.0, 2.0]))
    x = tf.logical_xor([True], [False])
    assert x.op.name == "LogicalXor" and x.op.type == "LogicalAnd"


# ---------------------------------------------------------------- Python operators
def test_operator_names_and_constants():
    x = tf.placeholder(tf.float32, [2], name="x")
    s = x + 1
    assert (s.op.name, s.op.type) == ("add", "AddV2")
    assert s.op.inputs[1].op.name == "add/y" and s.op.inputs[1].dtype == tf.float32
    r = 1 + x
    assert r.op.name == "add_1" and r.op.inputs[0].op.name == "add_1/x"
    table = [(x - 1, "sub", "Sub"), (x * 2, "mul", "Mul"), (x / 2, "truediv", "RealDiv"),
             (x // 2, "floordiv", "FloorDiv"), (x % 2, "mod", "FloorMod"), (x ** 2, "pow", "Pow"),
             (-x, "Neg", "Neg"), (abs(x), "Abs", "Abs"), (x < 1, "Less", "Less"),
             (x <= 1, "LessEqual", "LessEqual"),
             (x > 1, "Greater", "Greater"), (x >= 1, "GreaterEqual", "GreaterEqual")]
    for t, name, typ in table:
        assert (t.op.name, t.op.type) == (name, typ)
    assert (2.0 - x).op.inputs[0].op.name.endswith("/x")
    assert (x > 0.5).op.inputs[1].op.name == "Greater_1/y"


def test_operator_values_and_reflected_forms():
    xv = np.array([1.5, -2.0, 3.0], np.float32)
    x = tf.placeholder(tf.float32, [3])
    outs = [x + 1, 1 + x, x - 1, 1 - x, x * 2, 2 * x, x / 2, 2 / x, x // 2, 7 // x, x % 2, 7 % x, x ** 2,
            2 ** x, -x, abs(x), np.float32(2) * x, np.ones(3, np.float32) + x]
    want = [xv + 1, 1 + xv, xv - 1, 1 - xv, xv * 2, 2 * xv, xv / 2, 2 / xv, np.floor(xv / 2),
            np.floor(7 / xv),
            xv - np.floor(xv / 2) * 2, 7 - np.floor(7 / xv) * xv, xv ** 2, 2 ** xv, -xv, np.abs(xv), 2 * xv,
            1 + xv]
    got = run(outs, {x: xv})
    for g, w, t in zip(got, want, outs):
        assert isinstance(t, tf.Tensor) and t.dtype == tf.float32
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_operator_logical_and_bitwise():
    a, b = tf.constant([True, True, False]), tf.constant([True, False, False])
    got = run([a & b, a | b, a ^ b, ~a, True & b])
    np.testing.assert_array_equal(got[0], [True, False, False])
    np.testing.assert_array_equal(got[1], [True, True, False])
    np.testing.assert_array_equal(got[2], [False, True, False])
    np.testing.assert_array_equal(got[3], [False, False, True])
    np.testing.assert_array_equal(got[4], [True, False, False])
    assert (a & b).op.name == "and_2" and (~a).op.type == "LogicalNot"
    i, j = tf.constant([6, 3]), tf.constant([3, 5])
    assert (i & j).op.type == "BitwiseAnd"
    np.testing.assert_array_equal(run([i & j, i | j, i ^ j, ~i]), [[2, 1], [7, 7], [5, 6], [-7, -4]])


def test_operator_matmul_and_identity_equality():
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    m = a @ a
    assert (m.op.name, m.op.type) == ("matmul", "MatMul")
    np.testing.assert_allclose(run(m), [[7, 10], [15, 22]])
    np.testing.assert_allclose(run([[1.0, 0.0]] @ a), [[1, 2]])
    b = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert (a == b) is False and a == a and a != b
    assert len({a, b, a}) == 2


def test_operator_type_errors():
    x = tf.constant([1, 2])
    with pytest.raises(TypeError):
        _ = x + 1.5
    with pytest.raises((TypeError, ValueError)):
        _ = 1.5 * x
    with pytest.raises(TypeError):
        _ = x / tf.constant([1.0, 2.0])


def test_log_sigmoid_is_stable():
    t = tf.log_sigmoid([-1000.0, 0.0, 30.0])
    assert t.op.name == "LogSigmoid" and t.op.type == "Neg"
    np.testing.assert_allclose(run(t), [-1000.0, -np.log(2.0), -np.log1p(np.exp(-30.0))], rtol=1e-6)


@pytest.mark.parametrize("module", [f"ops.{m}" for m in ("math_cwise", "math_arith", "math_cast_select",
                                                           "math_reduction", "math_matmul", "math_linalg",
                                                           "math_ops", "tensor_operators")]
                         + [f"kernels.{m}" for m in ("math_kernels", "math_cwise_kernels",
                                                     "math_reduction_kernels", "math_linalg_kernels")])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"sparseflow._src.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
