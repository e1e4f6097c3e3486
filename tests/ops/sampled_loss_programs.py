"""TF1 programs on the candidate samplers, ``nce_loss`` and ``sampled_softmax_loss``, written once
for any TF1-style module. ``tests/record_tf_reference.py sampled`` records TensorFlow's results in
``sampled_loss_expected.py``; ``test_sampled_losses.py`` runs them with sparseflow."""

import numpy as np

TRUE_CLASSES = np.array([[1, 5], [7, 0], [3, 3]], dtype=np.int64)


def _floats(a):
    return np.asarray(a, dtype=np.float64).round(7).tolist()


def samplers(tf):
    """Three runs of every sampler (seeded by op and by graph seed): candidates and expected counts."""
    tc = TRUE_CLASSES
    with tf.Graph().as_default():
        tf.set_random_seed(4)
        ops = {
            "uniform_unique": tf.nn.uniform_candidate_sampler(tc, 2, 6, True, 20, seed=2),
            "uniform_large_range": tf.nn.uniform_candidate_sampler(tc, 2, 6, False, 1000003),
            "log_uniform_unique": tf.nn.log_uniform_candidate_sampler(tc, 2, 8, True, 30),
            "log_uniform": tf.nn.log_uniform_candidate_sampler(tc, 2, 8, False, 10**6, seed=9),
            "learned_unigram_unique": tf.nn.learned_unigram_candidate_sampler(tc, 2, 5, True, 10),
            "learned_unigram": tf.nn.learned_unigram_candidate_sampler(tc, 2, 5, False, 10, seed=1),
            "fixed_unigram_distortion": tf.nn.fixed_unigram_candidate_sampler(
                tc, 2, 5, True, 10, unigrams=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10.], distortion=0.75, seed=5),
            "fixed_unigram_reserved": tf.nn.fixed_unigram_candidate_sampler(
                tc, 2, 7, False, 9, unigrams=[3, 1, 4, 1, 5, 9, 2, 6], num_reserved_ids=1),
            "fixed_unigram_shard": tf.nn.fixed_unigram_candidate_sampler(
                tc, 2, 4, True, 8, unigrams=[3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3], num_shards=2, shard=1),
            "all": tf.nn.all_candidate_sampler(tc, 2, 8, True),
        }
        hits = tf.nn.compute_accidental_hits(tc, tf.constant([3, 9, 1, 7, 3], dtype=tf.int64), 2)
        out = {name: [] for name in ops}
        with tf.Session() as sess:
            for _ in range(3):
                for name, values in sess.run(ops).items():
                    out[name].append([np.asarray(values[0]).tolist(), _floats(values[1]), _floats(values[2])])
            h = sess.run(hits)
        out["accidental_hits"] = [h[0].tolist(), h[1].tolist(), _floats(h[2])]
        return out


def losses(tf):
    """nce_loss and sampled_softmax_loss with given and drawn candidates, with gradients."""
    r = np.random.RandomState(7)
    w_val = r.uniform(-1, 1, size=(40, 6)).astype(np.float32)
    b_val = r.uniform(-0.5, 0.5, size=40).astype(np.float32)
    x_val = r.uniform(-1, 1, size=(4, 6)).astype(np.float32)
    labels1 = np.array([[3], [17], [0], [39]], dtype=np.int64)
    labels2 = np.array([[3, 4], [17, 2], [0, 0], [39, 8]], dtype=np.int64)
    out = {}
    with tf.Graph().as_default():
        tf.set_random_seed(11)
        w = tf.Variable(w_val, name="w")
        b = tf.Variable(b_val, name="b")
        x = tf.constant(x_val)
        given = (tf.constant([3, 5, 0, 21, 8], dtype=tf.int64), tf.constant([[0.3], [0.2], [0.1], [0.05]]),
                 tf.constant([0.3, 0.25, 0.5, 0.04, 0.1]))
        given2 = (given[0], tf.constant([[0.3, 0.2], [0.2, 0.1], [0.1, 0.1], [0.05, 0.4]]), given[2])
        tensors = {
            "nce_given": tf.nn.nce_loss(w, b, labels1, x, 5, 40, sampled_values=given),
            "nce_given_remove_hits": tf.nn.nce_loss(w, b, labels1, x, 5, 40, sampled_values=given,
                                                    remove_accidental_hits=True),
            "nce_two_true": tf.nn.nce_loss(w, b, labels2, x, 5, 40, num_true=2, sampled_values=given2),
            "softmax_given": tf.nn.sampled_softmax_loss(w, b, labels1, x, 5, 40, sampled_values=given),
            "softmax_given_keep_hits": tf.nn.sampled_softmax_loss(w, b, labels1, x, 5, 40, sampled_values=given,
                                                                  remove_accidental_hits=False),
            "softmax_two_true": tf.nn.sampled_softmax_loss(w, b, labels2, x, 5, 40, num_true=2,
                                                           sampled_values=given2),
            "nce_sharded": tf.nn.nce_loss([w[:14], w[14:27], w[27:]], b, labels1, x, 5, 40, sampled_values=given,
                                          partition_strategy="div"),
            "nce_drawn": tf.nn.nce_loss(w, b, labels1, x, 6, 40),
            "softmax_drawn": tf.nn.sampled_softmax_loss(w, b, labels1, x, 6, 40, seed=3),
        }
        grads = {name + "_grads": tf.gradients(tf.reduce_sum(t), [w, b, x]) for name, t in tensors.items()
                 if name.endswith("given") or name == "softmax_drawn"}
        grads = {k: [tf.convert_to_tensor(g) for g in v] for k, v in grads.items()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for name, value in sess.run(tensors).items():
                out[name] = _floats(value)
            for name, value in sess.run(grads).items():
                out[name] = [_floats(g) for g in value]
    return out


def word2vec_training(tf):
    """Skip-gram-like embeddings trained with nce_loss (seeded sampler): the loss per step."""
    r = np.random.RandomState(5)
    centers = r.randint(0, 30, size=64)
    contexts = ((centers + r.randint(1, 3, size=64)) % 30).reshape(-1, 1)
    with tf.Graph().as_default():
        tf.set_random_seed(2)
        emb = tf.Variable(r.uniform(-1, 1, size=(30, 8)).astype(np.float32))
        nce_w = tf.Variable(r.normal(0, 0.3, size=(30, 8)).astype(np.float32))
        nce_b = tf.Variable(np.zeros(30, dtype=np.float32))
        ids = tf.placeholder(tf.int32, [None])
        labels = tf.placeholder(tf.int64, [None, 1])
        loss = tf.reduce_mean(tf.nn.nce_loss(nce_w, nce_b, labels, tf.nn.embedding_lookup(emb, ids), 8, 30))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(20):
                lo = (step * 16) % 64
                losses.append(float(sess.run([loss, train], {ids: centers[lo:lo + 16],
                                                              labels: contexts[lo:lo + 16]})[0]))
    return {"losses": _floats(losses)}
