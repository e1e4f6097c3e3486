"""Collectives among servers of one process over the inter-process transports (shared memory and
gRPC forced with SPARSEFLOW_COLLECTIVE_TRANSPORT), the Python calls' defaults, failure propagation
and clean-up; tests/distributed/test_collectives_processes.py runs them across processes."""

import glob
import os
import threading

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.distributed.collective_service import GrpcLink
from sparseflow._src.distributed.collective_shm import ShmLink
from sparseflow.distribute import collectives as C
from tests.distributed.conftest import start_cluster


def in_threads(servers, fn, timeout=60.0):
    out = {}

    def body(i, s):
        try:
            out[i] = fn(i, s)
        except BaseException as e:  # noqa: BLE001 - returned to the test
            out[i] = e

    ts = [threading.Thread(target=body, args=(i, s)) for i, s in enumerate(servers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)
        assert not t.is_alive(), "a member hung"
    return [out[i] for i in range(len(servers))]


@pytest.fixture(params=["shm", "grpc"])
def workers(request, monkeypatch):
    monkeypatch.setenv("SPARSEFLOW_COLLECTIVE_TRANSPORT", request.param)
    monkeypatch.setenv("SPARSEFLOW_COLLECTIVE_PIECE_BYTES", "4096")  # many pieces in flight
    _, servers = start_cluster(ps=0, workers=3)
    ordered = [servers[f"worker:{i}"] for i in range(3)]
    yield request.param, ordered
    for s in ordered:
        s.stop(0)


def test_all_reduce_gather_broadcast_over_the_transport(workers):
    transport, servers = workers
    xs = [np.random.default_rng(i).standard_normal(100_003).astype(np.float32) for i in range(3)]
    outs = in_threads(servers, lambda i, s: C.all_reduce(xs[i], server=s, final_op="Div"))
    want = ((xs[0] + xs[1]) + xs[2]) / np.float32(3)
    for o in outs:
        np.testing.assert_allclose(o, want, rtol=1e-5, atol=1e-6)
        assert o.tobytes() == outs[0].tobytes()
    outs = in_threads(servers, lambda i, s: C.all_gather(np.full((i, 2), i, np.int32), server=s))
    assert outs[2].tolist() == [[1, 1], [2, 2], [2, 2]]
    outs = in_threads(servers, lambda i, s: C.broadcast(xs[i], root=1, server=s))
    assert all(np.array_equal(o, xs[1]) for o in outs)
    assert in_threads(servers, lambda i, s: C.rank(server=s)) == [0, 1, 2]
    kinds = {type(link) for s in servers for link in s.worker.collectives._links.values()}
    assert kinds == ({ShmLink} if transport == "shm" else {GrpcLink})


def test_a_failing_member_fails_the_others_at_once_and_the_group_forms_again(workers):
    _, servers = workers

    def member(i, s):
        return C.all_reduce(np.zeros(10 + (i == 2), np.float32), server=s, group_key=5, timeout=60)

    outs = in_threads(servers, member, timeout=30)  # not the 60 s deadline: the mismatch aborts everyone
    assert all(isinstance(o, tf.errors.OpError) for o in outs), outs
    assert any("task:2" in str(o) for o in outs)
    outs = in_threads(servers, lambda i, s: C.all_reduce(np.ones(4), server=s, group_key=5))
    assert all(o.tolist() == [3.0] * 4 for o in outs)


def test_graph_ops_in_between_graph_sessions(workers):
    _, servers = workers

    def member(i, s):
        with tf.Graph().as_default():
            with tf.device(f"{s.task}/device:CPU:0"):
                v = tf.Variable(np.full(3, float(i), np.float32))
                avg = C.all_reduce(v.read_value(), 3, 1, 1, final_op="Div")
                sync = v.assign(avg)
            with tf.Session(s.target) as sess:
                sess.run(v.initializer)
                sess.run(sync)
                return sess.run(v)

    outs = in_threads(servers, member)
    assert all(o.tolist() == [1.0, 1.0, 1.0] for o in outs), outs


def test_python_calls_need_a_server_when_the_process_has_several(workers):
    with pytest.raises(ValueError, match="server="):
        C.all_reduce(np.ones(2))


def test_a_member_that_restarts_makes_the_others_drop_the_old_group(monkeypatch):
    """A member's server stops between two runs and a new one takes its place (a restarted task). The
    others still hold the old generation, naming the old process (over gRPC nothing told them); the
    new member's join makes every member drop it at once (AbortedError, not the deadline), and a
    retry forms the group again."""
    monkeypatch.setenv("SPARSEFLOW_COLLECTIVE_TRANSPORT", "grpc")
    _, by_name = start_cluster(ps=0, workers=3)
    servers = [by_name[f"worker:{i}"] for i in range(3)]
    try:
        assert in_threads(servers, lambda i, s: C.all_reduce(np.full(8, float(i)), server=s, group_key=9,
                                                             timeout=30).tolist()) == [[3.0] * 8] * 3
        spec = servers[2].cluster_spec
        servers[2].stop(0)
        servers[2] = tf.train.Server(spec, job_name="worker", task_index=2)
        failures = []

        def retrying(i, s):
            for _ in range(3):
                try:
                    return C.all_reduce(np.full(8, float(i + 1)), server=s, group_key=9, timeout=30).tolist()
                except (tf.errors.AbortedError, tf.errors.UnavailableError, tf.errors.DeadlineExceededError) as e:
                    failures.append(e)
            raise AssertionError("no run of the group after 3 attempts")

        assert in_threads(servers, retrying, timeout=120) == [[6.0] * 8] * 3, failures
        assert failures and not any(isinstance(e, tf.errors.DeadlineExceededError) for e in failures), failures
        assert any("/job:worker/replica:0/task:2/device:CPU:0 restarted" in e.message for e in failures), failures
    finally:
        for s in servers:
            s.stop(0)


def test_stopping_leaves_no_shared_memory_behind(monkeypatch):
    monkeypatch.setenv("SPARSEFLOW_COLLECTIVE_TRANSPORT", "shm")
    pattern = f"/dev/shm/sparseflow-coll-{os.getpid()}-*"
    _, servers = start_cluster(ps=0, workers=2)
    ordered = [servers["worker:0"], servers["worker:1"]]
    in_threads(ordered, lambda i, s: C.all_reduce(np.ones(1000), server=s))
    assert [p for p in glob.glob(pattern) if p.endswith(".buf")] == []  # unlinked once both sides mapped it
    endpoints = [s.worker.collectives.shm.path for s in ordered]
    assert all(os.path.exists(p) for p in endpoints)
    for s in ordered:
        s.stop(0)
    # these servers' own endpoints (other servers of this process, another test's, may still be up)
    assert [p for p in endpoints if os.path.exists(p)] == []


@pytest.mark.parametrize("module", ["kernels.collective_ring", "kernels.collective_executor", "ops.collective_ops",
                                    "distributed.collectives", "distributed.collective_shm", "training.collectives",
                                    "distributed.collective_service"])
def test_docstring_examples(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"sparseflow._src.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_collective_endpoint_sockets_of_dead_processes_are_removed():
    import os
    import subprocess
    import sys

    from sparseflow._src.distributed import collective_shm

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    d = collective_shm._shm_dir()
    stale = os.path.join(d, f"sparseflow-coll-{dead.pid}-0123456789ab.sock")
    mine = os.path.join(d, f"sparseflow-coll-{os.getpid()}-0123456789ab.sock")
    for p in (stale, mine):
        open(p, "w").close()
    try:
        ep = collective_shm.ShmEndpoint(lambda *a: None, lambda *a: None)
        ep.close()
        assert not os.path.exists(stale) and os.path.exists(mine) and not os.path.exists(ep.path)
    finally:
        for p in (stale, mine):
            if os.path.exists(p):
                os.unlink(p)
