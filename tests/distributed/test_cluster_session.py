"""Sessions on a cluster of in-process servers (2 ps + 2 workers on 127.0.0.1): results equal the
local Session's, variables live on their ps across sessions, errors name the op and its task."""

import socket
import time

import numpy as np
import pytest

import sparseflow as tf
from tests.distributed.conftest import free_ports, start_cluster


def _model(ps_tasks):
    """A small MLP whose variables are spread over ``ps_tasks`` ps tasks (or local when 0)."""
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    ws = []
    for i, shape in enumerate([(4, 8), (8, 1)]):
        dev = f"/job:ps/task:{i % ps_tasks}" if ps_tasks else ""
        with tf.device(dev):
            ws.append(tf.Variable(rng.randn(*shape).astype(np.float32) * 0.3, name=f"w{i}"))
            ws.append(tf.Variable(np.zeros(shape[1], np.float32), name=f"b{i}"))
    with tf.device("/job:worker/task:0" if ps_tasks else ""):
        h = tf.nn.relu(tf.matmul(x, ws[0]) + ws[1])
        logit = tf.squeeze(tf.matmul(h, ws[2]) + ws[3], axis=1)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logit))
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
    return x, y, loss, train, ws


def _train(target, ps_tasks, steps=5):
    rng = np.random.RandomState(1)
    xs = rng.randn(steps, 16, 4).astype(np.float32)
    ys = (rng.rand(steps, 16) > 0.5).astype(np.float32)
    with tf.Graph().as_default():
        x, y, loss, train, ws = _model(ps_tasks)
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {x: xs[i], y: ys[i]})[0] for i in range(steps)]
            return losses, sess.run(ws)


def test_graph_split_over_2ps_2workers_gives_the_local_numbers(cluster_2ps_2workers):
    cluster, servers = cluster_2ps_2workers
    local_losses, local_ws = _train("", 0)
    dist_losses, dist_ws = _train(servers["worker:0"].target, 2)
    np.testing.assert_allclose(dist_losses, local_losses, rtol=1e-6)
    for a, b in zip(dist_ws, local_ws):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_ps_variables_outlive_a_session_and_are_shared_by_workers(cluster_2ps_2workers):
    _, servers = cluster_2ps_2workers
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:1"):
            v = tf.Variable(1.0, name="shared")
        inc = v.assign_add(1.0)
        with tf.Session(servers["worker:0"].target) as sess:
            sess.run(v.initializer)
            sess.run(inc)
        with tf.Session(servers["worker:1"].target) as sess:  # another worker's master, a new session
            assert sess.run(inc) == 3.0
    assert servers["ps:1"].worker.devices.resources("/job:ps/replica:0/task:1/device:CPU:0").lookup("", "shared")


def test_a_failing_remote_op_is_reported_with_its_op_task_and_line(cluster_2ps_2workers):
    _, servers = cluster_2ps_2workers
    with tf.Graph().as_default():
        ids = tf.placeholder(tf.int32, [None])
        with tf.device("/job:ps/task:0"):
            table = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="table")
            rows = tf.gather(table, ids, name="lookup_rows")
        with tf.device("/job:worker/task:0"):
            out = tf.reduce_sum(rows * 2.0)
        with tf.Session(servers["worker:0"].target) as sess:
            sess.run(table.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                sess.run(out, {ids: [1, 7]})
            msg = str(e.value)
            assert "lookup_rows" in msg and "/job:ps/replica:0/task:0" in msg and "test_cluster_session.py" in msg
            assert sess.run(out, {ids: [1, 2]}) == 2.0 * (3 + 4 + 5 + 6 + 7 + 8)  # the next step runs


def test_a_device_missing_from_the_cluster_is_an_error_naming_it(cluster_2ps_2workers):
    _, servers = cluster_2ps_2workers
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:3"):
            v = tf.Variable(1.0, name="nowhere")
        with tf.Session(servers["worker:0"].target) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"nowhere.*/job:ps/task:3"):
                sess.run(v.initializer)


def test_a_missing_task_is_named_within_the_wait():
    ps_port, wk_port = free_ports(2)
    cluster = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{wk_port}"]}
    worker = tf.train.Server(cluster, job_name="worker", task_index=0, task_wait_seconds=1.0)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(1.0)
            with tf.Session(worker.target) as sess:
                t0 = time.monotonic()
                named = rf"/job:ps/replica:0/task:0 \(127.0.0.1:{ps_port}\)"
                with pytest.raises(tf.errors.UnavailableError, match=named):
                    sess.run(v.initializer)
                assert time.monotonic() - t0 < 10.0
    finally:
        worker.stop(0)


def test_a_session_with_a_timeout_option_waits_for_a_task_that_comes_up_late():
    ps_port, wk_port = free_ports(2)
    cluster = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{wk_port}"]}
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    ps = None
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(5.0)
            ps = tf.train.Server(cluster, job_name="ps", task_index=0)
            with tf.Session(worker.target, config=tf.ConfigProto(operation_timeout_in_ms=20000)) as sess:
                sess.run(v.initializer)
                assert sess.run(v) == 5.0
    finally:
        worker.stop(0)
        if ps is not None:
            ps.stop(0)


def test_run_metadata_has_step_stats_of_every_task(cluster_2ps_2workers):
    _, servers = cluster_2ps_2workers
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:1"):
            v = tf.Variable(np.ones([3], np.float32))
            a = v * 2.0
        b = a + 1.0
        with tf.Session(servers["worker:0"].target) as sess:
            sess.run(v.initializer)
            md = tf.RunMetadata()
            out = sess.run(b, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True),
                           run_metadata=md)
    assert out.tolist() == [3.0, 3.0, 3.0]
    devices = {d.device for d in md.step_stats.dev_stats}
    assert "/job:ps/replica:0/task:1/device:CPU:0" in devices
    assert "/job:worker/replica:0/task:0/device:CPU:0" in devices
    assert len(md.partition_graphs) == 2


def test_a_server_cluster_spec_with_port_zero_gets_the_bound_port():
    server = tf.train.Server({"local": ["127.0.0.1:0"]})
    try:
        port = int(server.target.rsplit(":", 1)[1])
        assert port > 0 and server.cluster_spec.task_address("local", 0) == f"127.0.0.1:{port}"
    finally:
        server.stop(0)


def test_a_server_whose_port_is_taken_says_so_with_its_task():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        with pytest.raises(tf.errors.UnavailableError, match=f"Could not bind {address} for /job:worker/task:0: is the "
                                                            "port in use"):
            tf.train.Server({"worker": [address]})


def test_token_protected_servers_serve_their_cluster():
    cluster, servers = start_cluster(ps=1, workers=1, token="s3cret")
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(2.0)
            with tf.Session(servers["worker:0"].target) as sess:
                sess.run(v.initializer)
                assert sess.run(v * 3.0) == 6.0
    finally:
        for s in servers.values():
            s.stop(0)


def test_a_tensor_larger_than_a_chunk_crosses_in_chunks(cluster_2ps_2workers, monkeypatch):
    from sparseflow._src.distributed import remote_worker, wire

    monkeypatch.setattr(wire, "CHUNK_BYTES", 1000)
    fetched = []
    original = remote_worker.RemoteWorker._fetch_chunks
    monkeypatch.setattr(remote_worker.RemoteWorker, "_fetch_chunks",
                        lambda self, *a: (fetched.append(a[2].total_bytes), original(self, *a))[1])
    _, servers = cluster_2ps_2workers
    value = np.arange(2 * 1234, dtype=np.float64).reshape(2, 1234)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(value)
            doubled = v * 2.0
        with tf.Session(servers["worker:0"].target) as sess:
            sess.run(v.initializer)
            out = sess.run(doubled)
    np.testing.assert_array_equal(out, value * 2.0)
    assert fetched == [value.nbytes]  # 20 chunks of 1000 bytes


def test_session_reset_clears_containers_on_every_task(cluster_2ps_2workers):
    _, servers = cluster_2ps_2workers
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(4.0, name="to_reset")
        with tf.Session(servers["worker:0"].target) as sess:
            sess.run(v.initializer)
        tf.Session.reset(servers["worker:0"].target)
        with tf.Session(servers["worker:0"].target) as sess:
            assert not sess.run(tf.is_variable_initialized(v))


def test_a_non_chief_waits_for_the_chief_with_a_deadline_and_says_why(cluster_2ps_2workers):
    _, servers = cluster_2ps_2workers
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            tf.Variable(1.0, name="never_initialized")
        creator = tf.train.WorkerSessionCreator(master=servers["worker:1"].target, max_wait_secs=1)
        t0 = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError, match=r"never_initialized.*chief"):
            creator.create_session()
        assert time.monotonic() - t0 < 10


def _self_signed(tmp_path):
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert.read_bytes(), key.read_bytes()


def test_tls_servers_train_together_and_refuse_plaintext_clients(tmp_path):
    from sparseflow._src.distributed.client_master import RemoteMaster
    from sparseflow._src.distributed.rpc import Security

    cert, key = _self_signed(tmp_path)
    tls = Security(cert=cert, key=key, ca=cert)
    cluster, servers = start_cluster(ps=1, workers=1, security=tls)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(2.0)
            with tf.Session(servers["worker:0"].target) as sess:
                sess.run(v.initializer)
                assert sess.run(v * 5.0) == 10.0
            plain = RemoteMaster(servers["ps:0"].target, tf.get_default_graph(), None, Security())
            with pytest.raises(tf.errors.UnavailableError):
                plain.compile([], [v.name], [])
            plain.close()
            secure = RemoteMaster(servers["ps:0"].target, tf.get_default_graph(), None, Security(ca=cert))
            assert secure.compile([], [v.name], []).run([])[0] == 2.0
            secure.close()
    finally:
        for s in servers.values():
            s.stop(0)


def test_soft_placement_on_a_cluster_relaxes_the_device_type_but_not_the_task(cluster_2ps_2workers):
    _, servers = cluster_2ps_2workers
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:1/device:GPU:0"):  # no GPU: the ps task's CPU
            v = tf.Variable(3.0, name="wanted_a_gpu")
        with tf.Session(servers["worker:0"].target, config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            sess.run(v.initializer)
            assert sess.run(v) == 3.0
        assert servers["ps:1"].worker.devices.resources("/job:ps/replica:0/task:1/device:CPU:0").lookup(
            "", "wanted_a_gpu")
