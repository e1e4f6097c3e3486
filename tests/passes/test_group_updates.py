"""The group_updates pass: dense optimizer updates sharing their scalars become one node whose
kernel gives exactly the per-variable results."""

import numpy as np

import sparseflow as tf
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.ir import GraphIR, NodeIR
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.group_updates import GROUPED_APPLY, group_updates

F32 = dtypes.float32


def feed(name):
    return NodeIR(name, "_Feed", [], "", {"T": F32}, [F32], [[]])


def momentum(name, var, grad, lr="lr", mom="mom", **attrs):
    return NodeIR(name, "ApplyMomentum", [var, f"{var}_acc", lr, grad, mom], "", {"T": F32, **attrs}, [F32], [[]])


def graph(*updates, extra=()):
    names = ["lr", "lr2", "mom", "v1", "v1_acc", "v2", "v2_acc", "v3", "v3_acc", "g1", "g2", "g3"]
    return GraphIR([feed(n) for n in names] + list(updates) + list(extra))


def test_updates_sharing_scalars_and_attrs_group_and_controls_follow():
    ir = graph(momentum("u1", "v1", "g1"), momentum("u2", "v2", "g2", lr="lr2"), momentum("u3", "v3", "g3"),
               extra=[NodeIR("train", "NoOp", ["^u1", "^u2", "^u3"])])
    out = group_updates(ir, PassContext(targets=["train"]))
    grouped = [n for n in out if n.op == GROUPED_APPLY]
    assert len(grouped) == 1 and grouped[0].attrs["members"] == ["u1", "u3"]
    assert grouped[0].inputs == ["v1", "v1_acc", "v3", "v3_acc", "g1", "g3", "lr", "mom"]
    assert out.node("train").inputs == ["^u1/grouped", "^u2"] and "u1" not in out


def test_read_outputs_targets_and_other_attrs_stay_apart():
    ir = graph(momentum("u1", "v1", "g1"), momentum("u2", "v2", "g2", use_nesterov=True),
               momentum("u3", "v3", "g3"), extra=[NodeIR("r", "Identity", ["u3"], "", {"T": F32}, [F32], [[]])])
    out = group_updates(ir, PassContext(targets=["u1"]))
    assert not [n for n in out if n.op == GROUPED_APPLY]


def test_grouped_adam_and_momentum_match_numpy_step_by_step():
    rng = np.random.default_rng(0)
    shapes = [(300, 257), (257,), (40, 3), ()]
    inits = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        vs = [tf.Variable(v) for v in inits]
        loss = sum(tf.reduce_sum(tf.square(v - tf.reduce_mean(x))) * (i + 1) for i, v in enumerate(vs))
        adam = tf.train.AdamOptimizer(0.01).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert GROUPED_APPLY in sess.explain(adam, {x: [1.0]})
            m = [np.zeros_like(v) for v in inits]
            s = [np.zeros_like(v) for v in inits]
            want = [v.copy() for v in inits]
            for step in range(1, 6):
                xs = rng.standard_normal(8).astype(np.float32)
                sess.run(adam, {x: xs})
                for i in range(len(want)):
                    g = 2 * (want[i] - xs.mean(dtype=np.float32)) * (i + 1)
                    m[i] = m[i] + (g - m[i]) * (1 - 0.9)
                    s[i] = s[i] + (g * g - s[i]) * (1 - 0.999)
                    alpha = 0.01 * np.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
                    want[i] = want[i] - m[i] * alpha / (np.sqrt(s[i]) + 1e-8)
                for got, w in zip(sess.run(vs), want):
                    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


def test_updates_fed_by_another_task_stay_apart_to_be_applied_as_each_gradient_arrives():
    ps, wk = "/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"

    def on(node, device):
        return node.copy(device=device)

    names = ["lr", "mom", "v1", "v1_acc", "v2", "v2_acc", "v3", "v3_acc", "v4", "v4_acc"]
    nodes = [on(feed(n), ps) for n in names] + [on(feed("x"), wk)]
    nodes += [NodeIR("g1", "Neg", ["x"], wk, {"T": F32}, [F32], [[]]),  # computed on the worker
              NodeIR("g2", "Neg", ["g1"], ps, {"T": F32}, [F32], [[]]),  # on the ps, from the worker's value
              NodeIR("g3", "Neg", ["v3"], ps, {"T": F32}, [F32], [[]]),  # the ps's own values only
              NodeIR("g4", "Square", ["v4"], ps, {"T": F32}, [F32], [[]])]
    nodes += [on(momentum(f"u{i}", f"v{i}", f"g{i}"), ps) for i in (1, 2, 3, 4)]
    out = group_updates(GraphIR(nodes), PassContext(targets=["train"]))
    grouped = [n for n in out if n.op == GROUPED_APPLY]
    assert len(grouped) == 1 and grouped[0].attrs["members"] == ["u3", "u4"]
    assert "u1" in out and "u2" in out
