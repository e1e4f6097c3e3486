"""Restoring one part of an embedding table from a checkpoint, whatever the sharding it was saved
with (the EmbeddingTableRestore kernel), and the names table tensors have in a checkpoint.

A checkpoint (tensor bundle) holds a table in one of two layouts:

* whole: ``<name>/keys``, ``/values``, ``/state``, ``/show``, ``/click``, ``/seen``, ``/step`` (a table
  of one process, saved as one object);
* shard by shard: ``<name>/part-PPPPP-of-NNNNN/<field>`` for each of the N shards of a table sharded
  over tasks (each task writes its own rows), plus one ``<name>/optimizer``.

The restoring part reads every saved piece, keeps the rows of the keys it owns (by the same hash
routing as pulls) and replaces its contents with them; its step is the largest saved step. So a
table saved from 2 parameter servers restores into 1, 3, or one process, and back.

Example:
    >>> shard_prefix("ads", 1, 2)
    'ads/part-00001-of-00002'
    >>> saved_pieces(["ads/keys", "ads/values"], "ads"), saved_pieces(["ads/part-00000-of-00001/keys"], "ads")
    (['ads'], ['ads/part-00000-of-00001'])
"""

from __future__ import annotations

import re

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.framework.tensor_bundle import BundleReader
from sparseflow._src.kernels import embedding_hash as H
from sparseflow._src.kernels.registry import register_kernel

FIELDS = ("keys", "values", "state", "show", "click", "seen", "step")

__all__ = ["FIELDS", "shard_prefix", "saved_pieces", "read_part"]


def shard_prefix(name: str, part: int, num_parts: int) -> str:
    """Where shard ``part`` of ``num_parts`` of table ``name`` is saved."""
    return f"{name}/part-{part:05d}-of-{num_parts:05d}"


def saved_pieces(names, table: str) -> list[str]:
    """The prefixes of the saved pieces of ``table`` among the checkpoint tensor ``names``."""
    names = set(names)
    if f"{table}/keys" in names:
        return [table]
    pattern = re.compile(re.escape(table) + r"/part-\d{5}-of-\d{5}/keys")
    return sorted(n[:-len("/keys")] for n in names if pattern.fullmatch(n))


def read_part(reader: BundleReader, table: str, res) -> dict:
    """The saved rows of ``table`` that belong to ``res`` (an EmbeddingTableResource), as arrays
    for ``res.load``; every saved piece is checked (``res.check_load``: optimizer, dimension, state
    width) before anything is kept, and errors name the checkpoint."""
    pieces = saved_pieces(reader.names(), table)
    if not pieces or not reader.has(f"{table}/optimizer"):
        raise errors.NotFoundError(None, None, f"Embedding table {table!r} is not in the checkpoint {reader.prefix} "
                                               f"(no '{table}/keys' or '{table}/part-*' tensors and "
                                               f"'{table}/optimizer').")
    saved = reader.read(f"{table}/optimizer")
    saved = saved.item() if hasattr(saved, "item") else saved
    saved = saved.decode() if isinstance(saved, bytes) else str(saved)
    out = {f: [] for f in FIELDS[:-1]}
    step = 0
    for piece in pieces:
        arrays = {f: np.asarray(reader.read(f"{piece}/{f}")) for f in FIELDS[:-1]}
        try:
            res.check_load(*(arrays[f] for f in FIELDS[:-1]), optimizer=saved)
        except errors.InvalidArgumentError as e:
            raise errors.InvalidArgumentError(None, None, f"{e.message} (checkpoint {reader.prefix}, "
                                                          f"'{piece}/...')") from None
        keys = arrays["keys"]
        keys = keys.view(np.uint64) if keys.dtype == np.int64 else keys.astype(np.uint64, copy=False)
        mine = slice(None)
        if res.num_parts > 1:
            ids = np.empty(keys.shape[0], dtype=np.int32)
            H.shard_ids(np.ascontiguousarray(keys), res.num_parts, H.PART_SALT, ids)
            mine = ids == res.part
        arrays["keys"] = keys
        for f, arr in arrays.items():
            out[f].append(arr[mine])
        step = max(step, int(np.asarray(reader.read(f"{piece}/step"))))
    rows = {f: np.concatenate(v) for f, v in out.items()}
    rows["step"] = step
    return rows


@register_kernel("EmbeddingTableRestore")
def _restore(node):
    table = node.attrs["table_name"]
    table = table.decode() if isinstance(table, bytes) else str(table)
    validate_only = bool(node.attrs.get("validate_only", False))

    def compute(res, prefix):
        prefix = np.asarray(prefix, dtype=object).item()
        prefix = prefix.decode() if isinstance(prefix, bytes) else str(prefix)
        with BundleReader(prefix) as reader:
            rows = read_part(reader, table, res)
        if validate_only:
            return
        res.load(rows["keys"], rows["values"], rows["state"], rows["show"], rows["click"], rows["seen"], rows["step"])

    return compute
