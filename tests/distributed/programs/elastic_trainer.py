"""A between-graph trainer for the failure tests: variables on ps tasks (replica_device_setter),
MonitoredTrainingSession with checkpoints; trains until a stop file appears, printing
``STEP <global step> <local step>`` after every step and ``SESSION <global step>`` whenever a
session is (re-)created (flushed)."""
import argparse
import os
import sys

import numpy as np

import sparseflow as tf

ap = argparse.ArgumentParser()
ap.add_argument("--ps_hosts")
ap.add_argument("--worker_hosts")
ap.add_argument("--job_name")
ap.add_argument("--task_index", type=int)
ap.add_argument("--ckpt_dir")
ap.add_argument("--stop_file")
ap.add_argument("--save_steps", type=int, default=20)
a = ap.parse_args()

cluster = tf.train.ClusterSpec({"ps": a.ps_hosts.split(","), "worker": a.worker_hosts.split(",")})
server = tf.train.Server(cluster, job_name=a.job_name, task_index=a.task_index)
if a.job_name == "ps":
    print("PS READY", flush=True)
    server.join()
    sys.exit(0)

rng = np.random.RandomState(a.task_index)
X = rng.randn(512, 8).astype(np.float32)
Y = (X.sum(axis=1) > 0).astype(np.float32)
with tf.device(tf.train.replica_device_setter(worker_device=f"/job:worker/task:{a.task_index}", cluster=cluster)):
    step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 8])
    y = tf.placeholder(tf.float32, [None])
    w = tf.get_variable("w", [8, 1], initializer=tf.zeros_initializer())
    logits = tf.squeeze(tf.matmul(x, w), axis=1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)



class SessionMarker(tf.train.SessionRunHook):
    """Prints ``SESSION <global step>`` whenever a session is created, or re-created after a failure."""

    def after_create_session(self, session, coord):
        print(f"SESSION {session.run(step)}", flush=True)


with tf.train.MonitoredTrainingSession(master=server.target, is_chief=a.task_index == 0, checkpoint_dir=a.ckpt_dir,
                                       hooks=[SessionMarker()],
                                       save_checkpoint_steps=a.save_steps, save_checkpoint_secs=None,
                                       save_summaries_steps=None, save_summaries_secs=None,
                                       log_step_count_steps=None, stop_grace_period_secs=5) as sess:
    local = 0
    while not sess.should_stop() and not os.path.exists(a.stop_file):
        lo = (local * 32) % 512
        _, g = sess.run([train, step], {x: X[lo:lo + 32], y: Y[lo:lo + 32]})
        local += 1
        print(f"STEP {g} {local}", flush=True)
print("DONE", flush=True)
