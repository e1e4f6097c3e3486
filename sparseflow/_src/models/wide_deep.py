"""Wide&Deep (Cheng et al., 2016) over dynamic embedding tables.

The wide part is a linear model: a 1-wide embedding (a weight) per key of every wide field
(categoricals, bucketized numerics, crosses) from one table trained by FTRL, summed, plus a bias.
The deep part embeds the deep fields in a second table (any key, no vocabulary), concatenates the
embeddings with the numeric features and runs them through a ReLU MLP to one logit. The two
logits add. Dense weights are ordinary variables (a ``tf.train`` optimizer); table rows are
trained by their tables' own sparse optimizers, all from one backward pass
(``sparseflow.embedding.minimize``).

Example:
    >>> import numpy as np, sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     model = WideDeep(num_wide=2, num_deep=1, num_numeric=3, embedding_dim=4, hidden_units=[8])
    ...     g = model.build()
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         feed = {g.wide: np.array([[1, 2]], np.uint64), g.deep: np.array([[7]], np.uint64),
    ...                 g.numeric: np.zeros((1, 3), np.float32), g.label: [[1.0]]}
    ...         sess.run(g.prob, feed).shape
    (1, 1)
"""

from __future__ import annotations

import dataclasses

import numpy as np

import sparseflow as tf
from sparseflow import embedding

__all__ = ["WideDeep", "ModelGraph", "make_table_optimizer", "make_dense_optimizer"]

_TABLE_OPTIMIZERS = {"sgd": embedding.SGD, "adagrad": embedding.Adagrad, "rowwise_adagrad": embedding.RowwiseAdagrad,
                     "adam": embedding.Adam, "ftrl": embedding.Ftrl}


def make_table_optimizer(spec):
    """A table optimizer from ``{"type": "ftrl", "learning_rate": ..., ...}`` (or an optimizer object)."""
    if spec is None or not isinstance(spec, dict):
        return spec
    args = dict(spec)
    kind = args.pop("type", "adagrad")
    if kind not in _TABLE_OPTIMIZERS:
        raise ValueError(f"unknown table optimizer {kind!r}; one of {sorted(_TABLE_OPTIMIZERS)}")
    return _TABLE_OPTIMIZERS[kind](**args)


def make_dense_optimizer(spec):
    """A ``tf.train`` optimizer from ``{"type": "adam", "learning_rate": ...}`` (or an optimizer object)."""
    if spec is None:
        spec = {"type": "adam", "learning_rate": 0.001}
    if not isinstance(spec, dict):
        return spec
    args = dict(spec)
    kind = args.pop("type", "adam")
    classes = {"adam": tf.train.AdamOptimizer, "adagrad": tf.train.AdagradOptimizer, "sgd":
               tf.train.GradientDescentOptimizer, "ftrl": tf.train.FtrlOptimizer,
               "momentum": tf.train.MomentumOptimizer, "rmsprop": tf.train.RMSPropOptimizer}
    if kind not in classes:
        raise ValueError(f"unknown dense optimizer {kind!r}; one of {sorted(classes)}")
    return classes[kind](**args)


@dataclasses.dataclass
class ModelGraph:
    """The tensors of a built model: inputs to feed, outputs to fetch."""

    wide: object  # uint64 [batch, num_wide] placeholder
    deep: object  # uint64 [batch, num_deep] placeholder
    numeric: object  # float32 [batch, num_numeric] placeholder
    label: object  # float32 [batch, 1] placeholder
    logits: object  # training-mode logits
    loss: object
    train_op: object
    global_step: object
    prob: object  # inference-mode probabilities (unseen keys read zeros, nothing is inserted)
    optimizer: object = None  # the dense variables' optimizer (a SyncReplicasOptimizer has a session hook)
    inference_state: list = dataclasses.field(default_factory=list)  # what serving restores (no optimizer slots)


class WideDeep:
    """See the module docstring. ``num_wide`` / ``num_deep`` fields of uint64 keys, ``num_numeric``
    floats; keys get table rows after ``admission`` sightings; optimizers are dicts
    (``{"type": "ftrl", "learning_rate": 0.1}``) or optimizer objects. New deep rows are drawn
    from a truncated normal of ``embedding_stddev`` (default ``1/sqrt(embedding_dim)``, as
    ``embedding_column``; keys unseen in training read zeros at inference, so a smaller value such
    as 0.1 keeps training inputs closer to serving inputs). ``dropout`` is the rate of hidden units
    dropped in training steps."""

    def __init__(self, num_wide, num_deep, num_numeric, embedding_dim=8, hidden_units=(128, 64),
                 wide_optimizer=None, deep_optimizer=None, dense_optimizer=None, l2=0.0, admission=1, seed=0,
                 embedding_stddev=None, dropout=0.0):
        if num_wide == 0 and num_deep == 0 and num_numeric == 0:
            raise ValueError("a model needs wide, deep or numeric features")
        self.num_wide, self.num_deep, self.num_numeric = int(num_wide), int(num_deep), int(num_numeric)
        self.embedding_dim = int(embedding_dim)
        self.hidden_units = [int(u) for u in hidden_units]
        self.wide_optimizer = make_table_optimizer(wide_optimizer or {"type": "ftrl", "learning_rate": 0.1})
        self.deep_optimizer = make_table_optimizer(deep_optimizer or {"type": "adagrad", "learning_rate": 0.05})
        self.dense_optimizer_spec = dense_optimizer
        self.l2 = float(l2)
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"dropout is the rate of hidden units dropped in training, in [0, 1), got {dropout!r}")
        self.dropout = float(dropout)
        self.admission = embedding.Admission(int(admission)) if int(admission) > 1 else None
        self.embedding_stddev = None if embedding_stddev is None else float(embedding_stddev)
        self.seed = int(seed)
        self._rng = np.random.default_rng(self.seed)

    # -- pieces -------------------------------------------------------------------------------
    def _dense(self, name, fan_in, fan_out):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        w = tf.Variable(self._rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32), name=f"{name}/kernel")
        b = tf.Variable(np.zeros(fan_out, np.float32), name=f"{name}/bias")
        return w, b

    def _make_tables(self):
        self.wide_table = embedding.EmbeddingTable("wide", dim=1, optimizer=self.wide_optimizer, initializer=0.0,
                                                   admission=self.admission, seed=self.seed) if self.num_wide else None
        self.deep_table = embedding.EmbeddingTable(
            "deep", dim=self.embedding_dim, optimizer=self.deep_optimizer,
            initializer=None if self.embedding_stddev is None else ("truncated_normal", [0.0, self.embedding_stddev]),
            admission=self.admission, seed=self.seed + 1) if self.num_deep else None

    def _make_variables(self):
        self.bias = tf.Variable(np.zeros(1, np.float32), name="bias")
        fan_in = self.num_deep * self.embedding_dim + self.num_numeric
        self.layers = []
        for i, units in enumerate(self.hidden_units):
            self.layers.append(self._dense(f"dnn/hidden_{i}", fan_in, units))
            fan_in = units
        self.out_layer = self._dense("dnn/logits", fan_in, 1) if fan_in else None

    def _mlp(self, x, training):
        for w, b in self.layers:
            x = tf.nn.relu(tf.matmul(x, w) + b)
            if training and self.dropout:
                x = tf.nn.dropout(x, rate=self.dropout)
        w, b = self.out_layer
        return tf.matmul(x, w) + b

    def _deep_input(self, emb, numeric):
        parts = []
        if emb is not None:
            parts.append(tf.reshape(emb, [-1, self.num_deep * self.embedding_dim]))
        if self.num_numeric:
            parts.append(numeric)
        return parts[0] if len(parts) == 1 else tf.concat(parts, 1)

    def logits(self, wide, deep, numeric, training):
        """``[batch, 1]`` logits; table lookups insert and record gradients only when ``training``."""
        out = self.bias
        if self.wide_table is not None:
            w = self.wide_table.lookup(wide, training=training)  # [batch, num_wide, 1]
            out = out + tf.reduce_sum(w, axis=1)
        emb = self.deep_table.lookup(deep, training=training) if self.deep_table is not None else None
        out = out + self.extra_logits(emb, wide, training)
        if self.out_layer is not None:
            out = out + self._mlp(self._deep_input(emb, numeric), training)
        return out

    def extra_logits(self, emb, wide, training):
        """Hook for subclasses (DeepFM adds its pairwise interactions here)."""
        return 0.0

    # -- the graph ----------------------------------------------------------------------------
    def build(self, wrap_optimizer=None) -> ModelGraph:
        """Placeholders, training logits/loss/train op and inference probabilities in the default graph.
        ``wrap_optimizer``: a function of the dense optimizer returning the one to train with, e.g.
        ``lambda opt: tf.train.SyncReplicasOptimizer(opt, 2, 2)`` (tables join its synchronous steps)."""
        tf.set_random_seed(self.seed)
        wide = tf.placeholder(tf.uint64, [None, self.num_wide], name="wide_keys")
        deep = tf.placeholder(tf.uint64, [None, self.num_deep], name="deep_keys")
        numeric = tf.placeholder(tf.float32, [None, self.num_numeric], name="numeric")
        label = tf.placeholder(tf.float32, [None, 1], name="label")
        self._make_tables()
        self._make_variables()
        global_step = tf.train.get_or_create_global_step()
        with tf.name_scope("train"):
            logits = self.logits(wide, deep, numeric, training=True)
            loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=label, logits=logits), name="loss")
            objective = loss
            if self.l2 and self.layers:
                objective = loss + self.l2 * tf.add_n([tf.nn.l2_loss(w) for w, _ in self.layers])
            optimizer = make_dense_optimizer(self.dense_optimizer_spec)
            if wrap_optimizer is not None:
                optimizer = wrap_optimizer(optimizer)
            train_op = embedding.minimize(objective, optimizer, global_step=global_step)
        with tf.name_scope("infer"):
            prob = tf.sigmoid(self.logits(wide, deep, numeric, training=False), name="prob")
        weights = [self.bias] + [v for layer in self.layers for v in layer] + list(self.out_layer or ())
        tables = [t for t in (self.wide_table, self.deep_table) if t is not None]
        inference_state = weights + [global_step] + [s for t in tables for s in t.saveables]
        return ModelGraph(wide, deep, numeric, label, logits, loss, train_op, global_step, prob, optimizer,
                          inference_state)
