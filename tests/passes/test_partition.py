"""partition: per-device subgraphs joined by _Send/_Recv pairs with TensorFlow's attrs."""

import types

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.ir import GraphIR, NodeIR, parse_input
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.partition import partition, short_device_names

F32 = dtypes.float32
D0, D1, D2 = (f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(3))


def ctx(incarnations=None):
    return PassContext(devices=[D0, D1, D2], client_device=D0, incarnations=dict(incarnations or {}))


def ph(name, device, dtype=F32):
    return NodeIR(name, "Placeholder", [], device, {"dtype": dtype}, [dtype], [TensorShape([2])])


def op(name, op_type, inputs, device, n_out=1):
    return NodeIR(name, op_type, list(inputs), device, {"T": F32}, [F32] * n_out, [TensorShape([2])] * n_out)


def by_op(ir, op_type):
    return [n for n in ir if n.op == op_type]


def check_self_contained(c):
    for dev, part in c.partitions.items():
        for n in part:
            assert n.device == dev
            for i in n.inputs:
                assert parse_input(i)[0] in part, f"{n.name} reads {i} from another partition"


def test_cut_data_edge_gets_a_send_recv_pair_with_tf_attrs():
    c = ctx({D1: 0xABC})
    g = GraphIR([ph("x", D1), op("y", "Neg", ["x:0"], D0)])
    out = partition(g, c)
    (send,), (recv,) = by_op(out, "_Send"), by_op(out, "_Recv")
    assert send.device == D1 and recv.device == D0 and send.inputs == ["x:0"]
    assert out.node("y").inputs == [f"{recv.name}:0"]
    for n in (send, recv):
        assert n.attrs["tensor_name"] == "edge_1_x"
        assert (n.attrs["send_device"], n.attrs["recv_device"]) == (D1, D0)
        assert n.attrs["send_device_incarnation"] == 0xABC and n.attrs["client_terminated"] is False
    assert send.attrs["T"] == F32 and recv.attrs["tensor_type"] == F32 and recv.out_dtypes == [F32]
    assert (send.name, recv.name) == ("x/_send_0_to_CPU_0", "x/_recv_0_on_CPU_0")
    assert sorted(c.partitions) == [D0, D1]
    check_self_contained(c)


def test_incarnation_defaults_to_one():
    out = partition(GraphIR([ph("x", D1), op("y", "Neg", ["x:0"], D0)]), ctx())
    assert by_op(out, "_Send")[0].attrs["send_device_incarnation"] == 1


def test_one_pair_per_source_port_and_destination_device():
    g = GraphIR([op("s", "Split2", [], D1, n_out=2),
                 op("a", "Neg", ["s:0"], D0), op("b", "Neg", ["s:0"], D0), op("c", "Neg", ["s:1"], D0),
                 op("d", "Neg", ["s:0"], D2), op("e", "Neg", ["s:0"], D1)])
    c = ctx()
    out = partition(g, c)
    sends = by_op(out, "_Send")
    pairs = sorted((n.inputs[0], n.attrs["recv_device"]) for n in sends)
    assert pairs == [("s:0", D0), ("s:0", D2), ("s:1", D0)]
    assert len({n.attrs["tensor_name"] for n in sends}) == 3
    assert out.node("a").inputs == out.node("b").inputs != out.node("c").inputs
    assert out.node("e").inputs == ["s:0"]
    check_self_contained(c)


def test_ref_producer_crosses_as_its_value_type():
    ref = F32._as_ref
    v = NodeIR("v", "VariableV2", [], D1, {"dtype": F32}, [ref], [TensorShape([2])])
    out = partition(GraphIR([v, op("y", "Neg", ["v:0"], D0)]), ctx())
    assert by_op(out, "_Recv")[0].out_dtypes == [F32] and by_op(out, "_Send")[0].attrs["T"] == F32


def test_remote_read_with_control_inputs_happens_after_them_on_the_variable_device():
    ref = F32._as_ref
    v = NodeIR("v", "VariableV2", [], D1, {"dtype": F32}, [ref], [TensorShape([2])])
    upd = NodeIR("upd", "NoOp", [], D1)
    other = NodeIR("other", "NoOp", [], D0)
    g = GraphIR([v, upd, other, op("r", "Identity", ["v:0", "^upd", "^other"], D0),
                 op("plain", "Identity", ["v:0"], D0)])
    c = ctx()
    out = partition(g, c)
    read = out.node("v/_read_0_for_r")
    assert read.op == "Identity" and read.device == D1 and read.inputs[:2] == ["v:0", "^upd"]
    other_on_d1 = parse_input(read.inputs[2])[0]  # "other" runs on CPU:0: its order arrives by a control pair
    assert out.node(other_on_d1).device == D1 and out.node(other_on_d1).op == "Identity"
    sends = {n.inputs[0]: n for n in by_op(out, "_Send")}
    assert f"{read.name}:0" in sends and "v:0" in sends  # "plain" has no control inputs: a plain pair
    assert out.node("r").inputs[0] != out.node("plain").inputs[0]
    check_self_contained(c)


def test_ref_input_across_devices_is_refused():
    ref = F32._as_ref
    v = NodeIR("v", "VariableV2", [], D1, {"dtype": F32}, [ref], [TensorShape([2])])
    a = NodeIR("a", "Assign", ["v:0", "x:0"], D0, {"T": F32}, [ref], [TensorShape([2])])
    with pytest.raises(ValueError, match="takes 'v' by reference"):
        partition(GraphIR([v, ph("x", D0), a]), ctx())


def test_cut_control_edge_is_carried_by_a_dummy_const():
    g = GraphIR([NodeIR("a", "NoOp", [], D1), op("y", "Neg", ["^a"], D0)])
    c = ctx()
    out = partition(g, c)
    (dummy,) = by_op(out, "Const")
    (send,), (recv,) = by_op(out, "_Send"), by_op(out, "_Recv")
    ident = [n for n in by_op(out, "Identity")][0]
    assert dummy.device == D1 and dummy.inputs == ["^a"] and dummy.attrs["value"].shape == (0,)
    assert send.inputs == [f"{dummy.name}:0"] and send.attrs["tensor_name"] == f"edge_1_{dummy.name}"
    assert ident.device == D0 and ident.inputs == [f"{recv.name}:0"]
    assert out.node("y").inputs == [f"^{ident.name}"]
    check_self_contained(c)


def test_names_stay_unique():
    g = GraphIR([ph("x", D1), op("x/_send_0_to_CPU_0", "Neg", [], D2), op("y", "Neg", ["x:0"], D0)])
    out = partition(g, ctx())
    assert by_op(out, "_Send")[0].name == "x/_send_0_to_CPU_0_1"


def test_one_device_is_returned_unchanged():
    g = GraphIR([ph("x", D0), op("y", "Neg", ["x:0"], D0)])
    c = ctx()
    assert partition(g, c) is g and list(c.partitions) == [D0]


def test_unplaced_nodes_are_refused():
    with pytest.raises(ValueError, match="Run the place pass first"):
        partition(GraphIR([ph("x", "/cpu:0")]), ctx())


def test_device_tags_include_the_task_when_devices_span_tasks():
    w = "/job:worker/replica:0/task:1/device:CPU:0"
    assert short_device_names([D0, D1]) == {D0: "CPU_0", D1: "CPU_1"}
    assert short_device_names([D0, w])[w] == "worker_1_CPU_0"


# ---------------------------------------------------------------------------- end to end
def _session(cpus):
    return tf.Session(config=types.SimpleNamespace(device_count={"CPU": cpus}, allow_soft_placement=True))


def test_two_cpu_session_runs_cpu1_ops_there_with_identical_results():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.device("/cpu:1"):
        h = tf.multiply(x, 3.0, name="h")
        k = tf.negative(h, name="k")
    y = tf.add(k, x, name="y")
    with tf.control_dependencies([k]):
        z = tf.add(x, 1.0, name="z")
    feed = {x: np.arange(6, dtype=np.float32).reshape(2, 3)}
    with _session(1) as one:
        want = one.run([y, z, h], feed)
    with _session(2) as two:
        got = two.run([y, z, h], feed)
        got_again = two.run([y, z, h], feed)  # cached plan, fresh rendezvous per step
        text = two.explain([y, z, h], feed)
    for w, g, g2 in zip(want, got, got_again):
        np.testing.assert_array_equal(w, g)
        np.testing.assert_array_equal(w, g2)
    lines = {ln.split(" = ")[0][1:]: ln for ln in text.splitlines() if ln.startswith("%")}
    assert lines["h"].endswith(f"@{D1}") and lines["k"].endswith(f"@{D1}") and lines["y"].endswith(f"@{D0}")
    sends = [ln for ln in lines.values() if " = _Send[" in ln]
    recvs = [ln for ln in lines.values() if " = _Recv[" in ln]
    assert sends and len(sends) == len(recvs)
    assert any("send_device=" + D0 in ln and "recv_device=" + D1 in ln for ln in sends)  # the feed goes over
    assert any("_ctrl_" in name for name in lines)  # z waits for k across devices
    assert "# partition " + D1 in text


def test_two_cpu_session_reads_a_remote_variable_after_its_update():
    with tf.device("/cpu:1"):
        w = tf.Variable([1.0, 2.0], name="w")
    inc = tf.assign_add(w, [1.0, 1.0])
    with tf.control_dependencies([inc]):
        after = tf.identity(w.read_value(), name="after")
    with _session(2) as sess:
        sess.run(w.initializer)
        np.testing.assert_array_equal(sess.run(after), [2.0, 3.0])
        np.testing.assert_array_equal(sess.run(after), [3.0, 4.0])
        np.testing.assert_array_equal(sess.run(w), [3.0, 4.0])


def test_two_cpu_session_with_a_thread_pool_does_not_deadlock():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        parts = [x * float(i) for i in range(4)]  # four values cross to CPU:0: more Recvs than threads
    y = tf.add_n(parts) if hasattr(tf, "add_n") else parts[0] + parts[1] + parts[2] + parts[3]
    cfg = types.SimpleNamespace(device_count={"CPU": 2}, allow_soft_placement=True,
                                inter_op_parallelism_threads=2, operation_timeout_in_ms=5000)
    with tf.Session(config=cfg) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [6.0, 12.0])
