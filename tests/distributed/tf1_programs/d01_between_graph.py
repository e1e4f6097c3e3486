"""Between-graph replication, asynchronous: the classic TF1 ps/worker trainer.

Each task runs this file with --job_name/--task_index. replica_device_setter puts the variables on
the ps tasks; every worker trains its own shard of the data with MonitoredTrainingSession (the
chief, task 0, initializes and checkpoints); the chief then evaluates the shared model.
"""
# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
import argparse
import os
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--ps_hosts")
ap.add_argument("--worker_hosts")
ap.add_argument("--job_name")
ap.add_argument("--task_index", type=int)
ap.add_argument("--work_dir")
ap.add_argument("--steps", type=int, default=40)
FLAGS = ap.parse_args()

cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
if FLAGS.job_name == "ps":
    server.join()
    sys.exit(0)

num_workers = len(FLAGS.worker_hosts.split(","))
is_chief = FLAGS.task_index == 0
rng = np.random.RandomState(0)
X = rng.randn(2048, 10).astype(np.float32)
w_true = rng.randn(10, 1).astype(np.float32)
Y = (X.dot(w_true)[:, 0] + 0.3 * rng.randn(2048) > 0).astype(np.float32)
shard = slice(FLAGS.task_index, None, num_workers)
Xs, Ys = X[shard], Y[shard]

with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % FLAGS.task_index,
                                              cluster=cluster)):
    global_step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 10], name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    w1 = tf.get_variable("w1", [10, 16], initializer=tf.glorot_uniform_initializer(seed=1))
    b1 = tf.get_variable("b1", [16], initializer=tf.zeros_initializer())
    w2 = tf.get_variable("w2", [16, 1], initializer=tf.glorot_uniform_initializer(seed=2))
    b2 = tf.get_variable("b2", [1], initializer=tf.zeros_initializer())
    hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
    logits = tf.squeeze(tf.matmul(hidden, w2) + b2, axis=1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(logits > 0, tf.float32), y), tf.float32))
    train_op = tf.train.AdagradOptimizer(0.2).minimize(loss, global_step=global_step)

hooks = [tf.train.StopAtStepHook(last_step=FLAGS.steps)]
ckpt = os.path.join(FLAGS.work_dir, "ckpt")
with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, checkpoint_dir=ckpt,
                                       hooks=hooks, save_summaries_steps=None, save_summaries_secs=None,
                                       log_step_count_steps=None) as sess:
    i = 0
    while not sess.should_stop():
        lo = (i * 64) % Xs.shape[0]
        sess.run(train_op, {x: Xs[lo:lo + 64], y: Ys[lo:lo + 64]})
        i += 1

with tf.Session(server.target) as sess:
    l, a, step = sess.run([loss, accuracy, global_step], {x: X, y: Y})
print("RESULT local_steps %d" % i)
print("RESULT global_step %d" % step)
print("RESULT loss %.6f" % l)
print("RESULT accuracy %.6f" % a)
print("RESULT checkpoint %s" % (tf.train.latest_checkpoint(ckpt) is not None))
