"""Synchronous vs asynchronous training of an embedding table sharded over parameter servers.

An in-process cluster on 127.0.0.1 (``--ps`` ps tasks, ``--workers`` worker tasks, one
``tf.train.Server`` each, all in this process) trains a table (dim 16, Adagrad) sharded over the ps
tasks and a dense layer on ps 0, one thread per worker, every worker running its step of a global
step at the same time (a barrier between global steps):

* ``async``: ``sparseflow.embedding.minimize(loss, GradientDescentOptimizer)`` on each worker:
  pushes are applied as they arrive (TablePush);
* ``sync``: the same with ``tf.train.SyncReplicasOptimizer(opt, workers, workers)``: each worker
  sends one TableAccumulate per ps, the chief's queue runner applies the average once per step
  (TableApplyAccumulated) and hands out the tokens.

Per mode one JSON line: ``step_ms_median`` / ``step_ms_min`` (wall time of one global step: all
workers' ``sess.run`` of the train op), ``keys_per_step`` (unique keys of one worker's batch), the
table RPCs per ps per global step, and for ``sync`` ``cancel_ms``: the time from closing the
chief's session while its apply waits on the parameter servers (no pushes) to the end of its
queue-runner thread. The servers share this process (and its GIL): the figures compare the
two modes, they are not a cluster's throughput (see ps_throughput.py for that).

Usage: ``python benchmarks/sync_tables.py [--steps 20] [--batch 512] [--ps 2] [--workers 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import sparseflow as tf  # noqa: E402
from sparseflow import embedding as E  # noqa: E402

FIELDS, DIM, VOCAB = 8, 16, 200_000


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def start_cluster(ps, workers):
    ports = free_ports(ps + workers)
    cluster = tf.train.ClusterSpec({"ps": [f"127.0.0.1:{p}" for p in ports[:ps]],
                                    "worker": [f"127.0.0.1:{p}" for p in ports[ps:]]})
    return {f"{job}:{i}": tf.train.Server(cluster, job_name=job, task_index=i) for job, i, _ in cluster.tasks()}


def build(mode, name, worker, ps_tasks, workers, dense=True):
    g = tf.Graph()
    with g.as_default():
        table = E.EmbeddingTable(name, DIM, optimizer=E.Adagrad(0.05, 0.1), devices=ps_tasks)
        with tf.device(ps_tasks[0]):
            w = tf.Variable(np.full((FIELDS * DIM, 1), 0.01, np.float32), name=f"{name}_w")
            gs = tf.train.get_or_create_global_step()
        with tf.device(f"/job:worker/task:{worker}"):
            ids = tf.placeholder(tf.int64, [None, FIELDS])
            y = tf.placeholder(tf.float32, [None, 1])
            emb = tf.reshape(table.lookup(ids), [-1, FIELDS * DIM])
            loss = tf.reduce_mean(tf.square(tf.matmul(emb, w) - y))
            opt = tf.train.GradientDescentOptimizer(0.01)
            if mode == "sync":
                opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=workers, total_num_replicas=workers)
            train = E.minimize(loss, opt, global_step=gs, var_list=None if dense else [])
        init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
        tokens = opt.get_init_tokens_op(num_tokens=0) if mode == "sync" else None
    return g, (ids, y), train, init, opt, tokens


def start(mode, servers, graphs):
    sessions = [tf.Session(servers[f"worker:{i}"].target, graph=g[0]) for i, g in enumerate(graphs)]
    _, _, _, init, opt, tokens = graphs[0]
    sessions[0].run(init)
    coord, threads = None, []
    if mode == "sync":
        sessions[0].run([opt.chief_init_op, tokens])
        for (_, _, _, init_i, opt_i, _), s in zip(graphs[1:], sessions[1:]):
            s.run([init_i[1], opt_i.local_step_init_op])
        coord = tf.train.Coordinator()
        threads = opt.get_chief_queue_runner().create_threads(sessions[0], coord=coord, daemon=True, start=True)
    return sessions, coord, threads


def run_mode(mode, servers, args):
    ps_tasks = [f"/job:ps/task:{p}" for p in range(args.ps)]
    graphs = [build(mode, f"bench_{mode}", i, ps_tasks, args.workers) for i in range(args.workers)]
    sessions, coord, threads = start(mode, servers, graphs)
    rng = np.random.default_rng(0)
    times, keys = [], []

    def work(i, batch):
        (ids, y), train = graphs[i][1], graphs[i][2]
        sessions[i].run(train, {ids: batch[0], y: batch[1]})

    before = [dict(servers[f"ps:{p}"].worker_service.table_requests) for p in range(args.ps)]
    for step in range(args.steps + 2):  # two warm-up steps
        batches = [(rng.integers(0, VOCAB, (args.batch, FIELDS)), rng.standard_normal((args.batch, 1), np.float32))
                   for _ in range(args.workers)]
        ts = [threading.Thread(target=work, args=(i, b)) for i, b in enumerate(batches)]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if step >= 2:
            times.append(time.perf_counter() - t0)
            keys.append(len(np.unique(batches[0][0])))
        if step == 1:
            before = [dict(servers[f"ps:{p}"].worker_service.table_requests) for p in range(args.ps)]
    after = [dict(servers[f"ps:{p}"].worker_service.table_requests) for p in range(args.ps)]
    rpcs = {k: (after[0].get(k, 0) - before[0].get(k, 0)) / args.steps for k in
            ("TablePull", "TablePush", "TableAccumulate", "TableApplyAccumulated")}
    if coord is not None:
        coord.request_stop()
    for s in sessions:
        s.close()
    if coord is not None:
        coord.join(threads, stop_grace_period_secs=30)
    return {"mode": mode, "ps": args.ps, "workers": args.workers, "batch": args.batch, "fields": FIELDS, "dim": DIM,
            "keys_per_step": int(statistics.median(keys)), "step_ms_median": 1e3 * statistics.median(times),
            "step_ms_min": 1e3 * min(times), "rpcs_per_ps_per_step": rpcs}


def cancel_ms(servers, args):
    """Close the chief's session while its tables-only apply waits on the ps: ms until its thread ends."""
    ps_tasks = [f"/job:ps/task:{p}" for p in range(args.ps)]
    graphs = [build("sync", "bench_cancel", 0, ps_tasks, args.workers, dense=False)]
    sessions, coord, threads = start("sync", servers, graphs)
    time.sleep(0.5)  # the queue runner is waiting for pushes that never come
    t0 = time.perf_counter()
    coord.request_stop()
    sessions[0].close()
    coord.join(threads, stop_grace_period_secs=30)
    return 1e3 * (time.perf_counter() - t0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--ps", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    servers = start_cluster(args.ps, args.workers)
    try:
        print(json.dumps(run_mode("async", servers, args)), flush=True)
        out = run_mode("sync", servers, args)
        out["cancel_ms"] = cancel_ms(servers, args)
        print(json.dumps(out), flush=True)
    finally:
        for s in servers.values():
            s.stop(0)


if __name__ == "__main__":
    main()
