"""``EmbeddingTable``: a dynamic, hash-keyed embedding table in a TF1 graph, and its training ops.

The sparse path of one lookup (ARCHITECTURE.md, "The sparse path, end to end")::

    ids [batch, fields] --EmbeddingUniqueKeys--> keys [U], idx [batch*fields], counts [U]
    keys --EmbeddingTablePull--> pulled [U, dim]          (rows created on first sight)
    pulled --Gather(idx)--> embeddings [batch, fields, dim] --> the model
    backward: d pulled = tf.gradients(loss, pulled)      (the gather's segment sums; any op works)
    EmbeddingTablePush(keys, d pulled) applies the table's own optimizer to exactly those rows

``pulled`` is sized by the batch (no bucket size, no capacity to tune). Every training lookup is
recorded; :func:`apply_gradients` pushes the gradients of all of them, :func:`minimize` does that
and the dense optimizer's update from one backward pass::

    table = sparseflow.embedding.EmbeddingTable("ads", dim=16,
                                                optimizer=sparseflow.embedding.Adagrad(0.05, 0.1))
    emb = table.lookup(ids)                           # [batch, fields, 16]
    loss = ...
    train_op = sparseflow.embedding.minimize(loss, tf.train.AdamOptimizer(1e-3), global_step)
    # or: tf.group(dense_opt.minimize(loss), sparseflow.embedding.apply_gradients(loss))

Tables are saved by ``tf.train.Saver()`` (they are SAVEABLE_OBJECTS; with an explicit
``var_list`` add ``table.saveables``), independently of their sharding; see checkpoint.py for the
serving export. Several tables over the same ids (a wide and a deep embedding) can share one
``unique_keys`` and gather: ``uk = unique_keys(flat_ids); rows = table.pull(uk.keys, uk.counts);
tf.gather(rows, uk.idx)``; each ``pull`` is recorded for the push all the same.

On a cluster, ``devices=["/job:ps/task:0", "/job:ps/task:1"]`` (or ``devices=None`` under
``tf.train.replica_device_setter``) shards a table over those tasks by a hash of the key. The
pulls and pushes then run on the worker as EmbeddingClusterPull / EmbeddingClusterPush ops whose
kernels send the batch's unique keys, split by owning shard, to the parameter servers (raw bytes,
one request per task for all the tables of a step: the ``coalesce`` pass merges the lookups of a
device, and :func:`apply_gradients` pushes all of them with one op); each server creates its shard
on first use and applies the table's optimizer to the rows it owns::

    with tf.device("/job:worker/task:0"):
        wide = sparseflow.embedding.EmbeddingTable("wide", 1, devices=ps_tasks)
        deep = sparseflow.embedding.EmbeddingTable("deep", 16, devices=ps_tasks)
        logits = model(wide.lookup(ids), deep.lookup(ids))   # one TablePull per ps task
        train_op = sparseflow.embedding.minimize(loss, tf.train.AdamOptimizer(1e-3), global_step)
"""

from __future__ import annotations

import contextlib
import dataclasses
import weakref
import zlib

import numpy as np

from sparseflow._src.embedding import cluster_ops as CO
from sparseflow._src.embedding import config as C
from sparseflow._src.embedding import embedding_ops as E
from sparseflow._src.embedding import sharding
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.sparse_tensor import IndexedSlices, SparseTensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.ops import array_fill_ops, array_index_ops, array_ops, core_ops, math_ops, nn_segment_ops

__all__ = ["EmbeddingTable", "Lookup", "apply_gradients", "compute_gradients", "minimize", "get_table",
           "tables", "lookups"]

_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # graph -> {name: EmbeddingTable}
_LOOKUPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # graph -> [Lookup]


@dataclasses.dataclass(frozen=True, eq=False)
class Lookup:
    """One training pull: ``values`` ([U, dim]) are the rows of ``keys`` ([U]) of part ``part`` of
    ``table`` (-1: all shards of a table sharded over tasks); ``counts``/``clicks`` (float [U] or
    [0]) go to the row counters on push."""

    table: EmbeddingTable
    part: int
    keys: object
    values: object
    counts: object
    clicks: object


def tables(graph=None) -> list:
    """The embedding tables of ``graph`` (default graph), by name."""
    g = graph or get_default_graph()
    return [t for _, t in sorted(_TABLES.get(g, {}).items())]


def get_table(name: str, graph=None):
    """The table named ``name`` in ``graph`` (default graph), or None."""
    return _TABLES.get(graph or get_default_graph(), {}).get(name)


def lookups(graph=None, tables=None) -> list:
    """The training lookups recorded in ``graph``, optionally only those of ``tables``."""
    found = list(_LOOKUPS.get(graph or get_default_graph(), []))
    if tables is not None:
        keep = {id(t) for t in tables}
        found = [lk for lk in found if id(lk.table) in keep]
    return found


class EmbeddingTable:
    """A table of ``dim`` float32s per uint64 key, created on first sight, trained by its own
    per-row ``optimizer``.

    Args:
        name: table name (resource, op and checkpoint names derive from it); unique in a graph.
        dim: floats per row.
        optimizer: ``SGD``, ``Adagrad`` (element-wise), ``RowwiseAdagrad``, ``Adam`` (per-row bias
            correction), ``Ftrl``, or a ``tf.train`` GradientDescent/Adagrad/Adam/Ftrl optimizer;
            default ``Adagrad(0.05, 0.1)``. Its learning rate may be a tensor (schedules work).
        initializer: row initializer (see ``config.initializer_attrs``); default truncated normal
            with stddev ``1/sqrt(dim)``. A row's initial value depends only on (seed, key).
        admission: ``Admission(min_count)`` or an int: rows are created after that many sightings;
            until then keys read zeros and their gradients are dropped.
        eviction: ``Eviction(max_age, min_show, every_n_steps, show_decay)``.
        num_shards: hash shards per part (each with its own lock: concurrent pull/push scale).
        devices: place the table in ``len(devices)`` parts, one per device (keys routed by a hash of
            the key); default one part on the current device. Devices that name tasks
            (``["/job:ps/task:0", "/job:ps/task:1"]``) shard the table over those tasks: the
            pulls and pushes of a step then travel as one TablePull and one TablePush per task for
            all tables (see sharding.py). With ``devices=None`` under
            ``tf.device(tf.train.replica_device_setter(...))`` the table gets one shard per ps task.
        seed: row-initializer seed (default: derived from ``name``).
        trainable: when False lookups are never recorded for push.
    """

    def __init__(self, name: str, dim: int, optimizer=None, initializer=None, admission=None, eviction=None,
                 num_shards: int = 1, devices=None, seed=None, trainable: bool = True, container: str = ""):
        if not name or not isinstance(name, str):
            raise ValueError(f"An embedding table needs a name, got {name!r}.")
        if int(dim) < 1:
            raise ValueError(f"An embedding table needs dim >= 1, got {dim}.")
        if int(num_shards) < 1:
            raise ValueError(f"num_shards must be >= 1, got {num_shards}.")
        graph = get_default_graph()
        registry = _TABLES.setdefault(graph, {})
        if name in registry:
            raise ValueError(f"An embedding table named {name!r} already exists in this graph; use "
                             f"sparseflow.embedding.get_table({name!r}) to share it.")
        self.name, self.dim, self.num_shards = name, int(dim), int(num_shards)
        self.optimizer = C.as_table_optimizer(optimizer)
        self.initializer = C.initializer_attrs(initializer, self.dim)
        if isinstance(admission, int):
            admission = C.Admission(admission)
        self.admission = admission or C.Admission()
        self.eviction = eviction or C.Eviction()
        self.seed = int(seed) if seed is not None else zlib.crc32(name.encode()) * 2654435761 % 2**62
        self.trainable = bool(trainable)
        self.container = container
        self.graph = graph
        if devices is None:
            devices = sharding.ps_devices_of_device_stack(graph)
        self.shard_devices = sharding.shard_devices(devices)  # None: parts on devices of this process
        self.devices = list(self.shard_devices or devices or [None])
        params, init_params, evict = self.optimizer.params(), self.initializer[1], self.eviction.attrs()
        if self.shard_devices:  # float32 values: GraphDef attrs and the shards' config agree exactly
            params, init_params = sharding.float32_exact(params), sharding.float32_exact(init_params)
            evict.update(zip(("evict_min_show", "show_decay"),
                             sharding.float32_exact([evict["evict_min_show"], evict["show_decay"]])))
            self.config = sharding.config_text(self)
        self.handles = []
        with graph.name_scope(None):
            for p, dev in enumerate(self.devices):
                part_name = name if len(self.devices) == 1 else f"{name}_part_{p}"
                with graph.device(dev) if dev is not None else contextlib.nullcontext():
                    self.handles.append(E.table_handle(
                        part_name, self.dim, self.optimizer.kind, params, self.initializer[0], init_params,
                        seed=self.seed, min_count=self.admission.min_count, num_shards=self.num_shards, part=p,
                        num_parts=len(self.devices), container=container, shared_name=part_name, **evict))
        registry[name] = self
        self._stats = self._export = None
        with graph.name_scope(None):
            self.stats_tensor()  # made now: sessions whose graph is finalized can still report
            self.export()
        from sparseflow._src.embedding import checkpoint
        from sparseflow._src.framework.graph import GraphKeys

        # What a Saver saves: the table (one object), or one object per shard of a table sharded over
        # tasks, so that a sharded Saver has each task write its own rows.
        self.saveables = checkpoint.table_saveables(self)
        self.saveable = self.saveables[0] if len(self.saveables) == 1 and not self.shard_devices else self.saveables
        for saveable in self.saveables:
            graph.add_to_collection(GraphKeys.SAVEABLE_OBJECTS, saveable)

    @property
    def num_parts(self) -> int:
        return len(self.handles)

    @property
    def state_width(self) -> int:
        return self.optimizer.state_floats(self.dim)

    def __repr__(self):
        where = f" on {', '.join(self.shard_devices)}" if self.shard_devices else ""
        return (f"<EmbeddingTable {self.name!r} dim={self.dim} optimizer={self.optimizer!r} parts={self.num_parts} "
                f"shards={self.num_shards}{where}>")

    # ------------------------------------------------------------------ lookups
    def lookup(self, ids, training: bool = True, labels=None, name=None):
        """The embeddings of ``ids`` (int32/int64/uint64, any shape): ``ids.shape + [dim]``.

        With ``training`` unseen keys get rows and the lookup is recorded for
        :func:`apply_gradients`; ``labels`` (one per row of ``ids``, e.g. clicks) add to the rows'
        click counters on push. Without ``training`` unseen keys read zeros and nothing is inserted.
        """
        g = get_default_graph()
        with g.name_scope(name or f"{self.name}_lookup"):
            ids = _as_keys(ids)
            flat = array_ops.reshape(ids, [-1])
            uk = E.unique_keys(flat)
            clicks = None
            if labels is not None:
                clicks = _per_key_clicks(labels, ids, uk.idx, uk.keys)
            rows = self.pull(uk.keys, uk.counts, training=training, clicks=clicks)
            emb = array_index_ops.gather(rows, uk.idx)
            out_shape = array_ops.concat([array_ops.shape(ids, out_type=dtypes.int32), [self.dim]], 0)
            out = array_ops.reshape(emb, out_shape)
            out.set_shape(ids.shape.concatenate([self.dim]))
            return out

    def lookup_sparse(self, sp_ids, sp_weights=None, combiner: str = "mean", training: bool = True, labels=None,
                      name=None):
        """Combines the embeddings of each row of the 2-D SparseTensor ``sp_ids`` (``combiner``
        sum, mean or sqrtn; ``sp_weights`` optional, same indices): ``[dense_shape[0], dim]``, zeros for
        rows without ids. ``labels`` ([batch]) add to the click counters of each row's keys."""
        if combiner not in ("sum", "mean", "sqrtn"):
            raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner!r}")
        if not isinstance(sp_ids, SparseTensor):
            raise TypeError(f"lookup_sparse takes a SparseTensor of ids, got {sp_ids!r}; use lookup() for dense ids.")
        g = get_default_graph()
        with g.name_scope(name or f"{self.name}_lookup_sparse"):
            values = _as_keys(sp_ids.values)
            uk = E.unique_keys(values)
            batch = math_ops.cast(sp_ids.dense_shape[0], dtypes.int32)
            segments = math_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
            clicks = None
            if labels is not None:
                per_id = array_index_ops.gather(math_ops.cast(array_ops.reshape(labels, [-1]), dtypes.float32),
                                                segments)
                clicks = nn_segment_ops.unsorted_segment_sum(per_id, uk.idx, array_ops.size(uk.keys))
            rows = self.pull(uk.keys, uk.counts, training=training, clicks=clicks)
            emb = array_index_ops.gather(rows, uk.idx)
            if sp_weights is not None:
                w = math_ops.cast(sp_weights.values, dtypes.float32)
                emb = emb * array_ops.expand_dims(w, 1)
            else:
                w = array_fill_ops.ones_like(segments, dtype=dtypes.float32)
            total = nn_segment_ops.unsorted_segment_sum(emb, segments, batch)
            if combiner == "sum":
                out = total
            else:
                denom = nn_segment_ops.unsorted_segment_sum(w if combiner == "mean" else w * w, segments, batch)
                if combiner == "sqrtn":
                    denom = math_ops.sqrt(denom)
                denom = math_ops.maximum(denom, 1e-12)
                out = total / array_ops.expand_dims(denom, 1)
            out.set_shape(TensorShape([None, self.dim]))
            return out

    def pull(self, keys, counts=None, training: bool = True, clicks=None, name=None):
        """The ``[U, dim]`` rows of the unique ``keys`` (the temporary matrix). ``counts`` (int32 [U],
        occurrences in the batch) drive admission and the show counters. With ``training`` (and a
        trainable table) the pull is recorded, so its gradient is pushed by :func:`apply_gradients`."""
        keys = _as_keys(keys)
        counts = _empty(dtypes.int32) if counts is None else math_ops.cast(counts, dtypes.int32)
        clicks = _empty(dtypes.float32) if clicks is None else math_ops.cast(clicks, dtypes.float32)
        g = get_default_graph()
        record = training and self.trainable
        if self.shard_devices:  # on this (the worker's) device; the kernel calls the shards' tasks
            rows = CO.cluster_pull([self.config], [keys], [counts], [self.dim], training=training,
                                   name=name or f"{self.name}_pull")[0]
            if record:
                _LOOKUPS.setdefault(g, []).append(Lookup(self, -1, keys, rows, math_ops.cast(counts, dtypes.float32),
                                                         clicks))
            return rows
        if self.num_parts == 1:
            with g.colocate_with(self.handles[0].op):
                rows = E.table_pull(self.handles[0], keys, counts, self.dim, training=training, name=name)
            if record:
                _LOOKUPS.setdefault(g, []).append(Lookup(self, 0, keys, rows, math_ops.cast(counts, dtypes.float32),
                                                         clicks))
            return rows
        with g.name_scope(name or f"{self.name}_pull"):
            n = self.num_parts
            part = E.part_index(keys, n)
            positions = array_fill_ops.range(array_ops.size(keys))
            keys_p = array_index_ops.dynamic_partition(keys, part, n)
            pos_p = array_index_ops.dynamic_partition(positions, part, n)
            counts_p = _partition_optional(counts, part, n)
            clicks_p = _partition_optional(clicks, part, n)
            rows_p = []
            for p in range(n):
                with g.colocate_with(self.handles[p].op):
                    r = E.table_pull(self.handles[p], keys_p[p], counts_p[p], self.dim, training=training)
                rows_p.append(r)
                if record:
                    _LOOKUPS.setdefault(g, []).append(
                        Lookup(self, p, keys_p[p], r, math_ops.cast(counts_p[p], dtypes.float32), clicks_p[p]))
            rows = array_index_ops.dynamic_stitch(pos_p, rows_p)
            rows.set_shape(TensorShape([keys.shape[0] if keys.shape.ndims else None, self.dim]))
            return rows

    def push(self, keys, grads, counts=None, clicks=None, learning_rate=None, part: int = 0, name=None):
        """The op applying the optimizer to the rows of ``keys`` of part ``part`` with ``grads``
        ([U, dim] Tensor or IndexedSlices); the learning rate defaults to the optimizer's."""
        g = get_default_graph()
        if self.shard_devices:  # where the caller is (the worker); the kernel calls the shards' tasks
            return CO.cluster_push([self.config], *([x] for x in self._push_inputs(keys, grads, counts, clicks,
                                                                                   learning_rate)),
                                   name=name or f"{self.name}_push")
        with g.colocate_with(self.handles[part].op):
            keys, grads, counts, clicks, lr = self._push_inputs(keys, grads, counts, clicks, learning_rate)
            return E.table_push(self.handles[part], keys, grads, counts, clicks, lr, name=name)

    def _push_inputs(self, keys, grads, counts, clicks, learning_rate):
        """(keys, float32 grads [U, dim], counts, clicks, learning rate) tensors of a push."""
        if isinstance(grads, IndexedSlices):
            grads = nn_segment_ops.unsorted_segment_sum(grads.values, grads.indices, array_ops.size(keys))
        lr = self.optimizer.learning_rate_tensor() if learning_rate is None else \
            math_ops.cast(learning_rate, dtypes.float32)
        counts = _empty(dtypes.float32) if counts is None else math_ops.cast(counts, dtypes.float32)
        clicks = _empty(dtypes.float32) if clicks is None else math_ops.cast(clicks, dtypes.float32)
        return _as_keys(keys), math_ops.cast(grads, dtypes.float32), counts, clicks, lr

    # ------------------------------------------------------------------ maintenance ops
    def evict(self, max_age=None, min_show=None, drop_candidates: bool = True, name=None):
        """An op running one eviction pass on every part (defaults: the table's ``Eviction``);
        its output is the number of rows evicted."""
        g = get_default_graph()
        counts = []
        for h in self.handles:
            with g.colocate_with(h.op):
                counts.append(E.table_evict(h, -2 if max_age is None else max_age,
                                            -1.0 if min_show is None else min_show, drop_candidates))
        return counts[0] if len(counts) == 1 else math_ops.add_n(counts, name=name)

    def stats_tensor(self):
        """A float64 vector of ``embedding_ops.STATS_FIELDS`` summed over the parts (the step and the
        stale synchronous pushes, which every part sees alike: their max)."""
        if self._stats is not None:
            return self._stats
        g = self.graph
        parts = []
        for h in self.handles:
            with g.colocate_with(h.op):
                parts.append(E.table_stats(h, name=f"{self.name}_stats"))
        if len(parts) == 1:
            self._stats = parts[0]
        else:  # counts add up over parts; the step is every part's step
            from sparseflow._src.ops import math_reduction

            stacked = array_ops.stack(parts)
            per_step = np.array([f in ("step", "stale_pushes") for f in E.STATS_FIELDS], dtype=np.float64)
            self._stats = math_ops.add(math_reduction.reduce_sum(stacked, 0) * (1.0 - per_step),
                                       math_reduction.reduce_max(stacked, 0) * per_step, name=f"{self.name}_stats")
        return self._stats

    def export(self):
        """Tensors of all rows (keys, values, state, show, click, seen; step) over all parts."""
        if self._export is not None:
            return self._export
        g = self.graph
        parts = []
        for h in self.handles:
            with g.colocate_with(h.op):
                parts.append(E.table_export(h, self.dim, self.state_width, name=f"{self.name}_export"))
        if len(parts) == 1:
            self._export = parts[0]
        else:
            with g.colocate_with(self.handles[0].op):
                cat = [array_ops.concat([p[i] for p in parts], 0) for i in range(6)]
            self._export = E.TableExport(*cat, parts[0].step)
        return self._export

    # ------------------------------------------------------------------ through a session
    def resources(self, sess) -> list:
        """The runtime tables (``EmbeddingTableResource``, one per part) of this table in ``sess``:
        ``memory_bytes()``, ``bytes_per_key()``, ``size()``, ``stats()``, ``export()``, ``shrink_to_fit()``."""
        sess.run(self.stats_tensor())  # creates the resources if needed
        from sparseflow._src.framework import errors

        while not hasattr(sess, "devices") and getattr(sess, "_sess", None) is not None:
            sess = sess._sess  # a MonitoredSession's layers of wrappers: down to the tf.Session

        out = []
        for p in range(self.num_parts):
            name = self.handles[p].op.get_attr("shared_name")
            name = name.decode() if isinstance(name, bytes) else name
            found = None
            for dev in sess.devices.names:
                try:
                    found = sess.devices.resources(dev).lookup(self.container, name)
                    break
                except errors.NotFoundError:
                    continue
            if found is None:
                raise RuntimeError(f"Embedding table {self.name!r} part {p} is not in this session.")
            out.append(found)
        return out

    def stats(self, sess) -> dict:
        """``{field: value}`` of ``embedding_ops.STATS_FIELDS`` (plus ``bytes_per_key``), summed over parts."""
        v = sess.run(self.stats_tensor())
        s = {k: float(x) for k, x in zip(E.STATS_FIELDS, v)}
        s["bytes_per_key"] = s["memory_bytes"] / s["keys"] if s["keys"] else float("nan")
        s["raw_bytes_per_key"] = 8 + 4 * (self.dim + self.state_width)
        return s

    def memory_bytes(self, sess) -> int:
        return int(self.stats(sess)["memory_bytes"])

    def bytes_per_key(self, sess) -> float:
        return self.stats(sess)["bytes_per_key"]


# ---------------------------------------------------------------------------- helpers
def _as_keys(ids):
    ids = convert_to_tensor(ids)
    if ids.dtype.base_dtype in (dtypes.int64, dtypes.uint64):
        return ids
    if ids.dtype.base_dtype.is_integer:
        return math_ops.cast(ids, dtypes.int64)
    raise TypeError(f"Embedding-table keys must be integers (int32, int64, uint64), got {ids.dtype.name}: hash "
                    f"strings first (tf.strings.to_hash_bucket_fast or a hashing feature column).")


def _empty(dtype):
    return convert_to_tensor(np.zeros(0, dtype=dtype.as_numpy_dtype))


def _partition_optional(t, part, n):
    """Partitions ``t`` like the keys, unless it is the empty "not given" vector."""
    if t.shape.ndims == 1 and t.shape[0] == 0:
        return [t] * n
    return array_index_ops.dynamic_partition(t, part, n)


def _per_key_clicks(labels, ids, idx, ukeys):
    """The sum of the labels of each unique key's occurrences (labels: one per row of ``ids``)."""
    labels = math_ops.cast(convert_to_tensor(labels), dtypes.float32)
    rank = ids.shape.ndims
    if rank is None:
        raise ValueError("lookup(labels=...) needs ids of known rank.")
    if rank > 1:
        labels = array_ops.reshape(labels, [-1] + [1] * (rank - 1))
        labels = array_ops.broadcast_to(labels, array_ops.shape(ids))
    flat = array_ops.reshape(labels, [-1])
    return nn_segment_ops.unsorted_segment_sum(flat, idx, array_ops.size(ukeys))


def compute_gradients(loss, tables=None, extra_xs=(), grad_loss=None, **gradients_kwargs):
    """``([(grad, Lookup)], [grad of each extra_xs])`` from one ``tf.gradients`` call (extra keyword
    arguments go to it: ``aggregation_method``, ``colocate_gradients_with_ops``, ``gate_gradients``).
    Lookups whose pulled rows do not reach ``loss`` are left out."""
    from sparseflow._src.grad.gradients_impl import gradients

    found = lookups(get_default_graph(), tables)
    xs = [lk.values for lk in found] + list(extra_xs)
    if not xs:
        return [], []
    grads = gradients(loss, xs, grad_ys=grad_loss, **gradients_kwargs)
    pairs = [(g, lk) for g, lk in zip(grads[:len(found)], found) if g is not None]
    return pairs, list(grads[len(found):])


def apply_lookup_gradients(grads_and_lookups, name=None, staleness=0):
    """One op pushing each (gradient, Lookup) pair to its table part. The lookups of tables
    sharded over tasks are pushed by one EmbeddingClusterPush per device that pulled them (one
    TablePush per task for all those tables); with ``staleness`` k > 0 such a push does not wait
    to be applied, only for its run of k steps before (bounded staleness, cluster_ops.py)."""
    pushes, sharded = [], {}
    for g, lk in grads_and_lookups:
        if lk.table.shard_devices:
            sharded.setdefault(lk.values.op.device, []).append((g, lk))
        else:
            pushes.append(lk.table.push(lk.keys, g, lk.counts, lk.clicks, part=lk.part))
    graph = get_default_graph()
    for group in sharded.values():
        with graph.colocate_with(group[0][1].values.op), graph.name_scope("embedding_cluster_push"):
            inputs = [lk.table._push_inputs(lk.keys, g, lk.counts, lk.clicks, None) for g, lk in group]
            pushes.append(CO.cluster_push([lk.table.config for _, lk in group], *map(list, zip(*inputs)),
                                          staleness=staleness))
    return core_ops.group(*pushes, name=name or "embedding_push")


def apply_gradients(loss, tables=None, name=None, optimizer=None, global_step=None):
    """An op pushing d``loss``/d(pulled rows) of every training lookup (of ``tables``, default all) to
    the tables. Use beside the dense optimizer:
    ``tf.group(dense_opt.minimize(loss), sparseflow.embedding.apply_gradients(loss))``.

    With ``optimizer`` a ``tf.train.SyncReplicasOptimizer`` (and ``global_step``) the rows are
    trained synchronously instead: the op is that optimizer's worker train op for the tables alone
    (a model whose dense variables are trained too uses :func:`minimize`, one synchronous step for
    both; see sync.py)."""
    from sparseflow._src.embedding import sync

    if optimizer is not None and not sync.trains_tables_synchronously(optimizer):
        raise TypeError(f"apply_gradients(optimizer=...) takes a tf.train.SyncReplicasOptimizer (tables trained in "
                        f"its synchronous steps), got {optimizer!r}; tables train with their own optimizers, dense "
                        f"variables with sparseflow.embedding.minimize(loss, optimizer).")
    pairs, _ = compute_gradients(loss, tables)
    if not pairs:
        raise ValueError(f"No embedding lookup of {'the given tables' if tables else 'this graph'} reaches the loss "
                         f"{loss}: nothing to push.")
    if optimizer is not None:
        return optimizer.apply_gradients_with_tables([], pairs, global_step=global_step, name=name)
    return apply_lookup_gradients(pairs, name=name)


def minimize(loss, optimizer=None, global_step=None, var_list=None, tables=None, name=None, grad_loss=None,
             aggregation_method=None, colocate_gradients_with_ops=False):
    """One training op from one backward pass: ``optimizer`` (a ``tf.train`` optimizer) updates the
    dense ``var_list`` (default: trainable variables) and every table (default: all with training
    lookups in the graph) gets its rows' gradients. ``global_step`` is incremented once (after the
    dense update when there is one). The other arguments are ``Optimizer.minimize``'s.

    With a ``tf.train.SyncReplicasOptimizer`` the tables take part in its synchronous steps: each
    worker's row gradients are accumulated by key on the table part owning them, and the chief
    applies their average once per global step (with each table's own optimizer), before it
    releases the workers' tokens; stale and backup workers' pushes are dropped (see sync.py)."""
    from sparseflow._src.embedding import sync
    from sparseflow._src.ops.variables import trainable_variables

    g = get_default_graph()
    dense = [] if optimizer is None else (list(var_list) if var_list is not None else trainable_variables())
    pairs, dense_grads = compute_gradients(loss, tables, extra_xs=[v._ref() for v in dense], grad_loss=grad_loss,
                                           aggregation_method=aggregation_method,
                                           colocate_gradients_with_ops=colocate_gradients_with_ops)
    gv = [(gr, v) for gr, v in zip(dense_grads, dense) if gr is not None]
    if sync.trains_tables_synchronously(optimizer) and (pairs or gv):
        return optimizer.apply_gradients_with_tables(gv, pairs, global_step=global_step,
                                                     name=name or "embedding_minimize")
    ops = []
    if pairs:
        ops.append(apply_lookup_gradients(pairs))
    if gv:
        ops.append(optimizer.apply_gradients(gv, global_step=global_step))
    elif global_step is not None:
        from sparseflow._src.ops import state_ops

        with g.control_dependencies(ops):
            ops = [state_ops.assign_add(global_step, 1).op]
    if not ops:
        raise ValueError(f"No gradients for any embedding table or variable from loss {loss}.")
    return core_ops.group(*ops, name=name or "embedding_minimize")
