#!/usr/bin/env python3
"""Runs a TF1 ps/worker program as a local cluster, the way its authors launch it: one process
per task with ``--ps_hosts --worker_hosts --job_name --task_index``.

The program's two import lines (after ``# TF_IMPORT``) are replaced by ``import <module> as tf``,
so the same file runs on TensorFlow (``--module tensorflow``: the lines stay) and on sparseflow.
The worker processes' ``RESULT name values...`` lines are printed, prefixed with nothing for the
chief (task 0) and ``worker<i>:`` for the others; ps tasks are stopped once every worker exits.

    python run_cluster_program.py --module sparseflow --ps 1 --workers 2 d01_between_graph.py [args]

TensorFlow's servers bind every interface: run the TensorFlow side inside a private network
namespace (``unshare -rn sh -c 'ip link set lo up; exec python run_cluster_program.py ...'``).
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def rewrite(src, module):
    lines = open(src).read().splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "# TF_IMPORT" and module != "tensorflow":
            out += [lines[i], f"import {module} as tf"]
            i += 3  # the two TensorFlow lines
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", default="sparseflow")
    ap.add_argument("--ps", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("program")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="tf1dist_")
    prog = os.path.join(tmp, os.path.basename(a.program))
    with open(prog, "w") as f:
        f.write(rewrite(a.program, a.module))
    ports = free_ports(a.ps + a.workers)
    hosts = ["--ps_hosts", ",".join(f"127.0.0.1:{p}" for p in ports[:a.ps]),
             "--worker_hosts", ",".join(f"127.0.0.1:{p}" for p in ports[a.ps:]), "--work_dir", tmp]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    base = [sys.executable, prog] + hosts + a.args
    ps = [subprocess.Popen(base + ["--job_name", "ps", "--task_index", str(i)], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True) for i in range(a.ps)]
    workers = [subprocess.Popen(base + ["--job_name", "worker", "--task_index", str(i)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(a.workers)]
    status = 0
    deadline = time.time() + a.timeout
    try:
        for i, p in enumerate(workers):
            try:
                out, err = p.communicate(timeout=max(1.0, deadline - time.time()))
            except subprocess.TimeoutExpired:
                print(f"worker {i} timed out", file=sys.stderr)
                status = 1
                break
            for line in out.splitlines():
                if line.startswith("RESULT "):
                    print(line if i == 0 else f"RESULT worker{i}:{line[7:]}")
            if p.returncode != 0:
                print(f"worker {i} exited {p.returncode}:\n{err[-3000:]}", file=sys.stderr)
                status = 1
    finally:
        for p in ps + workers:
            if p.poll() is None:
                p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
