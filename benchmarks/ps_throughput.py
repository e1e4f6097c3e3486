"""Throughput of embedding tables sharded over parameter servers: pull and push of 2^16 unique
keys (dim 16, Adagrad) per request and ps task, against 1 and 2 ps tasks on loopback.

Each ps task is a separate process (``tf.train.Server`` on 127.0.0.1); this process is the worker.
A step's ``table.pull(keys)`` / ``table.push(keys, grads)`` run as graph ops in a ``tf.Session`` of
the worker's server: the kernel splits the keys by owning shard (2^16 to each ps), sends one
TablePull / TablePush per ps concurrently and assembles the rows. Keys are warm (inserted by a
first pull). Per configuration one JSON line:

* ``pull_keys_per_s`` / ``push_keys_per_s``: keys per second *per ps task*: 2^16 / the time of
  one ``sess.run`` of the pull / push (all ps tasks served concurrently), from the fastest run
  (the steadier figure on a shared machine); ``*_keys_per_s_median`` from the median run;
* where the time goes, in milliseconds for one request of 2^16 keys (fastest run, ``*_median``
  too): ``table_*_ms`` the table alone (in this process, no RPC), ``codec_*_ms`` building,
  serializing and parsing the request and reply protos (no network), ``rpc_*_ms`` one raw
  TablePull / TablePush to ps 0 (gRPC, the ps's decoding and table work, no graph),
  ``step_*_ms`` the whole ``sess.run``.

Usage: ``python benchmarks/ps_throughput.py [--ps 1 2] [--runs 30] [--keys 65536]``
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import sparseflow as tf  # noqa: E402
from sparseflow import embedding  # noqa: E402
from sparseflow._src.distributed.proto import worker_pb2  # noqa: E402
from sparseflow._src.kernels import embedding_hash as H  # noqa: E402
from sparseflow._src.kernels.embedding_service import PullItem, PushItem, parse_config  # noqa: E402
from sparseflow._src.kernels.embedding_table import EmbeddingTableResource  # noqa: E402

DIM = 16
READY = "PS_READY"


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def serve(cluster, task):
    server = tf.train.Server(cluster, job_name="ps", task_index=task)
    print(READY, flush=True)
    server.join()


def start_ps(cluster, n, deadline_s=60.0):
    procs = []
    for i in range(n):
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", json.dumps(cluster), str(i)],
                             stdout=subprocess.PIPE, text=True)
        procs.append(p)
    end = time.monotonic() + deadline_s
    for p in procs:
        line = p.stdout.readline()  # the ps prints READY once its port is bound
        if READY not in line or time.monotonic() > end:
            stop(procs)
            raise RuntimeError(f"a ps task did not start (got {line!r})")
    return procs


def stop(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


def keys_per_shard(num_ps, count, seed=0):
    """``count`` distinct uint64 keys owned by each of ``num_ps`` shards, concatenated."""
    rng = np.random.default_rng(seed)
    cand = np.unique(rng.integers(0, 2**63, size=int(count * num_ps * 1.5) + 1024, dtype=np.int64).view(np.uint64))
    rng.shuffle(cand)
    ids = np.empty(cand.shape[0], np.int32)
    H.shard_ids(cand, num_ps, H.PART_SALT, ids)
    return np.concatenate([cand[ids == p][:count] for p in range(num_ps)])


def timed_ms(fn, runs):
    """(fastest, median) milliseconds of ``runs`` calls of ``fn``."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.min(times)), float(np.median(times))


def record(out, name, fn, runs):
    out[name], out[name + "_median"] = timed_ms(fn, runs)


def local_figures(config, keys, grads, runs):
    """The table alone, and the protos without a network, for one request of ``keys``."""
    t = parse_config(config)
    table = EmbeddingTableResource("local", t.spec)
    table.pull(keys)
    out = {}
    record(out, "table_pull_ms", lambda: table.pull(keys), runs)
    record(out, "table_push_ms", lambda: table.push(keys, grads, learning_rate=0.05), runs)
    rows = table.pull(keys)

    def pull_codec():
        req = worker_pb2.TablePullRequest()
        req.tables.add(config=config, part=0, keys=keys.tobytes(), training=True)
        got = worker_pb2.TablePullRequest.FromString(req.SerializeToString())
        np.frombuffer(got.tables[0].keys, np.uint64).copy()
        resp = worker_pb2.TablePullResponse(values=[rows.tobytes()])
        np.frombuffer(worker_pb2.TablePullResponse.FromString(resp.SerializeToString()).values[0], np.float32).copy()

    def push_codec():
        req = worker_pb2.TablePushRequest(request_id=1)
        req.tables.add(config=config, part=0, keys=keys.tobytes(), grads=grads.tobytes(), learning_rate=0.05)
        got = worker_pb2.TablePushRequest.FromString(req.SerializeToString())
        np.frombuffer(got.tables[0].keys, np.uint64).copy()
        np.frombuffer(got.tables[0].grads, np.float32).copy()

    record(out, "codec_pull_ms", pull_codec, runs)
    record(out, "codec_push_ms", push_codec, runs)
    return out


def measure(num_ps, count, runs):
    ports = free_ports(num_ps + 1)
    cluster = {"ps": [f"127.0.0.1:{p}" for p in ports[:num_ps]], "worker": [f"127.0.0.1:{ports[-1]}"]}
    procs = start_ps(cluster, num_ps)
    try:
        worker = tf.train.Server(cluster, job_name="worker", task_index=0)
        keys = keys_per_shard(num_ps, count)
        grads = np.random.default_rng(1).standard_normal((keys.shape[0], DIM)).astype(np.float32) * 0.01
        with tf.Graph().as_default():
            table = embedding.EmbeddingTable("bench", DIM, optimizer=embedding.Adagrad(0.05, 0.1),
                                             devices=[f"/job:ps/task:{i}" for i in range(num_ps)])
            k = tf.placeholder(tf.uint64, [None])
            g = tf.placeholder(tf.float32, [None, DIM])
            with tf.device("/job:worker/task:0"):
                rows = table.pull(k)
                push = table.push(k, g)
            with tf.Session(worker.target) as sess:
                sess.run(rows, {k: keys})  # inserts every key once (and compiles)
                sess.run(push, {k: keys, g: grads})
                out = {"ps_tasks": num_ps, "keys_per_request": count, "dim": DIM}
                record(out, "step_pull_ms", lambda: sess.run(rows, {k: keys}), runs)
                record(out, "step_push_ms", lambda: sess.run(push, {k: keys, g: grads}), runs)
        config = parse_config_bytes(table)
        mine = keys[:count]  # the keys of ps 0
        remote = worker.remote_worker("/job:ps/replica:0/task:0")
        record(out, "rpc_pull_ms", lambda: remote.table_pull_async([PullItem(config, 0, mine, dim=DIM)]).result(),
               runs)
        record(out, "rpc_push_ms",
               lambda: remote.table_push_async([PushItem(config, 0, mine, grads[:count], learning_rate=0.05)]).result(),
               runs)
        out.update(local_figures(config, mine, grads[:count], runs))
        for what in ("pull", "push"):
            out[f"{what}_keys_per_s"] = count / (out[f"step_{what}_ms"] / 1e3)
            out[f"{what}_keys_per_s_median"] = count / (out[f"step_{what}_ms_median"] / 1e3)
        worker.stop(0)
        return out
    finally:
        stop(procs)


def parse_config_bytes(table):
    from google.protobuf import text_format

    from sparseflow._src.framework.proto.embedding_table_pb2 import EmbeddingTableConfig

    msg = EmbeddingTableConfig()
    text_format.Parse(table.config, msg)
    return msg.SerializeToString(deterministic=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(json.loads(sys.argv[2]), int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--ps", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--keys", type=int, default=2**16)
    args = ap.parse_args()
    for n in args.ps:
        out = measure(n, args.keys, args.runs)
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}), flush=True)


if __name__ == "__main__":
    main()
