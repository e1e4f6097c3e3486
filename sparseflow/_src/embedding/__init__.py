"""Public names of the embedding layer (re-exported by sparseflow/embedding.py).

Dynamic embedding tables keyed by any 64-bit id (no vocabulary, no hash-bucket size), with
per-row sparse optimizers, admission, eviction, sharding, checkpoints and a serving export.

Example:
    >>> import numpy as np, sparseflow as tf
    >>> from sparseflow import embedding
    >>> with tf.Graph().as_default():
    ...     table = embedding.EmbeddingTable("ids", dim=4, optimizer=embedding.SGD(0.5), initializer=0.0)
    ...     ids = tf.placeholder(tf.int64, [None, 2])
    ...     emb = table.lookup(ids)                               # [batch, 2, 4]
    ...     loss = tf.reduce_sum(emb * tf.constant(1.0, shape=[1, 2, 4]))
    ...     train = embedding.apply_gradients(loss)
    ...     with tf.Session() as sess:
    ...         _ = sess.run(train, {ids: [[3, 2**40], [3, 5]]})
    ...         print(sess.run(emb, {ids: [[3, 5]]})[0, :, 0].tolist())
    [-1.0, -0.5]
"""

from sparseflow._src.embedding import sync_ops as _sync_ops  # noqa: F401 - registers the synchronous-training ops
from sparseflow._src.embedding.api import (
    EmbeddingTable,
    Lookup,
    apply_gradients,
    apply_lookup_gradients,
    compute_gradients,
    get_table,
    lookups,
    minimize,
    tables,
)
from sparseflow._src.embedding.checkpoint import (
    ServingExportHook,
    ServingTable,
    export_for_serving,
    load_serving,
    restore_tables,
    save_tables,
)
from sparseflow._src.embedding.config import (
    SGD,
    Adagrad,
    Adam,
    Admission,
    Eviction,
    Ftrl,
    RowwiseAdagrad,
)
from sparseflow._src.embedding.embedding_ops import STATS_FIELDS, unique_keys
from sparseflow._src.grad import embedding_grad as _embedding_grad  # noqa: F401 - until grad/__init__ imports it
from sparseflow._src.kernels import embedding_kernels as _embedding_kernels  # noqa: F401 - until kernels/__init__ does

__all__ = [
    "EmbeddingTable", "Lookup", "apply_gradients", "apply_lookup_gradients", "compute_gradients", "minimize",
    "get_table", "tables", "lookups",
    "SGD", "Adagrad", "RowwiseAdagrad", "Adam", "Ftrl", "Admission", "Eviction",
    "save_tables", "restore_tables", "export_for_serving", "load_serving", "ServingTable", "ServingExportHook",
    "unique_keys", "STATS_FIELDS",
]
