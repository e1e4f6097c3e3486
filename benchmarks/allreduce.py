"""All-reduce bandwidth between worker processes on 127.0.0.1 (sparseflow's ring collectives).

``--procs`` worker processes each start a ``tf.train.Server`` of one cluster and sum-all-reduce
float32 buffers of each size (MB = 10^6 bytes) in place with
``sparseflow.distribute.collectives.all_reduce``, timed as ``../shared/peers/allreduce_torch.py``
times torch.distributed (gloo): 3 warm-up runs, then per repetition a barrier and one timed
all-reduce; the median of rank 0. One JSON line per size: ``seconds``, ``algbw_MBps`` (size /
seconds) and the transport between the processes (``--transport auto``: shared memory on one host;
``grpc``: CollectiveSend over the sockets).

``--membw`` adds one line per size with NumPy's single-thread copy and add of a buffer of that
size (``copy_ms``, ``add_ms``): the memory-bandwidth bound of a transfer. ``--peer PYTHON`` runs
the gloo script with that interpreter (a venv with torch; torch is never a sparseflow dependency)
interleaved with ours for ``--rounds`` rounds and adds per-size ratio lines (``ratio_vs_gloo``:
our algbw over gloo's, median over the rounds).

Usage: ``python benchmarks/allreduce.py --procs 2 [--sizes-mb 1.5,7.5,64] [--reps 20]
[--transport auto|grpc|shm] [--membw] [--peer ../peers-venv/bin/python --rounds 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PEER = os.path.abspath(os.path.join(ROOT, "..", "shared", "peers", "allreduce_torch.py"))


def _worker(a):
    sys.path.insert(0, ROOT)
    import numpy as np

    import sparseflow as tf
    from sparseflow.distribute import collectives as C

    hosts = a.hosts.split(",")
    server = tf.train.Server({"worker": hosts}, "worker", a.task_index)
    res = []
    for mb in [float(x) for x in a.sizes_mb.split(",")]:
        buf = np.ones(int(mb * 1e6 / 4), np.float32)
        for _ in range(3):
            C.all_reduce(buf, out=buf, server=server, group_key=1, instance_key=1)
        ts = []
        for _ in range(a.reps):
            C.barrier(server=server, group_key=1, instance_key=2)
            t0 = time.perf_counter()
            C.all_reduce(buf, out=buf, server=server, group_key=1, instance_key=1)
            ts.append(time.perf_counter() - t0)
        res.append({"mb": mb, "seconds": statistics.median(ts)})
    links = sorted({type(v).__name__ for v in server.worker.collectives._links.values()})
    C.barrier(server=server, group_key=1, instance_key=3)
    if a.task_index == 0:
        print(json.dumps({"results": res, "links": links}), flush=True)
    server.stop(0)


def _free_hosts(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    hosts = ",".join(f"127.0.0.1:{s.getsockname()[1]}" for s in socks)
    for s in socks:
        s.close()
    return hosts


def run_ours(procs, sizes, reps, transport):
    env = dict(os.environ, PYTHONPATH=ROOT, SPARSEFLOW_COLLECTIVE_TRANSPORT=transport)
    hosts = _free_hosts(procs)
    ps = [subprocess.Popen([sys.executable, __file__, "--worker", "--hosts", hosts, "--task_index", str(i),
                            "--sizes-mb", sizes, "--reps", str(reps)], env=env, stdout=subprocess.PIPE, text=True)
          for i in range(procs)]
    out = ps[0].communicate(timeout=900)[0]
    for p in ps[1:]:
        p.wait(timeout=120)
    if ps[0].returncode:
        raise SystemExit(f"worker 0 failed ({ps[0].returncode})")
    return json.loads(out.strip().splitlines()[-1])


def run_peer(python, procs, sizes, reps):
    out = subprocess.run([python, PEER, "--procs", str(procs), "--sizes-mb", sizes, "--reps", str(reps)],
                         capture_output=True, text=True, timeout=900, check=True).stdout
    return {r["mb"]: r for r in json.loads(out.strip().splitlines()[-1])["results"]}


def membw(sizes):
    import numpy as np

    for mb in [float(x) for x in sizes.split(",")]:
        n = int(mb * 1e6 / 4)
        a, b, c = np.ones(n, np.float32), np.ones(n, np.float32), np.empty(n, np.float32)
        out = {}
        for name, fn in (("copy_ms", lambda a=a, c=c: np.copyto(c, a)),
                         ("add_ms", lambda a=a, b=b, c=c: np.add(a, b, out=c))):
            fn()
            ts = []
            for _ in range(20):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
            out[name] = round(statistics.median(ts) * 1e3, 3)
        print(json.dumps({"impl": "numpy_membw", "mb": mb, **out,
                          "copy_MBps": round(mb / out["copy_ms"] * 1e3, 1)}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--sizes-mb", default="1.5,7.5,64")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--transport", default="auto", choices=["auto", "grpc", "shm"])
    ap.add_argument("--membw", action="store_true")
    ap.add_argument("--peer", default=None, help="python with torch: run allreduce_torch.py interleaved")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--hosts", help=argparse.SUPPRESS)
    ap.add_argument("--task_index", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return _worker(a)
    if a.membw:
        membw(a.sizes_mb)
    ratios: dict = {}
    for rnd in range(a.rounds):
        ours = run_ours(a.procs, a.sizes_mb, a.reps, a.transport)
        peer = run_peer(a.peer, a.procs, a.sizes_mb, a.reps) if a.peer else {}
        for r in ours["results"]:
            line = {"impl": "sparseflow", "procs": a.procs, "transport": a.transport, "links": ours["links"],
                    "round": rnd, "mb": r["mb"], "seconds": r["seconds"], "algbw_MBps": r["mb"] / r["seconds"]}
            g = peer.get(r["mb"])
            if g is not None:
                line["gloo_seconds"] = g["seconds"]
                line["gloo_algbw_MBps"] = g["algbw_MBps"]
                line["ratio_vs_gloo"] = g["seconds"] / r["seconds"]
                ratios.setdefault(r["mb"], []).append(line["ratio_vs_gloo"])
            print(json.dumps(line), flush=True)
    for mb, rs in ratios.items():
        print(json.dumps({"impl": "summary", "procs": a.procs, "transport": a.transport, "mb": mb,
                          "rounds": len(rs), "ratio_vs_gloo_median": statistics.median(rs),
                          "ratio_vs_gloo_all": [round(x, 2) for x in rs]}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
