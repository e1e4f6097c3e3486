"""tf.train.Server.create_local_server: an in-process gRPC server; state lives on the server, across
sessions. (The --ps_hosts/--worker_hosts flags of the cluster runner are accepted and unused.)"""
# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
import argparse
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--ps_hosts")
ap.add_argument("--worker_hosts")
ap.add_argument("--job_name")
ap.add_argument("--task_index", type=int)
ap.add_argument("--work_dir")
FLAGS = ap.parse_args()
if FLAGS.job_name == "ps":
    sys.exit(0)

server = tf.train.Server.create_local_server()
print("RESULT target_scheme %s" % server.target.split(":")[0])
with tf.Graph().as_default():
    tf.set_random_seed(7)
    v = tf.Variable(tf.random_normal([3, 2]), name="v")
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.matmul(x, v)
    counter = tf.Variable(0, name="counter")
    bump = tf.assign_add(counter, 1)
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(y, {x: np.ones([2, 3], np.float32)})
        sess.run(bump)
    with tf.Session(server.target) as sess:
        again = sess.run(y, {x: np.ones([2, 3], np.float32)})
        print("RESULT counter_after_second_session %d" % sess.run(bump))
    print("RESULT y %s" % " ".join("%.6f" % t for t in first.ravel()))
    print("RESULT same_values_across_sessions %s" % bool(np.array_equal(first, again)))
    devices = sorted(d.name for d in tf.Session(server.target).list_devices())
    print("RESULT num_devices %d" % len(devices))
