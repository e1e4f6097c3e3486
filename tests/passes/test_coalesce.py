"""The coalesce pass: independent cluster pulls (pushes) of one device become one op, and nothing
that would wait on itself, runs in a loop, lives elsewhere or differs in key attrs is merged."""

import pytest

import sparseflow as tf
from sparseflow import embedding as E
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.ir import GraphIR, NodeIR
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.passes.coalesce import coalesce
from sparseflow._src.passes.context import PassContext

PS = ["/job:ps/task:0", "/job:ps/task:1"]
W0 = "/job:worker/replica:0/task:0/device:CPU:0"
W1 = "/job:worker/replica:0/task:1/device:CPU:0"


def _placed(graph):
    """The graph's IR with every node on a full device (as after ``place``)."""
    ir = GraphIR.from_graph(graph)
    for n in ir:
        ir.replace(n.copy(device=n.device if "/device:" in n.device else W0))
    return ir


def _ops(ir, op):
    return [n for n in ir if n.op == op]


def test_independent_pulls_and_their_pushes_merge_into_one_op_each():
    with tf.Graph().as_default() as g:
        ids = tf.placeholder(tf.int64, [None, 2])
        tables = [E.EmbeddingTable(f"t{i}", 2 + i, devices=PS) for i in range(3)]
        loss = tf.add_n([tf.reduce_sum(t.lookup(ids)) for t in tables])
        pushes = [t.push(lk.keys, tf.gradients(loss, lk.values)[0]) for t, lk in zip(tables, E.lookups())]
        train = tf.group(*pushes)
    out = coalesce(_placed(g), PassContext(fetches=[loss.name], targets=[train.name]))
    pulls, pushed = _ops(out, "EmbeddingClusterPull"), _ops(out, "EmbeddingClusterPush")
    assert len(pulls) == 1 and len(pushed) == 1
    assert pulls[0].attrs["N"] == 3 and pulls[0].attrs["dims"] == [2, 3, 4]
    assert [s.as_list()[1] for s in pulls[0].out_shapes] == [2, 3, 4]
    assert pushed[0].attrs["N"] == 3
    users = {i for n in out for i in n.inputs if i.startswith(pulls[0].name + ":")}
    assert users == {f"{pulls[0].name}:{k}" for k in range(3)}
    assert all(n.op != "EmbeddingClusterPull" or n is pulls[0] for n in out)
    out.topological_order()  # no cycle


def test_a_pull_whose_keys_come_from_another_pull_stays_separate():
    with tf.Graph().as_default() as g:
        keys = tf.placeholder(tf.int64, [None])
        a = E.EmbeddingTable("a", 2, devices=PS).pull(keys)
        b = E.EmbeddingTable("b", 2, devices=PS).pull(tf.cast(tf.argmax(a, 1), tf.int64))
        c = E.EmbeddingTable("c", 2, devices=PS).pull(keys)
        y = tf.reduce_sum(b) + tf.reduce_sum(c)
    out = coalesce(_placed(g), PassContext(fetches=[y.name]))
    groups = sorted(n.attrs["N"] for n in _ops(out, "EmbeddingClusterPull"))
    assert groups == [1, 2]  # a and c merged, b (which waits for a) alone
    out.topological_order()


def test_pulls_on_different_devices_stay_separate_and_training_is_per_table():
    with tf.Graph().as_default() as g:
        keys = tf.placeholder(tf.int64, [None])
        t = E.EmbeddingTable("t", 2, devices=PS)
        with tf.device(W0):
            a = t.pull(keys)
            b = t.pull(keys, training=False)
        with tf.device(W1):
            c = t.pull(keys)
        y = tf.reduce_sum(a) + tf.reduce_sum(b) + tf.reduce_sum(c)
    out = coalesce(_placed(g), PassContext(fetches=[y.name]))
    by_device = {n.device: n.attrs["training"] for n in _ops(out, "EmbeddingClusterPull")}
    assert by_device == {W0: [True, False], W1: [True]}


def test_two_pulls_a_run_fetches_by_name_are_not_merged_into_one_name():
    with tf.Graph().as_default() as g:
        keys = tf.placeholder(tf.int64, [None])
        a = E.EmbeddingTable("a", 2, devices=PS).pull(keys)
        b = E.EmbeddingTable("b", 2, devices=PS).pull(keys)
        c = E.EmbeddingTable("c", 2, devices=PS).pull(keys)
        y = tf.reduce_sum(c)
    out = coalesce(_placed(g), PassContext(fetches=[a.name, b.name, y.name]))
    names = {n.name for n in _ops(out, "EmbeddingClusterPull")}
    assert a.op.name in names and b.op.name in names and len(names) == 2  # c joined one of them


def test_pulls_inside_a_while_loop_are_left_alone():
    f, i64 = dtypes.float32, dtypes.int64

    def pull(name, keys):
        return NodeIR(name, "EmbeddingClusterPull", [keys, "c:0"], W0, {"N": 1, "Tkeys": [i64], "tables": [name],
                                                                        "dims": [2], "training": [True]}, [f])

    nodes = [NodeIR("k", "Placeholder", [], W0, {"dtype": i64}, [i64]),
             NodeIR("c", "Placeholder", [], W0, {"dtype": dtypes.int32}, [dtypes.int32]),
             NodeIR("enter", "Enter", ["k:0"], W0, {"T": i64, "frame_name": "loop"}, [i64]),
             pull("in_loop", "enter:0"), NodeIR("exit", "Exit", ["in_loop:0"], W0, {"T": f}, [f]),
             pull("after", "k:0"), pull("other", "k:0"), NodeIR("y", "AddN", ["after:0", "other:0"], W0)]
    out = coalesce(GraphIR(nodes), PassContext(fetches=["exit:0", "y:0"]))
    assert out.node("in_loop").attrs["N"] == 1 and out.node("after").attrs["N"] == 2 and "other" not in out


def test_an_op_with_a_plain_argument_or_attr_cannot_be_coalescable():
    with pytest.raises(ValueError, match="argument 'x' is not a list"):
        register_op("_CoalesceProbeA", inputs=["x: float"], coalescable=True)
    with pytest.raises(ValueError, match="attr 'k' \\(shape\\) is neither a list length, a per-member list nor a "
                                         "shared setting"):
        register_op("_CoalesceProbeB", inputs=["x: N * float"], attrs=["N: int >= 1", "k: shape"], coalescable=True)


def test_nodes_that_differ_in_a_shared_setting_are_not_merged():
    f, i64 = dtypes.float32, dtypes.int64

    def push(name, staleness):
        return NodeIR(name, "EmbeddingClusterPush", ["k:0", "g:0", "e:0", "e:0", "lr:0"], W0,
                      {"N": 1, "Tkeys": [i64], "tables": [name], "staleness": staleness}, [])

    nodes = [NodeIR("k", "Placeholder", [], W0, {"dtype": i64}, [i64]),
             NodeIR("g", "Placeholder", [], W0, {"dtype": f}, [f]),
             NodeIR("e", "Placeholder", [], W0, {"dtype": f}, [f]),
             NodeIR("lr", "Placeholder", [], W0, {"dtype": f}, [f]),
             push("a", 0), push("b", 2), push("c", 0), push("d", 2),
             NodeIR("train", "NoOp", ["^a", "^b", "^c", "^d"], W0)]
    out = coalesce(GraphIR(nodes), PassContext(targets=["train"]))
    merged = {n.name: (n.attrs["tables"], n.attrs["staleness"]) for n in out if n.op == "EmbeddingClusterPush"}
    assert merged == {"a": (["a", "c"], 0), "b": (["b", "d"], 2)}
