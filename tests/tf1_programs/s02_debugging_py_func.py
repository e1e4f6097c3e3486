"""Debugging a TF1 training program: input checks with tf.assert_* as control dependencies, tf.Print
in the graph, tf.print to a file, check_numerics and add_check_numerics_ops catching a NaN, a
preprocessing step in Python with tf.py_func / tf.numpy_function, gradients through Print."""
# ruff: noqa: I001 - the marked TF import and disable_v2_behavior() stay together for the runner
import os
import shutil
import tempfile

import numpy as np

# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


def RESULT(name, value):  # noqa: N802 - the corpus's helper
    a = np.asarray(value)
    if a.size > 32:
        print("RESULT %s.shape %s" % (name, " ".join(str(d) for d in a.shape)))
        print("RESULT %s.sum %.6g" % (name, a.sum(dtype=np.float64)))
        print("RESULT %s.abssum %.6g" % (name, np.abs(a).sum(dtype=np.float64)))
        return
    words = []
    for e in a.ravel().tolist():
        if isinstance(e, bool):
            words.append(str(e))
        elif isinstance(e, int):
            words.append("%d" % e)
        elif isinstance(e, float):
            words.append("%.6g" % e)
        elif isinstance(e, bytes):
            words.append(e.decode())
        else:
            words.append(str(e))
    print("RESULT %s %s" % (name, " ".join(words)))


root = tempfile.mkdtemp()
try:
    rs = np.random.RandomState(1)
    xs = rs.rand(6, 3).astype(np.float32) * 4.0
    ys = (xs.sum(axis=1, keepdims=True) > 6.0).astype(np.float32)

    def standardize(a):
        return ((a - a.mean(axis=0)) / (a.std(axis=0) + 1e-6)).astype(np.float32)

    def count_positive(a):
        return np.int64((a > 0).sum())

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        checks = [tf.assert_non_negative(x, message="features"), tf.assert_rank(x, 2),
                  tf.assert_less_equal(y, 1.0), tf.debugging.assert_greater_equal(y, 0.0)]
        with tf.control_dependencies(checks):
            z = tf.py_func(standardize, [x], tf.float32, name="standardize")
        z.set_shape([None, 3])
        z = tf.Print(z, [tf.shape(z)], message="batch shape: ")
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        logits = tf.matmul(z, w)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
        loss = tf.check_numerics(loss, "loss")
        positives = tf.numpy_function(count_positive, [logits], tf.int64)
        path = os.path.join(root, "log.txt")
        printer = tf.print("loss", loss, "w", tf.transpose(w), output_stream="file://" + path)
        with tf.control_dependencies([printer]):
            train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        RESULT("names", [z.op.type, positives.op.type, printer.type, loss.op.type])
        RESULT("check_types", [c.type for c in checks[1:2]])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(3):
                value, _ = sess.run([loss, train], {x: xs, y: ys})
                RESULT("loss_%d" % step, value)
            RESULT("positives", sess.run(positives, {x: xs, y: ys}))
            RESULT("printed", open(path).read().strip().split("\n"))
            for name, feed in [("negative_x", {x: -xs, y: ys}), ("label_2", {x: xs, y: ys * 2.0})]:
                try:
                    sess.run(train, feed)
                    RESULT(name, "ok")
                except tf.errors.InvalidArgumentError as e:
                    RESULT(name, [type(e).__name__, "assertion failed" in e.message])
            try:
                tf.assert_rank(tf.constant([1.0]), 2)
            except ValueError as e:
                RESULT("static_rank", str(e).split(".")[0])

    # check_numerics on every float tensor of a graph without control flow (TensorFlow's assertions
    # use tf.cond, which add_check_numerics_ops refuses): a NaN names the op that made it.
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.get_variable("w", [3, 1], initializer=tf.ones_initializer())
        bad = tf.log(x[:, :1] - 2.0, name="log_shifted")
        total = tf.reduce_sum(bad, name="total")
        check_all = tf.add_check_numerics_ops()
        try:
            sess2 = tf.Session()
            sess2.run(tf.global_variables_initializer())
            sess2.run([total, check_all], {x: xs})
            RESULT("check_all", "ok")
        except tf.errors.InvalidArgumentError as e:
            RESULT("check_all", [line for line in e.message.splitlines() if "Tensor had" in line][0])
        RESULT("check_all_ok", sess2.run([total, check_all], {x: xs + 3.0})[0])
        g = tf.gradients(tf.reduce_sum(tf.Print(w, [w]) * 2.0), w)[0]
        RESULT("print_grad", sess2.run(g).ravel())
        sess2.close()
finally:
    shutil.rmtree(root, ignore_errors=True)
