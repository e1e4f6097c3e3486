"""TF1 programs on ``tf.nn.embedding_lookup`` over shards, written once for any TF1-style module.

``tests/record_tf_reference.py`` runs them with TensorFlow and writes what they return to
``embedding_lookup_expected.py``; ``test_embedding_lookup_partitioned.py`` runs them with sparseflow.
"""

import numpy as np


def _floats(a):
    return np.asarray(a, dtype=np.float64).round(8).tolist()


def _table(rows, dim):
    return (np.arange(rows * dim, dtype=np.float32).reshape(rows, dim) * 0.25 - 3.0)


def _shards(tf, table, sizes, strategy):
    """The shards of ``table`` as constants, laid out as ``strategy`` expects them."""
    if strategy == "mod":
        n = len(sizes)
        parts = [table[i::n] for i in range(n)]
    else:
        bounds = np.cumsum([0] + list(sizes))
        parts = [table[bounds[i]:bounds[i + 1]] for i in range(len(sizes))]
    assert [len(p) for p in parts] == list(sizes)
    return [tf.constant(p) for p in parts]


# (name, rows, shard sizes); TF's layout: the first rows % n shards one row longer
LAYOUTS = [("11_in_3", 11, [4, 4, 3]), ("10_in_4", 10, [3, 3, 2, 2]), ("7_in_2", 7, [4, 3]),
           ("5_in_5", 5, [1, 1, 1, 1, 1])]


def lookups(tf):
    """Rows of shard lists for 2-D ids, with both strategies and with max_norm."""
    out = {}
    for name, rows, sizes in LAYOUTS:
        table = _table(rows, 3)
        ids = [[0, rows - 1, rows // 2], [1, 1, rows - 2]]
        with tf.Graph().as_default():
            results = {}
            for strategy in ("mod", "div"):
                shards = _shards(tf, table, sizes, strategy)
                results[strategy] = tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy)
                results[strategy + "_max_norm"] = tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy,
                                                                         max_norm=2.0)
            # the same shards looked up with the other strategy: another id -> (shard, row) mapping
            results["mod_of_div_shards"] = tf.nn.embedding_lookup(_shards(tf, table, sizes, "div"), ids)
            results["div_of_mod_shards"] = tf.nn.embedding_lookup(_shards(tf, table, sizes, "mod"), ids,
                                                                  partition_strategy="div")
            with tf.Session() as sess:
                out[name] = {k: _floats(v) for k, v in sess.run(results).items()}
    return out


def lookup_gradients(tf):
    """What reaches each shard variable: IndexedSlices (indices, values) of its own rows."""
    out = {}
    for strategy in ("mod", "div"):
        table = _table(11, 2)
        with tf.Graph().as_default():
            emb = tf.get_variable("emb", initializer=tf.constant(table), partitioner=tf.fixed_size_partitioner(3))
            ids = tf.constant([[10, 0, 4], [4, 7, 2]], dtype=tf.int64)
            rows = tf.nn.embedding_lookup(emb, ids, partition_strategy=strategy)
            weights = tf.constant(np.arange(12, dtype=np.float32).reshape(2, 3, 2) - 5.0)
            loss = tf.reduce_sum(rows * weights)
            grads = tf.gradients(loss, list(emb))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                got = sess.run([(g.indices, g.values) for g in grads])
                value = sess.run(rows)
            out[strategy] = {
                "kinds": [type(g).__name__ for g in grads],
                "grads": [[np.asarray(i).tolist(), _floats(v)] for i, v in got],
                "rows": _floats(value),
            }
    return out


def sparse_lookups(tf):
    """embedding_lookup_sparse (and the safe variant) over a PartitionedVariable."""
    table = _table(10, 3)
    out = {}
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", initializer=tf.constant(table), partitioner=tf.fixed_size_partitioner(3))
        sp_ids = tf.SparseTensor(indices=[[0, 0], [0, 1], [1, 0], [3, 0], [3, 1], [3, 2]],
                                 values=tf.constant([9, 2, 5, 0, 9, 4], dtype=tf.int64), dense_shape=[4, 3])
        sp_weights = tf.SparseTensor(indices=sp_ids.indices, values=[1.0, 2.0, 0.5, -1.0, 3.0, 1.5],
                                     dense_shape=sp_ids.dense_shape)
        results = {}
        for strategy in ("mod", "div"):
            for combiner in ("sum", "mean", "sqrtn"):
                results[f"{strategy}_{combiner}"] = tf.nn.embedding_lookup_sparse(
                    emb, sp_ids, sp_weights, partition_strategy=strategy, combiner=combiner)
                results[f"{strategy}_{combiner}_unweighted"] = tf.nn.embedding_lookup_sparse(
                    emb, sp_ids, None, partition_strategy=strategy, combiner=combiner)
        bad_ids = tf.SparseTensor(indices=[[0, 0], [0, 1], [2, 0]], values=tf.constant([8, -1, 3], dtype=tf.int64),
                                  dense_shape=[3, 2])
        results["safe_div"] = tf.nn.safe_embedding_lookup_sparse(emb, bad_ids)
        results["safe_mod"] = tf.nn.safe_embedding_lookup_sparse(emb, bad_ids, partition_strategy="mod")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = {k: _floats(v) for k, v in sess.run(results).items()}
    return out
