"""The table half of a synchronous training step (``tf.train.SyncReplicasOptimizer``).

``sparseflow.embedding.minimize(loss, tf.train.SyncReplicasOptimizer(opt, N, M), global_step)``
trains the rows of every table like the dense variables: the optimizer builds a
:class:`TableSyncStep` from the step's (gradient, Lookup) pairs and uses its three ops:

- ``accumulate(local_step)`` — in each worker's train op, before it waits for its token: one push
  per table part (the lookups of a part are concatenated into one), tagged with the worker's local
  step, summed by key on the part that owns the keys (for tables sharded over parameter servers,
  one ``TableAccumulate`` per ps for all tables);
- ``apply(num_required)`` — in the chief's synchronous update, before the tokens are released:
  waits for ``num_required`` pushes on every part and applies their average once with the table's
  own optimizer (learning rate: the chief's);
- ``set_global_step(global_step)`` — in the chief's init op: stale pushes are those computed at an
  earlier step.

An optimizer opts in by having ``apply_gradients_with_tables(grads_and_vars, grads_and_lookups,
global_step=None, name=None)``; the embedding layer never imports the training layer.

Example:
    >>> import sparseflow as tf
    >>> from sparseflow import embedding
    >>> with tf.Graph().as_default():
    ...     table = embedding.EmbeddingTable("s", dim=2, optimizer=embedding.SGD(1.0), initializer=0.0)
    ...     loss = tf.reduce_sum(table.lookup(tf.constant([3, 4], tf.int64)))
    ...     pairs, _ = embedding.compute_gradients(loss)
    ...     step = TableSyncStep(pairs)
    ...     ops = [step.accumulate(0).type, step.apply(2).type, step.set_global_step(0).type]
    >>> ops
    ['EmbeddingTableAccumulate', 'EmbeddingTableApplyAccumulated', 'EmbeddingTableSetSyncStep']
"""

from __future__ import annotations

from sparseflow._src.embedding import sync_ops
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.ops import array_fill_ops, array_join_ops, array_ops, core_ops, math_ops, nn_segment_ops

__all__ = ["TableSyncStep", "trains_tables_synchronously"]


def trains_tables_synchronously(optimizer) -> bool:
    """Whether ``optimizer`` takes table gradients into its own (synchronous) step."""
    return callable(getattr(optimizer, "apply_gradients_with_tables", None))


def _is_empty(t) -> bool:
    return t.shape.ndims == 1 and t.shape[0] == 0


class _Push:
    """The one push of a table part (or of a table sharded over tasks) per worker step."""

    def __init__(self, table, part, pairs):
        self.table, self.part = table, part
        keys, grads, counts, clicks = [], [], [], []
        for g, lk in pairs:
            if isinstance(g, IndexedSlices):
                g = nn_segment_ops.unsorted_segment_sum(g.values, g.indices, array_ops.size(lk.keys))
            keys.append(lk.keys)
            grads.append(math_ops.cast(g, dtypes.float32))
            counts.append(lk.counts)
            clicks.append(lk.clicks)
        self.anchor = pairs[0][1].values.op  # where the table's lookup ran (the worker, when sharded)
        if len(pairs) == 1:
            self.keys, self.grads, self.counts, self.clicks = keys[0], grads[0], counts[0], clicks[0]
            return
        if len({k.dtype.base_dtype for k in keys}) > 1:  # int64 and uint64 keys: same bits, one dtype
            keys = [math_ops.cast(k, dtypes.int64) for k in keys]
        self.keys = array_join_ops.concat(keys, 0)
        self.grads = array_join_ops.concat(grads, 0)
        self.counts = _concat_counters(counts, keys, 1.0)
        self.clicks = _concat_counters(clicks, keys, 0.0)


def _concat_counters(values, keys, fill):
    """The per-key counters of several lookups in one vector (``fill`` where a lookup has none)."""
    if all(_is_empty(v) for v in values):
        return values[0]
    return array_join_ops.concat([array_fill_ops.fill(array_ops.shape(k), fill) if _is_empty(v) else v
                                  for v, k in zip(values, keys)], 0)


class TableSyncStep:
    """The accumulate, apply and set-step ops of the tables of ``grads_and_lookups`` (see the module
    docstring). Every table part gets one push per worker step, even when its keys are empty."""

    def __init__(self, grads_and_lookups):
        groups: dict = {}
        for g, lk in grads_and_lookups:
            key = (lk.table.name, -1 if lk.table.shard_devices else lk.part)
            groups.setdefault(key, (lk.table, lk.part, []))[2].append((g, lk))
        if not groups:
            raise ValueError("A synchronous table step needs the gradient of at least one table lookup.")
        self._graph = get_default_graph()
        with self._graph.name_scope("embedding_sync_push"):
            pushes = [_Push(table, part, pairs) for table, part, pairs in groups.values()]
        self._local = [p for p in pushes if not p.table.shard_devices]
        self._sharded = [p for p in pushes if p.table.shard_devices]

    @property
    def tables(self) -> list:
        """The tables (one entry per table) whose rows the step trains."""
        return list({id(p.table): p.table for p in self._local + self._sharded}.values())

    def _ops(self, local_op, sharded_op):
        """One op (a group when several) of ``local_op(push)`` per local table part, colocated with the
        part, and one ``sharded_op(pushes)`` for the tables sharded over tasks, where they are looked up."""
        g = self._graph
        ops = []
        for p in self._local:
            with g.colocate_with(p.table.handles[p.part].op):
                ops.append(local_op(p))
        if self._sharded:
            with g.colocate_with(self._sharded[0].anchor):
                ops.append(sharded_op(self._sharded))
        return ops[0] if len(ops) == 1 else core_ops.group(*ops)

    def accumulate(self, local_step, name="embedding_sync_accumulate"):
        """One op adding this worker's row gradients, computed at ``local_step``, to every table part."""
        with self._graph.name_scope(name):
            step = math_ops.cast(convert_to_tensor(local_step), dtypes.int64)
            return self._ops(
                lambda p: sync_ops.table_accumulate(p.table.handles[p.part], step, p.keys, p.grads, p.counts,
                                                    p.clicks),
                lambda ps: sync_ops.cluster_accumulate([p.table.config for p in ps], [p.keys for p in ps],
                                                       [p.grads for p in ps], [p.counts for p in ps],
                                                       [p.clicks for p in ps], [step] * len(ps)))

    def apply(self, num_required, name="embedding_sync_apply"):
        """The chief's op: waits for ``num_required`` pushes on every table part, applies their average
        with each table's learning rate."""
        with self._graph.name_scope(name):
            required = convert_to_tensor(int(num_required), dtypes.int32)
            rates = {id(p): p.table.optimizer.learning_rate_tensor() for p in self._local + self._sharded}
            return self._ops(
                lambda p: sync_ops.table_apply_accumulated(p.table.handles[p.part], required, rates[id(p)]),
                lambda ps: sync_ops.cluster_apply_accumulated([p.table.config for p in ps], [required] * len(ps),
                                                              [rates[id(p)] for p in ps]))

    def set_global_step(self, global_step, name="embedding_sync_set_step"):
        """The chief's init op: every table part's synchronous step becomes ``global_step``."""
        with self._graph.name_scope(name):
            step = math_ops.cast(convert_to_tensor(global_step), dtypes.int64)
            return self._ops(lambda p: sync_ops.table_set_sync_step(p.table.handles[p.part], step),
                             lambda ps: sync_ops.cluster_set_sync_step([p.table.config for p in ps],
                                                                       [step] * len(ps)))
