"""Workload W3: training speed of a dense MLP, 784 -> 1024 -> 1024 -> 10 (ReLU), sparse softmax
cross-entropy (mean), batch 256, MomentumOptimizer(0.01, 0.9), float32, Glorot-uniform weights and
zero biases, 8 random batches (``numpy.random.default_rng(seed)``: normal inputs, integer labels)
fed in turn: the same model, data and timing as TensorFlow's ``w3_tf.py`` in ``../shared/peers``.

Prints one JSON line: ``steps_per_s`` (``sess.run([train_op, loss], feed)`` steps per second over
``--steps`` steps after ``--warmup``), the BLAS library, kernel and threads it ran on (``blas``), and
the physical limit: the step's GEMMs (forward, and the two gradient products per layer but the
input's; 2.45 GFLOP) timed back to back in NumPy (``gemm_ms_per_step``, ``limit_steps_per_s``).
``--explain`` prints the slowest ops of one traced step to stderr.

Usage: ``python benchmarks/dense_mlp.py [--steps 300] [--warmup 20] [--intra-op N] [--explain]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import sparseflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import blas_record, dense_gemms, gemm_limit  # noqa: E402

from sparseflow._src.kernels import intra_op  # noqa: E402

BATCH, SIZES, POOL = 256, (784, 1024, 1024, 10), 8
LR, MOMENTUM = 0.01, 0.9


def build(seed=0):
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(seed)
        x = tf.placeholder(tf.float32, [None, SIZES[0]], name="x")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        h = x
        for i, (n_in, n_out) in enumerate(zip(SIZES[:-1], SIZES[1:])):
            lim = np.sqrt(6.0 / (n_in + n_out))
            w = tf.get_variable(f"w{i}", [n_in, n_out], initializer=tf.random_uniform_initializer(-lim, lim))
            b = tf.get_variable(f"b{i}", [n_out], initializer=tf.zeros_initializer())
            h = tf.nn.bias_add(tf.matmul(h, w), b)
            if i < len(SIZES) - 2:
                h = tf.nn.relu(h)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=h))
        train = tf.train.MomentumOptimizer(LR, MOMENTUM).minimize(loss)
        init = tf.global_variables_initializer()
    return g, x, labels, loss, train, init


def batches(seed=0):
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((POOL, BATCH, SIZES[0])).astype(np.float32)
    ys = rng.integers(0, SIZES[-1], size=(POOL, BATCH)).astype(np.int64)
    return xs, ys


def explain(sess, train, feed):
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    meta = tf.RunMetadata()
    sess.run(train, feed, options=opts, run_metadata=meta)
    rows = []
    for dev in meta.step_stats.dev_stats:
        for ns in dev.node_stats:
            rows.append(((ns.all_end_rel_micros or ns.op_end_rel_micros) / 1e3, ns.node_name, ns.timeline_label))
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows)
    print(f"traced step: {total:.1f} ms in {len(rows)} ops; slowest:", file=sys.stderr)
    for ms, name, label in rows[:12]:
        print(f"  {ms:7.2f} ms  {name}  {label}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--intra-op", type=int, default=0,
                    help="intra_op_parallelism_threads: GEMM and kernel threads (0: one per CPU, as TensorFlow)")
    ap.add_argument("--gemm", choices=("pool", "blas"), default="pool",
                    help="who threads a GEMM: sparseflow's intra-op pool in blocks (default) or the BLAS library")
    ap.add_argument("--explain", action="store_true")
    args = ap.parse_args()
    g, x, labels, loss, train, init = build(args.seed)
    xs, ys = batches(args.seed)
    intra_op.set_gemm_mode(args.gemm)
    with tf.Session(graph=g, config=tf.ConfigProto(intra_op_parallelism_threads=args.intra_op)) as sess:
        sess.run(init)
        feeds = [{x: xs[i], labels: ys[i]} for i in range(POOL)]
        first = sess.run(loss, feeds[0])
        for i in range(args.warmup):
            sess.run([train, loss], feeds[i % POOL])
        cpu0, t0 = time.process_time(), time.perf_counter()
        for i in range(args.steps):
            last = sess.run([train, loss], feeds[(args.warmup + i) % POOL])[1]
        elapsed = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
        if not last < first:
            raise SystemExit(f"training did not reduce the loss ({first} -> {last})")
        if args.explain:
            explain(sess, train, feeds[0])
        blas = blas_record()
    limit = gemm_limit(dense_gemms(BATCH, SIZES, input_grad=False))
    print(f"loss {first:.4f} -> {last:.4f}; {elapsed / args.steps * 1e3:.2f} ms/step", file=sys.stderr)
    print(json.dumps({"steps_per_s": round(args.steps / elapsed, 2),
                      "ms_per_step": round(elapsed / args.steps * 1e3, 3),
                      "cpu_ms_per_step": round(cpu / args.steps * 1e3, 3), "steps": args.steps, "batch": BATCH,
                      "first_loss": float(first), "final_loss": float(last), "intra_op_threads": args.intra_op,
                      "gemm_threading": args.gemm,
                      "blas": blas, **limit, "limit_steps_per_s": round(1e3 / limit["gemm_ms_per_step"], 1)}))


if __name__ == "__main__":
    main()
