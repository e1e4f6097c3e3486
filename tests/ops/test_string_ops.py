"""String ops through tf.Session against TensorFlow's documented results and its printed hash ids."""

import numpy as np
import pytest

import sparseflow as tf
import sparseflow.strings  # noqa: F401 - tf.strings (until sparseflow/__init__ imports it)
from sparseflow._src.framework.op_def import get_op_def
from sparseflow._src.grad import string_grad  # noqa: F401 - registers NotDifferentiable
from sparseflow._src.grad.registry import NOT_DIFFERENTIABLE, get_gradient_function
from sparseflow._src.kernels import string_kernels  # noqa: F401 - registers the kernels
from sparseflow._src.kernels.registry import has_kernel
from sparseflow._src.ops import string_ops as so

InvalidArgument = tf.errors.InvalidArgumentError


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def strs(values):
    return [v.decode() for v in np.asarray(values).ravel().tolist()]


# ---------------------------------------------------------------------------- hash buckets
def test_t18_probe_tokens_and_hash_ids():
    """What TensorFlow printed for t18_logreg_hashed's probe batch."""
    text = tf.placeholder(tf.string, [None], name="text")
    tokens = so.string_split(text, delimiter=" ")
    ids = so.string_to_hash_bucket_fast(tokens.values, 1 << 12)
    prefixed = so.string_to_hash_bucket_fast(so.string_join(["w=", tokens.values]), 1 << 12)
    tk, i, p = run([tokens, ids, prefixed],
                   {text: ["great food", "", "the service was slow and rude", "tasty"]})
    assert tk.indices.ravel().tolist() == [0, 0, 0, 1, 2, 0, 2, 1, 2, 2, 2, 3, 2, 4, 2, 5, 3, 0]
    assert strs(tk.values) == "great food the service was slow and rude tasty".split()
    assert tk.dense_shape.tolist() == [4, 6]
    assert i.tolist() == [3758, 163, 3946, 958, 997, 2393, 3213, 3974, 3411]
    assert p.tolist() == [3390, 484, 3496, 624, 646, 619, 739, 3970, 81]
    assert i.dtype == np.int64 and tk.indices.dtype == np.int64 and tk.dense_shape.dtype == np.int64


def test_t13_raw_hashing_ops():
    """What TensorFlow printed for the raw hashing ops of t13_fc_hash_cross."""
    words = tf.constant(["paris", "tokyo", "", "a much longer string with spaces", "Paris"])
    as_str = so.as_string(tf.constant([150, -7, 100001], tf.int64))
    out = run([so.string_to_hash_bucket_fast(words, 1000), so.string_to_hash_bucket_fast(words, 2 ** 62),
               so.string_to_hash_bucket_strong(words, 1000, key=[7, 11]), as_str,
               so.string_to_hash_bucket_fast(as_str, 50)])
    assert out[0].tolist() == [197, 437, 263, 542, 650]
    assert out[1].tolist() == [3054832579273885485, 3514673302347530725, 1936946117179621455,
                               858187276460588830, 1099576931046417746]
    assert out[2].tolist() == [400, 644, 847, 103, 824]
    assert strs(out[3]) == ["150", "-7", "100001"]
    assert out[4].tolist() == [40, 12, 24]


def test_tensorflow_hash_bucket_test_values():
    # TensorFlow's string_to_hash_bucket_op_test
    x = tf.placeholder(tf.string)
    fast, legacy, one = run([so.string_to_hash_bucket_fast(x, 10), so.string_to_hash_bucket(x, 10),
                             so.string_to_hash_bucket_fast(x, 1)], {x: ["a", "b", "c", "d"]})
    assert fast.tolist() == [9, 2, 2, 5]
    assert legacy.tolist()[:3] == [8, 0, 7]
    assert one.tolist() == [0, 0, 0, 0]
    assert run(so.string_to_hash_bucket_strong(["a", "b", "c"], 10, key=[98765, 132])).tolist() == [4, 2, 8]
    assert run(tf.strings.to_hash_bucket(input=["a"], num_buckets=10)).tolist() == [8]


def test_hash_buckets_keep_shape_and_names():
    x = tf.placeholder(tf.string, [2, None])
    y = so.string_to_hash_bucket_fast(x, 7, name="hashed")
    assert y.op.type == "StringToHashBucketFast" and y.op.name == "hashed" and y.shape.as_list() == [2, None]
    got = run(y, {x: [["a", "b", "c"], ["d", "e", "f"]]})
    flat = run(so.string_to_hash_bucket_fast(["a", "b", "c", "d", "e", "f"], 7))
    assert got.shape == (2, 3) and got.ravel().tolist() == flat.tolist()
    scalar = run(so.string_to_hash_bucket_fast("a", 10))
    assert np.ndim(scalar) == 0 and int(scalar) == 9
    assert so.string_to_hash_bucket(string_tensor=["a"], num_buckets=3).op.inputs[0].op.name.startswith(
        "StringToHashBucket")


def test_strong_hash_needs_a_two_element_key():
    with pytest.raises(InvalidArgument, match="Key must have 2 elements"):
        run(so.string_to_hash_bucket_strong(["a"], 10, key=[98765]))


# ---------------------------------------------------------------------------- split
def test_string_split_delimiters_and_empty_tokens():
    src = ["a b", "a,,b c", "", "xyz"]
    sp = run(so.string_split(src, ", "))
    assert strs(sp.values) == ["a", "b", "a", "b", "c", "xyz"]
    assert sp.indices.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [3, 0]]
    assert sp.dense_shape.tolist() == [4, 3]
    keep = run(so.string_split(src, ",", skip_empty=False))
    assert strs(keep.values) == ["a b", "a", "", "b c", "xyz"]  # an empty string still has no tokens
    assert keep.indices.tolist() == [[0, 0], [1, 0], [1, 1], [1, 2], [3, 0]]
    chars = run(so.string_split(["abc", "", "d"], ""))
    assert strs(chars.values) == ["a", "b", "c", "d"] and chars.dense_shape.tolist() == [3, 3]
    none = run(so.string_split(["", " "], " "))
    assert none.values.shape == (0,) and none.indices.shape == (0, 2) and none.dense_shape.tolist() == [2, 0]
    assert strs(run(so.string_split(["a b"], sep=" ")).values) == ["a", "b"]


def test_string_split_shapes_and_errors():
    sp = so.string_split(tf.placeholder(tf.string, [None]))
    assert sp.indices.shape.as_list() == [None, 2] and sp.values.shape.as_list() == [None]
    assert sp.dense_shape.shape.as_list() == [2] and sp.values.op.type == "StringSplit"
    with pytest.raises(ValueError, match="rank 1"):
        so.string_split([["a"]])
    with pytest.raises(ValueError, match="both"):
        so.string_split(["a"], sep=" ", delimiter=",")
    x = tf.placeholder(tf.string)
    with pytest.raises(InvalidArgument, match="input must be a vector"):
        run(so.string_split(x), {x: [["a b"]]})


def test_strings_split_follows_python_split_with_tensorflows_maxsplit():
    src = [" a  b c ", "1,,2", "", "   "]
    ws = run(tf.strings.split(src))
    assert strs(ws.values) == ["a", "b", "c", "1,,2"] and ws.dense_shape.tolist() == [4, 3]
    comma = run(tf.strings.split(src, sep=","))
    assert strs(comma.values) == [" a  b c ", "1", "", "2", "", "   "]  # "" splits to [""]
    assert strs(run(tf.strings.split(["1<>2<>3"], sep="<>")).values) == ["1", "2", "3"]
    assert strs(run(tf.strings.split(["a,b,c"], sep=",", maxsplit=1)).values) == ["a", "b,c"]
    # TensorFlow appends the rest once maxsplit is reached, even when it is empty
    assert strs(run(tf.strings.split(["a b ", "a b c"], maxsplit=2)).values) == ["a", "b", "", "a", "b", "c"]
    assert strs(run(tf.strings.split([" a b"], maxsplit=0)).values) == [" a b"]
    scalar = run(tf.strings.split("x y"))
    assert strs(scalar.values) == ["x", "y"] and scalar.dense_shape.tolist() == [1, 2]
    assert so.strings_split(["a"]).values.op.type == "StringSplitV2"


# ---------------------------------------------------------------------------- join
def test_string_join_broadcasts_scalars_and_checks_shapes():
    a = tf.constant([["a", "b"], ["c", "d"]])
    out = run(so.string_join([a, "-", a], separator="|"))
    assert out.shape == (2, 2) and strs(out) == ["a|-|a", "b|-|b", "c|-|c", "d|-|d"]
    s = so.string_join(["x", "y"])
    assert s.shape.ndims == 0 and run(s) == b"xy"
    assert so.string_join([tf.placeholder(tf.string, [None, 2]), "a"]).shape.as_list() == [None, 2]
    with pytest.raises(ValueError, match="do not match"):
        so.string_join([["a", "b"], ["c"]])
    x, y = tf.placeholder(tf.string), tf.placeholder(tf.string)
    with pytest.raises(InvalidArgument, match="Input shapes do not match"):
        run(so.string_join([x, y]), {x: ["a", "b"], y: ["c"]})
    assert run(tf.strings.join([["a"], ["b"]], separator=" ")).tolist() == [b"a b"]


def test_reduce_join_matches_tensorflow_docs():
    a = [["a", "b"], ["c", "d"]]
    assert strs(run(so.reduce_join(a, 0))) == ["ac", "bd"]
    assert strs(run(so.reduce_join(a, 1))) == ["ab", "cd"]
    assert strs(run(so.reduce_join(a, -2))) == ["ac", "bd"]
    assert run(so.reduce_join(a, 0, keep_dims=True)).tolist() == [[b"ac", b"bd"]]
    assert run(so.reduce_join(a, 1, keepdims=True)).tolist() == [[b"ab"], [b"cd"]]
    assert strs(run(so.reduce_join(a, 0, separator="."))) == ["a.c", "b.d"]
    assert run(so.reduce_join(a, [0, 1])) == b"acbd"
    assert run(so.reduce_join(a, [1, 0])) == b"abcd"
    assert run(so.reduce_join(a, [])).tolist() == [[b"a", b"b"], [b"c", b"d"]]
    assert run(so.reduce_join(a)) == b"abcd"
    assert run(tf.strings.reduce_join(np.empty((2, 0), object), axis=1)).tolist() == [b"", b""]
    assert so.reduce_join(tf.placeholder(tf.string, [3, 4, 5]), axis=1).shape.as_list() == [3, 5]
    with pytest.raises(ValueError, match="Invalid reduction dimension"):
        so.reduce_join(a, 2)
    with pytest.raises(ValueError, match="Duplicate reduction dimension"):
        so.reduce_join(a, [1, -1])
    x, ax = tf.placeholder(tf.string), tf.placeholder(tf.int32)
    with pytest.raises(tf.errors.OutOfRangeError, match="Invalid reduction dimension"):  # TensorFlow's code
        run(so.reduce_join(x, ax), {x: a, ax: [3]})


# ---------------------------------------------------------------------------- numbers <-> strings
def test_as_string_formats_like_printf():
    f = [1.5, -2.25, 1234.5678]
    assert strs(run(so.as_string(f))) == ["1.500000", "-2.250000", "1234.567749"]  # float32 value, %f
    assert strs(run(so.as_string(tf.constant(f, tf.float64), precision=2))) == ["1.50", "-2.25", "1234.57"]
    assert strs(run(so.as_string(tf.constant(f, tf.float64), shortest=True))) == ["1.5", "-2.25", "1234.57"]
    assert strs(run(so.as_string(tf.constant(f, tf.float64), scientific=True, precision=3))) == [
        "1.500e+00", "-2.250e+00", "1.235e+03"]
    assert strs(run(so.as_string(tf.constant([1.5], tf.float64), width=8, fill="-"))) == ["1.500000"]
    assert strs(run(so.as_string([1.5], width=10, precision=1))) == ["       1.5"]
    assert strs(run(so.as_string([float("nan"), -float("inf")]))) == ["nan", "-inf"]
    assert strs(run(so.as_string([3, -42], width=5, fill="0"))) == ["00003", "-0042"]
    assert strs(run(so.as_string([3, -42], width=4, fill="-"))) == ["3   ", "-42 "]
    assert strs(run(so.as_string([7], fill="+", width=3))) == [" +7"]
    assert strs(run(so.as_string(tf.constant([2 ** 63 - 1, -(2 ** 63)], tf.int64)))) == [
        "9223372036854775807", "-9223372036854775808"]
    assert strs(run(so.as_string(tf.constant([255], tf.uint8)))) == ["255"]
    assert strs(run(so.as_string([True, False]))) == ["true", "false"]
    assert strs(run(so.as_string(tf.constant([1 + 2j], tf.complex64), precision=1))) == ["(1.0,2.0)"]
    assert strs(run(so.as_string(["ab"], width=4))) == ["  ab"]
    assert strs(run(so.as_string(["abc"]))) == ["abc"]
    scalar = run(so.as_string(tf.constant(5, tf.int64)))
    assert scalar == b"5"  # a 0-d string fetches as bytes, as in TensorFlow


@pytest.mark.parametrize("kwargs,dtype,message", [
    ({"precision": 2}, tf.int32, "precision not supported"),
    ({"shortest": True}, tf.int64, "scientific and shortest format not supported"),
    ({"scientific": True, "shortest": True}, tf.float32, "Cannot select both"),
    ({"fill": "x", "width": 3}, tf.float32, "Fill argument not supported"),
    ({"fill": "00"}, tf.float32, "Fill string must be one or fewer characters"),
])
def test_as_string_rejects_bad_attrs(kwargs, dtype, message):
    with pytest.raises(InvalidArgument, match=message):
        run(so.as_string(tf.constant([1], dtype), **kwargs))


def test_string_to_number():
    got = run(so.string_to_number(["1.5", " 2e3 ", "-.5", "0x1A", "-inf", "NaN", "1.", "+3"]))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got[[0, 1, 2, 3, 4, 6, 7]], np.float32([1.5, 2000, -0.5, 26, -np.inf, 1, 3]))
    assert np.isnan(got[5])
    assert run(so.string_to_number(["1e39"])).tolist() == [np.inf]
    assert run(so.string_to_number(["0.1"], tf.float64)).tolist() == [0.1]
    assert run(tf.strings.to_number([" 12 ", "-7"], out_type=tf.int32)).tolist() == [12, -7]
    assert run(so.string_to_number(["9223372036854775807"], tf.int64)).tolist() == [2 ** 63 - 1]
    assert run(so.string_to_number(input="42", out_type=tf.int64)) == 42


@pytest.mark.parametrize("text,dtype", [
    ("1.5x", tf.float32), ("", tf.float32), ("infinity", tf.float32), ("1" * 32, tf.float64),
    ("1.5", tf.int32), ("+3", tf.int32), ("2147483648", tf.int32), ("-1", tf.uint32), ("1 2", tf.int64),
])
def test_string_to_number_rejects_what_tensorflow_rejects(text, dtype):
    with pytest.raises(InvalidArgument, match="StringToNumberOp could not correctly convert string: "):
        run(so.string_to_number([text], dtype))


# ---------------------------------------------------------------------------- length and substr
def test_string_length():
    x = ["", "abc", "Bärlin", "\U0001F600"]
    assert run(so.string_length(x)).tolist() == [0, 3, 7, 4]
    assert run(tf.strings.length(x, unit="UTF8_CHAR")).tolist() == [0, 3, 6, 1]
    out = run(so.string_length([["ab"], ["c"]]))
    assert out.dtype == np.int32 and out.shape == (2, 1)


def test_substr_matches_tensorflow_docs():
    assert strs(run(so.substr(["Hello", "World"], 1, 3))) == ["ell", "orl"]
    grid = [["ten", "eleven", "twelve"], ["thirteen", "fourteen", "fifteen"], ["sixteen", "seventeen", "eighteen"]]
    assert strs(run(so.substr(grid, [[1, 2, 3]] * 3, [[2, 3, 4], [4, 3, 2], [5, 5, 5]]))) == [
        "en", "eve", "lve", "hirt", "urt", "te", "ixtee", "vente", "hteen"]
    assert strs(run(so.substr(grid, [1, 2, 3], [1, 2, 3]))) == ["e", "ev", "lve", "h", "ur", "tee", "i", "ve", "hte"]
    assert strs(run(so.substr("thirteen", [1, 5, 7], [3, 2, 1]))) == ["hir", "ee", "n"]
    assert strs(run(so.substr(["Hello"], -4, 2))) == ["el"]
    assert strs(run(so.substr(["Hello"], 2, -1))) == ["llo"]  # a negative len takes the rest
    assert strs(run(so.substr(["Hello"], 5, 1))) == [""]
    assert run(tf.strings.substr("Bärlin", 1, 3, unit="UTF8_CHAR")).decode() == "ärl"
    assert run(so.substr("Bärlin", -3, 2, unit="UTF8_CHAR")).decode() == "li"
    assert run(so.substr("Bärlin", -2, 5, unit="UTF8_CHAR")).decode() == "in"
    with pytest.raises(InvalidArgument, match="pos 7 out of range"):
        run(so.substr(["Hello"], 7, 1))
    with pytest.raises(InvalidArgument, match="out of range"):
        run(so.substr(["Bär"], -4, 1, unit="UTF8_CHAR"))
    with pytest.raises(ValueError, match="pos and len shapes must match"):
        so.substr(["a"], [1, 2], 1)


# ---------------------------------------------------------------------------- transforms, regex, base64
def test_strip_lower_upper():
    assert strs(run(so.string_strip([" \t a b \n", "x"]))) == ["a b", "x"]
    assert strs(run(tf.strings.lower(["AbC", "ÄB"]))) == ["abc", "Äb"]  # ASCII only by default
    assert strs(run(tf.strings.lower(["ÄB"], encoding="utf-8"))) == ["äb"]
    assert strs(run(tf.strings.upper(["abc"]))) == ["ABC"]


def test_regex_replace_and_full_match():
    x = ["aaa bbb", "ab"]
    static = so.regex_replace(x, "a+", "<\\0>")
    assert static.op.type == "StaticRegexReplace"
    assert strs(run(static)) == ["<aaa> bbb", "<a>b"]
    assert strs(run(so.regex_replace(x, r"(a)(b)", r"\2\1", replace_global=False))) == ["aaa bbb", "ba"]
    assert strs(run(so.regex_replace(["a.b.c"], r"\.", "-", replace_global=False))) == ["a-b.c"]
    dynamic = so.regex_replace(x, tf.constant("b"), tf.constant("X"))
    assert dynamic.op.type == "RegexReplace" and strs(run(dynamic)) == ["aaa XXX", "aX"]
    assert run(tf.strings.regex_full_match(["ab", "abc", ""], "a.?")).tolist() == [True, False, False]
    assert run(tf.strings.regex_full_match(["12"], tf.constant("[0-9]+"))).tolist() == [True]
    with pytest.raises(InvalidArgument, match="Invalid pattern"):
        run(so.regex_replace(["a"], "(", "x"))
    with pytest.raises(InvalidArgument, match="Invalid rewrite pattern"):
        run(so.regex_replace(["a"], "a", "\\3"))
    with pytest.raises(ValueError, match="rank 0"):
        so.regex_replace(["a"], tf.constant(["a", "b"]), tf.constant("x"))


def test_base64_is_web_safe_and_round_trips():
    data = [b"\xfb\xff\xfe", b"hello", b""]
    enc = run(so.encode_base64(data))
    assert enc.tolist() == [b"-__-", b"aGVsbG8", b""]
    assert run(so.encode_base64(data, pad=True)).tolist() == [b"-__-", b"aGVsbG8=", b""]
    assert run(so.decode_base64(enc)).tolist() == data
    assert run(so.decode_base64([b"aGVsbG8="])).tolist() == [b"hello"]
    with pytest.raises(InvalidArgument, match="Invalid character found in base64"):
        run(so.decode_base64([b"a$b="]))


# ---------------------------------------------------------------------------- registries and namespaces
def test_every_string_op_has_a_shape_fn_kernel_and_no_gradient():
    for op_type in so.STRING_OP_TYPES:
        assert get_op_def(op_type).shape_fn is not None, op_type
        assert has_kernel(op_type, "CPU"), op_type
        assert get_gradient_function(op_type) is NOT_DIFFERENTIABLE, op_type
    x = tf.placeholder(tf.float32, [2])
    y = so.string_to_number(so.as_string(x)) * x
    assert tf.gradients(y, x)[0] is not None  # the string path contributes nothing, without error


def test_public_names():
    for name in so.__all__:
        assert callable(getattr(so, name))
    for name in so.STRINGS_NAMESPACE:
        assert callable(getattr(tf.strings, name)), name
    assert tf.strings.to_hash_bucket_fast is so.string_to_hash_bucket_fast
    assert tf.strings.split is so.strings_split
