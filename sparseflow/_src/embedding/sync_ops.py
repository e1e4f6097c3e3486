"""Graph ops of synchronous table training (definitions and thin wrappers); see sync.py for how
``tf.train.SyncReplicasOptimizer`` uses them and kernels/embedding_sync.py for the semantics.

==============================  =============================================================
op                              meaning
==============================  =============================================================
EmbeddingTableAccumulate        adds a worker's row gradients (computed at ``local_step``) to
                                the accumulator of a table part; a stale push is dropped
EmbeddingTableApplyAccumulated  waits for ``num_required`` pushes, applies their average once
                                with the table's optimizer, advances the part's sync step
EmbeddingTableSetSyncStep       sets the part's sync step (the chief's init)
EmbeddingClusterAccumulate      the same for N tables sharded over tasks: one TableAccumulate
                                per task holding shards
EmbeddingClusterApplyAccumulated  one TableApplyAccumulated per task (every shard of N tables)
EmbeddingClusterSetSyncStep     one TableSetSyncStep per task (every shard of N tables)
==============================  =============================================================

The cluster ops run on the worker that builds them (their kernels call the parameter servers);
``coalesce`` merges the independent ones of a device, like the cluster pull and push. None of
them is differentiable.

Example:
    >>> from sparseflow._src.framework.op_def import get_op_def
    >>> [a.name for a in get_op_def("EmbeddingTableAccumulate").input_args]
    ['table_handle', 'local_step', 'keys', 'grads', 'counts', 'clicks']
    >>> get_op_def("EmbeddingClusterApplyAccumulated").coalescable
    True
"""

from __future__ import annotations

from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op

__all__ = ["table_accumulate", "table_apply_accumulated", "table_set_sync_step", "cluster_accumulate",
           "cluster_apply_accumulated", "cluster_set_sync_step"]


def _none(op):
    return []


register_op("EmbeddingTableAccumulate",
            inputs=["table_handle: resource", "local_step: int64", "keys: Tkeys", "grads: float", "counts: float",
                    "clicks: float"], outputs=[], attrs=["Tkeys: {int64, uint64}"], shape_fn=_none, is_stateful=True)
register_op("EmbeddingTableApplyAccumulated",
            inputs=["table_handle: resource", "num_required: int32", "learning_rate: float"], outputs=[],
            shape_fn=_none, is_stateful=True)
register_op("EmbeddingTableSetSyncStep", inputs=["table_handle: resource", "global_step: int64"], outputs=[],
            shape_fn=_none, is_stateful=True)
register_op("EmbeddingClusterAccumulate",
            inputs=["keys: Tkeys", "grads: N * float", "counts: N * float", "clicks: N * float",
                    "local_steps: N * int64"], outputs=[],
            attrs=["N: int >= 1", "Tkeys: list({int64, uint64})", "tables: list(string)"], shape_fn=_none,
            is_stateful=True, coalescable=True)
register_op("EmbeddingClusterApplyAccumulated", inputs=["num_required: N * int32", "learning_rates: N * float"],
            outputs=[], attrs=["N: int >= 1", "tables: list(string)"], shape_fn=_none, is_stateful=True,
            coalescable=True)
register_op("EmbeddingClusterSetSyncStep", inputs=["global_steps: N * int64"], outputs=[],
            attrs=["N: int >= 1", "tables: list(string)"], shape_fn=_none, is_stateful=True, coalescable=True)


def table_accumulate(handle, local_step, keys, grads, counts, clicks, name=None):
    """Adds the gradients ``grads`` ([U, dim]) of ``keys`` computed at ``local_step`` to the part's
    synchronous step (``counts``/``clicks``: float [U] or [0])."""
    return apply_op("EmbeddingTableAccumulate", [handle, local_step, keys, grads, counts, clicks],
                    name=name or "EmbeddingTableAccumulate")


def table_apply_accumulated(handle, num_required, learning_rate, name=None):
    """Waits for ``num_required`` pushes and applies their average with ``learning_rate``."""
    return apply_op("EmbeddingTableApplyAccumulated", [handle, num_required, learning_rate],
                    name=name or "EmbeddingTableApplyAccumulated")


def table_set_sync_step(handle, global_step, name=None):
    return apply_op("EmbeddingTableSetSyncStep", [handle, global_step], name=name or "EmbeddingTableSetSyncStep")


def cluster_accumulate(configs, keys, grads, counts, clicks, local_steps, name=None):
    """``table_accumulate`` for the tables ``configs`` (text-format ``EmbeddingTableConfig``s)
    sharded over tasks: each table's keys go to their owning shards."""
    attrs = {"Tkeys": [k.dtype.base_dtype for k in keys], "tables": list(configs)}
    return apply_op("EmbeddingClusterAccumulate", [list(keys), list(grads), list(counts), list(clicks),
                                                   list(local_steps)], attrs, name=name or "EmbeddingClusterAccumulate")


def cluster_apply_accumulated(configs, num_required, learning_rates, name=None):
    """``table_apply_accumulated`` on every shard of the tables ``configs``."""
    return apply_op("EmbeddingClusterApplyAccumulated", [list(num_required), list(learning_rates)],
                    {"tables": list(configs)}, name=name or "EmbeddingClusterApplyAccumulated")


def cluster_set_sync_step(configs, global_steps, name=None):
    """``table_set_sync_step`` on every shard of the tables ``configs``."""
    return apply_op("EmbeddingClusterSetSyncStep", [list(global_steps)], {"tables": list(configs)},
                    name=name or "EmbeddingClusterSetSyncStep")
