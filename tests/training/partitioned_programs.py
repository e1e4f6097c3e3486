"""TF1 programs on partitioned variables, written once for any TF1-style module ``tf``.

``tests/record_tf_reference.py`` runs them with TensorFlow (``tensorflow.compat.v1`` after
``disable_v2_behavior()``) and writes what they return to ``partitioned_expected.py``; the tests
run them with sparseflow and compare. Every program builds its own graph and returns plain
Python data (lists, floats, strings).
"""

import os

import numpy as np

EMB_ROWS, EMB_DIM = 11, 4  # 11 rows in 3 shards: 4, 4, 3 (uneven on purpose)
FULL = (np.arange(EMB_ROWS * EMB_DIM, dtype=np.float32).reshape(EMB_ROWS, EMB_DIM) / 20.0 - 1.0)
W0 = np.linspace(-1.0, 1.0, EMB_DIM, dtype=np.float32).reshape(EMB_DIM, 1)
BATCHES = [  # (ids, labels): duplicates, every shard, and rows never touched (row 2 and row 8)
    ([0, 3, 3, 10, 5], [[1.0], [0.0], [0.5], [-1.0], [2.0]]),
    ([1, 4, 7, 7, 9], [[0.5], [1.5], [-0.5], [0.0], [1.0]]),
    ([10, 4, 0, 6, 3], [[0.0], [1.0], [1.0], [-2.0], [0.5]]),
]
UNTOUCHED_ROWS = [2, 8]


def _floats(a):
    return np.asarray(a, dtype=np.float64).round(8).tolist()


def shard_layouts(tf):
    """For each partitioner: the partitions, and each shard's name, shape and save-slice spec."""
    cases = [
        ("fixed3_rows10", [10, 3], tf.float32, tf.fixed_size_partitioner(3)),
        ("fixed4_axis1", [3, 10], tf.float32, tf.fixed_size_partitioner(4, axis=1)),
        ("fixed5_rows3", [3, 2], tf.float32, tf.fixed_size_partitioner(5)),
        ("minmax_big", [1000, 64], tf.float32,
         tf.min_max_variable_partitioner(max_partitions=4, min_slice_size=64 << 10)),
        ("minmax_capped_by_slices", [1000, 64], tf.float32,
         tf.min_max_variable_partitioner(max_partitions=16, min_slice_size=100 << 10)),
        ("minmax_small", [10, 4], tf.float32, tf.min_max_variable_partitioner(max_partitions=4)),
        ("minmax_string", [100, 4], tf.string,
         tf.min_max_variable_partitioner(max_partitions=8, min_slice_size=1000, bytes_per_string_element=5)),
        ("axis_size", [100, 8], tf.float32, tf.variable_axis_size_partitioner(max_shard_bytes=1000)),
        ("axis_size_max_shards", [100, 8], tf.float64, tf.variable_axis_size_partitioner(1000, max_shards=3)),
        ("axis_size_axis1", [8, 100], tf.float32, tf.variable_axis_size_partitioner(500, axis=1)),
        ("axis_size_string", [50, 2], tf.string,
         tf.variable_axis_size_partitioner(300, bytes_per_string_element=8)),
        ("axis_size_tiny_limit", [5, 40], tf.float32, tf.variable_axis_size_partitioner(16)),
    ]
    out = {}
    for key, shape, dtype, partitioner in cases:
        with tf.Graph().as_default():
            v = tf.get_variable(key, shape, dtype=dtype, partitioner=partitioner)
            out[key] = {
                "partitions": [int(p) for p in v._get_partitions()],
                "len": len(v),
                "shape": v.get_shape().as_list(),
                "shards": [[s.op.name, s.get_shape().as_list(), s._get_save_slice_info().spec] for s in v],
            }
    return out


def scope_partitioner_and_reuse(tf):
    """A scope-level partitioner, reuse without a partitioner, concatenation and assign."""
    with tf.Graph().as_default():
        with tf.variable_scope("layer", partitioner=tf.fixed_size_partitioner(2)):
            v = tf.get_variable("v", initializer=tf.constant(FULL))
        with tf.variable_scope("layer", reuse=True):
            again = tf.get_variable("v")
        with tf.variable_scope("id", partitioner=tf.fixed_size_partitioner(4)):
            eye = tf.get_variable("eye", [6, 6], initializer=tf.initializers.identity(gain=2.0))
        full = tf.convert_to_tensor(v)
        assigned = v.assign(tf.constant(FULL * 2.0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(full)
            eye_shards = sess.run(list(eye))
            sess.run(assigned)
            after = sess.run(v.as_tensor())
        return {
            "same_object": again is v,
            "concat_op": full.op.name,
            "concat_input": full.op.inputs[0].op.name,
            "before": _floats(before),
            "after_assign": _floats(after),
            "eye_shards": [_floats(s) for s in eye_shards],
        }


def _optimizer(tf, name):
    if name == "sgd":
        return tf.train.GradientDescentOptimizer(0.1)
    if name == "adagrad":
        return tf.train.AdagradOptimizer(0.3, initial_accumulator_value=0.1)
    if name == "adam":
        return tf.train.AdamOptimizer(0.05)
    if name == "ftrl":
        return tf.train.FtrlOptimizer(0.2, l1_regularization_strength=0.01, l2_regularization_strength=0.02)
    if name == "momentum":
        return tf.train.MomentumOptimizer(0.1, 0.9)
    raise ValueError(name)


def train_partitioned_embedding(tf, optimizer, strategy):
    """An 11-row embedding in 3 shards (TF's sizes 4/4/3) and a dense layer, trained 3 steps.

    Returns the shards, the dense weight, the loss per step, and what kind of gradient reaches
    each shard (IndexedSlices, as for any gathered variable).
    """
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", initializer=tf.constant(FULL), partitioner=tf.fixed_size_partitioner(3))
        w = tf.get_variable("w", initializer=tf.constant(W0))
        ids = tf.placeholder(tf.int64, [None], name="ids")
        labels = tf.placeholder(tf.float32, [None, 1], name="labels")
        rows = tf.nn.embedding_lookup(emb, ids, partition_strategy=strategy)
        loss = tf.reduce_sum(tf.square(tf.matmul(rows, w) - labels))
        opt = _optimizer(tf, optimizer)
        grads_and_vars = opt.compute_gradients(loss)
        kinds = {v.op.name: "IndexedSlices" if type(g).__name__ == "IndexedSlices" else "Tensor"
                 for g, v in grads_and_vars}
        train = opt.apply_gradients(grads_and_vars)
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for batch_ids, batch_labels in BATCHES:
                losses.append(float(sess.run(loss, {ids: batch_ids, labels: batch_labels})))
                sess.run(train, {ids: batch_ids, labels: batch_labels})
            shards = sess.run(list(emb))
            final_w = sess.run(w)
        return {
            "shard_shapes": [list(s.shape) for s in shards],
            "shards": [_floats(s) for s in shards],
            "w": _floats(final_w),
            "losses": _floats(losses),
            "grad_kinds": kinds,
            "slot_names": sorted(v.op.name for v in tf.global_variables() if v.op.name.startswith("emb/")),
        }


def saver_round_trip(tf, directory):
    """Saves an embedding of 3 shards (with Adagrad slots); restores it into 2 shards, 4 shards and
    an unpartitioned variable; lists the checkpoint."""
    prefix = os.path.join(directory, "model.ckpt")
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", initializer=tf.constant(FULL), partitioner=tf.fixed_size_partitioner(3))
        bias = tf.get_variable("bias", initializer=tf.constant([0.5, -0.5]))
        loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, [1, 5, 9])) + tf.reduce_sum(bias)
        train = tf.train.AdagradOptimizer(0.5).minimize(loss)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            saved_full = sess.run(tf.convert_to_tensor(emb))
            path = saver.save(sess, prefix)
    listed = sorted([name, list(shape)] for name, shape in tf.train.list_variables(path))
    restored = {}
    for label, partitioner in (("two_shards", tf.fixed_size_partitioner(2)),
                               ("four_shards", tf.fixed_size_partitioner(4)), ("whole", None)):
        with tf.Graph().as_default():
            emb = tf.get_variable("emb", [EMB_ROWS, EMB_DIM], partitioner=partitioner,
                                  initializer=tf.zeros_initializer())
            # the three ways to name it: by the shards' slice info, a list, a dict
            var_list = {"two_shards": None, "four_shards": [emb], "whole": {"emb": emb}}[label]
            restorer = tf.train.Saver(var_list=var_list)
            with tf.Session() as sess:
                restorer.restore(sess, path)
                restored[label] = _floats(sess.run(tf.convert_to_tensor(emb)))
    with tf.Graph().as_default():  # the slot, restored into a partitioned variable by its own name
        slot = tf.get_variable("emb/Adagrad", [EMB_ROWS, EMB_DIM], partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as sess:
            tf.train.Saver([slot]).restore(sess, path)
            restored["slot_two_shards"] = _floats(sess.run(tf.convert_to_tensor(slot)))
    return {"listed": listed, "saved_full": _floats(saved_full), "restored": restored,
            "emb_value": _floats(tf.train.load_variable(path, "emb"))}
