"""One worker of an all-reduce strategy job (tests/distributed/test_mirrored_failures.py): a small
model with a sharded table (or, ``--no_table``, none) and an MLP, trained with ``--strategy`` in a
``training_session`` that checkpoints every ``--save_steps`` into ``--ckpt``. Prints JSON lines:
``{"start": global step}``, ``{"blocking": step}`` (with ``--block_at K``: this worker stops in the
middle of that step, after its table pulls, and waits for ever), ``{"done": step, "digest": ...}``
(a hash of its dense variables) or ``{"error": class name, "message": ...}`` (exit status 3).

    python mirrored_worker.py --workers 127.0.0.1:P0,127.0.0.1:P1 --task_index 0 --ckpt DIR --steps 40
"""

import argparse
import hashlib
import json
import sys
import threading

import numpy as np

import sparseflow as tf
from sparseflow import embedding
from sparseflow._src.distributed.resolve import cluster_resolver_from_flags
from sparseflow.distribute import HybridStrategy, MultiWorkerMirroredStrategy


def say(**doc):
    print(json.dumps(doc), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workers", required=True)
    p.add_argument("--task_index", type=int, required=True)
    p.add_argument("--ckpt", required=True)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--save_steps", type=int, default=5)
    p.add_argument("--block_at", type=int, default=-1)
    p.add_argument("--strategy", default="mirrored")
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--no_table", action="store_true", help="dense layers only: the workers meet in collectives only")
    a = p.parse_args()
    tf.logging.set_verbosity(tf.logging.INFO)  # a session re-created after a failure says why (stderr)
    resolver = cluster_resolver_from_flags("", a.workers, "worker", a.task_index)
    cls = HybridStrategy if a.strategy == "hybrid" else MultiWorkerMirroredStrategy
    strategy = cls(resolver, collective_timeout=a.timeout)
    never = threading.Event()

    def block(step, _):
        if int(step) == a.block_at:
            say(blocking=int(step))
            never.wait()
        return np.float32(0.0)

    with tf.Graph().as_default():
        with strategy.scope():
            keys = tf.placeholder(tf.int64, [None, 2])
            x = tf.placeholder(tf.float32, [None, 4])
            y = tf.placeholder(tf.float32, [None])
            table = embedding.EmbeddingTable("t", 4, optimizer=embedding.Adagrad(0.1, 0.1))
            step = tf.train.get_or_create_global_step()
            emb = tf.reshape(table.lookup(keys), [-1, 8]) if not a.no_table else tf.cast(keys, tf.float32) * 0.1
            emb = tf.concat([emb] * 4, 1) if a.no_table else emb
            gate = tf.py_func(block, [step, tf.stop_gradient(tf.reduce_sum(emb))], tf.float32, stateful=True)
            h = tf.layers.dense(tf.concat([emb, x], 1), 16, activation=tf.nn.relu, name="hidden")
            logit = tf.reshape(tf.layers.dense(h, 1, name="out"), [-1]) + 0.0 * gate
            loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logit))
            train = embedding.minimize(loss, strategy.wrap_optimizer(tf.train.AdamOptimizer(0.01)), step)
        dense = tf.trainable_variables()
        rng = np.random.default_rng(a.task_index)
        try:
            with strategy.training_session(checkpoint_dir=a.ckpt if strategy.is_chief else None,
                                           save_checkpoint_steps=a.save_steps, max_wait_secs=a.timeout) as sess:
                now = int(sess.run(step))
                say(start=now)
                while now < a.steps:
                    k = rng.integers(0, 100, (16, 2))
                    feed = {keys: k, x: rng.normal(size=(16, 4)).astype(np.float32),
                            y: (k[:, 0] % 2).astype(np.float32)}
                    _, now = sess.run([train, step], feed)
                    now = int(now)
                digest = hashlib.sha256(b"".join(np.ascontiguousarray(v).tobytes() for v in sess.run(dense)))
                strategy.finish(sess, timeout=a.timeout)
                say(done=now, digest=digest.hexdigest())
            strategy.release(timeout=a.timeout)
        except tf.errors.OpError as e:
            say(error=type(e).__name__, message=e.message)
            sys.exit(3)


if __name__ == "__main__":
    main()
