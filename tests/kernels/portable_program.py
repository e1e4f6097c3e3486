"""A small Wide&Deep training run printing its losses and final weights as JSON; run by
test_portable_kernels.py once as is and once with NumPy and numba held to kernels without AVX-512."""

import json
import sys

import numpy as np

import sparseflow as tf
from sparseflow import embedding


def main():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 500, (6, 256, 8)).astype(np.uint64)
    dense = rng.standard_normal((6, 256, 5)).astype(np.float32)
    labels = (rng.random((6, 256)) < 0.3).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        k = tf.placeholder(tf.uint64, [None, 8])
        x = tf.placeholder(tf.float32, [None, 5])
        y = tf.placeholder(tf.float32, [None])
        table = embedding.EmbeddingTable("deep", 4, optimizer=embedding.Adagrad(0.05, 0.1), seed=3,
                                         initializer=tf.random_uniform_initializer(-0.05, 0.05))
        uk = embedding.unique_keys(tf.reshape(k, [-1]))
        rows = table.pull(uk.keys, uk.counts)
        h = tf.concat([tf.reshape(tf.gather(rows, uk.idx), [-1, 32]), tf.log1p(tf.maximum(x, 0.0))], axis=1)
        for i, units in enumerate((64, 32)):
            h = tf.layers.dense(h, units, activation=tf.nn.relu, name=f"mlp{i}")
        logit = tf.reshape(tf.layers.dense(h, 1, name="out"), [-1])
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logit))
        train = embedding.minimize(loss, tf.train.AdamOptimizer(1e-2))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [float(sess.run([train, loss], {k: keys[i], x: dense[i], y: labels[i]})[1]) for i in range(6)]
            weights = [w.tolist() for w in sess.run(tf.trainable_variables())]
    json.dump({"losses": losses, "weights": weights}, sys.stdout)


if __name__ == "__main__":
    main()
