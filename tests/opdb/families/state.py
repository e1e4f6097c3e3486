"""Variables and the ops that update them: VariableV2, Assign*, Scatter*, CountUpTo,
IsVariableInitialized.

Each ref input is a TF1 reference variable initialized from the sample's value (fed through a
placeholder outside const mode, so its shape may be unknown); the entry returns the op's output
and, read after it, the variable. Indices as int32 and int64, repeated and out of range; empty
updates; rank-0 variables.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, T, empty, i32, i64, regular

_NUMBERS = ("int32", "int64", "float16", "float32", "float64", "complex64")


def make_variable(tf, value, name):
    return tf.Variable(value, validate_shape=False, use_resource=False, name=name)


def with_variables(op_type, refs):
    """A builder that turns the ``refs`` inputs into variables and reads each after the op ran."""

    def build(tf, **kw):
        variables = {r: make_variable(tf, kw[r], r) for r in refs}
        kw.update(variables)
        out = getattr(tf.raw_ops, op_type)(**kw)
        deps = [out.op if hasattr(out, "op") else out]
        with tf.control_dependencies(deps):
            return [out] + [variables[r].read_value() for r in refs]

    return build


def _state(op_type, samples, refs=("ref",), **kw):
    for s in samples:
        s.grad = False
    return OpEntry(op_type, samples, build=with_variables(op_type, list(refs)), stateful=True, **kw)


def _vs(name, ref, value, **attrs):
    return Sample(name, {"ref": ref, "value": value}, attrs)


ENTRIES = [
    _state("Assign", [
        _vs("same_shape", regular(2, 3), regular(2, 3, seed=1)),
        _vs("rank0", regular(), regular(seed=1)),
        _vs("empty", empty(0, 2), empty(0, 2)),
        _vs("new_shape_unvalidated", regular(2), regular(3, seed=1), validate_shape=False),
        _vs("shape_mismatch", regular(2), regular(3, seed=1)),
    ], dtypes=("bool", "int32", "float32", "float64", "string")),
    _state("AssignAdd", [_vs("matrix", regular(2, 3), regular(2, 3, seed=1)), _vs("rank0", regular(), T(2)),
                         _vs("empty", empty(0), empty(0)), _vs("mismatch", regular(2), regular(3))],
           dtypes=_NUMBERS),
    _state("AssignSub", [_vs("matrix", regular(2, 3), regular(2, 3, seed=1)), _vs("rank0", regular(), T(2)),
                         _vs("empty", empty(0), empty(0)), _vs("mismatch", regular(2), regular(3))],
           dtypes=_NUMBERS),
    _state("CountUpTo", [
        Sample("below", {"ref": T(3)}, {"limit": 5}),
        Sample("at_limit", {"ref": T(5)}, {"limit": 5}),
        Sample("not_scalar", {"ref": T([1])}, {"limit": 5}),
    ], dtypes=("int32", "int64")),
]


def _scatter(name, ref, indices, updates):
    return Sample(name, {"ref": ref, "indices": indices, "updates": updates})


for _op in ("ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv", "ScatterMax", "ScatterMin", "ScatterUpdate"):
    _types = ("int32", "int64", "float32", "float64") if _op in ("ScatterMax", "ScatterMin", "ScatterDiv") \
        else _NUMBERS
    ENTRIES.append(_state(_op, [
        _scatter("rows", regular(4, 2, lo=1, hi=3), i32([2, 0]), regular(2, 2, lo=1, hi=3, seed=1)),
        _scatter("repeated_int64", regular(3, lo=1, hi=3), i64([1, 1, 2]), regular(3, lo=1, hi=3, seed=1)),
        _scatter("scalar_index", regular(3, 2, lo=1, hi=3), i32(1), regular(2, lo=1, hi=3, seed=1)),
        _scatter("empty_updates", regular(3, 2), i32([]), empty(0, 2)),
        _scatter("out_of_range", regular(3), i32([3]), regular(1)),
        _scatter("negative_index", regular(3), i32([-1]), regular(1)),
        _scatter("updates_mismatch", regular(3, 2), i32([0]), regular(1, 3)),
    ], dtypes=_types, differs={f"{s}|int*|const": "TensorFlow's constant folding of an integer ScatterMul/Div "
                                                  "skips the index check; sparseflow raises InvalidArgumentError"
                               for s in ("out_of_range", "negative_index")}))

for _op in ("ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub"):
    ENTRIES.append(_state(_op, [
        _scatter("elements", regular(3, 2), i32([[0, 1], [2, 0]]), regular(2, seed=1)),
        _scatter("rows_int64", regular(3, 2), i64([[1], [1]]), regular(2, 2, seed=1)),
        _scatter("empty", regular(3, 2), i32(np.zeros((0, 2), np.int32)), empty(0)),
        _scatter("out_of_range", regular(3, 2), i32([[3, 0]]), regular(1)),
        _scatter("updates_mismatch", regular(3, 2), i32([[0]]), regular(1, 3)),
    ], dtypes=("int32", "float32", "float64", "complex64")))


def _variable_v2(tf, value, shape, dtype):
    v = tf.raw_ops.VariableV2(shape=shape, dtype=dtype)
    return tf.raw_ops.Assign(ref=v, value=value, validate_shape=shape is not None)


def _uninitialized_read(tf, shape, dtype):
    return tf.identity(tf.raw_ops.VariableV2(shape=shape, dtype=dtype))


def _is_initialized(tf, value, initialize):
    v = make_variable(tf, value, "v") if initialize else tf.raw_ops.VariableV2(shape=[2], dtype=value.dtype)
    return tf.raw_ops.IsVariableInitialized(ref=v)


ENTRIES += [
    OpEntry("VariableV2", [
        Sample("assigned", {"value": regular(2, 3)}, {"shape": [2, 3], "dtype": "float32"}, grad=False),
        Sample("unknown_shape", {"value": regular(4)}, {"shape": None, "dtype": "float32"}, grad=False),
        Sample("wrong_shape", {"value": regular(3)}, {"shape": [2], "dtype": "float32"}, grad=False),
    ], build=_variable_v2, dtypes=("float32",), stateful=True),
    OpEntry("VariableV2", [Sample("read", {}, {"shape": [2], "dtype": "float32"})], build=_uninitialized_read,
            name="VariableV2_uninitialized", dtypes=(None,), stateful=True),
    OpEntry("IsVariableInitialized", [
        Sample("initialized", {"value": regular(2)}, {"initialize": True}, grad=False),
        Sample("uninitialized", {"value": regular(2)}, {"initialize": False}, grad=False),
    ], build=_is_initialized, dtypes=("float32",), stateful=True),
]
