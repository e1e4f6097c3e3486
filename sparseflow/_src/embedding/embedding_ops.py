"""Graph ops of the embedding tables (definitions and thin wrappers).

=========================  ==================================================================
op                         meaning
=========================  ==================================================================
EmbeddingHashTable         the table resource (one part of a table) on its device: handle
EmbeddingTablePull         ``keys [U] -> values [U, dim]``; inserts unseen keys when training
EmbeddingTablePush         applies the table optimizer to the rows of ``keys`` with ``grads``
EmbeddingTableExport       all rows, sorted by key (for checkpoints and serving)
EmbeddingTableImport       replaces the rows with those of this part among the given keys
EmbeddingTableRestore      replaces the rows with those of this part in a checkpoint (any layout)
EmbeddingTableEvict        one eviction pass; returns the number of rows evicted
EmbeddingTableStats        float64 vector, see STATS_FIELDS
EmbeddingUniqueKeys        ``keys [N] -> (unique [U] (first-appearance order), idx [N], counts [U])``
EmbeddingPartIndex         the part (device) of each key of a table split in ``num_parts``
=========================  ==================================================================

Keys are int64 or uint64 (int64 keys are their uint64 bit patterns: any 64-bit value is a key).
All table ops are stateful (never merged, folded or pruned away as duplicates); none is
differentiable: the gradient of a pulled matrix is taken *with respect to* that matrix
(``tf.gradients(loss, values)``) and pushed (see api.py).
"""

from __future__ import annotations

import collections

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_shape import TensorShape

__all__ = ["table_handle", "table_pull", "table_push", "table_export", "table_import", "table_restore", "table_evict",
           "table_stats", "unique_keys", "part_index", "STATS_FIELDS"]

STATS_FIELDS = ("keys", "candidates", "memory_bytes", "step", "dropped_gradients", "evicted", "admitted",
                "capacity", "row_capacity", "stale_pushes")

_SCALAR = TensorShape([])
_VEC = TensorShape([None])


def _dim0(t):
    return t.shape[0] if t.shape.ndims else None


register_op("EmbeddingHashTable", outputs=["table_handle: resource"],
            attrs=["container: string = ''", "shared_name: string = ''", "dim: int >= 1",
                   "optimizer: string = 'adagrad'", "optimizer_params: list(float) = []",
                   "initializer: string = 'truncated_normal'", "initializer_params: list(float) = []",
                   "seed: int = 0", "min_count: int = 1", "evict_max_age: int = -1", "evict_min_show: float = 0",
                   "evict_every_n_steps: int = 0", "show_decay: float = 1", "num_shards: int = 1",
                   "part: int = 0", "num_parts: int = 1"],
            shape_fn=lambda op: [_SCALAR], is_stateful=True)
register_op("EmbeddingTablePull", inputs=["table_handle: resource", "keys: Tkeys", "counts: int32"],
            outputs=["values: float"], attrs=["Tkeys: {int64, uint64}", "dim: int >= 1", "training: bool = true"],
            shape_fn=lambda op: [TensorShape([_dim0(op.inputs[1]), op._attrs["dim"]])], is_stateful=True)
register_op("EmbeddingTablePush", inputs=["table_handle: resource", "keys: Tkeys", "grads: float", "counts: float",
                                          "clicks: float", "learning_rate: float"],
            outputs=[], attrs=["Tkeys: {int64, uint64}"], shape_fn=lambda op: [], is_stateful=True)
register_op("EmbeddingTableExport", inputs=["table_handle: resource"],
            outputs=["keys: uint64", "values: float", "state: float", "show: float", "click: float",
                     "seen: int64", "step: int64"], attrs=["dim: int >= 1", "state_width: int >= 0"],
            shape_fn=lambda op: [_VEC, TensorShape([None, op._attrs["dim"]]),
                                 TensorShape([None, op._attrs["state_width"]]), _VEC, _VEC, _VEC, _SCALAR],
            is_stateful=True)
register_op("EmbeddingTableImport", inputs=["table_handle: resource", "keys: uint64", "values: float", "state: float",
                                            "show: float", "click: float", "seen: int64", "step: int64",
                                            "optimizer: string"],
            outputs=[], attrs=["validate_only: bool = false"], shape_fn=lambda op: [], is_stateful=True)
register_op("EmbeddingTableRestore", inputs=["table_handle: resource", "prefix: string"], outputs=[],
            attrs=["table_name: string", "validate_only: bool = false"], shape_fn=lambda op: [], is_stateful=True)
register_op("EmbeddingTableEvict", inputs=["table_handle: resource", "max_age: int64", "min_show: float"],
            outputs=["num_evicted: int64"], attrs=["drop_candidates: bool = true"],
            shape_fn=lambda op: [_SCALAR], is_stateful=True)
register_op("EmbeddingTableStats", inputs=["table_handle: resource"], outputs=["stats: double"],
            shape_fn=lambda op: [TensorShape([len(STATS_FIELDS)])], is_stateful=True)
register_op("EmbeddingUniqueKeys", inputs=["keys: T"], outputs=["unique_keys: T", "idx: int32", "counts: int32"],
            attrs=["T: {int32, int64, uint64}"],
            shape_fn=lambda op: [_VEC, TensorShape([_dim0(op.inputs[0])]), _VEC])
register_op("EmbeddingPartIndex", inputs=["keys: T"], outputs=["part: int32"],
            attrs=["T: {int64, uint64}", "num_parts: int >= 1"],
            shape_fn=lambda op: [TensorShape([_dim0(op.inputs[0])])])


def table_handle(name, dim, optimizer, optimizer_params, initializer, initializer_params, seed=0, min_count=1,
                 evict_max_age=-1, evict_min_show=0.0, evict_every_n_steps=0, show_decay=1.0, num_shards=1,
                 part=0, num_parts=1, container="", shared_name=None):
    """The handle of one part of a table (resource ``shared_name`` in ``container`` on its device)."""
    attrs = {"container": container, "shared_name": shared_name or name, "dim": int(dim), "optimizer": optimizer,
             "optimizer_params": [float(x) for x in optimizer_params], "initializer": initializer,
             "initializer_params": [float(x) for x in initializer_params], "seed": int(seed),
             "min_count": int(min_count), "evict_max_age": int(evict_max_age),
             "evict_min_show": float(evict_min_show), "evict_every_n_steps": int(evict_every_n_steps),
             "show_decay": float(show_decay), "num_shards": int(num_shards), "part": int(part),
             "num_parts": int(num_parts)}
    return apply_op("EmbeddingHashTable", [], attrs, name=name).outputs[0]


def table_pull(handle, keys, counts, dim, training=True, name=None):
    """``[U, dim]`` rows of the (unique) ``keys``; ``counts`` (int32 [U] or [0]) feed admission."""
    return apply_op("EmbeddingTablePull", [handle, keys, counts], {"dim": int(dim), "training": bool(training)},
                    name=name or "EmbeddingTablePull").outputs[0]


def table_push(handle, keys, grads, counts, clicks, learning_rate, name=None):
    """Applies the optimizer to the rows of ``keys`` (``counts``/``clicks`` float [U] or [0])."""
    return apply_op("EmbeddingTablePush", [handle, keys, grads, counts, clicks, learning_rate],
                    name=name or "EmbeddingTablePush")


TableExport = collections.namedtuple("TableExport", ["keys", "values", "state", "show", "click", "seen", "step"])


def table_export(handle, dim, state_width, name=None):
    op = apply_op("EmbeddingTableExport", [handle], {"dim": int(dim), "state_width": int(state_width)},
                  name=name or "EmbeddingTableExport")
    return TableExport(*op.outputs)


def table_import(handle, keys, values, state, show, click, seen, step, optimizer, validate_only=False, name=None):
    """Replaces the rows of the part with those of its keys among ``keys``; ``optimizer`` (the kind
    the checkpoint was saved with) must be the table's. ``validate_only``: only the checks, no change."""
    attrs = {"validate_only": True} if validate_only else {}
    return apply_op("EmbeddingTableImport", [handle, keys, values, state, show, click, seen, step, optimizer], attrs,
                    name=name or "EmbeddingTableImport")


def table_restore(handle, prefix, table_name, validate_only=False, name=None):
    """Replaces the rows of the part with those of its keys in the checkpoint ``prefix``, which
    holds table ``table_name`` whole or shard by shard, saved from any number of shards; with
    ``validate_only`` it reads and checks them (optimizer, shapes) and loads nothing."""
    return apply_op("EmbeddingTableRestore", [handle, prefix], {"table_name": table_name,
                                                                "validate_only": bool(validate_only)},
                    name=name or "EmbeddingTableRestore")


def table_evict(handle, max_age=-2, min_show=-1.0, drop_candidates=True, name=None):
    """One eviction pass: ``max_age`` -2 / ``min_show`` < 0 take the table's settings; -1 / 0 disable."""
    from sparseflow._src.framework.tensor_conversion import convert_to_tensor

    return apply_op("EmbeddingTableEvict", [handle, convert_to_tensor(max_age, dtypes.int64),
                                            convert_to_tensor(min_show, dtypes.float32)],
                    {"drop_candidates": bool(drop_candidates)}, name=name or "EmbeddingTableEvict").outputs[0]


def table_stats(handle, name=None):
    return apply_op("EmbeddingTableStats", [handle], name=name or "EmbeddingTableStats").outputs[0]


UniqueKeys = collections.namedtuple("UniqueKeys", ["keys", "idx", "counts"])


def unique_keys(keys, name=None):
    """The distinct values of 1-D ``keys`` in first-appearance order, each key's index into them and
    the count of each (a hash-based ``tf.unique_with_counts``)."""
    return UniqueKeys(*apply_op("EmbeddingUniqueKeys", [keys], name=name or "EmbeddingUniqueKeys").outputs)


def part_index(keys, num_parts, name=None):
    return apply_op("EmbeddingPartIndex", [keys], {"num_parts": int(num_parts)},
                    name=name or "EmbeddingPartIndex").outputs[0]
