"""Math and templates in a TF1 program: a small attention layer written with tf.einsum, two towers
sharing weights through tf.make_template, bucketized features with tf.searchsorted, tf.linalg.transpose,
trained with gradients through einsum."""
# ruff: noqa: I001 - the marked TF import and disable_v2_behavior() stay together for the runner
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


rs = np.random.RandomState(2)
q_np = rs.randn(4, 3, 5).astype(np.float32)
k_np = rs.randn(4, 6, 5).astype(np.float32)
ages = np.array([[3.0, 17.0, 45.0, 80.0], [25.0, 18.0, 65.0, 0.0]], np.float32)

with tf.Graph().as_default():
    q = tf.constant(q_np)
    k = tf.constant(k_np)

    def tower(x, units):
        w = tf.get_variable("w", [x.shape[-1], units], initializer=tf.glorot_uniform_initializer(seed=3))
        return tf.einsum("bsd,du->bsu", x, w)

    shared = tf.make_template("tower", tower, units=5)
    qp, kp = shared(q), shared(k)
    scores = tf.einsum("bqd,bkd->bqk", qp, kp) / np.sqrt(5.0).astype(np.float32)
    attn = tf.nn.softmax(scores)
    context = tf.einsum("bqk,bkd->bqd", attn, kp)
    pooled = tf.einsum("bqd->bd", context)
    bilinear = tf.einsum("bi,bj->bij", pooled, pooled)
    trace = tf.einsum("bii->b", bilinear)
    loss = tf.reduce_mean(tf.square(trace - 1.0))
    train = tf.train.GradientDescentOptimizer(1e-4).minimize(loss)
    RESULT("variables", [v.name for v in tf.global_variables()])
    RESULT("shapes", [str(t.shape) for t in (qp, scores, context, pooled, bilinear, trace)])
    RESULT("template_scope", shared.variable_scope.name)
    boundaries = tf.constant([[0.0, 18.0, 30.0, 65.0]] * 2)
    buckets = tf.searchsorted(boundaries, tf.constant(ages), side="right")
    buckets_left = tf.searchsorted(boundaries, tf.constant(ages))
    transposed = tf.linalg.transpose(tf.constant(q_np[:2, :2, :3]))
    grad_q = tf.gradients(loss, q)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        RESULT("attn_row_sums", sess.run(tf.reduce_sum(attn, axis=-1)))
        RESULT("trace_0", sess.run(trace))
        RESULT("grad_q", sess.run(grad_q))
        for step in range(4):
            value, _ = sess.run([loss, train])
            RESULT("loss_%d" % step, value)
        RESULT("buckets", sess.run(buckets))
        RESULT("buckets_left", sess.run(buckets_left))
        RESULT("transposed", sess.run(transposed))
