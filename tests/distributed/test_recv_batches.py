"""A task's remote receives from one sender travel in one RecvTensorStream call (gradients into
the ps), each value as it is sent, so even a round trip (a value the ps computes after the
worker's gradients arrive) shares it without deadlock. The master's task pulls nothing: what
another task sends it comes in that task's RunGraph stream."""

import numpy as np

import sparseflow as tf
from sparseflow._src.runtime.recv_batches import recv_batches


def _registered(server, handle=None):
    """The PartitionGraphs registered on ``server``'s worker (all sessions)."""
    out = []
    for ws in server.worker._sessions.values():
        out.extend(ws.graphs.values())
    return out


def test_reads_and_gradients_each_travel_in_one_call(cluster_2ps_2workers):
    _, servers = cluster_2ps_2workers
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        with tf.device("/job:ps/task:0"):
            ws = [tf.Variable(np.full([3, 3], 0.1 * (i + 1), np.float32), name=f"w{i}") for i in range(3)]
        with tf.device("/job:worker/task:0"):
            h = x
            for w in ws:
                h = tf.matmul(h, w)
            loss = tf.reduce_sum(h * h)
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        with tf.Session(servers["worker:0"].target) as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(loss, {x: np.ones([2, 3], np.float32)})
            sess.run(train, {x: np.ones([2, 3], np.float32)})
            assert sess.run(loss, {x: np.ones([2, 3], np.float32)}) < before
            worker_graph = [g for g in _registered(servers["worker:0"]) if g.streamed]
            ps_graph = [g for g in _registered(servers["ps:0"]) if any(len(b) >= 3 for b in g.remote_batches)]
            # the three reads come in the ps's RunGraph stream: the master's task pulls nothing
            assert any(len(g.stream_keys.get("/job:ps/replica:0/task:0", ())) == 3 and not g.remote_batches
                       for g in worker_graph)
            assert ps_graph  # the three gradients (and the learning rate), one call


def test_a_value_computed_after_the_workers_gradients_arrives_in_the_same_step(cluster_2ps_2workers):
    _, servers = cluster_2ps_2workers
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(np.ones([2, 1], np.float32), name="w")
            b = tf.Variable(np.zeros([1], np.float32), name="b")
        with tf.device("/job:worker/task:0"):
            loss = tf.reduce_sum(tf.matmul(x, w) + b)
            train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.device("/job:ps/task:0"), tf.control_dependencies([train]):
            after = tf.identity(w.read_value(), name="w_after_update")
        with tf.Session(servers["worker:0"].target) as sess:
            sess.run(tf.global_variables_initializer())
            _, w_after = sess.run([w, after], {x: [[1.0, 2.0]]}, options=tf.RunOptions(timeout_in_ms=60000))
    np.testing.assert_allclose(w_after[:, 0], [0.5, 0.0])


def test_a_tasks_receives_from_one_sender_share_one_stream_round_trips_included():
    from sparseflow._src.framework import dtypes
    from sparseflow._src.framework.ir import NodeIR

    w = "/job:worker/replica:0/task:0/device:CPU:0"
    w1 = "/job:worker/replica:0/task:0/device:CPU:1"
    p = "/job:ps/replica:0/task:0/device:CPU:0"
    q = "/job:ps/replica:0/task:1/device:CPU:0"
    f = dtypes.float32

    def pair(name, src, src_dev, dst_dev):
        a = {"tensor_name": name, "send_device": src_dev, "recv_device": dst_dev, "send_device_incarnation": 1}
        return (NodeIR(f"s_{name}", "_Send", [src], src_dev, dict(a, T=f)),
                NodeIR(f"r_{name}", "_Recv", [], dst_dev, dict(a, tensor_type=f), [f]))

    v1 = NodeIR("v1", "Const", [], p, {}, [f])
    v2 = NodeIR("v2", "Const", [], q, {}, [f])
    s1, r1 = pair("a", "v1:0", p, w)
    g = NodeIR("g", "Neg", ["r_a:0"], w, {}, [f])
    s2, r2 = pair("g", "g:0", w, p)
    late = NodeIR("late", "Add", ["v1:0", "r_g:0"], p, {}, [f])  # needs the worker's gradient
    s3, r3 = pair("late", "late:0", p, w1)  # to the worker's other device: same stream
    s4, r4 = pair("b", "v2:0", q, w)  # the only receive from q: pulled alone
    s5, r5 = pair("c", "v1:0", p, w)
    order = [v1, v2, s1, s4, r1, r4, g, s2, r2, late, s3, r3, s5, r5]
    assert recv_batches(order, "/job:worker/replica:0/task:0") == [["r_a", "r_late", "r_c"]]
    assert recv_batches(order, "/job:ps/replica:0/task:0") == []


def test_every_receive_of_the_masters_task_from_another_task_is_streamed():
    from sparseflow._src.framework import dtypes
    from sparseflow._src.framework.ir import NodeIR
    from sparseflow._src.runtime.recv_batches import streamed_receives

    w = "/job:worker/replica:0/task:0/device:CPU:0"
    p = "/job:ps/replica:0/task:0/device:CPU:0"
    q = "/job:ps/replica:0/task:1/device:CPU:0"
    f = dtypes.float32

    def pair(name, src, src_dev, dst_dev):
        a = {"tensor_name": name, "send_device": src_dev, "recv_device": dst_dev, "send_device_incarnation": 1}
        return (NodeIR(f"s_{name}", "_Send", [src], src_dev, dict(a, T=f)),
                NodeIR(f"r_{name}", "_Recv", [], dst_dev, dict(a, tensor_type=f), [f]))

    v = NodeIR("v", "Const", [], p, {}, [f])
    s_read, r_read = pair("read", "v:0", p, w)
    g = NodeIR("g", "Neg", ["r_read:0"], w, {}, [f])
    s_g, r_g = pair("g", "g:0", w, p)
    upd = NodeIR("upd", "Add", ["v:0", "r_g:0"], p, {}, [f])
    s_done, r_done = pair("done", "upd:0", p, w)
    s_q, r_q = pair("q", "g:0", w, q)
    qn = NodeIR("qn", "Neg", ["r_q:0"], q, {}, [f])
    s_val, r_val = pair("val", "qn:0", q, w)
    use = NodeIR("use", "Neg", ["r_val:0"], w, {}, [f])
    order = [v, s_read, r_read, g, s_g, r_g, upd, s_done, r_done, s_q, r_q, qn, s_val, r_val, use]
    # values that feed ops and control signals alike, from each sender; never the ps's own receives
    assert streamed_receives(order, "/job:worker/replica:0/task:0") == {
        "/job:ps/replica:0/task:0": ["r_read", "r_done"], "/job:ps/replica:0/task:1": ["r_val"]}
    assert streamed_receives(order, "/job:ps/replica:0/task:0") == {"/job:worker/replica:0/task:0": ["r_g"]}


def test_what_each_ps_sends_the_master_comes_in_its_run_graph_stream(cluster_2ps_2workers):
    _, servers = cluster_2ps_2workers
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(np.ones([2, 1], np.float32), name="w")
        with tf.device("/job:ps/task:1"):
            b = tf.Variable(np.zeros([1], np.float32), name="b")
        with tf.device("/job:worker/task:0"):
            loss = tf.reduce_sum(tf.matmul(x, w) + b)
            train = tf.train.AdamOptimizer(0.5).minimize(loss)
        with tf.Session(servers["worker:0"].target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train, {x: [[1.0, 2.0]]}, options=tf.RunOptions(timeout_in_ms=60000))
            w_now, b_now = sess.run([w, b])
            streamed = [g for g in _registered(servers["worker:0"]) if g.streamed]
            pulled = [g.remote_batches for g in _registered(servers["worker:0"]) if g.remote_batches]
    assert streamed and set(streamed[-1].stream_keys) == {"/job:ps/replica:0/task:0", "/job:ps/replica:0/task:1"}
    assert not pulled
    # Adam's first steps move every parameter by about the learning rate, against the gradient's sign
    np.testing.assert_allclose(w_now[:, 0], [1.0 - 1.5, 1.0 - 1.5], atol=1e-3)
    np.testing.assert_allclose(b_now, [-1.5], atol=1e-3)


def test_a_ps_receives_a_round_trip_in_one_stream(cluster_2ps_2workers):
    _, servers = cluster_2ps_2workers
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [2])
            h = x * 2.0
        with tf.device("/job:ps/task:0"):
            u = h + 1.0  # needs the worker's h
        with tf.device("/job:worker/task:0"):
            k = u * 3.0  # needs the ps's u
        with tf.device("/job:ps/task:0"):
            out = k + h  # h and k: one stream, k only after the ps sent u
        with tf.Session(servers["worker:0"].target) as sess:
            got = sess.run(out, {x: [1.0, 2.0]}, options=tf.RunOptions(timeout_in_ms=30000))
            batches = [b for g in _registered(servers["ps:0"]) for b in g.remote_batches]
    np.testing.assert_allclose(got, [(2.0 + 1.0) * 3.0 + 2.0, (4.0 + 1.0) * 3.0 + 4.0])
    assert [len(b) for b in batches] == [2]
