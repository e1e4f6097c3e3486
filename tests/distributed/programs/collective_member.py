"""One worker task of a collectives test: runs a scenario against the other tasks and prints one
line per result ("OK name", "FAIL name ...", "ERROR Type message", "ITER n", "LINK ClassName").

    python collective_member.py --workers 127.0.0.1:P0,127.0.0.1:P1 --task_index 0 --scenario values

Under mpiexec the task index is the MPI rank; "MPI n" then says how many all-reduces MPI carried.
"""

import argparse
import json
import sys
import threading

import numpy as np

import sparseflow as tf
from sparseflow._src.distributed.mpi_cluster_resolver import mpi_world
from sparseflow.distribute import collectives as C


def say(*parts):
    sys.stdout.write(" ".join(map(str, parts)) + "\n")  # one write: under mpiexec both ranks share stdout
    sys.stdout.flush()


def check(name, got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want):
        say("OK", name)
    else:
        say("FAIL", name, json.dumps({"got": got.tolist()[:8], "want": want.tolist()[:8], "dtype": str(got.dtype),
                                      "want_dtype": str(want.dtype), "shape": list(got.shape),
                                      "want_shape": list(want.shape)}))


def inputs(rank, n, dtype, seed=0):
    rng = np.random.default_rng(seed * 1000 + rank)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(n).astype(dtype)
    return rng.integers(-50, 50, n).astype(dtype)


def scenario_values(server, rank, size):
    for dtype in (np.float32, np.float64, np.int32, np.int64, np.float16):
        for n in (0, 1, size - 1, size + 1, 1000, 300_001):
            xs = [inputs(r, n, dtype) for r in range(size)]
            want = xs[0].copy()
            for x in xs[1:]:
                want = want + x  # the ring merges each segment in rank order from its start: same bits
            got = C.all_reduce(xs[rank], server=server, group_key=1, instance_key=1)
            if np.dtype(dtype).kind == "f":
                ok = np.allclose(got, want, rtol=1e-2 if dtype == np.float16 else 1e-5, atol=1e-2)
                say("OK" if ok and got.dtype == want.dtype else "FAIL", f"sum-{np.dtype(dtype).name}-{n}")
            else:
                check(f"sum-{np.dtype(dtype).name}-{n}", got, want)
    x = np.arange(10, dtype=np.float32).reshape(2, 5) * (rank + 1)
    check("mean", C.all_reduce(x, final_op="Div", server=server, group_key=1, instance_key=2),
          np.arange(10, dtype=np.float32).reshape(2, 5) * (size + 1) / 2)
    check("mean-int", C.all_reduce(np.array([7, -7], np.int32) * (rank + 1), final_op="Div", server=server,
                                   group_key=1, instance_key=2),
          np.array([int(7 * (size + 1) * size / 2 / size), -int(7 * (size + 1) * size / 2 / size)], np.int32))
    check("max", C.all_reduce(np.array([rank, -rank], np.int64), merge_op="Max", server=server, group_key=1,
                              instance_key=3), np.array([size - 1, 0], np.int64))
    check("min", C.all_reduce(np.array([rank, -rank], np.int64), merge_op="Min", server=server, group_key=1,
                              instance_key=3), np.array([0, -(size - 1)], np.int64))
    buf = np.full(5, float(rank + 1), np.float32)
    C.all_reduce(buf, out=buf, server=server, group_key=1, instance_key=4)
    check("in-place", buf, np.full(5, size * (size + 1) / 2, np.float32))
    parts = [np.full((r + 1, 3), r, np.int64) for r in range(size)]
    check("gather-uneven", C.all_gather(parts[rank], server=server, group_key=1, instance_key=5),
          np.concatenate(parts))
    big = [inputs(r, 500_000, np.float32, seed=3).reshape(-1, 4) for r in range(size)]
    check("gather-big", C.all_gather(big[rank], server=server, group_key=1, instance_key=5), np.concatenate(big))
    for root in range(size):
        value = np.arange(12, dtype=np.float64).reshape(3, 4) + 100 * root
        got = C.broadcast(value if rank == root else np.zeros((3, 4)), root=root, server=server, group_key=1,
                          instance_key=6)
        check(f"bcast-{root}", got, value)
    b = inputs(size - 1, 700_000, np.float32, seed=4)
    check("bcast-big", C.broadcast(b if rank == size - 1 else np.empty_like(b), root=size - 1, server=server,
                                   group_key=1, instance_key=7), b)
    check("bcast-bool", C.broadcast(np.array([True, False]) if rank == 0 else np.zeros(2, bool), server=server,
                                    group_key=1, instance_key=8), np.array([True, False]))
    try:  # members that disagree on the size get a named error, not garbage
        C.all_reduce(np.zeros(3 + rank, np.float32), server=server, group_key=2, instance_key=1, timeout=30)
        say("FAIL mismatch no error")
    except tf.errors.InvalidArgumentError as e:
        say("OK", "mismatch", "task:" in str(e))
    ex = server.worker.collectives
    say("LINK", " ".join(sorted({type(v).__name__ for v in ex._links.values()})))


def scenario_graph(server, rank, size):
    with tf.Graph().as_default():
        x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) * (rank + 1))
        with tf.device(f"{server.task}/device:CPU:0"):
            s = C.all_reduce(x, size, 9, 1)
            m = C.all_reduce(x, size, 9, 2, final_op="Div")
            m2 = C.all_reduce_v2(x, size, 9, 3, final_op="Div")
            g = C.all_gather(x, size, 9, 4)
            g2 = C.all_gather_v2(x, size, 9, 5)
            if rank == 0:
                b = C.broadcast_send(x, [2, 3], tf.float32, size, 9, 6)
                b2 = C.broadcast_send_v2(x, size, 9, 7)
            else:
                b = C.broadcast_recv([2, 3], tf.float32, size, 9, 6)
                b2 = C.broadcast_recv_v2(tf.constant([2, 3]), tf.float32, size, 9, 7)
        base = np.arange(6, dtype=np.float32).reshape(2, 3)
        total = size * (size + 1) / 2
        with tf.Session(server.target) as sess:
            for step in range(3):  # the same ops every step: runs pair up by count
                out = sess.run([s, m, m2, g, g2, b, b2])
                check(f"graph-sum-{step}", out[0], base * total)
                check(f"graph-mean-{step}", out[1], base * total / size)
                check(f"graph-mean-v2-{step}", out[2], base * total / size)
                want_g = np.concatenate([base * (r + 1) for r in range(size)])
                check(f"graph-gather-{step}", out[3], want_g)
                check(f"graph-gather-v2-{step}", out[4], want_g)
                check(f"graph-bcast-{step}", out[5], base)
                check(f"graph-bcast-v2-{step}", out[6], base)
        say("SHAPE", s.shape.as_list(), g.shape.as_list())


def scenario_concurrent(server, rank, size):
    """Four instances all-reduced by four threads at once, started in opposite orders on odd ranks."""
    results = {}

    def run(instance):
        x = np.full(1000 * instance, float(rank + instance), np.float64)
        results[instance] = [C.all_reduce(x, server=server, group_key=5, instance_key=instance)[0]
                             for _ in range(20)]

    order = [1, 2, 3, 4] if rank % 2 == 0 else [4, 3, 2, 1]
    threads = [threading.Thread(target=run, args=(i,)) for i in order]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in (1, 2, 3, 4):
        check(f"concurrent-{i}", np.array(results[i]), np.full(20, size * i + size * (size - 1) / 2))


def scenario_loop(server, rank, size, timeout):
    x = np.ones(1 << 18, np.float32)
    try:
        for i in range(100000):
            C.all_reduce(x, server=server, group_key=3, instance_key=1, timeout=timeout)
            if i % 5 == 0:
                say("ITER", i)
    except tf.errors.OpError as e:
        say("ERROR", type(e).__name__, str(e).replace("\n", " "))


def scenario_absent(server, rank, size, timeout):
    C.barrier(server=server, group_key=4, timeout=60)
    if rank == 0:
        try:
            C.all_reduce(np.ones(4, np.float32), server=server, group_key=4, instance_key=2, timeout=timeout)
            say("FAIL absent no error")
        except tf.errors.OpError as e:
            say("ERROR", type(e).__name__, str(e).replace("\n", " "))
    else:
        say("IDLE")
        sys.stdin.readline()  # the test closes stdin when it is done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", required=True)
    ap.add_argument("--task_index", type=int, help="default: the MPI rank under mpiexec")
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--timeout", type=float, default=30.0)
    a = ap.parse_args()
    hosts = a.workers.split(",")
    if a.task_index is None:
        a.task_index = mpi_world().rank
    server = tf.train.Server({"worker": hosts}, "worker", a.task_index)
    say("READY", server.worker.collectives.transport)
    size = len(hosts)
    if a.scenario == "values":
        scenario_values(server, a.task_index, size)
    elif a.scenario == "graph":
        scenario_graph(server, a.task_index, size)
    elif a.scenario == "concurrent":
        scenario_concurrent(server, a.task_index, size)
    elif a.scenario == "loop":
        scenario_loop(server, a.task_index, size, a.timeout)
    elif a.scenario == "absent":
        scenario_absent(server, a.task_index, size, a.timeout)
    C.barrier(server=server, group_key=99, timeout=60) if a.scenario in ("values", "graph", "concurrent") else None
    mpi = server.worker.collectives.mpi
    say("MPI", None if mpi is None else mpi.runs)
    say("DONE")
    server.stop(0)


if __name__ == "__main__":
    main()
