"""simplify: nodes equal to one of their inputs are bypassed, or become an Identity that keeps the name."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.ir import GraphIR, NodeIR
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.simplify import simplify

F32, I32 = dtypes.float32, dtypes.int32

# Fusion would replace the nodes these tests read in explain(); TF users turn it off the same way.
_NO_FUSION = tf.ConfigProto(graph_options=tf.GraphOptions(
    optimizer_options=tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.OFF)))


def const(name, value, dtype=F32):
    arr = np.asarray(value, dtype=dtype.as_numpy_dtype)
    return NodeIR(name, "Const", [], "", {"value": arr, "dtype": dtype}, [dtype], [TensorShape(arr.shape)])


def ph(name, shape, dtype=F32):
    return NodeIR(name, "Placeholder", [], "", {"dtype": dtype, "shape": TensorShape(shape)}, [dtype],
                  [TensorShape(shape)])


def op(name, op_type, inputs, shape, dtype=F32, **attrs):
    return NodeIR(name, op_type, list(inputs), "", {"T": dtype, **attrs}, [dtype], [TensorShape(shape)])


def sink(*inputs):
    return NodeIR("sink", "IdentityN", list(inputs), "", {"T": [F32] * len(inputs)}, [F32] * len(inputs))



def run(nodes, fetches=("sink:0",), targets=()):
    return simplify(GraphIR(nodes), PassContext(fetches=list(fetches), targets=list(targets)))


@pytest.mark.parametrize("op_type, c, x_first", [
    ("Mul", 1.0, True), ("Mul", 1.0, False), ("AddV2", 0.0, True), ("AddV2", 0.0, False),
    ("Sub", 0.0, True), ("RealDiv", 1.0, True), ("Mul", [1.0, 1.0, 1.0], True),
    ("AddV2", [[0.0, 0.0, 0.0]], True),
])
def test_neutral_elements_are_bypassed(op_type, c, x_first):
    x = ph("x", [2, 3])
    ins = ["x:0", "c:0"] if x_first else ["c:0", "x:0"]
    out = run([x, const("c", c), op("y", op_type, ins, [2, 3]), sink("y:0")])
    assert out.node("sink").inputs == ["x:0"]
    assert "y" not in out and "c" not in out  # the unused constant goes too


@pytest.mark.parametrize("op_type, ins, c, x_shape", [
    ("Mul", ["x:0", "c:0"], [1.0, 1.0, 1.0], []),  # broadcasting would grow the result
    ("Mul", ["x:0", "c:0"], [1.0, 1.0, 1.0], [None]),  # x could be [1]
    ("Mul", ["x:0", "c:0"], [1.0], None),  # unknown rank: [1] could add a dimension
    ("Mul", ["x:0", "c:0"], 2.0, [3]),
    ("Mul", ["x:0", "c:0"], [1.0, 2.0, 1.0], [3]),
    ("Sub", ["c:0", "x:0"], 0.0, [3]),  # 0 - x is not x
    ("RealDiv", ["c:0", "x:0"], 1.0, [3]),
    ("AddV2", ["x:0", "c:0"], 1.0, [3]),
])
def test_non_neutral_cases_stay(op_type, ins, c, x_shape):
    x = ph("x", x_shape)
    out = run([x, const("c", c), op("y", op_type, ins, [3]), sink("y:0")])
    assert out.node("sink").inputs == ["y:0"] and out.node("y").op == op_type


def test_scalar_one_times_unknown_rank_is_bypassed():
    out = run([ph("x", None), const("c", 1.0), op("y", "Mul", ["x:0", "c:0"], None), sink("y:0")])
    assert out.node("sink").inputs == ["x:0"]


def test_fetched_node_keeps_its_name_as_identity():
    out = run([ph("x", [3]), const("c", 1.0), op("y", "Mul", ["x:0", "c:0"], [3])], fetches=["y:0"])
    y = out.node("y")
    assert (y.op, y.inputs, y.attrs["T"]) == ("Identity", ["x:0"], F32)
    assert "c" not in out


def test_control_edges_keep_the_node_as_identity():
    n = NodeIR("n", "NoOp", [])
    out = run([n, ph("x", [3]), const("c", 1.0), op("y", "Mul", ["x:0", "c:0", "^n"], [3]), sink("y:0")])
    assert out.node("y").op == "Identity" and out.node("y").inputs == ["x:0", "^n"]
    nodes = [ph("x", [3]), const("c", 1.0), op("y", "Mul", ["x:0", "c:0"], [3]), NodeIR("t", "NoOp", ["^y"])]
    out2 = run(nodes, fetches=(), targets=["t"])
    assert out2.node("y").op == "Identity" and out2.node("t").inputs == ["^y"]


def test_involutions_cancel_in_pairs():
    x = ph("x", [3])
    nodes = [x] + [op(f"n{i}", "Neg", [f"n{i - 1}:0" if i else "x:0"], [3]) for i in range(5)]
    out = run(nodes + [sink("n3:0", "n4:0")])
    assert out.node("sink").inputs == ["x:0", "n4:0"] and out.node("n4").inputs == ["x:0"]
    assert [n.name for n in out] == ["x", "n4", "sink"]
    b = ph("b", [2], dtypes.bool)
    nots = [b, op("l1", "LogicalNot", ["b:0"], [2], dtypes.bool),
            op("l2", "LogicalNot", ["l1:0"], [2], dtypes.bool)]
    out = run(nots + [NodeIR("sink", "Identity", ["l2:0"], "", {"T": dtypes.bool}, [dtypes.bool])])
    assert out.node("sink").inputs == ["b:0"]


def test_identity_chains_collapse_but_not_across_devices():
    x = ph("x", [3])
    out = run([x, op("i1", "Identity", ["x:0"], [3]), op("i2", "StopGradient", ["i1:0"], [3]),
               op("i3", "Identity", ["i2:0"], [3]), sink("i3:0")])
    assert [n.name for n in out] == ["x", "sink"] and out.node("sink").inputs == ["x:0"]
    copy = op("i1", "Identity", ["x:0"], [3]).copy(device="/cpu:1")
    out = run([x, copy, sink("i1:0")])
    assert out.node("sink").inputs == ["i1:0"]


def test_fetched_identity_of_identity_reads_the_source():
    x = ph("x", [3])
    out = run([x, op("i1", "Identity", ["x:0"], [3]), op("y", "Identity", ["i1:0"], [3])], fetches=["y:0"])
    assert [n.name for n in out] == ["x", "y"] and out.node("y").inputs == ["x:0"]


def test_identity_of_a_ref_stays():
    ref = F32._as_ref
    shape = TensorShape([3])
    v = NodeIR("w", "VariableV2", [], "", {"dtype": F32, "shape": shape}, [ref], [shape])
    read = op("w/read", "Identity", ["w:0"], [3])
    out = run([v, read, op("i2", "Identity", ["w/read:0"], [3]), sink("i2:0")])
    assert out.node("sink").inputs == ["w/read:0"] and out.node("w/read").inputs == ["w:0"]


def test_reshape_chains_back_to_the_same_static_shape_are_removed():
    x = ph("x", [2, 3])
    nodes = [x, const("s", [6], I32), const("s2", [2, 3], I32), const("ax", 1, I32),
             op("r1", "Reshape", ["x:0", "s:0"], [6]), op("r2", "Reshape", ["r1:0", "s2:0"], [2, 3]),
             op("e", "ExpandDims", ["x:0", "ax:0"], [2, 1, 3]),
             op("q", "Squeeze", ["e:0"], [2, 3], squeeze_dims=[1]),
             op("r3", "Reshape", ["x:0", "s:0"], [6]), sink("r2:0", "q:0", "r3:0")]
    out = run(nodes)
    assert out.node("sink").inputs == ["x:0", "x:0", "r3:0"]
    partial = ph("p", [None, 3])
    r = op("r", "Reshape", ["p:0", "s2:0"], [None, 3])
    out = run([partial, const("s2", [-1, 3], I32), r, sink("r:0")])
    assert out.node("sink").inputs == ["r:0"]  # not provable without a fully known shape


def test_identity_transpose_and_same_type_cast_are_removed():
    x = ph("x", [2, 3])
    nodes = [x, const("p", [0, 1], I32), const("p2", [1, 0], I32),
             op("t", "Transpose", ["x:0", "p:0"], [2, 3], Tperm=I32),
             op("t2", "Transpose", ["x:0", "p2:0"], [3, 2]),
             NodeIR("c", "Cast", ["x:0"], "", {"SrcT": F32, "DstT": F32}, [F32], [TensorShape([2, 3])]),
             NodeIR("c2", "Cast", ["x:0"], "", {"SrcT": F32, "DstT": I32}, [I32], [TensorShape([2, 3])]),
             sink("t:0", "t2:0", "c:0", "c2:0")]
    out = run(nodes)
    assert out.node("sink").inputs == ["x:0", "t2:0", "x:0", "c2:0"]


# ---------------------------------------------------------------------------- end to end
def test_session_results_are_unchanged_by_simplification():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.negative(tf.negative(x * 1.0 + 0.0))
    z = tf.identity(y * tf.ones([3]), name="z")
    w = tf.placeholder(tf.float32, [], name="w")
    grown = w * tf.ones([3])  # broadcasting: must not become w
    feed = {x: np.arange(6, dtype=np.float32).reshape(2, 3), w: 2.0}
    with tf.Session(config=_NO_FUSION) as sess:
        zv, yv, gv = sess.run([z, y, grown], feed)
        text = sess.explain([z, y], feed)
    np.testing.assert_array_equal(zv, feed[x])
    np.testing.assert_array_equal(yv, feed[x])
    np.testing.assert_array_equal(gv, [2.0, 2.0, 2.0])
    body = [line for line in text.splitlines() if line.startswith("%")]
    assert not any(" = Neg[" in line or " = Mul[" in line for line in body), text
    assert any(line.startswith(f"%{y.op.name} = Identity[") for line in body)  # fetched: name kept
