"""A client in another process than its master: CreateSession, ExtendSession as the graph grows,
MakeCallable/RunCallable and RunStep, errors and the token check, against a server subprocess."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.distributed.client_master import RemoteMaster
from sparseflow._src.distributed.rpc import Security
from tests.distributed.conftest import free_ports

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SERVER = """
import sys
import sparseflow as tf
server = tf.train.Server({"worker": [sys.argv[1]]}, job_name="worker", task_index=0)
print("READY", flush=True)
server.join()
"""


def start_server_process(env_extra=None):
    port = free_ports(1)[0]
    env = dict(os.environ, PYTHONPATH=ROOT, **(env_extra or {}))
    proc = subprocess.Popen([sys.executable, "-c", SERVER, f"127.0.0.1:{port}"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if line.strip() != "READY":
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r} {proc.stderr.read()}")
    return proc, f"grpc://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def remote_target():
    proc, target = start_server_process()
    yield target
    proc.kill()
    proc.wait(10)


def test_the_session_is_remote_and_runs_feeds_and_fetches(remote_target):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.reduce_sum(x * 3.0, axis=1)
        with tf.Session(remote_target) as sess:
            assert isinstance(sess._master, RemoteMaster)
            assert sess.run(y, {x: [[1, 2], [3, 4]]}).tolist() == [9.0, 21.0]
            z = y + 1.0  # the graph grows: ExtendSession
            assert sess.run([y, z], {x: [[1, 1]]})[1].tolist() == [7.0]
            md = tf.RunMetadata()
            sess.run(z, {x: [[1, 1]]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
            assert any(d.node_stats for d in md.step_stats.dev_stats)
            assert [d.name for d in sess.list_devices()] == ["/job:worker/replica:0/task:0/device:CPU:0"]


def test_variables_live_on_the_server_across_client_sessions(remote_target):
    with tf.Graph().as_default():
        v = tf.Variable(np.float32(1.5), name="remote_v")
        with tf.Session(remote_target) as sess:
            sess.run(v.initializer)
            sess.run(v.assign_add(1.0))
        with tf.Session(remote_target) as sess:
            assert sess.run(v) == 2.5


def test_errors_keep_their_class_and_op(remote_target):
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [])
        r = tf.gather(tf.constant([1.0, 2.0]), i, name="picky_gather")
        with tf.Session(remote_target) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="picky_gather"):
                sess.run(r, {i: 5})
            assert sess.run(r, {i: 1}) == 2.0


def test_a_server_with_a_token_refuses_a_client_without_it():
    proc, target = start_server_process({"SPARSEFLOW_TOKEN": "right"})
    try:
        with tf.Graph().as_default():
            y = tf.constant(2.0) + 1.0
            master = RemoteMaster(target, tf.get_default_graph(), None, Security())
            with pytest.raises(tf.errors.UnauthenticatedError, match="token"):
                master.compile([], [y.name], [])
            master.close()
            good = RemoteMaster(target, tf.get_default_graph(), None, Security(token="right"))
            assert good.compile([], [y.name], []).run([]) [0] == 3.0
            good.close()
    finally:
        proc.kill()
        proc.wait(10)


def test_an_unreachable_master_is_unavailable_naming_it():
    port = free_ports(1)[0]
    with tf.Graph().as_default():
        y = tf.constant(1.0)
        t0 = time.monotonic()
        with tf.Session(f"grpc://127.0.0.1:{port}", config=tf.ConfigProto(operation_timeout_in_ms=1000)) as sess:
            with pytest.raises(tf.errors.OpError, match=f"127.0.0.1:{port}"):
                sess.run(y)
        assert time.monotonic() - t0 < 30
