"""String ops: formatting, parsing, hashing, case, splitting, joining, regexes, base64, substrings.

Empty strings, scalars, empty tensors, non-ASCII UTF-8 bytes, numbers at the edges of their
types, malformed inputs.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import EDGES, OpEntry, Sample, T, i32


def s(*values):
    return np.array([v.encode() if isinstance(v, str) else v for v in values], dtype=object)


def s2(rows):
    return np.array([[v.encode() for v in r] for r in rows], dtype=object)


_NONE = np.zeros((0,), dtype=object)
_WORDS = s("Hello", "", "wOrLd 42", "ünïcode", "  pad  ")
_NO_TYPE = (None,)

ENTRIES = [
    OpEntry("AsString", [
        Sample("values", {"input": T([0, 1, -7, 42])}),
        Sample("edges", {"input": EDGES}),
        Sample("precision", {"input": T([3.14159, -2.5])}, {"precision": 2}),
        Sample("scientific_width", {"input": T([1234.5])}, {"scientific": True, "width": 12, "precision": 3}),
        Sample("width_fill", {"input": T([7, 42])}, {"width": 5, "fill": "0"}),
        Sample("empty", {"input": T(np.zeros((0, 2)))}),
        Sample("rank0", {"input": T(5)}),
    ], dtypes=("bool", "int8", "int32", "int64", "float32", "float64")),
    OpEntry("StringToNumber", [
        Sample("floats", {"string_tensor": s("1.5", "-2", "1e3", "inf", "-inf", "nan", " 3")}),
        Sample("ints", {"string_tensor": s("12", "-7", "0")}, {"out_type": "int32"}),
        Sample("int64_extremes", {"string_tensor": s("9223372036854775807", "-9223372036854775808")},
               {"out_type": "int64"}),
        Sample("int32_overflow", {"string_tensor": s("2147483648")}, {"out_type": "int32"}),
        Sample("bad", {"string_tensor": s("1.5x")}),
        Sample("empty_string", {"string_tensor": s("")}, {"out_type": "float64"}),
        Sample("empty", {"string_tensor": _NONE}),
    ], dtypes=_NO_TYPE),
    OpEntry("StringToHashBucketFast", [
        Sample("words", {"input": _WORDS}, {"num_buckets": 10}),
        Sample("one_bucket", {"input": s("a", "b")}, {"num_buckets": 1}),
        Sample("empty", {"input": _NONE}, {"num_buckets": 3}),
    ], dtypes=_NO_TYPE),
    OpEntry("StringToHashBucket", [
        Sample("words", {"string_tensor": _WORDS}, {"num_buckets": 10}),
        Sample("empty", {"string_tensor": _NONE}, {"num_buckets": 3}),
    ], dtypes=_NO_TYPE),
    OpEntry("StringToHashBucketStrong", [
        Sample("words", {"input": _WORDS}, {"num_buckets": 10, "key": [1, 2]}),
        Sample("empty", {"input": _NONE}, {"num_buckets": 3, "key": [0, 0]}),
        Sample("bad_key", {"input": s("a")}, {"num_buckets": 3, "key": [1]}),
    ], dtypes=_NO_TYPE),
    OpEntry("StringLength", [
        Sample("bytes", {"input": _WORDS}),
        Sample("chars", {"input": _WORDS}, {"unit": "UTF8_CHAR"}),
        Sample("empty", {"input": _NONE}),
        Sample("rank0", {"input": np.array(b"abc", dtype=object)}),
    ], dtypes=_NO_TYPE),
    OpEntry("StringLower", [Sample("words", {"input": _WORDS}), Sample("empty", {"input": _NONE}),
                            Sample("utf8", {"input": s("ÄÖ")}, {"encoding": "utf-8"})], dtypes=_NO_TYPE),
    OpEntry("StringUpper", [Sample("words", {"input": _WORDS}), Sample("empty", {"input": _NONE}),
                            Sample("utf8", {"input": s("äö")}, {"encoding": "utf-8"})], dtypes=_NO_TYPE),
    OpEntry("StringStrip", [Sample("words", {"input": _WORDS}), Sample("empty", {"input": _NONE}),
                            Sample("whitespace", {"input": s("\t a \n", "   ")})], dtypes=_NO_TYPE),
    OpEntry("StringJoin", [
        Sample("pairs", {"inputs": [s("a", "b"), s("x", "")]}, {"separator": "-"}),
        Sample("broadcast_scalar", {"inputs": [s("a", "b"), np.array(b"!", dtype=object)]}),
        Sample("one", {"inputs": [s("solo")]}),
        Sample("empty", {"inputs": [_NONE, _NONE]}),
        Sample("mismatch", {"inputs": [s("a", "b"), s("x", "y", "z")]}),
    ], dtypes=_NO_TYPE),
    OpEntry("ReduceJoin", [
        Sample("rows", {"inputs": s2([["a", "b"], ["c", ""]]), "reduction_indices": i32(1)}, {"separator": ","}),
        Sample("all_keep", {"inputs": s2([["a", "b"], ["c", "d"]]), "reduction_indices": i32([0, 1])},
               {"keep_dims": True}),
        Sample("negative_axis", {"inputs": s2([["a", "b"]]), "reduction_indices": i32(-2)}),
        Sample("no_axes", {"inputs": s("a", "b"), "reduction_indices": i32([])}),
        Sample("empty", {"inputs": np.zeros((0, 2), object), "reduction_indices": i32(0)}),
        Sample("axis_out_of_range", {"inputs": s("a"), "reduction_indices": i32(1)}),
    ], dtypes=_NO_TYPE),
    OpEntry("StringSplit", [
        Sample("spaces", {"input": s("a b  c", "", "d"), "delimiter": np.array(b" ", dtype=object)}),
        Sample("keep_empty", {"input": s("a,,b"), "delimiter": np.array(b",", dtype=object)}, {"skip_empty": False}),
        Sample("any_of", {"input": s("a,b;c"), "delimiter": np.array(b",;", dtype=object)}),
        Sample("empty_delimiter", {"input": s("abc"), "delimiter": np.array(b"", dtype=object)}),
        Sample("empty", {"input": _NONE, "delimiter": np.array(b" ", dtype=object)}),
        Sample("matrix_input", {"input": s2([["a"]]), "delimiter": np.array(b" ", dtype=object)}),
    ], dtypes=_NO_TYPE),
    OpEntry("StringSplitV2", [
        Sample("whitespace", {"input": s(" a  b ", "", "c"), "sep": np.array(b"", dtype=object)}),
        Sample("sep", {"input": s("a<>b<><>c"), "sep": np.array(b"<>", dtype=object)}),
        Sample("maxsplit", {"input": s("a,b,c,d"), "sep": np.array(b",", dtype=object)}, {"maxsplit": 2}),
        Sample("empty", {"input": _NONE, "sep": np.array(b",", dtype=object)}),
    ], dtypes=_NO_TYPE),
    OpEntry("RegexFullMatch", [
        Sample("digits", {"input": s("123", "12a", ""), "pattern": np.array(b"[0-9]*", dtype=object)}),
        Sample("empty", {"input": _NONE, "pattern": np.array(b"a", dtype=object)}),
        Sample("bad_pattern", {"input": s("a"), "pattern": np.array(b"(", dtype=object)}),
    ], dtypes=_NO_TYPE),
    OpEntry("StaticRegexFullMatch", [
        Sample("digits", {"input": s("123", "12a", "")}, {"pattern": "[0-9]+"}),
        Sample("empty", {"input": _NONE}, {"pattern": "a"}),
    ], dtypes=_NO_TYPE),
    OpEntry("RegexReplace", [
        Sample("global", {"input": s("a1b22c", ""), "pattern": np.array(b"[0-9]+", dtype=object),
                          "rewrite": np.array(b"#", dtype=object)}),
        Sample("first_only_group", {"input": s("ab-cd-ef"), "pattern": np.array(b"([a-z]+)-", dtype=object),
                                    "rewrite": np.array(b"<\\1>", dtype=object)}, {"replace_global": False}),
        Sample("empty", {"input": _NONE, "pattern": np.array(b"a", dtype=object),
                         "rewrite": np.array(b"b", dtype=object)}),
    ], dtypes=_NO_TYPE),
    OpEntry("StaticRegexReplace", [
        Sample("global", {"input": s("a1b22c", "")}, {"pattern": "[0-9]+", "rewrite": "#"}),
        Sample("first_only", {"input": s("aaa")}, {"pattern": "a", "rewrite": "b", "replace_global": False}),
        Sample("empty", {"input": _NONE}, {"pattern": "a", "rewrite": "b"}),
    ], dtypes=_NO_TYPE),
    OpEntry("EncodeBase64", [
        Sample("plain", {"input": s("", "f", "fo", "foo", "\xff\xfe")}),
        Sample("padded", {"input": s("f", "fo")}, {"pad": True}),
        Sample("empty", {"input": _NONE}),
    ], dtypes=_NO_TYPE),
    OpEntry("DecodeBase64", [
        Sample("plain", {"input": s("", "Zg", "Zm8", "Zm9v", "__4")}),
        Sample("padded", {"input": s("Zg==", "Zm8=")}),
        Sample("bad", {"input": s("Z")}),
        Sample("empty", {"input": _NONE}),
    ], dtypes=_NO_TYPE),
    OpEntry("Substr", [
        Sample("vector", {"input": s("Hello", "abc"), "pos": T([1, 0]), "len": T([3, 10])}),
        Sample("scalar_pos_len", {"input": s("Hello", "abcdef"), "pos": T(2), "len": T(2)}),
        Sample("negative_pos", {"input": s("Hello"), "pos": T([-3]), "len": T([2])}),
        Sample("utf8_chars", {"input": s("ünïcode"), "pos": T([1]), "len": T([3])}, {"unit": "UTF8_CHAR"}),
        Sample("pos_out_of_range", {"input": s("abc"), "pos": T([4]), "len": T([1])}),
        Sample("negative_len", {"input": s("abc"), "pos": T([0]), "len": T([-1])}),
        Sample("empty", {"input": _NONE, "pos": T(np.zeros(0)), "len": T(np.zeros(0))}),
    ], dtypes=("int32", "int64")),
]

