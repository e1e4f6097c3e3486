"""Small TF1 programs whose results the op database records with TensorFlow (``tools/record_opdb.py``).

Each takes the TF1-style module (sparseflow or ``tensorflow.compat.v1``) and returns plain data.
The first is the best-known TF1 first program: linear regression on placeholders of unknown
shape, fed Python scalars, so every gradient of the loss runs its dynamic-shape path on rank-0
values.
"""

from __future__ import annotations

REDUCTIONS = ("reduce_sum", "reduce_mean", "reduce_max", "reduce_prod")
DATA = [(3.3, 1.7), (4.4, 2.76), (5.5, 2.09), (6.71, 3.19), (6.93, 1.694), (4.168, 1.573), (9.779, 3.366)]


def linear_regression(tf, reduction: str, steps: int = 3) -> list[float]:
    """The loss after each SGD step of ``reduce(pow(X * W + b - Y, 2)) / (2 * n)``, one sample a step."""
    with tf.Graph().as_default():
        X = tf.placeholder("float")  # noqa: N806 - the program's own names
        Y = tf.placeholder("float")  # noqa: N806
        W = tf.Variable(0.5, name="weight")  # noqa: N806
        b = tf.Variable(0.1, name="bias")
        cost = getattr(tf, reduction)(tf.pow(X * W + b - Y, 2)) / (2 * 17)
        train = tf.train.GradientDescentOptimizer(0.01).minimize(cost)
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(steps):
                x, y = DATA[step % len(DATA)]
                sess.run(train, feed_dict={X: x, Y: y})
                losses.append(float(sess.run(cost, feed_dict={X: x, Y: y})))
            losses += [float(v) for v in sess.run([W, b])]
    return losses


def record(tf) -> dict:
    return {f"linear_regression_{r}": linear_regression(tf, r, steps=7) for r in REDUCTIONS}
