"""tf.recompute_grad: the same values and gradients as TensorFlow 2.21 (recorded with tf.compat.v1 on
this program, a resource variable there: its recompute_grad refuses ref variables), computed again in
the backward pass."""

import numpy as np

import sparseflow as tf


def _program():
    x = tf.constant([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    w = tf.get_variable("w", initializer=tf.constant([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]]))
    f = tf.recompute_grad(lambda h: tf.tanh(tf.matmul(h, w)) * 2.0)
    y = f(x)
    return x, w, y, tf.gradients(tf.reduce_sum(y * y), [x, w])


def test_values_and_gradients_match_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        x, w, y, (gx, gw) = _program()
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(y), [[1.270298, 1.8708181], [-0.29777005, -0.48983732]], rtol=1e-6)
        np.testing.assert_allclose(sess.run(gx), [[0.4902333, 0.5352168, 2.0769734],
                                                  [-0.48483127, 0.38732356, -1.6874294]], rtol=1e-5)
        np.testing.assert_allclose(sess.run(gw), [[-0.23133337, -2.294985], [-3.3225362, -1.3959374],
                                                  [6.936242, 3.2523293]], rtol=1e-5)


def test_the_backward_pass_computes_the_function_again():
    with tf.Graph().as_default():
        _program()
        tanhs = [op for op in tf.get_default_graph().get_operations() if op.type == "Tanh"]
        assert len(tanhs) == 2  # the forward one and the recomputation in the gradient
        # the recomputation waits for the incoming gradient
        recomputed = tanhs[1]
        inputs = {recomputed}
        seen = set()
        while inputs:
            op = inputs.pop()
            seen.add(op)
            inputs |= {t.op for t in op.inputs if t.op not in seen} | {c for c in op.control_inputs if c not in seen}
        assert any("gradients" in op.name and op.type != "Tanh" for op in seen if op.control_inputs)


def test_without_incoming_gradient_nothing_is_recomputed():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.constant([1.0, 2.0])
        f = tf.recompute_grad(lambda a: (a * 2.0, a * 3.0))
        first, _ = f(x)
        g = tf.gradients(tf.reduce_sum(first), x)[0]
        assert sess.run(g).tolist() == [2.0, 2.0]
