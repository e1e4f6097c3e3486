"""W1 on a local cluster: ``widedeep_criteo.py --ps N --workers M`` (the same model as the one-process
run, on sparseflow's distributed runtime), set up as TensorFlow's ``../shared/peers/w1_tf_dist.py``:

- one process per task on 127.0.0.1 (``tf.train.Server``); ps tasks only serve;
- workers build the model in the scope of their strategy (``sparseflow.distribute``):
  ``ParameterServerStrategy`` (``--ps N``, as ``tf.train.replica_device_setter``: dense variables
  and their Adam updates on the ps tasks, both embedding tables sharded over all ps tasks, one pull
  and one push per ps per step for both tables; with ``--sync`` through ``SyncReplicasOptimizer``:
  each global step averages one gradient of every worker, the tables' by key), ``PsStrategy``
  (``--strategy ps``, no ps tasks: the same layout over the workers themselves),
  ``MultiWorkerMirroredStrategy`` (``--strategy mirrored``: dense variables mirrored on every
  worker, gradients all-reduced in buckets, tables sharded over the workers and trained
  synchronously) or ``HybridStrategy`` (``--strategy hybrid [--staleness K]``: the same with the
  tables' rows pushed asynchronously);
- each worker trains one epoch, the first 5 steps untimed; the chief (worker 0) initializes
  (``strategy.initialize``: the others wait for it, or with the all-reduce strategies take its
  values by broadcast). The PS strategies train asynchronously, each worker its own contiguous
  shard of the training rows with the full batch; the synchronous ones (all-reduce, ``--sync``)
  split each batch of the one-process run over the workers (``BATCH // workers`` rows each: global
  step s trains the local run's batch s; ``--worker-batch full`` gives each worker the full batch
  instead, the same work per worker step as the asynchronous strategies, for comparing speed);
- the chief waits until every worker is done (``strategy.finish``), then evaluates the exact rank
  AUC on the last 10% of rows; the other workers stay until it has (``strategy.release``).

Prints one JSON line (the launcher's): ``examples_per_s`` is all workers' timed examples over the
window from the first worker's timed start to the last worker's end, ``test_auc`` the chief's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from sparseflow._src.distributed.launcher import free_ports

HERE = os.path.dirname(os.path.abspath(__file__))


def launch(args, make_data) -> dict:
    """Runs the cluster (``args.ps`` ps, ``args.workers`` workers) and returns the JSON result."""
    with tempfile.TemporaryDirectory() as tmp:
        path = args.data or make_data(os.path.join(tmp, "criteo_synthetic.tsv"))
        strategy = STRATEGY_ALIASES.get(args.strategy, args.strategy) or "parameter_server"
        if args.sync and (strategy != "parameter_server" or not args.ps):
            raise SystemExit("--sync is an option of the parameter_server strategy (--ps N)")
        ports = free_ports(args.ps + args.workers)
        hosts = ["--ps-hosts", ",".join(f"127.0.0.1:{p}" for p in ports[:args.ps]),
                 "--worker-hosts", ",".join(f"127.0.0.1:{p}" for p in ports[args.ps:])]
        base = [sys.executable, os.path.join(HERE, "widedeep_criteo.py"), "--data", path, *hosts,
                "--seed", str(args.seed), "--profile-steps", "0", "--strategy", strategy,
                "--staleness", str(args.staleness), "--worker-batch", args.worker_batch]
        base += ["--sync"] if args.sync else []
        if args.bucket_bytes:
            base += ["--bucket-bytes", str(args.bucket_bytes)]
        if args.rows:
            base += ["--rows", str(args.rows)]
        if args.intra_op:
            base += ["--intra-op", str(args.intra_op)]
        env = dict(os.environ)
        ps = [subprocess.Popen(base + ["--task", f"ps:{i}"], env=env, stdout=subprocess.DEVNULL)
              for i in range(args.ps)]
        workers = [subprocess.Popen(base + ["--task", f"worker:{i}"], env=env, stdout=subprocess.PIPE, text=True)
                   for i in range(args.workers)]
        outs = []
        sampler = _CpuSampler([p.pid for p in ps])
        try:
            for p in workers:
                out, _ = p.communicate(timeout=args.timeout)
                lines = [line for line in out.splitlines() if line.startswith("{")]
                outs.append(json.loads(lines[-1]) if lines else {"error": "no output", "rc": p.returncode})
        finally:
            sampler.stop()
            for p in ps + workers:
                if p.poll() is None:
                    p.kill()
                    p.wait()
    impl = IMPLS["parameter_server_sync" if args.sync else strategy]
    bad = [o for o in outs if "t_start" not in o]
    if bad:
        return {"impl": impl, "error": bad}
    t0 = min(o["t_start"] for o in outs)
    t1 = max(o["t_end"] for o in outs)
    examples = sum(o["timed_examples"] for o in outs)
    steps = sum(o["timed_examples"] / o["batch"] for o in outs)
    worker_cpu = sum(o["cpu_s"] for o in outs)
    ps_cpu = sampler.cpu_between(t0, t1)
    chief = outs[0]
    extra = ({"staleness": args.staleness} if strategy == "hybrid" else
             # steps applied (each averages one gradient of every worker) of the steps each worker ran
             {"sync": True, "global_steps": chief.get("global_steps"), "worker_steps": chief["steps"]} if args.sync
             else {})
    return {"impl": impl, "strategy": strategy, **extra, "ps": args.ps, "workers": args.workers,
            "examples_per_s": round(examples / (t1 - t0), 1), "test_auc": chief["test_auc"],
            "per_worker_examples_per_s": [o["examples_per_s"] for o in outs], "rows": chief["rows"],
            "batch": chief["batch"], "blas": chief.get("blas"), "intra_op_threads": args.intra_op,
            # CPU time (user + system) of all tasks in the timed window, per training step of one worker
            "cpu_ms_per_step": round((worker_cpu + (ps_cpu or 0.0)) / steps * 1e3, 1),
            "worker_cpu_ms_per_step": round(worker_cpu / steps * 1e3, 1),
            "ps_cpu_ms_per_step": None if ps_cpu is None else round(ps_cpu / steps * 1e3, 1)}


class _CpuSampler:
    """CPU seconds of the given processes, sampled every 50 ms from /proc (Linux), so the CPU they
    spent in a window known only afterwards can be interpolated; ``None`` where /proc is missing."""

    def __init__(self, pids):
        self._pids, self._samples, self._done = list(pids), [], threading.Event()
        self._tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self._thread = threading.Thread(target=self._run, daemon=True)
        if self._pids and os.path.isdir("/proc"):
            self._thread.start()

    def _cpu(self):
        total = 0.0
        for pid in self._pids:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                return None
            total += (int(fields[11]) + int(fields[12])) / self._tick
        return total

    def _run(self):
        while not self._done.is_set():
            c = self._cpu()
            if c is None:
                return
            self._samples.append((time.time(), c))
            self._done.wait(0.05)

    def stop(self):
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()

    def cpu_between(self, t0: float, t1: float):
        s = self._samples
        if not s or s[0][0] > t0 or s[-1][0] < t1:
            return None

        def at(t):
            for (ta, ca), (tb, cb) in zip(s, s[1:]):
                if ta <= t <= tb:
                    return ca + (cb - ca) * ((t - ta) / (tb - ta) if tb > ta else 0.0)
            return s[-1][1]

        return at(t1) - at(t0)


STRATEGY_ALIASES = {"mirrored": "multi_worker_mirrored"}
SPLITS_BATCH = ("multi_worker_mirrored", "hybrid")  # synchronous dense steps: BATCH // workers per worker
IMPLS = {"parameter_server": "sparseflow_dist_async", "parameter_server_sync": "sparseflow_dist_sync",
         "ps": "sparseflow_ps_strategy_async", "multi_worker_mirrored": "sparseflow_mirrored_sync",
         "hybrid": "sparseflow_hybrid"}


def splits_batch(args) -> bool:
    """Whether a global step trains one batch of the local run split over the workers (the synchronous
    strategies: all-reduce, and ParameterServerStrategy with ``--sync``)."""
    return args.strategy in SPLITS_BATCH or bool(getattr(args, "sync", False))


def make_strategy(args, resolver):
    from sparseflow import distribute

    if args.strategy == "ps":
        return distribute.PsStrategy(resolver)
    if args.strategy in SPLITS_BATCH:
        kw = {"bucket_bytes": args.bucket_bytes} if args.bucket_bytes else {}
        if args.strategy == "hybrid":
            return distribute.HybridStrategy(resolver, staleness=args.staleness, **kw)
        return distribute.MultiWorkerMirroredStrategy(resolver, **kw)
    return distribute.ParameterServerStrategy(resolver, sync=args.sync)


def run_task(args, tf, build, load, batch: int, warmup: int, rank_auc, blas=None) -> dict | None:
    """One task of the cluster (``args.task`` = ``ps:i`` or ``worker:i``)."""
    import numpy as np

    from sparseflow._src.distributed.resolve import cluster_resolver_from_flags

    args.strategy = STRATEGY_ALIASES.get(args.strategy, args.strategy)
    if args.sync and args.strategy not in (None, "parameter_server"):
        raise SystemExit(f"--sync is an option of the parameter_server strategy (--ps N), not of {args.strategy}")
    job, index = args.task.split(":")
    index = int(index)
    resolver = cluster_resolver_from_flags(args.ps_hosts or "", args.worker_hosts, job, index)
    strategy = make_strategy(args, resolver)
    if strategy.serves_only:
        strategy.join()
        return None
    num_workers = strategy.num_workers
    split = splits_batch(args)
    if split and args.worker_batch == "split":
        batch //= num_workers
    keys, dense, labels = load(args.data, args.rows)
    n = len(labels)
    n_train = int(n * 0.9)
    if split:  # global step s: rows of batch s of the local run (--worker-batch full: of batches s*W...s*W+W-1)
        steps = n_train // (batch * num_workers)
        starts = [(s * num_workers + index) * batch for s in range(steps)]
    else:  # a contiguous shard per worker
        per = n_train // num_workers
        steps = per // batch
        starts = [index * per + s * batch for s in range(steps)]
    g, (k_ph, x_ph, y_ph), loss, train, probs, init = build(args.seed, device=strategy.device_function(),
                                                            wrap_optimizer=strategy.wrap_optimizer,
                                                            global_step=args.sync)
    with g.as_default(), tf.Session(strategy.target, graph=g) as sess:
        strategy.initialize(sess, init)
        step = sess.make_callable([train, loss], [k_ph, x_ph, y_ph])
        stamps, cpu0 = [], 0.0
        for s in range(steps):
            if s == warmup:
                stamps.append(time.time())
                cpu0 = time.process_time()
            a, b = starts[s], starts[s] + batch
            step(keys[a:b], dense[a:b], labels[a:b])
        stamps.append(time.time())
        cpu = time.process_time() - cpu0
        strategy.finish(sess)
        timed = (steps - warmup) * batch
        applied = {"global_steps": int(sess.run(tf.train.get_global_step(g)))} if args.sync and index == 0 else {}
        out = {"task": index, "t_start": stamps[0], "t_end": stamps[-1], "timed_examples": timed,
               "examples_per_s": round(timed / (stamps[-1] - stamps[0]), 1), "test_auc": None, "rows": n,
               "batch": batch, "steps": steps, "blas": blas, "cpu_s": cpu, **applied}
        if index == 0:
            predict = sess.make_callable(probs, [k_ph, x_ph])
            scores = np.concatenate([predict(keys[i:i + 16384], dense[i:i + 16384]) for i in range(n_train, n, 16384)])
            out["test_auc"] = round(rank_auc(labels[n_train:], scores), 5)
        strategy.release()
    print(json.dumps(out), flush=True)
    return out
