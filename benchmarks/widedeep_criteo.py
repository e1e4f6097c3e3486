"""Workload W1: Wide&Deep on Criteo-format data, trained end to end with sparseflow.

Model (the same, in every detail that affects learning, as TensorFlow's ``w1_tf_graph.py`` in
``../shared/peers``): 26 categorical fields (uint64 keys: FarmHash Fingerprint64 of the hex text,
salted by field; a missing value is its field's own key, ``Fingerprint64("C{k}=")``), one
``unique_keys`` per batch shared by two dynamic embedding tables (deep rows ~ U(-0.05, 0.05),
wide rows 0; evaluation reads a key training never saw as its row's initial value, as TF's
bucketed variables do, unless ``--unseen-keys zeros``); Glorot-uniform MLP weights, zero biases:

* wide: a 1-dim embedding per key, summed over the fields, plus a bias;
* deep: 16-dim embeddings concatenated ([B, 416]) with the 13 numerics (``log1p(max(x, 0))``),
  through an MLP 512-256-128 (ReLU) -> 1;

logit = wide + deep, sigmoid cross-entropy (mean), dense Adam (lr 1e-3) on the MLP and bias,
sparse element-wise Adagrad (lr 0.05, initial accumulator 0.1) on both tables, batch 2048.

Data: ``--data PATH`` (a Criteo TSV) or a synthetic file of ``--rows`` rows (default 500,000):
Zipf-distributed ids per field and a learnable label (Bernoulli of a hidden logistic model over
per-key weights plus the log numerics). The file is parsed with ``read_criteo`` *before* timing;
parsed arrays are kept in memory and fed with ``Session.make_callable`` (keys [2048, 26] uint64,
numerics [2048, 13] float32, labels [2048] float32).

Timing: one epoch over the first 90% of rows (full batches), every batch trained once, as
TensorFlow's W1; the first 5 steps (plan building, numba compilation) are not timed, and
``examples_per_s`` counts the timed steps only. Evaluation: exact rank AUC (ties averaged,
computed with NumPy over all predictions) on the last 10% of rows (see ``--unseen-keys``).
``peak_rss_mb`` is ``ru_maxrss`` of the process (includes the parsed data and tables).

Prints one JSON line to stdout: examples/s, test AUC, the BLAS library, kernel (threadpoolctl's
``architecture``) and threads it ran on (``blas``), and the physical limit: the step's 12 GEMMs
(4.7 GFLOP) timed back to back in NumPy on this machine (``gemm_ms_per_step``,
``limit_examples_per_s``). Run it with ``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE`` so that
OpenBLAS picks its kernels for the CPU. A per-phase profile (traced steps, op time grouped into unique /
pull / gather, MLP forward/backward matmuls, Adam, push, ...) goes to stderr.

    python benchmarks/widedeep_criteo.py                      # synthetic 500,000 rows
    python benchmarks/widedeep_criteo.py --rows 20000         # quick
    python benchmarks/widedeep_criteo.py --data train.txt --rows 500000
    python benchmarks/widedeep_criteo.py --data ../shared/data/criteo/dac_sample.txt   # vs w1_tf_graph.py
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import resource
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
# Fused element-wise kernels compile their numba loop when the plan is built, so that compilation
# falls in the untimed warm-up (by default it happens after 16 calls: inside W1's timed window).
os.environ.setdefault("SPARSEFLOW_FUSED_JIT_AFTER", "0")

import sparseflow as tf  # noqa: E402
from sparseflow import embedding  # noqa: E402
from sparseflow._src.data.readers.criteo import read_criteo  # noqa: E402
from sparseflow._src.data.readers.schema import MISSING_KEY  # noqa: E402
from sparseflow._src.embedding.embedding_ops import table_pull  # noqa: E402
from sparseflow._src.kernels.farmhash import fingerprint64  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import blas_record, dense_gemms, gemm_limit  # noqa: E402
from w1_data import BATCH, DIM, FIELDS, HIDDEN, NUMERIC, WARMUP, make_synthetic, rank_auc  # noqa: E402

from sparseflow._src.kernels import intra_op  # noqa: E402


def load(path: str, rows: int | None):
    """(keys uint64 [N, 26], numerics float32 [N, 13], labels float32 [N]) parsed by read_criteo,
    cached as .npz beside the system's temporary files (keyed on the file's path, size, mtime and
    ``rows``; the cluster's tasks would otherwise each parse the file, outside any timed window)."""
    st = os.stat(path)
    key = f"{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}|{rows}"
    cache = os.path.join(tempfile.gettempdir(), "sparseflow-w1-cache",
                         hashlib.sha256(key.encode()).hexdigest()[:24] + ".npz")
    if os.path.exists(cache):
        with np.load(cache) as z:
            return z["keys"], z["dense"], z["labels"]
    out = _parse(path, rows)
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    tmp = f"{cache}.{os.getpid()}.npz"
    np.savez(tmp, keys=out[0], dense=out[1], labels=out[2])
    os.replace(tmp, cache)  # atomic: tasks of one cluster may write it at the same time
    return out


def _parse(path: str, rows: int | None):
    keys, dense, labels, n = [], [], [], 0
    for b in read_criteo(path, stacked=True, salt_fields=True).batch(65536):
        keys.append(b["keys"])
        dense.append(b["dense"])
        labels.append(b["label"])
        n += len(b["label"])
        if rows is not None and n >= rows:
            break
    keys, dense, labels = (np.ascontiguousarray(np.concatenate(a)) for a in (keys, dense, labels))
    if rows is not None:
        keys, dense, labels = keys[:rows], dense[:rows], labels[:rows]
    for f in range(FIELDS):  # a missing value is its field's own key, as TensorFlow's W1 ("C{k}=")
        col = keys[:, f]
        col[col == MISSING_KEY] = _MISSING_PER_FIELD[f]
    return keys, dense.astype(np.float32, copy=False), labels.astype(np.float32, copy=False)


_MISSING_PER_FIELD = [np.uint64(fingerprint64(f"C{f + 1}=".encode())) for f in range(FIELDS)]
DEEP_INIT_RANGE = 0.05  # deep rows ~ U(-0.05, 0.05), as TensorFlow's W1


# ---------------------------------------------------------------------------- model
def build(seed: int = 0, unseen_keys: str = "initial", device=None, wrap_optimizer=None, global_step=False):
    """The W1 graph. ``unseen_keys``: what evaluation reads for a key training never saw: ``initial``
    (the row's initial value, what TensorFlow's bucketed tables hold: the same model as
    ``w1_tf_graph.py``) or ``zeros`` (the tables' inference lookups; nothing inserted). ``device``: a
    device (function) for the whole model, e.g. ``tf.train.replica_device_setter`` on a cluster,
    which puts the dense variables on the ps tasks and shards both tables over them.
    ``wrap_optimizer``: a function of the dense optimizer (a strategy's ``wrap_optimizer``).
    ``global_step``: create one, incremented by the train op (a synchronous optimizer needs it)."""
    g = tf.Graph()
    with g.as_default(), g.device(device):
        tf.set_random_seed(seed)
        keys = tf.placeholder(tf.uint64, [None, FIELDS], name="keys")
        numerics = tf.placeholder(tf.float32, [None, NUMERIC], name="numerics")
        labels = tf.placeholder(tf.float32, [None], name="labels")
        opt = embedding.Adagrad(0.05, 0.1)
        wide_t = embedding.EmbeddingTable("wide", 1, optimizer=opt, initializer=0.0)
        deep_t = embedding.EmbeddingTable("deep", DIM, optimizer=opt, seed=None if seed == 0 else seed,
                                          initializer=tf.random_uniform_initializer(-DEEP_INIT_RANGE,
                                                                                    DEEP_INIT_RANGE))
        bias = tf.Variable(np.zeros([1], np.float32), name="wide_bias")

        def logits(training):
            with tf.name_scope("train" if training else "infer"):
                uk = embedding.unique_keys(tf.reshape(keys, [-1]))
                if training or unseen_keys == "zeros":
                    wide_rows = wide_t.pull(uk.keys, uk.counts, training=training)
                    deep_rows = deep_t.pull(uk.keys, uk.counts, training=training)
                elif device is not None:  # sharded tables: training pulls (the train op is built already)
                    wide_rows, deep_rows = (t.pull(uk.keys, uk.counts, training=True) for t in (wide_t, deep_t))
                else:  # rows made on first sight, not recorded for push: unseen keys read their initial value
                    wide_rows, deep_rows = (table_pull(t.handles[0], uk.keys, uk.counts, t.dim, training=True)
                                            for t in (wide_t, deep_t))
                wide = tf.reduce_sum(tf.reshape(tf.gather(wide_rows, uk.idx), [-1, FIELDS]), axis=1) + bias
                deep_emb = tf.reshape(tf.gather(deep_rows, uk.idx), [-1, FIELDS * DIM])
                h = tf.concat([deep_emb, tf.log1p(tf.maximum(numerics, 0.0))], axis=1)
            for i, units in enumerate(HIDDEN):
                h = tf.layers.dense(h, units, activation=tf.nn.relu, name=f"mlp{i}", reuse=not training)
            deep = tf.layers.dense(h, 1, name="mlp_out", reuse=not training)
            return wide + tf.reshape(deep, [-1])

        train_logits = logits(True)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=train_logits))
        dense_opt = tf.train.AdamOptimizer(1e-3)
        step = tf.train.get_or_create_global_step() if global_step else None
        train = embedding.minimize(loss, wrap_optimizer(dense_opt) if wrap_optimizer else dense_opt, global_step=step)
        probs = tf.sigmoid(logits(False))
        init = tf.global_variables_initializer()
    return g, (keys, numerics, labels), loss, train, probs, init


# ---------------------------------------------------------------------------- profile
_PHASES = [  # (phase, predicate on (op type, node name))
    ("unique", lambda t, n: t == "EmbeddingUniqueKeys"),
    ("pull", lambda t, n: t == "EmbeddingTablePull"),
    ("push", lambda t, n: t == "EmbeddingTablePush"),
    ("adam", lambda t, n: "Adam" in t or "/Adam" in n or n.startswith("Adam") or "beta" in n),
    ("gather/segment-sum (emb fwd/bwd)", lambda t, n: t in ("GatherV2", "Gather", "UnsortedSegmentSum")),
    ("matmul fwd", lambda t, n: t == "MatMul" and not n.startswith("gradients")),
    ("matmul bwd", lambda t, n: t == "MatMul" and n.startswith("gradients")),
    ("bias/relu bwd", lambda t, n: n.startswith("gradients") and t in ("BiasAddGrad", "ReluGrad", "Sum")),
    ("other bwd", lambda t, n: n.startswith("gradients")),
]


def profile(sess, g, train, feeds, steps=5):
    """Per-phase milliseconds per step from FULL_TRACE runs (op time, summed; wall time too)."""
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    per_phase, per_op = collections.Counter(), collections.Counter()
    wall = 0.0
    for i in range(steps):
        meta = tf.RunMetadata()
        t0 = time.perf_counter()
        sess.run(train, feeds[i % len(feeds)], options=opts, run_metadata=meta)
        wall += time.perf_counter() - t0
        for dev in meta.step_stats.dev_stats:
            for ns in dev.node_stats:
                ms = (ns.all_end_rel_micros or ns.op_end_rel_micros) / 1e3
                try:
                    t = g.get_operation_by_name(ns.node_name).type
                except (KeyError, ValueError):
                    t = "?"
                phase = next((p for p, pred in _PHASES if pred(t, ns.node_name)), "other fwd")
                per_phase[phase] += ms / steps
                per_op[(ns.node_name, t)] += ms / steps
    total = sum(per_phase.values())
    print(f"profile ({steps} traced steps): wall {wall / steps * 1e3:.1f} ms/step, op time {total:.1f} ms/step",
          file=sys.stderr)
    for p, ms in per_phase.most_common():
        print(f"  {p:34s} {ms:7.2f} ms  {100 * ms / total:5.1f}%", file=sys.stderr)
    print("  slowest ops:", file=sys.stderr)
    for (name, t), ms in per_op.most_common(12):
        print(f"    {ms:7.2f} ms  {t:22s} {name}", file=sys.stderr)
    return dict(per_phase)


# ---------------------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="a Criteo TSV file; default: a synthetic one of --rows rows")
    ap.add_argument("--rows", type=int, default=None, help="rows to use (default 500,000 synthetic / all)")
    ap.add_argument("--inter-op", type=int, default=1, help="inter_op_parallelism_threads (1: sequential)")
    ap.add_argument("--intra-op", type=int, default=0,
                    help="intra_op_parallelism_threads: GEMM and kernel threads (0: one per CPU, as TensorFlow)")
    ap.add_argument("--gemm", choices=("pool", "blas"), default="pool",
                    help="who threads a GEMM: sparseflow's intra-op pool in blocks (default) or the BLAS library")
    ap.add_argument("--profile-steps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0, help="graph seed (MLP initial weights) and deep-row seed")
    ap.add_argument("--unseen-keys", choices=("initial", "zeros"), default="initial",
                    help="what evaluation reads for keys training never saw: their rows' initial values (as "
                         "TensorFlow's bucketed tables, the default) or zeros")
    ap.add_argument("--ps", type=int, default=0, help="run on a local cluster of this many ps tasks (w1_cluster.py)")
    ap.add_argument("--workers", type=int, default=1, help="workers of the local cluster (with --ps or --strategy)")
    ap.add_argument("--strategy", choices=("parameter_server", "ps", "multi_worker_mirrored", "mirrored", "hybrid"),
                    default=None,
                    help="cluster layout: parameter_server (default with --ps: separate ps tasks), ps (no ps "
                         "tasks: every worker serves a shard of the tables and dense variables), "
                         "multi_worker_mirrored (alias mirrored: dense variables mirrored and all-reduced, tables "
                         "sharded over the workers, synchronous) or hybrid (the same, tables pushed asynchronously); "
                         "the last two split the batch over the workers (same total batch as one process)")
    ap.add_argument("--sync", action="store_true",
                    help="parameter_server: synchronous steps (SyncReplicasOptimizer: one gradient of every worker "
                         "per global step, table gradients aggregated by key), the batch split over the workers")
    ap.add_argument("--worker-batch", choices=("split", "full"), default="split",
                    help="synchronous strategies (mirrored, hybrid, --sync): split (each worker trains BATCH // "
                         "workers rows a step: the one-process run's total batch, for comparing AUC) or full "
                         "(each worker BATCH rows, as the asynchronous strategies: the same work per worker step, "
                         "for comparing speed)")
    ap.add_argument("--staleness", type=int, default=0, help="hybrid: steps of table pushes a worker may have in "
                                                             "flight (0: each step waits for its pushes)")
    ap.add_argument("--bucket-bytes", type=int, default=None, help="mirrored/hybrid: gradient bytes per all-reduce "
                                                                  "bucket (default 4 MiB)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds the cluster run may take")
    ap.add_argument("--task", help=argparse.SUPPRESS)  # job:index of one cluster task (set by the launcher)
    ap.add_argument("--ps-hosts", help=argparse.SUPPRESS)
    ap.add_argument("--worker-hosts", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.task:
        from w1_cluster import run_task

        return run_task(args, tf, build, load, BATCH, WARMUP, rank_auc, blas_record())
    if args.ps or args.strategy:
        from w1_cluster import launch

        def make(path):
            make_synthetic(path, args.rows or 500_000)
            return path

        out = launch(args, make)
        print(json.dumps(out))
        return out

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.data
        if path is None:
            path = os.path.join(tmp, "criteo_synthetic.tsv")
            make_synthetic(path, args.rows or 500_000)
        t_gen = time.perf_counter()
        keys, dense, labels = load(path, args.rows if args.data else None)
    t_load = time.perf_counter()
    n = len(labels)
    n_train = int(n * 0.9)
    steps = n_train // BATCH
    if steps <= WARMUP:
        raise SystemExit(f"need at least {(WARMUP + 1) * BATCH / 0.9:.0f} rows, got {n}")
    timed = steps - WARMUP
    print(f"data: {n} rows ({labels.mean():.3f} positive), generated in {t_gen - t0:.1f}s, parsed in "
          f"{t_load - t_gen:.1f}s; one epoch of {steps} steps of {BATCH}, the last {timed} timed", file=sys.stderr)
    train_feeds = [(keys[i * BATCH:(i + 1) * BATCH], dense[i * BATCH:(i + 1) * BATCH],
                    labels[i * BATCH:(i + 1) * BATCH]) for i in range(steps)]

    g, (k_ph, x_ph, y_ph), loss, train, probs, init = build(args.seed, args.unseen_keys)
    config = tf.ConfigProto(inter_op_parallelism_threads=args.inter_op, intra_op_parallelism_threads=args.intra_op)
    intra_op.set_gemm_mode(args.gemm)
    with tf.Session(graph=g, config=config) as sess:
        sess.run(init)
        step = sess.make_callable([train, loss], [k_ph, x_ph, y_ph])
        # one epoch, as TensorFlow's W1: the first WARMUP steps (plan building, numba compilation) train
        # too but are not timed, so both models see every batch exactly once
        losses = [step(*f)[1] for f in train_feeds[:WARMUP]]
        cpu_start, t_start = time.process_time(), time.perf_counter()
        for f in train_feeds[WARMUP:]:
            losses.append(step(*f)[1])
        elapsed = time.perf_counter() - t_start
        cpu = time.process_time() - cpu_start
        stats = {t: embedding.get_table(t, g).stats(sess)["keys"] for t in ("wide", "deep")}  # before evaluation
        predict = sess.make_callable(probs, [k_ph, x_ph])
        scores = np.concatenate([predict(keys[i:i + 8192], dense[i:i + 8192]) for i in range(n_train, n, 8192)])
        auc = rank_auc(labels[n_train:], scores)
        if args.profile_steps:
            fd = [{k_ph: a, x_ph: b, y_ph: c} for a, b, c in train_feeds[:args.profile_steps]]
            phases = profile(sess, g, train, fd, args.profile_steps)
        else:
            phases = {}
        blas = blas_record()  # while the session's settings are in force
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    limit = gemm_limit(dense_gemms(BATCH, (FIELDS * DIM + NUMERIC,) + HIDDEN + (1,)))
    k = max(1, len(losses) // 10)
    print(f"loss first {np.mean(losses[:k]):.4f} -> last {np.mean(losses[-k:]):.4f}; {elapsed / timed * 1e3:.1f} "
          f"ms/step; table keys {stats['deep']:.0f}", file=sys.stderr)
    out = {"examples_per_s": round(timed * BATCH / elapsed, 1), "test_auc": round(auc, 5),
           "peak_rss_mb": round(peak, 1), "ms_per_step": round(elapsed / timed * 1e3, 2),
           "cpu_ms_per_step": round(cpu / timed * 1e3, 2), "steps": steps, "timed_steps": timed,
           "batch": BATCH, "rows": n, "test_rows": n - n_train, "auc_method": "exact rank AUC",
           "inter_op_threads": args.inter_op, "intra_op_threads": args.intra_op, "gemm_threading": args.gemm,
           "blas": blas,
           **limit, "limit_examples_per_s": round(BATCH / limit["gemm_ms_per_step"] * 1e3, 1),
           "table_keys": int(stats["deep"]),
           "profile_ms": {p: round(v, 2) for p, v in phases.items()}}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
