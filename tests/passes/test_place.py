"""place: explicit specs, colocation groups, TF's heuristics, soft and hard placement errors."""

import types

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.ir import GraphIR, NodeIR
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.place import colocation_groups, place

F32 = dtypes.float32
CPU = [f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(3)]


def ctx(soft=True, log=False, devices=CPU):
    return PassContext(devices=list(devices), client_device=devices[0], allow_soft_placement=soft,
                       log_device_placement=log)


def const(name, device="", inputs=()):
    return NodeIR(name, "Const", list(inputs), device, {"value": np.float32(1), "dtype": F32}, [F32],
                  [TensorShape([])])


def op(name, op_type, inputs, device="", **attrs):
    return NodeIR(name, op_type, list(inputs), device, {"T": F32, **attrs}, [F32], [TensorShape([2])])


def devices(ir):
    return {n.name: n.device for n in ir}


@pytest.mark.parametrize("spec, want", [
    ("/device:CPU:1", CPU[1]), ("/cpu:2", CPU[2]), ("/job:localhost", CPU[0]), ("/device:CPU:*", CPU[0]),
    ("/job:localhost/replica:0/task:0/device:CPU:1", CPU[1]), ("", CPU[0]),
])
def test_explicit_partial_specs_match_a_session_device(spec, want):
    out = place(GraphIR([NodeIR("n", "NoOp", [], spec)]), ctx())
    assert out.node("n").device == want


def test_unknown_device_is_an_error_without_soft_placement():
    n = NodeIR("n", "NoOp", [], "/device:GPU:0", site="model.py:3 (build)")
    with pytest.raises(ValueError) as e:
        place(GraphIR([n]), ctx(soft=False))
    msg = str(e.value)
    assert "Cannot assign a device for operation 'n'" in msg
    assert "/device:GPU:0" in msg and CPU[0] in msg and "allow_soft_placement" in msg
    assert "model.py:3" in msg


@pytest.mark.parametrize("spec", ["/device:GPU:0", "/cpu:7", "/job:ps"])
def test_soft_placement_falls_back_to_the_client_device(spec):
    out = place(GraphIR([NodeIR("n", "NoOp", [], spec)]), ctx(soft=True))
    assert out.node("n").device == CPU[0]


def test_colocate_with_class_attr_moves_the_group_to_the_member_device():
    g = GraphIR([const("w", "/cpu:2"), op("a", "Identity", ["w:0"], _class=["loc:@w"]),
                 op("b", "Identity", ["a:0"], _class=[b"loc:@w"]), op("c", "Identity", ["a:0"])])
    assert devices(place(g, ctx())) == {"w": CPU[2], "a": CPU[2], "b": CPU[2], "c": CPU[0]}


def test_ref_edges_colocate_writers_with_their_variable():
    ref = F32._as_ref
    shape = TensorShape([2])
    v = NodeIR("v", "VariableV2", [], "/cpu:1", {"dtype": F32, "shape": shape}, [ref], [shape])
    val = const("val")
    assign = NodeIR("assign", "Assign", ["v:0", "val:0"], "", {"T": F32}, [ref], [TensorShape([2])])
    reader = op("reader", "Identity", ["v:0"])  # Identity reads the value: no colocation from the edge
    groups = colocation_groups(GraphIR([v, val, assign, reader]))
    assert sorted(map(sorted, groups.values())) == [["assign", "v"], ["reader"], ["val"]]
    out = devices(place(GraphIR([v, val, assign, reader]), ctx()))
    assert out["assign"] == CPU[1] and out["reader"] == CPU[0]


def test_conflicting_colocated_specs():
    g = GraphIR([const("a", "/cpu:1"), op("b", "Identity", ["a:0"], "/cpu:2", _class=["loc:@a"])])
    with pytest.raises(ValueError, match="Cannot colocate nodes 'a' and 'b'"):
        place(g, ctx(soft=False))
    out = devices(place(g, ctx(soft=True)))
    assert out["a"] == out["b"]
    g2 = GraphIR([const("a", "/job:ps"), op("b", "Identity", ["a:0"], "/job:worker", _class=["loc:@a"])])
    with pytest.raises(ValueError, match="different job"):
        place(g2, ctx(soft=True))


def test_generators_follow_their_consumers_when_they_agree():
    g = GraphIR([const("c1"), const("c2"), const("c3"), op("a", "Neg", ["c1:0", "c2:0"], "/cpu:1"),
                 op("b", "Neg", ["c2:0", "c3:0"], "/cpu:2"), op("d", "Neg", ["c3:0"], "/cpu:2")])
    out = devices(place(g, ctx()))
    assert out["c1"] == CPU[1]  # its only consumer is on CPU:1
    assert out["c2"] == CPU[0]  # consumers disagree: client device
    assert out["c3"] == CPU[2]


def test_metadata_ops_go_with_their_input():
    g = GraphIR([NodeIR("p", "Placeholder", [], "/cpu:2", {"dtype": F32}, [F32]),
                 NodeIR("s", "Shape", ["p:0"], "", {"T": F32, "out_type": dtypes.int32}, [dtypes.int32]),
                 op("n", "Neg", ["p:0"])])
    out = devices(place(g, ctx()))
    assert out["s"] == CPU[2] and out["n"] == CPU[0]


def test_feeds_and_fetches_stay_on_the_client():
    feed_attrs = {"T": F32, "index": 0, "tensor_name": "x:0"}
    g = GraphIR([NodeIR("_feed_0", "_Feed", [], "/cpu:1", feed_attrs, [F32]),
                 op("y", "Neg", ["_feed_0:0"], "/cpu:1"),
                 NodeIR("_fetch_0", "_Fetch", ["y:0"], "/cpu:1", {"T": F32, "index": 0})])
    assert devices(place(g, ctx())) == {"_feed_0": CPU[0], "y": CPU[1], "_fetch_0": CPU[0]}


def test_log_device_placement_records_one_line_per_node():
    c = ctx(log=True)
    place(GraphIR([NodeIR("a", "NoOp", [], "/cpu:1"), NodeIR("b", "NoOp", [])]), c)
    assert c.log == [f"a: (NoOp): {CPU[1]}", f"b: (NoOp): {CPU[0]}"]
    quiet = ctx()
    place(GraphIR([NodeIR("a", "NoOp", [])]), quiet)
    assert quiet.log == []


# ---------------------------------------------------------------------------- end to end
def _session(soft, cpus=2):
    return tf.Session(config=types.SimpleNamespace(device_count={"CPU": cpus}, allow_soft_placement=soft))


def test_session_places_explicit_and_colocated_ops():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        a = tf.negative(x, name="a")
    with tf.colocate_with(a):
        b = tf.multiply(a, 2.0, name="b")
    c = tf.add(b, 1.0, name="c")
    with _session(soft=False) as sess:
        np.testing.assert_array_equal(sess.run(c, {x: [1.0, 2.0]}), [-1.0, -3.0])
        text = sess.explain(c, {x: [1.0, 2.0]})
    line = {ln.split(" = ")[0]: ln for ln in text.splitlines() if ln.startswith("%")}
    assert line["%a"].endswith(f"@{CPU[1]}") and line["%b"].endswith(f"@{CPU[1]}")
    assert line["%c"].endswith(f"@{CPU[0]}")


def test_session_reports_unsatisfiable_device_without_soft_placement():
    with tf.device("/device:GPU:0"):
        y = tf.identity(tf.constant(1.0), name="on_gpu")
    with _session(soft=False) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot assign a device for operation 'on_"):
            sess.run(y)
    with _session(soft=True) as sess:
        assert sess.run(y) == 1.0
