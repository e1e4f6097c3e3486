"""Plans run independent heavy steps two at once (plan_lanes): same values, same errors."""

import threading
import types

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.kernels import intra_op
from sparseflow._src.runtime import plan_lanes


def _step(index, op, inputs=(), attrs=None):
    node = types.SimpleNamespace(op=op, attrs=attrs or {})
    return types.SimpleNamespace(index=index, node=node, inputs=list(inputs), needs_context=False,
                                 compute=lambda *a: None, num_outputs=1)


def test_backward_products_of_one_gradient_are_paired():
    steps = [_step(0, "Const"), _step(1, "Const"), _step(2, "Const"),
             _step(3, "MatMul", [(0, 0), (1, 0)]),  # dz W^T
             _step(4, "MatMul", [(2, 0), (0, 0)]),  # x^T dz: independent of 3
             _step(5, "AddV2", [(3, 0), (4, 0)])]
    assert plan_lanes.plan_forks(steps, {}) == {3: None}


def test_dependent_products_and_control_edges_are_not_paired():
    chain = [_step(0, "Const"), _step(1, "MatMul", [(0, 0), (0, 0)]), _step(2, "MatMul", [(1, 0), (0, 0)])]
    assert plan_lanes.plan_forks(chain, {}) == {}
    control = [_step(0, "Const"), _step(1, "MatMul", [(0, 0), (0, 0)]), _step(2, "MatMul", [(0, 0), (0, 0)])]
    assert plan_lanes.plan_forks(control, {2: {1}}) == {}


def test_table_ops_pair_only_across_tables_and_join_after_their_partner():
    steps = [_step(0, "EmbeddingHashTable"), _step(1, "EmbeddingHashTable"), _step(2, "Const"),
             _step(3, "EmbeddingTablePull", [(0, 0), (2, 0)]),
             _step(4, "EmbeddingTablePull", [(1, 0), (2, 0)]),
             _step(5, "EmbeddingTablePull", [(0, 0), (2, 0)]),
             _step(6, "EmbeddingTablePull", [(0, 0), (2, 0)])]
    assert plan_lanes.plan_forks(steps, {}) == {3: 5}  # 5 and 6 share table 0: they keep their order


def _node(name, op, inputs=()):
    return types.SimpleNamespace(name=name, op=op, inputs=list(inputs),
                                 data_inputs=[i for i in inputs if not i.startswith("^")])


def test_of_two_pulls_the_one_whose_rows_are_used_later_goes_first_and_is_forked():
    nodes = [_node("wide", "EmbeddingHashTable"), _node("deep", "EmbeddingHashTable"), _node("keys", "Const"),
             _node("pull_w", "EmbeddingTablePull", ["wide", "keys"]),
             _node("cast", "Cast", ["keys"]),
             _node("pull_d", "EmbeddingTablePull", ["deep", "keys"]),
             _node("sum_w", "Sum", ["pull_w:0"]),  # the wide rows are used first
             _node("gather_d", "GatherV2", ["pull_d:0"])]
    order = [n.name for n in plan_lanes.order_table_pairs(nodes, {})]
    assert order == ["wide", "deep", "keys", "pull_d", "pull_w", "cast", "sum_w", "gather_d"]
    # already in that order, or the second needing a step between them (a control edge): unchanged
    assert plan_lanes.order_table_pairs([nodes[i] for i in (0, 1, 2, 5, 3, 4, 6, 7)], {}) == \
        [nodes[i] for i in (0, 1, 2, 5, 3, 4, 6, 7)]
    after_cast = nodes[:5] + [_node("pull_d", "EmbeddingTablePull", ["deep", "keys", "^cast"])] + nodes[6:]
    assert plan_lanes.order_table_pairs(after_cast, {}) == after_cast
    assert plan_lanes.order_table_pairs(nodes, {"pull_d": ["cast"]}) == nodes
    # the pull that goes first is the fork: the caller pulls the other and sums its rows meanwhile
    idx = {n: i for i, n in enumerate(order)}
    steps = [_step(i, nodes[[n.name for n in nodes].index(name)].op,
                   [(idx[s.split(":")[0]], 0) for s in nodes[[n.name for n in nodes].index(name)].data_inputs])
             for i, name in enumerate(order)]
    assert plan_lanes.plan_forks(steps, {}) == {3: None}


def test_a_table_push_runs_beside_the_dense_update_past_a_noop_that_waits_for_it():
    steps = [_step(0, "EmbeddingHashTable"), _step(1, "EmbeddingHashTable"), _step(2, "Const"),
             _step(3, "EmbeddingTablePush", [(0, 0), (2, 0)]),
             _step(4, "EmbeddingTablePush", [(1, 0), (2, 0)]),
             _step(5, "NoOp"), _step(6, "VariableV2"),
             _step(7, "_GroupedApply", [(6, 0), (2, 0)])]
    # both pushes go beside the caller, which runs the dense update; the NoOp does not wait for them
    assert plan_lanes.plan_forks(steps, {5: {3, 4}}) == {3: None, 4: None}


def _mlp_grads():
    rng = np.random.default_rng(0)
    x_val = rng.standard_normal((512, 96)).astype(np.float32)
    w_val = rng.standard_normal((96, 640)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 96])
    w = tf.constant(w_val)
    h = tf.nn.relu(tf.matmul(x, w))
    v = tf.constant(rng.standard_normal((640, 320)).astype(np.float32))
    loss = tf.reduce_sum(tf.matmul(h, v))
    gx, gv = tf.gradients(loss, [x, v])
    return x, x_val, w_val, v, gx, gv


def test_paired_products_give_the_sequential_values(monkeypatch):
    monkeypatch.setattr(plan_lanes, "FORK_MIN_FLOP", 0)
    calls = []
    real = intra_op.run_beside
    monkeypatch.setattr(intra_op, "run_beside", lambda fn, *a: calls.append(fn) or real(fn, *a))
    outs = {}
    for forks in (False, True):
        monkeypatch.setattr("sparseflow._src.runtime.plan.PLAN_FORKS", forks)
        with tf.Graph().as_default():
            x, x_val, w_val, v, gx, gv = _mlp_grads()
            with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2)) as sess:
                outs[forks] = sess.run([gx, gv], {x: x_val})
    assert calls, "no product ran beside the caller"
    for a, b in zip(outs[False], outs[True]):
        np.testing.assert_array_equal(a, b)
    h = np.maximum(x_val @ w_val, 0)
    np.testing.assert_allclose(outs[True][1], h.T @ np.ones((512, 320), np.float32), rtol=1e-4)


def test_an_error_in_a_forked_product_names_its_op(monkeypatch):
    monkeypatch.setattr(plan_lanes, "FORK_MIN_FLOP", 0)
    calls = []
    real = intra_op.run_beside
    monkeypatch.setattr(intra_op, "run_beside", lambda fn, *a: calls.append(fn) or real(fn, *a))
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, None], name="a")
        b = tf.placeholder(tf.float32, [None, None], name="b")
        first = tf.matmul(a, b, name="first_product")
        second = tf.matmul(a, a, transpose_a=True, name="second_product")
        total = tf.add(tf.reduce_sum(first), tf.reduce_sum(second))
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2)) as sess:
            ok = sess.run(total, {a: np.ones((64, 32), np.float32), b: np.ones((32, 64), np.float32)})
            assert ok == pytest.approx(64 * 64 * 32 + 32 * 32 * 64)
            assert calls, "no product ran beside the caller"
            with pytest.raises(tf.errors.InvalidArgumentError, match="first_product"):
                sess.run(total, {a: np.ones((64, 32), np.float32), b: np.ones((31, 64), np.float32)})


def test_run_beside_shares_the_threads_and_reraises(monkeypatch):
    monkeypatch.setattr(intra_op, "_threads", 2)
    started, release = threading.Event(), threading.Event()

    def hold():
        started.set()
        release.wait(10)
        return intra_op.intra_op_threads()

    join = intra_op.run_beside(hold)
    assert started.wait(10)
    assert intra_op.intra_op_threads() == 1  # one core each while the job runs
    release.set()
    assert join() == 1 and intra_op.intra_op_threads() == 2

    def boom():
        raise ValueError("bad block")

    with pytest.raises(ValueError, match="bad block"):
        intra_op.run_beside(boom)()
    assert intra_op.intra_op_threads() == 2


def test_a_job_no_thread_took_runs_on_the_joining_thread(monkeypatch):
    monkeypatch.setattr(intra_op, "_threads", 2)
    monkeypatch.setattr(intra_op, "_pool", None)  # a pool of one thread, whatever ran before
    busy, release = threading.Event(), threading.Event()
    first = intra_op.run_beside(lambda: busy.set() or release.wait(10))  # holds the pool's thread
    assert busy.wait(10)
    second = intra_op.run_beside(threading.get_ident)
    assert second() == threading.get_ident()  # taken back: the pool's thread was busy
    release.set()
    assert first() is True
    assert intra_op.intra_op_threads() == 2
    intra_op._pool.shutdown()
