"""CPU kernels of the embedding-table ops (see sparseflow/_src/embedding/embedding_ops.py).

``EmbeddingHashTable`` finds or creates its :class:`EmbeddingTableResource` in the device's
ResourceMgr (container, shared_name) once per session and returns it every step; the other
table kernels get that object as their first input. Two handle ops naming one resource must agree
on the table's settings.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels import embedding_hash as H
from sparseflow._src.kernels.embedding_table import EmbeddingTableResource, TableSpec
from sparseflow._src.kernels.registry import register_kernel

_SPEC_ATTRS = ("dim", "optimizer", "optimizer_params", "initializer", "initializer_params", "seed", "min_count",
               "evict_max_age", "evict_min_show", "evict_every_n_steps", "show_decay")


def _bad(msg):
    return errors.InvalidArgumentError(None, None, msg)


def spec_from_attrs(attrs) -> TableSpec:
    kw = {k: attrs[k] for k in _SPEC_ATTRS}
    kw["optimizer_params"] = tuple(float(x) for x in kw["optimizer_params"])
    kw["initializer_params"] = tuple(float(x) for x in kw["initializer_params"])
    for k in ("optimizer", "initializer"):
        if isinstance(kw[k], bytes):
            kw[k] = kw[k].decode()
    return TableSpec(**kw)


@register_kernel("EmbeddingHashTable", stateful=True)
def _table(node):
    a = node.attrs
    spec = spec_from_attrs(a)
    name = a.get("shared_name") or node.name
    if isinstance(name, bytes):
        name = name.decode()
    container = a.get("container", "")
    if isinstance(container, bytes):
        container = container.decode()
    res = node.resources.lookup_or_create(container, name, EmbeddingTableResource, spec=spec,
                                          num_shards=int(a["num_shards"]), part=int(a["part"]),
                                          num_parts=int(a["num_parts"]))
    if not isinstance(res, EmbeddingTableResource):
        raise _bad(f"Resource {name!r} on {node.device} is a {type(res).__name__}, not an embedding table.")
    if res.spec != spec or len(res.shards) != int(a["num_shards"]) or (res.part, res.num_parts) != \
            (int(a["part"]), int(a["num_parts"])):
        raise _bad(f"Embedding table {name!r} already exists on {node.device} with other settings "
                   f"({res.spec}); give tables distinct names.")
    return lambda: res


def _check_dim(res, dim):
    if res.spec.dim != dim:
        raise _bad(f"Embedding table {res.name!r} has dim {res.spec.dim}, the op expects {dim}.")


@register_kernel("EmbeddingTablePull")
def _pull(node):
    dim = int(node.attrs["dim"])
    training = bool(node.attrs["training"])

    def compute(res, keys, counts):
        _check_dim(res, dim)
        return res.pull(keys, counts, training=training)

    return compute


@register_kernel("EmbeddingTablePush")
def _push(node):
    def compute(res, keys, grads, counts, clicks, learning_rate):
        res.push(keys, grads, counts, clicks, learning_rate=float(learning_rate))

    return compute


@register_kernel("EmbeddingTableExport")
def _export(node):
    dim, width = int(node.attrs["dim"]), int(node.attrs["state_width"])

    def compute(res):
        _check_dim(res, dim)
        if res.spec.state_width != width:
            raise _bad(f"Embedding table {res.name!r} has {res.spec.state_width} floats of optimizer state per "
                       f"row, the op expects {width}.")
        e = res.export()
        return e["keys"], e["values"], e["state"], e["show"], e["click"], e["seen"], np.int64(e["step"])

    return compute


@register_kernel("EmbeddingTableImport")
def _import(node):
    validate_only = bool(node.attrs.get("validate_only", False))

    def compute(res, keys, values, state, show, click, seen, step, optimizer):
        optimizer = np.asarray(optimizer, dtype=object).item()
        optimizer = optimizer.decode() if isinstance(optimizer, bytes) else str(optimizer)
        res.check_load(keys, values, state, show, click, seen, optimizer)
        if not validate_only:
            res.load(keys, values, state, show, click, seen, int(step))

    return compute


@register_kernel("EmbeddingTableEvict")
def _evict(node):
    drop = bool(node.attrs["drop_candidates"])

    def compute(res, max_age, min_show):
        max_age = int(max_age)
        min_show = float(min_show)
        return np.int64(res.evict(None if max_age == -2 else max_age, None if min_show < 0 else min_show,
                                  drop_candidates=drop))

    return compute


@register_kernel("EmbeddingTableStats")
def _stats(node):
    # the order of embedding_ops.STATS_FIELDS
    fields = ("keys", "candidates", "memory_bytes", "step", "dropped_gradients", "evicted", "admitted", "capacity",
              "row_capacity", "stale_pushes")

    def compute(res):
        s = res.stats()
        return np.array([s[f] for f in fields], dtype=np.float64)

    return compute


@register_kernel("EmbeddingUniqueKeys")
def _unique(node):
    def compute(keys):
        keys = np.asarray(keys)
        if keys.ndim != 1:
            raise _bad(f"EmbeddingUniqueKeys expects a vector of keys, got shape {list(keys.shape)}")
        return H.unique_keys(np.ascontiguousarray(keys))

    return compute


@register_kernel("EmbeddingPartIndex")
def _part_index(node):
    num = int(node.attrs["num_parts"])

    def compute(keys):
        keys = np.ascontiguousarray(keys)
        if keys.dtype == np.int64:
            keys = keys.view(np.uint64)
        out = np.empty(keys.shape[0], dtype=np.int32)
        H.shard_ids(keys, num, H.PART_SALT, out)
        return out

    return compute
