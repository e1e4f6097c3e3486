"""Graph ops of embedding tables sharded over tasks (parameter servers).

=========================  ==================================================================
op                         meaning
=========================  ==================================================================
EmbeddingClusterPull       ``keys_i [U_i] -> values_i [U_i, dim_i]`` for N tables at once: the
                           kernel splits each table's keys by owning shard (a hash of the key)
                           and sends one TablePull per task holding shards
EmbeddingClusterPush       applies ``grads_i`` to the rows of ``keys_i`` of N tables: one
                           TablePush per task; each shard runs its table's optimizer. With
                           ``staleness`` k > 0 the op returns once its requests are sent: at
                           most k of its runs are in flight (the oldest is waited for first)
=========================  ==================================================================

Both run on the worker (where the lookup is made), never on the parameter servers: keys, rows and
gradients cross the wire once, inside the RPCs. Each table is described by its config
(``tables``: ``EmbeddingTableConfig`` protos in text format, framework/proto/embedding_table.proto),
which the shards use to create themselves on first use. The ``coalesce`` graph pass merges the
independent pulls (and pushes) of one device into one op, so a step sends one pull and one push per
parameter server for all its tables. Neither op is differentiable: the gradient of a pulled matrix
is taken with respect to it (``tf.gradients(loss, values)``) and pushed.

Example:
    >>> from sparseflow._src.framework.op_def import get_op_def
    >>> [a.name for a in get_op_def("EmbeddingClusterPull").input_args]
    ['keys', 'counts']
"""

from __future__ import annotations

from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_shape import TensorShape

__all__ = ["cluster_pull", "cluster_push"]


def _dim0(t):
    return t.shape[0] if t.shape.ndims else None


def _pull_shapes(op):
    n = op._attrs["N"]
    return [TensorShape([_dim0(op.inputs[i]), d]) for i, d in zip(range(n), op._attrs["dims"])]


register_op("EmbeddingClusterPull", inputs=["keys: Tkeys", "counts: N * int32"], outputs=["values: N * float"],
            attrs=["N: int >= 1", "Tkeys: list({int64, uint64})", "tables: list(string)", "dims: list(int)",
                   "training: list(bool)"],
            shape_fn=_pull_shapes, is_stateful=True, coalescable=True)
register_op("EmbeddingClusterPush", inputs=["keys: Tkeys", "grads: N * float", "counts: N * float",
                                            "clicks: N * float", "learning_rates: N * float"],
            outputs=[], attrs=["N: int >= 1", "Tkeys: list({int64, uint64})", "tables: list(string)",
                               "staleness: int = 0"],
            shape_fn=lambda op: [], is_stateful=True, coalescable=True)
# coalescable: the independent pulls (pushes) of a step on one device become one op, so a step
# sends one request per task (passes/coalesce.py).


def cluster_pull(configs, keys, counts, dims, training=True, name=None):
    """``[U_i, dim_i]`` rows of the unique ``keys[i]`` of table ``configs[i]`` (text-format
    ``EmbeddingTableConfig``); ``counts[i]`` (int32 [U_i] or [0]) feed admission; a ``training``
    pull inserts unseen keys."""
    attrs = {"Tkeys": [k.dtype.base_dtype for k in keys], "tables": list(configs), "dims": [int(d) for d in dims],
             "training": [bool(training)] * len(keys)}
    return apply_op("EmbeddingClusterPull", [list(keys), list(counts)], attrs,
                    name=name or "EmbeddingClusterPull").outputs


def cluster_push(configs, keys, grads, counts, clicks, learning_rates, staleness=0, name=None):
    """Applies each table's optimizer to the rows of ``keys[i]`` with ``grads[i]`` ([U_i, dim_i]);
    ``counts[i]``/``clicks[i]`` are float [U_i] or [0]. ``staleness`` > 0: the op does not wait for
    its pushes to be applied, only for those of its run ``staleness`` runs ago (bounded staleness;
    ``kernels.embedding_cluster.flush_pending_pushes`` waits for the rest)."""
    if int(staleness) < 0:
        raise ValueError(f"staleness must be >= 0 (0: wait for the push), got {staleness}.")
    attrs = {"Tkeys": [k.dtype.base_dtype for k in keys], "tables": list(configs), "staleness": int(staleness)}
    return apply_op("EmbeddingClusterPush", [list(keys), list(grads), list(counts), list(clicks),
                                             list(learning_rates)], attrs, name=name or "EmbeddingClusterPush")
