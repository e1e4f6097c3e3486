"""Linear algebra, sorting and scattering in a TF1 program: a Gaussian-process-style regression
solved with tf.cholesky / tf.cholesky_solve and its log-likelihood with tf.linalg.logdet, kernel
hyperparameters fitted through those gradients; top scores picked with tf.sort / tf.argsort, a
ranking updated with tf.tensor_scatter_nd_update, features bucketed with tf.histogram_fixed_width_bins
and rolled with tf.roll, a QR and an eigendecomposition checked for what they must reconstruct, and a
spectrum from tf.signal.rfft."""
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


rs = np.random.RandomState(4)
x_np = np.sort(rs.uniform(-3, 3, size=12)).astype(np.float64)
y_np = (np.sin(x_np) + 0.1 * rs.randn(12)).astype(np.float64)
scores_np = rs.randn(3, 6).astype(np.float32)

with tf.Graph().as_default():
    x = tf.constant(x_np)
    y = tf.constant(y_np)[:, None]
    log_length = tf.get_variable("log_length", [], tf.float64, initializer=tf.constant_initializer(0.0))
    log_noise = tf.get_variable("log_noise", [], tf.float64, initializer=tf.constant_initializer(-1.0))
    sq = tf.square(x[:, None] - x[None, :])
    k = tf.exp(-0.5 * sq / tf.exp(2.0 * log_length)) + tf.exp(2.0 * log_noise) * tf.eye(12, dtype=tf.float64)
    chol = tf.cholesky(k)
    alpha = tf.cholesky_solve(chol, y)
    nll = 0.5 * tf.reduce_sum(y * alpha) + 0.5 * tf.linalg.logdet(k)
    train = tf.train.AdamOptimizer(0.05).minimize(nll)
    x_test = tf.constant([[-1.0], [0.5], [2.0]], tf.float64)
    k_star = tf.exp(-0.5 * tf.square(x_test - x[None, :]) / tf.exp(2.0 * log_length))
    mean = tf.matmul(k_star, alpha)
    tri = tf.matrix_triangular_solve(chol, y)
    solved = tf.matrix_solve(k, y)

    scores = tf.constant(scores_np)
    ranked = tf.sort(scores, direction="DESCENDING")
    order = tf.argsort(scores, axis=-1, direction="DESCENDING")
    best = tf.batch_gather(scores, order[:, :2])
    board = tf.tensor_scatter_nd_update(tf.zeros([3, 6]), tf.stack([tf.range(3), order[:, 0]], axis=1),
                                        tf.ones([3]))
    boosted = tf.tensor_scatter_nd_add(scores, [[0, 0], [0, 0], [2, 5]], [1.0, 2.0, -1.0])
    buckets = tf.histogram_fixed_width_bins(scores, [-2.0, 2.0], nbins=4)
    counts = tf.histogram_fixed_width(scores, [-2.0, 2.0], nbins=4)
    rolled = tf.roll(scores, shift=[1, -2], axis=[0, 1])
    repeated = tf.repeat(tf.constant([1, 2, 3]), [3, 0, 2])
    flat = tf.unravel_index([0, 7, 17], [3, 6])

    q, r = tf.qr(scores[:, :3])
    e, v = tf.self_adjoint_eig(tf.matmul(scores, scores, transpose_b=True))
    rebuilt = tf.matmul(v * e[None, :], v, transpose_b=True)
    spectrum = tf.abs(tf.signal.rfft(scores))
    shifted = tf.bitwise.right_shift(tf.constant([64, -64]), 3)
    grad_scores = tf.gradients(tf.reduce_sum(tf.sort(scores)[:, -1] * 2.0), scores)[0]

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        RESULT("nll_0", sess.run(nll))
        for step in range(30):
            sess.run(train)
        RESULT("nll_30", sess.run(nll))
        RESULT("log_length", sess.run(log_length))
        RESULT("log_noise", sess.run(log_noise))
        RESULT("mean", sess.run(mean))
        RESULT("tri_norm", sess.run(tf.norm(tri)))
        RESULT("solve_vs_cholesky", sess.run(tf.reduce_max(tf.abs(solved - alpha))) < 1e-8)
        RESULT("ranked", sess.run(ranked))
        RESULT("order", sess.run(order))
        RESULT("best", sess.run(best))
        RESULT("board", sess.run(board))
        RESULT("boosted", sess.run(boosted))
        RESULT("buckets", sess.run(buckets))
        RESULT("counts", sess.run(counts))
        RESULT("rolled", sess.run(rolled))
        RESULT("repeated", sess.run(repeated))
        RESULT("unravel", sess.run(flat))
        RESULT("qr_reconstructs", sess.run(tf.reduce_max(tf.abs(tf.matmul(q, r) - scores[:, :3]))) < 1e-5)
        RESULT("r_diag_abs", sess.run(tf.abs(tf.matrix_diag_part(r))))
        RESULT("eigenvalues", sess.run(e))
        RESULT("eig_reconstructs", sess.run(tf.reduce_max(tf.abs(rebuilt - tf.matmul(scores, scores, transpose_b=True))))
               < 1e-4)
        RESULT("spectrum", sess.run(spectrum))
        RESULT("shifted", sess.run(shifted))
        RESULT("grad_sort", sess.run(grad_scores))
