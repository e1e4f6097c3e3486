"""Shape-only steps of a plan (plan_memo) are kept from the last run with the same shapes: the
values of every run equal the unkept ones', whatever the batch size, also on several threads."""

import threading
import types

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.runtime import plan_memo


def _step(index, op, inputs=(), deref=None):
    node = types.SimpleNamespace(op=op, attrs={})
    return types.SimpleNamespace(index=index, node=node, inputs=list(inputs), needs_context=False, num_outputs=1,
                                 deref=deref or [False] * len(inputs))


def test_shape_readers_and_pure_ops_of_them_are_shape_only():
    steps = [_step(0, "Const"), _step(1, "Relu", [(-1, 0)]), _step(2, "Shape", [(1, 0)]),
             _step(3, "Shape", [(-2, 0)]), _step(4, "BroadcastGradientArgs", [(2, 0), (3, 0)]),
             _step(5, "Prod", [(2, 0), (0, 0)]), _step(6, "Reshape", [(1, 0), (2, 0)]),  # reads a value
             _step(7, "Mul", [(5, 0), (0, 0)]), _step(8, "Cast", [(5, 0)]), _step(9, "Const"),
             _step(10, "AddV2", [(0, 0), (9, 0)]),  # constants only: not the plan's to keep
             _step(11, "Tile", [(2, 0), (2, 0)])]  # not a pure op of the list
    got = plan_memo.shape_only_steps(steps, {8: {1}})  # 8 waits for a control input
    assert got == {2: (2,), 3: (3,), 4: (2, 3), 5: (2,), 7: (2,)}


def _model():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None])
    w = tf.constant(np.linspace(-1.0, 1.0, 3).reshape(3, 1).astype(np.float32))
    logits = tf.reshape(tf.matmul(x, w), [-1]) + tf.reduce_sum(x, axis=1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    (gx,) = tf.gradients(loss, [x])
    return x, y, [loss, gx]


def _numpy(xs, ys):
    w = np.linspace(-1.0, 1.0, 3).reshape(3, 1)
    z = (xs.astype(np.float64) @ w)[:, 0] + xs.sum(1)
    loss = np.mean(np.maximum(z, 0) - z * ys + np.log1p(np.exp(-np.abs(z))))
    dz = (1 / (1 + np.exp(-z)) - ys) / len(ys)
    return loss, dz[:, None] * (w.T + 1)


@pytest.mark.parametrize("batches", [(64, 64, 5, 64, 5, 1), (7, 300, 7)])
def test_runs_with_changing_batch_sizes_give_each_batch_its_values(batches):
    rng = np.random.default_rng(0)
    with tf.Graph().as_default():
        x, y, fetches = _model()
        with tf.Session() as sess:
            step = sess.make_callable(fetches, [x, y])
            for n in batches:
                xs, ys = rng.standard_normal((n, 3)).astype(np.float32), (rng.random(n) < 0.5).astype(np.float32)
                loss, gx = step(xs, ys)
                want_loss, want_gx = _numpy(xs, ys)
                np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
                np.testing.assert_allclose(gx, want_gx, rtol=1e-4, atol=1e-7)
                assert gx.shape == (n, 3)


@pytest.mark.skipif(not plan_memo.ENABLED, reason="SPARSEFLOW_PLAN_SHAPE_MEMO=0")
def test_the_plan_keeps_the_shape_only_steps():
    with tf.Graph().as_default():
        x, y, fetches = _model()
        with tf.Session() as sess:
            sess.run(fetches, {x: np.ones((4, 3), np.float32), y: np.ones(4, np.float32)})
            (compiled,) = sess._cache.values()
            plan = compiled.graph.direct_plan
    kept = plan_memo.shape_only_steps(plan.steps, plan.after)
    assert {plan.steps[i].node.op for i in kept} >= {"Shape", "BroadcastGradientArgs"}
    assert plan.source.count("_remember(") == len(kept)


def test_runs_of_one_plan_on_two_threads_with_other_batch_sizes_keep_their_own_values():
    rng = np.random.default_rng(1)
    feeds = {n: (rng.standard_normal((n, 3)).astype(np.float32), (rng.random(n) < 0.5).astype(np.float32))
             for n in (3, 50)}
    want = {n: _numpy(*feeds[n]) for n in feeds}
    errors = []
    with tf.Graph().as_default():
        x, y, fetches = _model()
        with tf.Session() as sess:
            step = sess.make_callable(fetches, [x, y])

            def run(n):
                try:
                    for _ in range(150):
                        loss, gx = step(*feeds[n])
                        assert gx.shape == (n, 3)
                        np.testing.assert_allclose(loss, want[n][0], rtol=1e-5)
                        np.testing.assert_allclose(gx, want[n][1], rtol=1e-4, atol=1e-7)
                except BaseException as e:  # reported on the main thread
                    errors.append(e)

            threads = [threading.Thread(target=run, args=(n,)) for n in feeds]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    assert not errors, errors[0]
