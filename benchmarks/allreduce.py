"""All-reduce bandwidth between worker processes on 127.0.0.1 (sparseflow's ring collectives).

``--procs`` worker processes each start a ``tf.train.Server`` of one cluster and sum-all-reduce
float32 buffers of each size (MB = 10^6 bytes) in place with
``sparseflow.distribute.collectives.all_reduce``, timed as ``../shared/peers/allreduce_torch.py``
times torch.distributed (gloo): 3 warm-up runs, then per repetition a barrier and one timed
all-reduce; the median of rank 0. One JSON line per size: ``seconds``, ``algbw_MBps`` (size /
seconds) and the transport between the processes (``--transport auto``: shared memory on one host;
``grpc``: CollectiveSend over the sockets). ``--transport ring`` and ``mpi`` start the workers with
``mpiexec -n PROCS`` (``--mpiexec``, default Open MPI's ``mpirun.openmpi``) and set
``SPARSEFLOW_COLLECTIVE_MPI`` to ``never`` (the ring over shared memory) or ``always`` (MPI's
all-reduce through mpi4py; ``mpi_runs`` counts the all-reduces MPI carried); ``mpi-auto`` leaves
the choice to the size rule (collective_mpi.py). A comma list
(``--transport ring,mpi``) runs them alternately in each of ``--rounds`` rounds, and a summary line
per transport and size gives the median over the rounds.

``--membw`` adds one line per size with NumPy's single-thread copy and add of a buffer of that
size (``copy_ms``, ``add_ms``): the memory-bandwidth bound of a transfer. ``--peer PYTHON`` runs
the gloo script with that interpreter (a venv with torch; torch is never a sparseflow dependency)
interleaved with ours for ``--rounds`` rounds and adds per-size ratio lines (``ratio_vs_gloo``:
our algbw over gloo's, median over the rounds).

Usage: ``python benchmarks/allreduce.py --procs 2 [--sizes-mb 1.5,7.5,64] [--reps 20]
[--transport auto|grpc|shm|ring|mpi|mpi-auto[,...]] [--membw] [--peer ../peers-venv/bin/python --rounds 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
    from sparseflow._src.distributed.mpi_cluster_resolver import mpi_world
    from sparseflow.distribute import collectives as C

    hosts = a.hosts.split(",")
    world = mpi_world()
    task_index = world.rank if world is not None else a.task_index
    server = tf.train.Server({"worker": hosts}, "worker", task_index)
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
    mpi = server.worker.collectives.mpi
    C.barrier(server=server, group_key=1, instance_key=3)
    if task_index == 0:
        print(json.dumps({"results": res, "links": links, "mpi": None if mpi is None else mpi.policy,
                          "mpi_runs": None if mpi is None else mpi.runs}), flush=True)
    server.stop(0)


def _free_hosts(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    hosts = ",".join(f"127.0.0.1:{s.getsockname()[1]}" for s in socks)
    for s in socks:
        s.close()
    return hosts


MPI_MODES = {"ring": "never", "mpi": "always", "mpi-auto": "auto"}


def run_ours(procs, sizes, reps, transport, mpiexec="mpirun.openmpi"):
    env = dict(os.environ, PYTHONPATH=ROOT)
    hosts = _free_hosts(procs)
    worker = [sys.executable, __file__, "--worker", "--hosts", hosts, "--sizes-mb", sizes, "--reps", str(reps)]
    if transport in MPI_MODES:
        if shutil.which(mpiexec) is None:
            raise SystemExit(f"--transport {transport} runs the workers under {mpiexec}, which is not installed")
        env.update(SPARSEFLOW_COLLECTIVE_MPI=MPI_MODES[transport], OMPI_MCA_rmaps_base_oversubscribe="1")
        if os.geteuid() == 0:
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        ps = [subprocess.Popen([mpiexec, "-n", str(procs), *worker], env=env, stdout=subprocess.PIPE, text=True)]
    else:
        env.update(SPARSEFLOW_COLLECTIVE_TRANSPORT=transport, SPARSEFLOW_COLLECTIVE_MPI="never")
        ps = [subprocess.Popen([*worker, "--task_index", str(i)], env=env, stdout=subprocess.PIPE, text=True)
              for i in range(procs)]
    out = ps[0].communicate(timeout=900)[0]
    for p in ps[1:]:
        p.wait(timeout=120)
    if ps[0].returncode:
        raise SystemExit(f"worker 0 failed ({ps[0].returncode})")
    return json.loads(next(line for line in reversed(out.splitlines()) if line.startswith("{")))


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
    ap.add_argument("--transport", default="auto",
                    help="auto, grpc, shm, ring, mpi or mpi-auto (the last three under mpiexec); a comma list "
                         "alternates them")
    ap.add_argument("--mpiexec", default="mpirun.openmpi", help="the mpiexec of --transport ring/mpi/mpi-auto")
    ap.add_argument("--membw", action="store_true")
    ap.add_argument("--peer", default=None, help="python with torch: run allreduce_torch.py interleaved")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--hosts", help=argparse.SUPPRESS)
    ap.add_argument("--task_index", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return _worker(a)
    transports = a.transport.split(",")
    for t in transports:
        if t not in ("auto", "grpc", "shm", *MPI_MODES):
            ap.error(f"--transport: unknown transport {t!r}")
    if a.membw:
        membw(a.sizes_mb)
    ratios: dict = {}
    seconds: dict = {}
    for rnd in range(a.rounds):
        for transport in transports:
            ours = run_ours(a.procs, a.sizes_mb, a.reps, transport, a.mpiexec)
            for r in ours["results"]:
                seconds.setdefault((transport, r["mb"]), []).append(r["seconds"])
                print(json.dumps({"impl": "sparseflow", "procs": a.procs, "transport": transport,
                                  "links": ours["links"], "mpi": ours.get("mpi"), "mpi_runs": ours.get("mpi_runs"),
                                  "round": rnd,
                                  "mb": r["mb"], "seconds": r["seconds"], "algbw_MBps": r["mb"] / r["seconds"]}),
                      flush=True)
        peer = run_peer(a.peer, a.procs, a.sizes_mb, a.reps) if a.peer else {}
        for mb, g in peer.items():
            seconds.setdefault(("gloo", mb), []).append(g["seconds"])
            print(json.dumps({"impl": "torch_gloo", "procs": a.procs, "round": rnd, "mb": mb, "seconds": g["seconds"],
                              "algbw_MBps": g["algbw_MBps"]}), flush=True)
            for transport in transports:
                ours_s = seconds[(transport, mb)][-1]
                ratios.setdefault((transport, mb), []).append(g["seconds"] / ours_s)
    for (transport, mb), ts in seconds.items():
        line = {"impl": "summary", "procs": a.procs, "transport": transport, "mb": mb, "rounds": len(ts),
                "median_seconds": statistics.median(ts), "median_algbw_MBps": mb / statistics.median(ts),
                "algbw_MBps_all": [round(mb / t) for t in ts]}
        rs = ratios.get((transport, mb))
        if rs:
            line["ratio_vs_gloo_median"] = statistics.median(rs)
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    sys.exit(main())
