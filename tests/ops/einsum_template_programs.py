"""einsum, searchsorted, make_template and tf.linalg.transpose built and run with any TF1-style module
``tf``: tests/record_tf_reference.py records TensorFlow's results into einsum_template_expected.py,
test_einsum_template.py runs them with sparseflow."""

import numpy as np

EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("ij,ij->i", [(2, 3), (2, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]), ("i,j->ij", [(3,), (2,)]),
    ("ij,jk", [(2, 3), (3, 2)]), ("ijk->kj", [(2, 3, 4)]), ("ab,bc,cd->ad", [(2, 3), (3, 2), (2, 2)]),
    ("bn,nm->bm", [(1, 3), (3, 2)]), ("i...,i->...", [(3, 2, 2), (3,)]),
]


def _operands(shapes, seed):
    rs = np.random.RandomState(seed)
    return [rs.randn(*s).astype(np.float32) for s in shapes]


def einsums(tf):
    out = {}
    with tf.Graph().as_default():
        cases = []
        for k, (equation, shapes) in enumerate(EQUATIONS):
            xs = [tf.constant(v) for v in _operands(shapes, k)]
            y = tf.einsum(equation, *xs)
            grads = tf.gradients(tf.reduce_sum(y * y), xs)
            cases.append((equation, y, grads))
            out[f"shape_{equation}"] = y.shape.as_list()
        out["names"] = [c[1].op.name for c in cases[:2]] + [cases[0][1].op.type]
        with tf.Session() as sess:
            for equation, y, grads in cases:
                value, gs = sess.run([y, grads])
                out[f"value_{equation}"] = np.round(np.asarray(value, np.float64), 4).tolist()
                out[f"grads_{equation}"] = [np.round(np.asarray(g, np.float64), 3).tolist() for g in gs]
        for bad in ("ij,jk->ik", "ij->q", "i.j->ij"):
            try:
                tf.einsum(bad, tf.zeros([2, 2]))
                out[f"error_{bad}"] = None
            except Exception as e:  # noqa: BLE001 - the error type is the result
                out[f"error_{bad}"] = type(e).__name__
    return out


def searchsorteds(tf):
    out = {}
    with tf.Graph().as_default():
        seq = tf.constant([[1, 3, 5, 7], [2, 4, 6, 8]])
        vals = tf.constant([[0, 3, 8], [4, 4, 9]])
        ops = {
            "left": tf.searchsorted(seq, vals),
            "right": tf.searchsorted(seq, vals, side="right"),
            "int64": tf.searchsorted(tf.constant([1.0, 2.5, 2.5, 4.0]), tf.constant([2.5, 3.0, -1.0]),
                                     side="right", out_type=tf.int64),
            "batch3": tf.searchsorted(tf.constant(np.arange(12, dtype=np.int32).reshape(2, 2, 3)),
                                      tf.constant([[[1], [4]], [[7], [11]]])),
        }
        out["dtypes"] = {k: v.dtype.name for k, v in ops.items()}
        out["shapes"] = {k: v.shape.as_list() for k, v in ops.items()}
        with tf.Session() as sess:
            for k, v in sess.run(ops).items():
                out[k] = v.tolist()
        try:
            tf.searchsorted(seq, vals, side="middle")
        except ValueError as e:
            out["bad_side"] = str(e)
    return out


def templates(tf):
    out = {}
    with tf.Graph().as_default():
        def dense(x, units, scale=1.0):
            w = tf.get_variable("w", [x.shape[-1], units], initializer=tf.constant_initializer(0.5))
            b = tf.get_variable("b", [units], initializer=tf.zeros_initializer())
            return tf.matmul(x, w) * scale + b

        layer = tf.make_template("dense", dense, units=2)
        x = tf.constant([[1.0, 2.0]])
        y1, y2 = layer(x), layer(x * 2.0, scale=3.0)
        with tf.variable_scope("outer"):
            inner = tf.make_template("dense", dense, units=1, create_scope_now_=True)
        y3 = inner(x)
        y4 = inner(x)
        out["names"] = [y1.name, y2.name, y3.name, y4.name]
        out["variables"] = [v.name for v in tf.global_variables()]
        out["scopes"] = [layer.variable_scope.name, inner.variable_scope.name, layer.name]
        out["template_variables"] = [[v.name for v in layer.variables], [v.name for v in inner.trainable_variables]]

        def bad(x):
            return x * tf.Variable(1.0, name="v")

        t = tf.make_template("bad", bad)
        t(x)
        try:
            t(x)
            out["second_variable"] = None
        except ValueError as e:
            out["second_variable"] = str(e).split(":")[0]
        loss = tf.reduce_sum(y1 + y2)
        grads = tf.gradients(loss, layer.trainable_variables)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["values"] = [v.tolist() for v in sess.run([y1, y2, y3, y4])]
            out["grads"] = [g.tolist() for g in sess.run(grads)]
        out["transpose"] = [tf.linalg.transpose(tf.zeros([2, 3, 4])).shape.as_list(),
                            tf.linalg.transpose(tf.zeros([2, 3])).shape.as_list()]
        with tf.Session() as sess:
            out["transpose_value"] = sess.run(tf.linalg.transpose([[1, 2, 3]])).tolist()
    return out
