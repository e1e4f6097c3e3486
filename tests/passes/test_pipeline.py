"""The pass pipeline: order, logging, disabled passes, and the whole chain on one graph."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.ir import GraphIR, NodeIR
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.passes import optional_passes
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.pipeline import default_pipeline, run_pipeline
from sparseflow._src.runtime.master import evaluate_constant_subgraph as _evaluate_constant_subgraph

F32 = dtypes.float32
D0, D1 = (f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(2))


def const(name, value, device=""):
    arr = np.asarray(value, np.float32)
    return NodeIR(name, "Const", [], device, {"value": arr, "dtype": F32}, [F32], [TensorShape(arr.shape)])


def graph():
    """x (placeholder) and two equal constants; y = Identity(Identity(c1)) + ... on CPU:1."""
    shape = TensorShape([2])
    x = NodeIR("x", "Placeholder", [], "", {"dtype": F32, "shape": shape}, [F32], [shape])
    c1, c2 = const("c1", [1.0, 2.0]), const("c2", [1.0, 2.0])
    i1 = NodeIR("i1", "Identity", ["c1:0"], "", {"T": F32}, [F32], [TensorShape([2])])
    i2 = NodeIR("i2", "Identity", ["c2:0"], "", {"T": F32}, [F32], [TensorShape([2])])
    y = NodeIR("y", "IdentityN", ["x:0", "i1:0", "i2:0"], "/cpu:1", {"T": [F32] * 3}, [F32] * 3,
               [TensorShape([2])] * 3)
    return GraphIR([x, c1, c2, i1, i2, y])


def ctx(**kw):
    return PassContext(feeds=["x:0"], fetches=["y:0", "y:2"], devices=[D0, D1], client_device=D0,
                       evaluate=_evaluate_constant_subgraph, **kw)


ORDER = ["prune", "cse", "constant_fold", "simplify", "place", "fuse", "partition"]


def in_order(names):
    """ORDER is a subsequence of names (other passes, e.g. fuse, may sit between)."""
    it = iter(names)
    return all(any(n == want for n in it) for want in ORDER)


def test_default_order_is_prune_then_the_optimizing_passes():
    names = [name for name, _ in default_pipeline()]
    assert names[0] == "prune" and in_order(names) and len(set(names)) == len(names)
    tail = [name for name, _ in optional_passes.PASSES]
    tail = tail[tail.index("place"):]
    assert tail[-1] == "partition"  # fuse, coalesce, remap, group_updates merge nodes of one device
    assert {"fuse", "coalesce", "remap", "group_updates"} <= set(tail)


def test_each_pass_is_logged_with_node_counts():
    c = ctx()
    out = run_pipeline(graph(), c, verify=True)
    assert [e[0] for e in c.log] == [name for name, _ in default_pipeline()]
    for _, before, after, ms in c.log:
        assert isinstance(before, int) and isinstance(after, int) and ms >= 0
    y = out.node("y")
    assert y.device == D1
    # c2 merged into c1, i1 folded into a Const named i1, moved next to its consumer on CPU:1
    assert "c2" not in out and "i2" not in out and out.node("i1").op == "Const"
    assert out.node("i1").device == D1
    assert {n.op for n in out} >= {"_Feed", "_Fetch", "_Send", "_Recv", "IdentityN", "Const"}
    assert sorted(c.partitions) == [D0, D1]


def test_disabled_passes_are_skipped_and_not_logged():
    c = ctx(disabled={"cse", "constant_fold", "simplify", "remap", "group_updates", "fuse"})
    out = run_pipeline(graph(), c)
    assert [e[0] for e in c.log] == ["prune", "place", "coalesce", "partition"]
    assert "c2" in out and out.node("i1").op == "Identity"


def test_placement_lines_stay_in_the_log_next_to_the_pass_entries():
    c = ctx(log_device_placement=True)
    run_pipeline(graph(), c)
    lines = [e for e in c.log if isinstance(e, str)]
    passes = [e[0] for e in c.log if isinstance(e, tuple)]
    assert passes == [name for name, _ in default_pipeline()]
    assert f"y: (IdentityN): {D1}" in lines and f"_feed_0: (_Feed): {D0}" in lines


def test_pipeline_errors_name_the_node():
    g = graph()
    g.replace(g.node("y").copy(device="/device:GPU:0"))
    with pytest.raises(ValueError, match="Cannot assign a device for operation 'y'"):
        run_pipeline(g, ctx(allow_soft_placement=False))


def test_session_explain_lists_the_passes():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.identity(tf.identity(x), name="y")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [1.0, 2.0])
        text = sess.explain(y, {x: [1.0, 2.0]})
    first = text.splitlines()[0]
    for name in ORDER:
        assert f"{name}(" in first
