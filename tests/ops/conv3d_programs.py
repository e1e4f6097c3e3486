"""TF1 programs on ``tf.nn.conv3d`` / ``conv3d_transpose`` and their gradients, for any TF1-style module.
``tests/record_tf_reference.py conv3d`` records TensorFlow's results in ``conv3d_expected.py``."""

import numpy as np

# (name, input shape NDHWC, filter shape, strides, padding, dilations)
CASES = [
    ("valid_unit", [2, 4, 5, 3, 2], [2, 2, 2, 2, 3], [1, 1, 1, 1, 1], "VALID", [1, 1, 1, 1, 1]),
    ("same_strided", [1, 5, 6, 7, 3], [3, 2, 3, 3, 2], [1, 2, 1, 3, 1], "SAME", [1, 1, 1, 1, 1]),
    ("valid_strided", [2, 6, 5, 4, 1], [3, 3, 2, 1, 2], [1, 2, 2, 1, 1], "VALID", [1, 1, 1, 1, 1]),
    ("same_dilated", [1, 5, 5, 5, 2], [2, 3, 2, 2, 2], [1, 1, 1, 1, 1], "SAME", [1, 2, 1, 2, 1]),
]


def _floats(a):
    return np.asarray(a, dtype=np.float64).round(5).tolist()


def convolutions(tf):
    out = {}
    for name, xs, fs, strides, padding, dilations in CASES:
        r = np.random.RandomState(len(name))
        x_val = r.uniform(-1, 1, size=xs).astype(np.float32)
        f_val = r.uniform(-1, 1, size=fs).astype(np.float32)
        with tf.Graph().as_default():
            x, f = tf.constant(x_val), tf.constant(f_val)
            y = tf.nn.conv3d(x, f, strides=strides, padding=padding, dilations=dilations)
            w = tf.constant(np.random.RandomState(3).uniform(-1, 1, size=y.get_shape().as_list()).astype(np.float32))
            gx, gf = tf.gradients(tf.reduce_sum(y * w), [x, f])
            t = tf.nn.conv3d_transpose(w, f, output_shape=xs, strides=strides, padding=padding)
            with tf.Session() as sess:
                yv, gxv, gfv, tv = sess.run([y, gx, gf, t])
        out[name] = {"shape": list(yv.shape), "y": _floats(yv.ravel()[:40]), "y_sum": float(yv.sum()),
                     "grad_x_sum": float((gxv * x_val).sum()), "grad_f": _floats(gfv.ravel()[:30]),
                     "transpose_sum": float((tv * x_val).sum()), "static_shape": y.get_shape().as_list()}
    return out
