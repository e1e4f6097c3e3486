"""Synchronous between-graph training with SyncReplicasOptimizer: gradients of both workers are
averaged per global step and applied once by the chief's queue runner; tokens release the workers.

Every worker runs the same number of local steps after a start barrier (a counter on the ps), and no
initial tokens are handed out (num_tokens=0), so the workers move in lockstep: each global step
averages one gradient of each worker, and the result does not depend on timing."""
# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
import argparse
import os
import sys
import time

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--ps_hosts")
ap.add_argument("--worker_hosts")
ap.add_argument("--job_name")
ap.add_argument("--task_index", type=int)
ap.add_argument("--work_dir")
ap.add_argument("--steps", type=int, default=15)
FLAGS = ap.parse_args()

cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
if FLAGS.job_name == "ps":
    server.join()
    sys.exit(0)

num_workers = len(FLAGS.worker_hosts.split(","))
is_chief = FLAGS.task_index == 0
rng = np.random.RandomState(3)
X = rng.randn(512, 6).astype(np.float32)
Y = X.dot(rng.randn(6, 1).astype(np.float32))[:, 0] + 0.5
Xs, Ys = X[FLAGS.task_index::num_workers], Y[FLAGS.task_index::num_workers]

with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % FLAGS.task_index,
                                              cluster=cluster)):
    global_step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 6])
    y = tf.placeholder(tf.float32, [None])
    w = tf.get_variable("w", [6, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
    pred = tf.squeeze(tf.matmul(x, w), axis=1) + b
    loss = tf.reduce_mean(tf.square(pred - y))
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.05),
                                         replicas_to_aggregate=num_workers, total_num_replicas=num_workers)
    train_op = opt.minimize(loss, global_step=global_step)
    ready = tf.get_variable("workers_ready", [], tf.int32, initializer=tf.zeros_initializer(), trainable=False)
    mark_ready = tf.assign_add(ready, 1)

hooks = [opt.make_session_run_hook(is_chief, num_tokens=0)]
with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks,
                                       save_summaries_steps=None, save_summaries_secs=None,
                                       log_step_count_steps=None, stop_grace_period_secs=3) as sess:
    sess.run(mark_ready)
    while sess.run(ready) < num_workers:
        time.sleep(0.05)
    for i in range(FLAGS.steps):
        lo = (i * 32) % Xs.shape[0]
        sess.run(train_op, {x: Xs[lo:lo + 32], y: Ys[lo:lo + 32]})

    wv, bv, step = sess.run([w, b, global_step])
    print("RESULT global_step %d" % step)
    print("RESULT w %s" % " ".join("%.6f" % t for t in wv.ravel()))
    print("RESULT b %.6f" % bv)
    sys.stdout.flush()
    if is_chief:
        # TensorFlow's chief blocks in MonitoredTrainingSession.close() with SyncReplicasOptimizer (its
        # queue runner waits in take_grad; TF issue #13779): leave once the results are out.
        os._exit(0)
