"""cse: equal nodes are merged (hash-consing), stateful and structural nodes never are."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.ir import GraphIR, NodeIR
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.cse import cse

F32 = dtypes.float32

# Fusion would replace the nodes these tests read in explain(); TF users turn it off the same way.
_NO_FUSION = tf.ConfigProto(graph_options=tf.GraphOptions(
    optimizer_options=tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.OFF)))


def const(name, value, dtype=F32, inputs=(), device=""):
    arr = np.asarray(value, dtype=dtype.as_numpy_dtype)
    return NodeIR(name, "Const", list(inputs), device, {"value": arr, "dtype": dtype}, [dtype],
                  [TensorShape(arr.shape)])


def op(name, op_type, inputs, dtype=F32, device="", **attrs):
    return NodeIR(name, op_type, list(inputs), device, {"T": dtype, **attrs}, [dtype], [TensorShape([])])


def sink(*inputs):
    n = len(inputs)
    return NodeIR("y", "IdentityN", list(inputs), "", {"T": [F32] * n}, [F32] * n, [TensorShape([])] * n)



def names(ir):
    return sorted(n.name for n in ir)


def test_equal_constants_merge_and_consumers_are_rewired():
    g = GraphIR([const("a", 1.0), const("b", 1.0), op("ia", "Identity", ["a:0"]),
                 op("ib", "Identity", ["b:0"]), sink("ia:0", "ib:0")])
    out = cse(g, PassContext(fetches=["y:0"]))
    # b merges into a, then ib (now Identity(a)) merges into ia: the merge cascades in one sweep.
    assert names(out) == ["a", "ia", "y"]
    assert out.node("y").inputs == ["ia:0", "ia:0"]


@pytest.mark.parametrize("v1, d1, v2, d2", [
    (1.0, F32, 1.0, dtypes.float64),  # same value, other dtype
    (0.0, F32, -0.0, F32),  # equal as numbers, different bytes
    ([1.0, 2.0], F32, [2.0, 1.0], F32),
    ([[1.0, 2.0]], F32, [1.0, 2.0], F32),  # same bytes, other shape
])
def test_constants_that_differ_in_dtype_shape_or_bytes_stay_apart(v1, d1, v2, d2):
    g = GraphIR([const("a", v1, d1), const("b", v2, d2)])
    assert names(cse(g, PassContext(targets=[]))) == ["a", "b"]


def test_nan_constants_compare_by_bytes_and_merge():
    g = GraphIR([const("a", np.nan), const("b", np.nan), sink("a:0", "b:0")])
    assert names(cse(g, PassContext())) == ["a", "y"]


def test_string_constants_merge_by_value():
    s = dtypes.string
    a = NodeIR("a", "Const", [], "", {"value": np.array([b"x", b"y"], object), "dtype": s}, [s])
    b = NodeIR("b", "Const", [], "", {"value": np.array([b"x", b"y"], object), "dtype": s}, [s])
    c = NodeIR("c", "Const", [], "", {"value": np.array([b"x", b"z"], object), "dtype": s}, [s])
    y = NodeIR("y", "IdentityN", ["a:0", "b:0", "c:0"], "", {"T": [s, s, s]}, [s, s, s])
    out = cse(GraphIR([a, b, c, y]), PassContext())
    assert out.node("y").inputs == ["a:0", "a:0", "c:0"]


def test_nodes_on_different_devices_or_with_different_attrs_stay_apart():
    g = GraphIR([const("a", 1.0), op("i1", "Identity", ["a:0"], device="/cpu:0"),
                 op("i2", "Identity", ["a:0"], device="/cpu:1"),
                 op("i3", "Identity", ["a:0"], device="/cpu:1"),
                 op("i4", "Identity", ["a:0"], _class=["loc:@a"])])
    assert names(cse(g, PassContext())) == ["a", "i1", "i2", "i4"]


def test_control_inputs_compare_as_a_set():
    g = GraphIR([const("a", 1.0), const("b", 2.0), const("c", 3.0),
                 op("i1", "Identity", ["a:0", "^b", "^c"]), op("i2", "Identity", ["a:0", "^c", "^b"]),
                 op("i3", "Identity", ["a:0", "^b"]), sink("i1:0", "i2:0", "i3:0")])
    out = cse(g, PassContext())
    assert out.node("y").inputs == ["i1:0", "i1:0", "i3:0"]


def test_control_edges_to_a_merged_node_are_rewired():
    g = GraphIR([const("a", 1.0), op("i1", "Identity", ["a:0"]), op("i2", "Identity", ["a:0"]),
                 NodeIR("n", "NoOp", ["^i2", "^i1"])])
    out = cse(g, PassContext(targets=["n"]))
    assert out.node("n").inputs == ["^i1"]


def test_fetched_duplicate_keeps_its_name_as_identity():
    g = GraphIR([const("a", 1.0), const("b", 1.0)])
    out = cse(g, PassContext(fetches=["a:0", "b:0"]))
    assert out.node("b").op == "Identity" and out.node("b").inputs == ["a:0"]


def test_stateful_ops_placeholders_and_feeds_are_never_merged():
    g = GraphIR([NodeIR("p1", "Placeholder", [], "", {"dtype": F32}, [F32]),
                 NodeIR("p2", "Placeholder", [], "", {"dtype": F32}, [F32]),
                 NodeIR("f1", "_Feed", [], "", {"T": F32, "index": 0, "tensor_name": "p:0"}, [F32]),
                 const("a", 1.0), op("i1", "Identity", ["a:0"]), op("i2", "Identity", ["a:0"])])
    out = cse(g, PassContext(stateful_ops={"Identity"}))
    assert names(out) == ["a", "f1", "i1", "i2", "p1", "p2"]


def test_random_ops_are_not_merged():
    shape = const("shape", [2], dtypes.int32)
    attrs = {"T": dtypes.int32, "dtype": F32, "seed": 0, "seed2": 0}
    r1 = NodeIR("r1", "RandomUniform", ["shape:0"], "", attrs, [F32], [TensorShape([2])])
    r2 = r1.copy(name="r2")
    out = cse(GraphIR([shape, r1, r2]), PassContext())
    assert names(out) == ["r1", "r2", "shape"]


def test_commutative_ops_merge_with_swapped_inputs_others_do_not():
    g = GraphIR([const("a", 1.0), const("b", 2.0),
                 op("add1", "AddV2", ["a:0", "b:0"]), op("add2", "AddV2", ["b:0", "a:0"]),
                 op("mul1", "Mul", ["a:0", "b:0"]), op("mul2", "Mul", ["b:0", "a:0"]),
                 op("sub1", "Sub", ["a:0", "b:0"]), op("sub2", "Sub", ["b:0", "a:0"])])
    assert names(cse(g, PassContext())) == ["a", "add1", "b", "mul1", "sub1", "sub2"]


def test_string_add_is_not_commutative():
    s = dtypes.string
    a = NodeIR("a", "Placeholder", [], "", {"dtype": s}, [s])
    b = NodeIR("b", "Placeholder", [], "", {"dtype": s}, [s])
    g = GraphIR([a, b, op("ab", "Add", ["a:0", "b:0"], s), op("ba", "Add", ["b:0", "a:0"], s)])
    assert names(cse(g, PassContext())) == ["a", "ab", "b", "ba"]


def test_unchanged_graph_is_returned_as_is():
    g = GraphIR([const("a", 1.0), op("i", "Identity", ["a:0"])])
    assert cse(g, PassContext()) is g


# ---------------------------------------------------------------------------- end to end
def test_session_runs_one_copy_of_duplicated_subexpressions():
    x = tf.placeholder(tf.float32, [3], name="x")
    a = x * 2.0 + 1.0
    b = x * 2.0 + 1.0
    y = tf.identity(a * b, name="y")
    with tf.Session(config=_NO_FUSION) as sess:
        v = sess.run(y, {x: [1.0, 2.0, 3.0]})
        text = sess.explain(y, {x: [1.0, 2.0, 3.0]})
    np.testing.assert_allclose(v, (np.array([1, 2, 3.0]) * 2 + 1) ** 2)
    body = [line for line in text.splitlines() if line.startswith("%")]
    assert sum(" = Mul[" in line for line in body) == 2  # x*2 once, a*b once
    assert sum(" = AddV2[" in line or " = Add[" in line for line in body) == 1
