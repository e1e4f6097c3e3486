"""A TF1 sequence model: embeddings -> 2-layer LSTM/GRU stack with dropout (MultiRNNCell, DropoutWrapper)
via dynamic_rnn with sequence lengths, a bidirectional GRU encoder, next-token training with
sampled_softmax_loss and nce_loss (seeded log-uniform samplers), the full softmax for evaluation,
weights from the graph seed's initializer streams,
Adam with gradient clipping, and a Saver round trip of the RNN variables by their TF names."""
# ruff: noqa: I001 - the marked TF import and disable_v2_behavior() stay together for the runner
import os
import tempfile

import numpy as np

# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

VOCAB, EMB, HIDDEN, STEPS, BATCH = 40, 8, 12, 7, 16


def RESULT(name, value):
    arr = np.asarray(value)
    if arr.size > 32:
        print(f"RESULT {name}.shape {' '.join(str(d) for d in arr.shape)}")
        print(f"RESULT {name}.sum {np.sum(arr, dtype=np.float64):.6g}")
        print(f"RESULT {name}.abssum {np.sum(np.abs(arr), dtype=np.float64):.6g}")
        return
    toks = []
    for v in arr.ravel().tolist():
        if isinstance(v, float):
            toks.append(f"{v:.6g}")
        else:
            toks.append(v.decode() if isinstance(v, bytes) else str(v))
    print(f"RESULT {name} {' '.join(toks)}")


def make_batch(rng):
    """Token sequences that count up modulo VOCAB from a random start: the next token is learnable."""
    start = rng.randint(0, VOCAB, size=(BATCH, 1))
    seq = (start + np.arange(STEPS + 1)) % VOCAB
    lengths = rng.randint(3, STEPS + 1, size=BATCH)
    return seq[:, :-1].astype(np.int64), seq[:, 1:].astype(np.int64), lengths.astype(np.int32)


tf.set_random_seed(1234)
tokens = tf.placeholder(tf.int64, [None, STEPS], name="tokens")
targets = tf.placeholder(tf.int64, [None, STEPS], name="targets")
lengths = tf.placeholder(tf.int32, [None], name="lengths")
keep_prob = tf.placeholder_with_default(1.0, [], name="keep_prob")

embedding = tf.get_variable("embedding", [VOCAB, EMB], initializer=tf.random_uniform_initializer(-0.5, 0.5))
inputs = tf.nn.embedding_lookup(embedding, tokens)
cells = [tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.LSTMCell(HIDDEN, use_peepholes=True), output_keep_prob=keep_prob),
         tf.nn.rnn_cell.GRUCell(HIDDEN)]
outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.MultiRNNCell(cells), inputs, sequence_length=lengths,
                                   dtype=tf.float32)
(enc_fw, enc_bw), _ = tf.nn.bidirectional_dynamic_rnn(tf.nn.rnn_cell.GRUCell(4), tf.nn.rnn_cell.GRUCell(4), inputs,
                                                      sequence_length=lengths, dtype=tf.float32, scope="encoder")
features = tf.concat([outputs, enc_fw, enc_bw], axis=2)
flat = tf.reshape(features, [-1, HIDDEN + 8])
flat_targets = tf.reshape(targets, [-1, 1])
mask = tf.reshape(tf.sequence_mask(lengths, STEPS, dtype=tf.float32), [-1])

softmax_w = tf.get_variable("softmax_w", [VOCAB, HIDDEN + 8], initializer=tf.glorot_uniform_initializer())
softmax_b = tf.get_variable("softmax_b", [VOCAB], initializer=tf.zeros_initializer())
sampled = tf.nn.sampled_softmax_loss(softmax_w, softmax_b, flat_targets, flat, num_sampled=10, num_classes=VOCAB,
                                     seed=7)
noise = tf.nn.log_uniform_candidate_sampler(flat_targets, 1, 10, True, VOCAB, seed=11)
nce = tf.nn.nce_loss(softmax_w, softmax_b, flat_targets, flat, num_sampled=10, num_classes=VOCAB,
                     sampled_values=noise)
train_loss = tf.reduce_sum((sampled + 0.5 * nce) * mask) / tf.reduce_sum(mask)
logits = tf.matmul(flat, softmax_w, transpose_b=True) + softmax_b
full_loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(targets, [-1]),
                                                                         logits=logits) * mask) / tf.reduce_sum(mask)
accuracy = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1), tf.reshape(targets, [-1])), tf.float32) * mask) \
    / tf.reduce_sum(mask)
params = tf.trainable_variables()
grads, norm = tf.clip_by_global_norm(tf.gradients(train_loss, params), 5.0)
train_op = tf.train.AdamOptimizer(0.03).apply_gradients(zip(grads, params))

RESULT("variables", " ".join(v.op.name for v in params))
RESULT("output_shape", [-1 if d is None else d for d in outputs.get_shape().as_list()])
RESULT("state_shapes", [[-1 if d is None else d for d in s.get_shape().as_list()] for s in
                        [state[0].c, state[0].h, state[1]]])

rng = np.random.RandomState(0)
eval_x, eval_y, eval_len = make_batch(np.random.RandomState(99))
eval_feed = {tokens: eval_x, targets: eval_y, lengths: eval_len}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    RESULT("initial_full_loss", sess.run(full_loss, eval_feed))
    RESULT("initial_sampled_loss", sess.run(train_loss, eval_feed))
    for step in range(60):
        x, y, n = make_batch(rng)
        sess.run(train_op, {tokens: x, targets: y, lengths: n})
        if step % 20 == 19:
            RESULT(f"full_loss_step{step}", sess.run(full_loss, eval_feed))
    RESULT("accuracy", sess.run(accuracy, eval_feed))
    out, last = sess.run([outputs, state[1]], eval_feed)
    RESULT("padded_outputs_are_zero", bool(np.all(out[eval_len < STEPS][:, -1] == 0)))
    RESULT("final_gru_state", last[:2])
    path = tf.train.Saver(params).save(sess, os.path.join(tempfile.mkdtemp(), "rnn"))
    saved = {name: tf.train.load_variable(path, name) for name, _ in tf.train.list_variables(path)}
    RESULT("checkpoint_keys", " ".join(sorted(saved)))
    RESULT("checkpoint_lstm_kernel_sum", saved["rnn/multi_rnn_cell/cell_0/lstm_cell/kernel"].sum())
