"""Logging and Python ops: Print, PrintV2, StringFormat, and PyFunc / PyFuncStateless built through
``tf.py_func`` (the op calls a Python function registered in the process, so only the public API can
build it; the same functions run in TensorFlow and in sparseflow).

Every type through Print's identity (its gradient passes through), rank-0, empty and large tensors
summarized; formats of numbers, strings and booleans, several placeholders and custom ones,
placeholder counts that do not match; output streams; Python functions returning other shapes and
dtypes, several outputs, the wrong dtype, and raising.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import ANY_TYPE, EDGES, OpEntry, Sample, T, empty, regular


def s(value: str):
    return np.array(value.encode(), dtype=object)


def _print(tf, input, data, **attrs):  # noqa: A002 - TensorFlow's argument name
    return tf.raw_ops.Print(input=input, data=data, **attrs)


def _print_v2(tf, input, **attrs):  # noqa: A002
    return tf.raw_ops.PrintV2(input=input, **attrs)


def _format(tf, inputs, **attrs):
    return tf.raw_ops.StringFormat(inputs=inputs, **attrs)


# ---------------------------------------------------------------- Python functions called by PyFunc
def _reverse(x):
    return x[::-1] if np.ndim(x) else x


def _sum_and_count(x):
    return np.asarray(np.sum(x), dtype=x.dtype), np.int64(np.size(x))


def _as_float64(x):
    return np.asarray(x, dtype=np.float64)


def _raises(x):
    raise ValueError("raised by the function")


_FUNCS = {"reverse": (_reverse, None), "sum_and_count": (_sum_and_count, "int64"),
          "as_float64": (_as_float64, None), "raises": (_raises, None)}


def _py_func(tf, x, func, stateful):
    fn, extra = _FUNCS[func]
    tout = [x.dtype] + ([getattr(tf, extra)] if extra else [])
    return tf.py_func(fn, [x], tout if extra else tout[0], stateful=stateful)


def _py_samples(stateful):
    attrs = {"stateful": stateful}
    return [
        Sample("matrix", {"x": regular(3, 2)}, {"func": "reverse", **attrs}),
        Sample("rank0", {"x": regular()}, {"func": "reverse", **attrs}),
        Sample("empty", {"x": empty(0, 2)}, {"func": "reverse", **attrs}),
        Sample("two_outputs", {"x": regular(4)}, {"func": "sum_and_count", **attrs}, kinds=frozenset({"float", "int"})),
        Sample("wrong_dtype", {"x": regular(2)}, {"func": "as_float64", **attrs}, kinds=frozenset({"int"})),
        Sample("raises", {"x": regular(2)}, {"func": "raises", **attrs}),
    ]


_PY_TYPES = ("bool", "int32", "int64", "float32", "float64", "string")
_BIG = T(lambda d: np.arange(24).reshape(2, 3, 4).astype(d if d != "string" else "U").astype(
    object if d == "string" else d) if d != "string" else np.array(
    [str(i).encode() for i in range(24)], dtype=object).reshape(2, 3, 4))

ENTRIES = [
    OpEntry("Print", [
        Sample("matrix", {"input": regular(2, 3), "data": [regular(2, 3)]}, {"message": "x: "}, fd=True),
        Sample("rank0", {"input": regular(), "data": [regular()]}),
        Sample("empty", {"input": empty(0, 3), "data": [empty(0, 3)]}),
        Sample("edges", {"input": EDGES, "data": []}, {"summarize": -1}, grad=False),
        Sample("first_n", {"input": regular(4), "data": [regular(4)]}, {"first_n": 1, "summarize": 2}),
    ], build=_print, dtypes=ANY_TYPE),
    OpEntry("PrintV2", [
        Sample("stderr", {"input": s("hello")}),
        Sample("stdout_no_end", {"input": s("")}, {"output_stream": "stdout", "end": ""}),
        Sample("log_info", {"input": s("to the log")}, {"output_stream": "log(info)"}),
        Sample("not_scalar", {"input": np.array([b"a", b"b"], dtype=object)}),
        Sample("bad_stream", {"input": s("x")}, {"output_stream": "nowhere"}),
    ], build=_print_v2, dtypes=(None,)),
    OpEntry("StringFormat", [
        Sample("vector", {"inputs": [regular(5)]}, {"template": "v = {}", "placeholder": "{}"}),
        Sample("summarized", {"inputs": [_BIG]}, {"template": "{}", "placeholder": "{}", "summarize": 1}),
        Sample("all", {"inputs": [_BIG]}, {"template": "{}", "placeholder": "{}", "summarize": -1}),
        Sample("rank0_and_empty", {"inputs": [regular(), empty(0, 2)]},
               {"template": "a={} b={}", "placeholder": "{}"}),
        Sample("edges", {"inputs": [EDGES]}, {"template": "{}", "placeholder": "{}", "summarize": -1}),
        Sample("custom_placeholder", {"inputs": [regular(2)]}, {"template": "x=%s!", "placeholder": "%s"}),
        Sample("no_inputs", {"inputs": []}, {"template": "plain", "placeholder": "{}"}),
        Sample("too_few_placeholders", {"inputs": [regular(2), regular(2)]},
               {"template": "{}", "placeholder": "{}"}),
    ], build=_format, dtypes=("bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64",
                              "string")),
    OpEntry("PyFunc", _py_samples(True), build=_py_func, dtypes=_PY_TYPES, stateful=True),
    OpEntry("PyFuncStateless", _py_samples(False), build=_py_func, dtypes=_PY_TYPES),
]
