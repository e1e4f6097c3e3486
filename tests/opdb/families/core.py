"""Graph basics: Const, Placeholder, PlaceholderWithDefault, Identity, IdentityN, StopGradient, NoOp,
CheckNumerics, Assert."""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import ANY_TYPE, EDGES, FLOATS, OpEntry, Sample, empty, regular


def _const(tf, value):
    return tf.constant(value)


def _unfed(tf, shape):
    return tf.placeholder(tf.float32, shape=shape) + 1.0


ENTRIES = [
    OpEntry("Const", [
        Sample("matrix", {}, {"value": np.arange(6, dtype=np.float32).reshape(2, 3)}),
        Sample("rank0_int64", {}, {"value": np.int64(-7)}),
        Sample("empty", {}, {"value": np.zeros((0, 2), np.int32)}),
        Sample("strings", {}, {"value": np.array([b"a", b"", b"xyz"], dtype=object)}),
        Sample("edges", {}, {"value": np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float64)}),
        Sample("complex", {}, {"value": np.array([1 + 2j, -0.5j], np.complex128)}),
        Sample("bool", {}, {"value": np.array([[True], [False]])}),
    ], build=_const, dtypes=(None,)),
    # Every non-constant mode feeds Placeholders; here what happens when one is not fed.
    OpEntry("Placeholder", [
        Sample("unfed_known", {}, {"shape": [2, None]}),
        Sample("unfed_unknown_rank", {}, {"shape": None}),
        Sample("unfed_scalar", {}, {"shape": []}),
    ], build=_unfed, dtypes=(None,)),
    OpEntry("PlaceholderWithDefault", [
        Sample("exact", {"input": regular(2, 3)}, {"shape": [2, 3]}, fd=True),
        Sample("looser", {"input": regular(2, 3)}, {"shape": [None, 3]}, fd=True),
        Sample("unknown_rank", {"input": regular(2, 3)}, {"shape": None}),
        Sample("rank0", {"input": regular()}, {"shape": []}),
        Sample("empty", {"input": empty(0, 3)}, {"shape": [None, 3]}),
        Sample("incompatible", {"input": regular(2, 3)}, {"shape": [3, 2]}),
    ], dtypes=ANY_TYPE, differs={"incompatible|*|dims": "TensorFlow forwards a default whose shape contradicts "
                                                        "the declared one (the static shape lies); sparseflow "
                                                        "raises InvalidArgumentError",
                                 "incompatible|*|rank": "as for dims"}),
]

for _op in ("Identity", "StopGradient"):
    ENTRIES.append(OpEntry(_op, [
        Sample("matrix", {"input": regular(2, 3)}, fd=_op == "Identity"),
        Sample("rank0", {"input": regular()}),
        Sample("empty", {"input": empty(0, 3)}),
        Sample("edges", {"input": EDGES}),
    ], dtypes=ANY_TYPE))

ENTRIES += [
    OpEntry("IdentityN", [
        Sample("two", {"input": [regular(2, 3), regular()]}, fd=True),
        Sample("one", {"input": [regular(2)]}, fd=True),
        Sample("with_empty", {"input": [empty(0, 2), regular(1)]}),
        Sample("mixed_types", {"input": [regular(2), np.array([1, 2], np.int64), np.array([b"s"], object)]}),
    ], dtypes=("float32", "float64")),
    OpEntry("NoOp", [Sample("run", {})], build=lambda tf: tf.no_op(), dtypes=(None,)),
    OpEntry("CheckNumerics", [
        Sample("finite", {"tensor": regular(2, 3)}, {"message": "bad"}, fd=True),
        Sample("rank0", {"tensor": regular()}, {"message": "bad"}),
        Sample("empty", {"tensor": empty(0, 3)}, {"message": "bad"}),
        Sample("nan", {"tensor": regular(3, lo=np.nan, hi=np.nan)}, {"message": "has nan"}, kinds=FLOATS),
        Sample("inf", {"tensor": regular(2, lo=np.inf, hi=np.inf)}, {"message": "has inf"}, kinds=FLOATS),
    ]),
    OpEntry("Assert", [
        Sample("holds", {"condition": np.bool_(True), "data": [regular(3), np.array([b"why"], object)]}),
        Sample("fails", {"condition": np.bool_(False), "data": [regular(3)]}, {"summarize": 2}),
        Sample("no_data", {"condition": np.bool_(True), "data": []}),
        Sample("condition_not_scalar", {"condition": np.array([True, True]), "data": [regular(1)]}),
    ], dtypes=("float32",)),
]
