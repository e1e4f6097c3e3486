"""A partitioned embedding on the ps tasks: one shard per ps (fixed_size_partitioner), looked up with
embedding_lookup (mod strategy), trained with Adagrad's sparse updates."""
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
ap.add_argument("--steps", type=int, default=20)
FLAGS = ap.parse_args()

cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
if FLAGS.job_name == "ps":
    server.join()
    sys.exit(0)

num_ps = len(FLAGS.ps_hosts.split(","))
rng = np.random.RandomState(5)
ids_all = rng.randint(0, 101, size=(640, 3)).astype(np.int64)
labels_all = ((ids_all.sum(axis=1) % 3) == 0).astype(np.float32)

with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % FLAGS.task_index,
                                              cluster=cluster)):
    ids = tf.placeholder(tf.int64, [None, 3])
    labels = tf.placeholder(tf.float32, [None])
    emb = tf.get_variable("emb", [101, 4], partitioner=tf.fixed_size_partitioner(num_ps),
                          initializer=tf.random_uniform_initializer(-0.1, 0.1, seed=11))
    vecs = tf.nn.embedding_lookup(emb, ids)
    w = tf.get_variable("w", [12, 1], initializer=tf.glorot_uniform_initializer(seed=12))
    logits = tf.squeeze(tf.matmul(tf.reshape(vecs, [-1, 12]), w), axis=1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
    train_op = tf.train.AdagradOptimizer(0.3).minimize(loss)
    init = tf.global_variables_initializer()

with tf.Session(server.target) as sess:
    sess.run(init)
    for i in range(FLAGS.steps):
        lo = (i * 32) % 640
        l, _ = sess.run([loss, train_op], {ids: ids_all[lo:lo + 32], labels: labels_all[lo:lo + 32]})
    final = sess.run(loss, {ids: ids_all, labels: labels_all})
    shard_devices = sorted(v.device for v in emb)
    table = sess.run(tf.concat(list(emb), 0))
print("RESULT num_shards %d" % len(list(emb)))
print("RESULT shard_devices %s" % " ".join(shard_devices))
print("RESULT last_loss %.6f" % l)
print("RESULT final_loss %.6f" % final)
print("RESULT table_sum %.6f" % table.sum())
print("RESULT table_abssum %.6f" % np.abs(table).sum())
