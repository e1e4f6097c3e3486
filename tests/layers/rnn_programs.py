"""TF1 programs on ``tf.nn.rnn_cell`` and ``tf.nn.*_rnn``, written once for any TF1-style module.

``tests/record_tf_reference.py rnn`` runs them with TensorFlow (tf-keras installed,
``TF_USE_LEGACY_KERAS=1``) and writes what they return to ``rnn_expected.py``; ``test_rnn.py``
runs them with sparseflow and compares. Every variable is loaded with values drawn from its
shape, so the results do not depend on initializers.
"""

import numpy as np

BATCH, TIME, DEPTH = 3, 5, 4


def _floats(a):
    return np.asarray(a, dtype=np.float64).round(7).tolist()


def _value_for(shape, salt):
    r = np.random.RandomState(int(np.prod(shape)) * 7 + salt)
    return r.uniform(-0.6, 0.6, size=shape).astype(np.float32)


def _inputs(time_major=False, salt=0):
    x = np.random.RandomState(11 + salt).uniform(-1, 1, size=(BATCH, TIME, DEPTH)).astype(np.float32)
    return x.transpose(1, 0, 2).copy() if time_major else x


def _flat(structure):
    if isinstance(structure, (list, tuple)):
        return [leaf for s in structure for leaf in _flat(s)]
    return [structure]


def _run(tf, build, time_major=False, fetch_grads=True):
    """Builds ``build(tf, x)`` -> (outputs, state), loads every variable, returns the results."""
    with tf.Graph().as_default():
        x_val = _inputs(time_major)
        x = tf.placeholder(tf.float32, [None, None, DEPTH] if not time_major else [TIME, None, DEPTH], name="x")
        outputs, state = build(tf, x)
        flat_out, flat_state = _flat(outputs), _flat(state)
        variables = tf.global_variables()
        weights = [tf.constant(_value_for(t.get_shape().as_list()[-1:], 3 + i)) for i, t in enumerate(flat_out)]
        loss = tf.add_n([tf.reduce_sum(o * w) for o, w in zip(flat_out, weights)]
                        + [tf.reduce_sum(s * s) for s in flat_state])
        grads = tf.gradients(loss, variables + [x]) if fetch_grads else []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i, v in enumerate(variables):
                v.load(_value_for(v.get_shape().as_list(), i), sess)
            outs, states, gs = sess.run([flat_out, flat_state, grads], {x: x_val})
        result = {"variables": [(v.op.name, v.get_shape().as_list()) for v in variables],
                  "outputs": [_floats(o) for o in outs], "states": [_floats(s) for s in states],
                  "static_shapes": [[-1 if d is None else d for d in t.get_shape().as_list()]
                                    for t in flat_out + flat_state]}
        if fetch_grads:
            result["grads"] = [_floats(g) for g in gs]
        return result


def _dynamic(cell_fn, **kwargs):
    def build(tf, x):
        return tf.nn.dynamic_rnn(cell_fn(tf), x, dtype=tf.float32, **kwargs)
    return build


def cases(tf):
    """Every cell through dynamic_rnn / static_rnn / the bidirectional forms."""
    rc = tf.nn.rnn_cell
    out = {}
    out["basic_rnn"] = _run(tf, _dynamic(lambda tf: rc.BasicRNNCell(3)))
    out["basic_rnn_relu_seq"] = _run(tf, _dynamic(lambda tf: rc.BasicRNNCell(3, activation=tf.nn.relu),
                                                   sequence_length=[5, 2, 0]))
    out["basic_lstm_seq"] = _run(tf, _dynamic(lambda tf: rc.BasicLSTMCell(4, forget_bias=0.5),
                                               sequence_length=[3, 5, 1]))
    out["basic_lstm_concat_state"] = _run(tf, _dynamic(lambda tf: rc.BasicLSTMCell(3, state_is_tuple=False)))
    out["gru_seq"] = _run(tf, _dynamic(lambda tf: rc.GRUCell(3), sequence_length=[2, 4, 5]))

    def lstm_full(tf, x):
        cell = rc.LSTMCell(5, use_peepholes=True, cell_clip=0.8, num_proj=3, proj_clip=0.5, forget_bias=0.3)
        c0 = tf.constant(_value_for([BATCH, 5], 99))
        h0 = tf.constant(_value_for([BATCH, 3], 98))
        return tf.nn.dynamic_rnn(cell, x, initial_state=rc.LSTMStateTuple(c0, h0), time_major=True,
                                 sequence_length=[4, 5, 2])
    out["lstm_peephole_projection_time_major"] = _run(tf, lstm_full, time_major=True)

    def multi(tf, x):
        cell = rc.MultiRNNCell([rc.BasicLSTMCell(3), rc.GRUCell(4), rc.LSTMCell(2, state_is_tuple=False)])
        return tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, sequence_length=[5, 3, 4], scope="stack")
    out["multi_rnn"] = _run(tf, multi)

    def multi_concat(tf, x):
        cell = rc.MultiRNNCell([rc.BasicRNNCell(3), rc.BasicRNNCell(2)], state_is_tuple=False)
        return tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    out["multi_rnn_concat_state"] = _run(tf, multi_concat)

    def bidi(tf, x):
        (fw, bw), (sfw, sbw) = tf.nn.bidirectional_dynamic_rnn(rc.BasicLSTMCell(3), rc.GRUCell(2), x,
                                                               sequence_length=[5, 2, 4], dtype=tf.float32)
        return [fw, bw], [sfw, sbw]
    out["bidirectional_dynamic"] = _run(tf, bidi)

    def static(tf, x):
        steps = tf.unstack(tf.reshape(x, [BATCH, TIME, DEPTH]), axis=1)
        return tf.nn.static_rnn(rc.BasicLSTMCell(3), steps, dtype=tf.float32, sequence_length=[5, 2, 3])
    out["static_lstm_seq"] = _run(tf, static)

    def static_bidi(tf, x):
        steps = tf.unstack(tf.reshape(x, [BATCH, TIME, DEPTH]), axis=1)
        outs, sfw, sbw = tf.nn.static_bidirectional_rnn(rc.GRUCell(2), rc.BasicRNNCell(3), steps,
                                                        dtype=tf.float32, sequence_length=[4, 5, 1])
        return outs, [sfw, sbw]
    out["static_bidirectional"] = _run(tf, static_bidi)

    def wrappers(tf, x):
        cell = rc.MultiRNNCell([rc.ResidualWrapper(rc.BasicRNNCell(DEPTH)),
                                rc.DropoutWrapper(rc.BasicLSTMCell(3), input_keep_prob=1.0, output_keep_prob=1.0)])
        return tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    out["residual_and_identity_dropout"] = _run(tf, wrappers)

    def dropout(tf, x):
        tf.set_random_seed(5)
        cell = rc.DropoutWrapper(rc.BasicLSTMCell(3), input_keep_prob=0.7, output_keep_prob=0.6,
                                 state_keep_prob=0.8, seed=3)
        return tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    out["dropout_wrapper_seeded"] = _run(tf, dropout, fetch_grads=False)

    def variational(tf, x):
        tf.set_random_seed(5)
        cell = rc.DropoutWrapper(rc.GRUCell(3), input_keep_prob=0.7, output_keep_prob=0.6, state_keep_prob=0.8,
                                 variational_recurrent=True, input_size=DEPTH, dtype=tf.float32, seed=3)
        return tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    out["dropout_wrapper_variational"] = _run(tf, variational, fetch_grads=False)
    return out


def names_and_scopes(tf):
    """Variable names of reused cells, explicit scopes and cells called directly."""
    rc = tf.nn.rnn_cell
    out = {}
    with tf.Graph().as_default():
        x = tf.zeros([2, 3, 4])
        cell = rc.BasicLSTMCell(3)
        tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        with tf.variable_scope("rnn", reuse=True):
            tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope="rnn")
        tf.nn.dynamic_rnn(rc.BasicLSTMCell(3), x, dtype=tf.float32, scope="second")
        direct = rc.GRUCell(2, name="my_gru")
        direct(tf.zeros([2, 4]), direct.zero_state(2, tf.float32))
        scoped = rc.BasicRNNCell(2)
        scoped(tf.zeros([2, 4]), tf.zeros([2, 2]), scope="explicit")
        zs = rc.MultiRNNCell([rc.BasicLSTMCell(2), rc.GRUCell(3)]).zero_state(tf.constant(4), tf.float32)
        out["variables"] = [v.op.name for v in tf.global_variables()]
        out["trainable"] = [v.op.name for v in cell.trainable_variables]
        out["zero_state_names"] = [t.op.name for t in _flat(zs)]
        out["zero_state_shapes"] = [[-1 if d is None else d for d in t.get_shape().as_list()] for t in _flat(zs)]
        out["state_sizes"] = [list(rc.LSTMCell(4, num_proj=2).state_size), rc.LSTMCell(4, num_proj=2).output_size,
                              rc.BasicLSTMCell(3, state_is_tuple=False).state_size,
                              [list(s) if isinstance(s, tuple) else s
                               for s in rc.MultiRNNCell([rc.BasicLSTMCell(2), rc.GRUCell(3)]).state_size]]
    return out


def lstm_training(tf):
    """An LSTM classifier trained with Adam: the loss falls and matches TensorFlow step by step."""
    r = np.random.RandomState(3)
    x_val = r.uniform(-1, 1, size=(16, 6, 2)).astype(np.float32)
    y_val = (x_val[:, :, 0].sum(axis=1) > 0).astype(np.int64)
    lengths = r.randint(2, 7, size=16)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 6, 2])
        y = tf.placeholder(tf.int64, [None])
        seq = tf.placeholder(tf.int32, [None])
        outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(6, use_peepholes=True), x, sequence_length=seq,
                                           dtype=tf.float32)
        logits = tf.layers.dense(state.h, 2)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i, v in enumerate(tf.global_variables()):
                if "Adam" not in v.op.name and "power" not in v.op.name:
                    v.load(_value_for(v.get_shape().as_list(), i), sess)
            feed = {x: x_val, y: y_val, seq: lengths}
            for _ in range(30):
                losses.append(float(sess.run([loss, train], feed)[0]))
        return {"losses": _floats(losses)}
