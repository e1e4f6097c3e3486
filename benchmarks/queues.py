"""Throughput of queues, queue-runner input pipelines and SyncReplicasOptimizer steps on the local session.

- ``enqueue_dequeue_us``: one ``enqueue`` + one ``dequeue`` of a [16] float32 element, through
  ``make_callable``s in one thread (the per-op cost of a queue step);
- ``pipeline_examples_per_s``: ``slice_input_producer`` (shuffled) + ``batch(batch_size=128)`` with
  two enqueue threads, examples per second read by the training thread;
- ``sync_step_ms``: one global step of ``SyncReplicasOptimizer`` with 2 worker threads on one
  session (a 256x64 dense layer and a 10,000x16 embedding, batch 128 per worker), chief queue
  runner included.

Prints one JSON line. On the 2-core reference machine (shared, loaded) with
``OPENBLAS_NUM_THREADS=1``: ``{"enqueue_dequeue_us": 19.8, "pipeline_examples_per_s": 16003.9,
"sync_step_ms": 3.57}``; TensorFlow 2.21 (the same script with ``tf.compat.v1``): 57.6 us, 44,294
examples/s, 0.77 ms. With OpenBLAS's default thread count the step takes ~28 ms: two Python
threads calling a multi-threaded OpenBLAS at once contend inside it (a 128x256x64 matmul goes
from 0.2 ms to 1.5 ms, and worse in the graph), so concurrent sessions runs want one BLAS thread.

Usage: ``python benchmarks/queues.py [--steps 300]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import sparseflow as tf  # noqa: E402


def enqueue_dequeue_us(runs: int) -> float:
    with tf.Graph().as_default():
        q = tf.FIFOQueue(16, tf.float32, shapes=[[16]])
        enq, deq = q.enqueue(tf.ones([16])), q.dequeue()
        with tf.Session() as sess:
            e, d = sess.make_callable(enq), sess.make_callable(deq)
            for _ in range(50):
                e()
                d()
            t0 = time.perf_counter()
            for _ in range(runs):
                e()
                d()
            return (time.perf_counter() - t0) / runs * 1e6


def pipeline_examples_per_s(batches: int) -> float:
    rng = np.random.RandomState(0)
    with tf.Graph().as_default():
        x, y = tf.train.slice_input_producer([rng.randn(4096, 32).astype(np.float32), rng.randint(0, 2, 4096)],
                                            seed=1)
        xb, yb = tf.train.batch([x, y], batch_size=128, num_threads=2, capacity=1024)
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            read = sess.make_callable([xb, yb])
            for _ in range(5):
                read()
            t0 = time.perf_counter()
            for _ in range(batches):
                read()
            rate = batches * 128 / (time.perf_counter() - t0)
            coord.request_stop()
            coord.join(threads)
            return rate


def sync_step_ms(steps: int) -> float:
    rng = np.random.RandomState(0)
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(0.01 * rng.randn(256, 64).astype(np.float32))
        emb = tf.Variable(0.01 * rng.randn(10000, 16).astype(np.float32))
        workers = []
        for i in range(2):
            with tf.name_scope(f"worker{i}"):
                x = tf.placeholder(tf.float32, [None, 256])
                ids = tf.placeholder(tf.int64, [None])
                h = tf.reduce_sum(tf.matmul(x, w), axis=1) + tf.reduce_sum(tf.gather(emb, ids), axis=1)
                loss = tf.reduce_mean(tf.square(h))
                opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1e-4), replicas_to_aggregate=2)
                workers.append((x, ids, opt, opt.minimize(loss, global_step=step)))
        chief = workers[0][2]
        init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
        sess = tf.Session()
        sess.run(init)
        sess.run(chief.chief_init_op)
        sess.run(workers[1][2].local_step_init_op)
        coord = tf.train.Coordinator()
        qr_threads = chief.get_chief_queue_runner().create_threads(sess, coord=coord, daemon=True, start=True)
        feeds = [{x: rng.randn(128, 256).astype(np.float32), ids: rng.randint(0, 10000, 128)}
                 for x, ids, _, _ in workers]

        def work(i, n):
            run = sess.make_callable(workers[i][3], feed_list=[workers[i][0], workers[i][1]])
            for _ in range(n):
                run(feeds[i][workers[i][0]], feeds[i][workers[i][1]])

        def both(n):
            threads = [threading.Thread(target=work, args=(i, n)) for i in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        both(10)  # plans compiled, numba kernels loaded
        t0 = time.perf_counter()
        both(steps)
        ms = (time.perf_counter() - t0) / steps * 1e3
        coord.request_stop()
        sess.close()
        coord.join(qr_threads)
        return ms


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=300, help="SyncReplicas global steps (default %(default)s)")
    args = ap.parse_args()
    print(json.dumps({"enqueue_dequeue_us": round(enqueue_dequeue_us(2000), 1),
                      "pipeline_examples_per_s": round(pipeline_examples_per_s(100), 1),
                      "sync_step_ms": round(sync_step_ms(args.steps), 2)}))


if __name__ == "__main__":
    main()
