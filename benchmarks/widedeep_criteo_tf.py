"""Workload W1 in TensorFlow itself: the reference that ``widedeep_criteo.py`` is compared with.

The same data (``w1_data.make_synthetic``, or ``--data PATH``), the same split, batches, warm-up,
timing and AUC as ``widedeep_criteo.py``; the same model written the way a TensorFlow 1.x user
writes it without dynamic tables: each field's hex text, salted with the field's name, hashed by
``tf.strings.to_hash_bucket_fast`` into ``--buckets`` rows of two embedding variables (wide
``[buckets, 1]`` zeros, deep ``[buckets, 16]`` truncated normal with stddev 1/4, as
``embedding_column``), one ``tf.unique`` per batch and ``tf.gather`` of the unique rows; an MLP
512-256-128 (as ``tf.layers.dense``), sigmoid cross-entropy, Adam (1e-3) on the dense variables and
Adagrad (0.05, initial accumulator 0.1) on the embeddings (sparse updates). A missing value is one
shared bucket, as the sparseflow script's missing key. Hashing happens before timing, like
parsing in the sparseflow script. Graph mode (``tf.compat.v1``), default thread pools.

Needs TensorFlow, which sparseflow does not depend on (``pip install tensorflow-cpu pandas``);
run it in its own environment. Prints one JSON line like ``widedeep_criteo.py``.

    python benchmarks/widedeep_criteo_tf.py                  # synthetic 500,000 rows
    python benchmarks/widedeep_criteo_tf.py --rows 20000     # quick
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from w1_data import BATCH, DIM, FIELDS, HIDDEN, NUMERIC, WARMUP, make_synthetic, rank_auc  # noqa: E402

COLUMNS = ["label"] + [f"I{i}" for i in range(1, 14)] + [f"C{i}" for i in range(1, 27)]


def load(tf, path: str, rows: int | None, buckets: int):
    """(bucket ids int64 [N, 26], numerics float32 [N, 13], labels float32 [N])."""
    import pandas as pd

    df = pd.read_csv(path, sep="\t", header=None, names=COLUMNS, nrows=rows, keep_default_na=False,
                     dtype={c: str for c in COLUMNS[14:]}, na_values={c: [""] for c in COLUMNS[:14]})
    dense = df[COLUMNS[1:14]].fillna(0.0).to_numpy(np.float32)
    labels = df["label"].to_numpy(np.float32)
    ids = np.empty((len(df), FIELDS), np.int64)
    for j, c in enumerate(COLUMNS[14:]):
        text = df[c].to_numpy(object)
        hashed = tf.strings.to_hash_bucket_fast(np.char.add(f"{c}=", text.astype(str)), buckets - 1).numpy()
        ids[:, j] = np.where(text == "", buckets - 1, hashed)  # missing: one shared bucket
    return ids, dense, labels


def build(tf, buckets: int, seed: int = 0):
    v1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(seed)
        ids = v1.placeholder(tf.int64, [None, FIELDS], name="ids")
        numerics = v1.placeholder(tf.float32, [None, NUMERIC], name="numerics")
        labels = v1.placeholder(tf.float32, [None], name="labels")
        wide_w = v1.get_variable("wide", [buckets, 1], initializer=v1.zeros_initializer())
        deep_w = v1.get_variable("deep", [buckets, DIM],
                                 initializer=v1.truncated_normal_initializer(stddev=DIM ** -0.5))
        bias = v1.get_variable("wide_bias", [1], initializer=v1.zeros_initializer())

        def logits(reuse):
            uniq, idx = tf.unique(tf.reshape(ids, [-1]))
            wide_rows = tf.gather(wide_w, uniq)
            deep_rows = tf.gather(deep_w, uniq)
            wide = tf.reduce_sum(tf.reshape(tf.gather(wide_rows, idx), [-1, FIELDS]), axis=1) + bias
            h = tf.concat([tf.reshape(tf.gather(deep_rows, idx), [-1, FIELDS * DIM]),
                           tf.math.log1p(tf.maximum(numerics, 0.0))], axis=1)
            for i, units in enumerate(HIDDEN):
                h = tf.nn.relu(dense(h, units, f"mlp{i}", reuse))
            return wide + tf.reshape(dense(h, 1, "mlp_out", reuse), [-1])

        def dense(x, units, name, reuse):  # tf.layers.dense (Keras 3 dropped it from tf.compat.v1)
            with v1.variable_scope(name, reuse=reuse):
                w = v1.get_variable("kernel", [x.shape[1], units], initializer=v1.glorot_uniform_initializer())
                b = v1.get_variable("bias", [units], initializer=v1.zeros_initializer())
            return tf.matmul(x, w) + b

        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits(False)))
        tables = [wide_w, deep_w]
        dense_vars = [v for v in v1.trainable_variables() if all(v is not t for t in tables)]
        grads = v1.gradients(loss, tables + dense_vars)
        train = tf.group(
            v1.train.AdagradOptimizer(0.05, initial_accumulator_value=0.1).apply_gradients(zip(grads[:2], tables)),
            v1.train.AdamOptimizer(1e-3).apply_gradients(zip(grads[2:], dense_vars)))
        probs = tf.sigmoid(logits(True))
        init = v1.global_variables_initializer()
    return g, (ids, numerics, labels), loss, train, probs, init


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="a Criteo TSV file; default: a synthetic one of --rows rows")
    ap.add_argument("--rows", type=int, default=None, help="rows to use (default 500,000 synthetic / all)")
    ap.add_argument("--seed", type=int, default=0, help="graph seed (initial weights)")
    ap.add_argument("--buckets", type=int, default=1 << 23, help="hash buckets per embedding variable")
    args = ap.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.data
        if path is None:
            path = os.path.join(tmp, "criteo_synthetic.tsv")
            make_synthetic(path, args.rows or 500_000)
        ids, dense, labels = load(tf, path, args.rows if args.data else None, args.buckets)
    n = len(labels)
    n_train = int(n * 0.9)
    steps = n_train // BATCH
    print(f"data: {n} rows, ready in {time.perf_counter() - t0:.1f}s; {steps} timed steps of {BATCH}", file=sys.stderr)
    feeds = [(ids[i * BATCH:(i + 1) * BATCH], dense[i * BATCH:(i + 1) * BATCH], labels[i * BATCH:(i + 1) * BATCH])
             for i in range(steps)]
    g, (i_ph, x_ph, y_ph), loss, train, probs, init = build(tf, args.buckets, args.seed)
    with tf.compat.v1.Session(graph=g) as sess:
        sess.run(init)
        step = sess.make_callable([train, loss], [i_ph, x_ph, y_ph])
        for i in range(WARMUP):
            step(*feeds[i % steps])
        t_start = time.perf_counter()
        for f in feeds:
            step(*f)
        elapsed = time.perf_counter() - t_start
        predict = sess.make_callable(probs, [i_ph, x_ph])
        scores = np.concatenate([predict(ids[i:i + 8192], dense[i:i + 8192]) for i in range(n_train, n, 8192)])
    auc = rank_auc(labels[n_train:], scores)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"examples_per_s": round(steps * BATCH / elapsed, 1), "test_auc": round(auc, 5),
                      "peak_rss_mb": round(peak, 1), "ms_per_step": round(elapsed / steps * 1e3, 2), "steps": steps,
                      "rows": n, "buckets": args.buckets, "tensorflow": tf.__version__}))


if __name__ == "__main__":
    main()
