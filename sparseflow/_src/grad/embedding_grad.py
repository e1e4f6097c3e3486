"""Gradients of the embedding-table ops: none of them is differentiable.

A pulled matrix is a leaf of autodiff: ``tf.gradients(loss, pulled)`` gives its gradient (the
segment sums of the gather that expands it to the batch), and ``EmbeddingTablePush`` applies that
gradient to the table (see sparseflow/_src/embedding/api.py). Keys, handles, counters and stats
carry no gradient. The same holds for tables sharded over tasks (EmbeddingClusterPull / Push) and
for the ops of synchronous training (accumulate, apply, set step), which move gradients only.
"""

from sparseflow._src.grad.registry import NotDifferentiable

for _op_type in ("EmbeddingHashTable", "EmbeddingTablePull", "EmbeddingTablePush", "EmbeddingTableExport",
                 "EmbeddingTableImport", "EmbeddingTableRestore", "EmbeddingTableEvict", "EmbeddingTableStats",
                 "EmbeddingUniqueKeys", "EmbeddingPartIndex", "EmbeddingClusterPull", "EmbeddingClusterPush",
                 "EmbeddingTableAccumulate", "EmbeddingTableApplyAccumulated", "EmbeddingTableSetSyncStep",
                 "EmbeddingClusterAccumulate", "EmbeddingClusterApplyAccumulated", "EmbeddingClusterSetSyncStep"):
    NotDifferentiable(_op_type)
