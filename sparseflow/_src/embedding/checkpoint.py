"""Checkpoints and serving exports of embedding tables.

**Checkpoints.** A table is a SaveableObject (in ``GraphKeys.SAVEABLE_OBJECTS``), so
``tf.train.Saver()`` saves it with the variables, atomically and checksummed (tensor bundles).
Its tensors, whatever the number of parts and shards::

    <name>/keys       uint64  [n]          sorted per part
    <name>/values     float32 [n, dim]
    <name>/state      float32 [n, S]       optimizer state (see kernels/embedding_optim.py)
    <name>/show       float32 [n]          show / click counters
    <name>/click      float32 [n]
    <name>/seen       int64   [n]          table step of the last pull or push
    <name>/step       int64   []           the table's step counter
    <name>/optimizer  string  []           optimizer kind; restore refuses another one

A table sharded over tasks (``devices=["/job:ps/task:0", ...]``) is saved shard by shard: one
saveable per shard, on its task, whose tensors are ``<name>/part-PPPPP-of-NNNNN/<field>`` (plus
one ``<name>/optimizer``). A sharded Saver (``Saver(sharded=True)``, what
``MonitoredTrainingSession`` builds) therefore has every parameter server write its own rows, in
parallel, and no row crosses the wire; a non-sharded Saver gathers each shard's tensors on the
saving task. Restoring reads the checkpoint on each restoring part (kernels/embedding_restore.py),
whatever its layout, and routes every key to the part and shard that owns it in the *restoring*
table, so a checkpoint restores into any number of parts (devices, tasks) and shards, and a table
saved by one process restores into a cluster and back. :func:`save_tables` /
:func:`restore_tables` write and read the whole-table tensors without a Saver.

**Serving export** (``export_for_serving``): one file mapping ``key -> embedding``, no pickle::

    offset 0   8 bytes  magic b"SFEMBED1"
           8   u32      format version (1)
          12   u32      dim
          16   u64      n (number of keys)
          24   u32      value dtype (1 = float32)
          28   u32      reserved (0)
          32   u64[n]   keys, ascending
               f32[n*dim] rows, in key order
               u32      CRC-32 of all preceding bytes
    (all little-endian)

:class:`ServingTable` reads it and looks keys up by binary search (missing keys read zeros).
"""

from __future__ import annotations

import os
import struct
import zlib

import numpy as np

from sparseflow._src.embedding import embedding_ops as E
from sparseflow._src.framework import dtypes, errors
from sparseflow._src.framework.tensor_bundle import BundleReader, BundleWriter
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.kernels.embedding_restore import shard_prefix
from sparseflow._src.ops import core_ops
from sparseflow._src.training.checkpoint.saveable import SaveableObject, SaveSpec
from sparseflow._src.training.session.session_run_hook import SessionRunHook

__all__ = ["TableSaveable", "TableShardSaveable", "table_saveables",
           "save_tables", "restore_tables", "export_for_serving", "load_serving",
           "ServingTable", "ServingExportHook", "SERVING_MAGIC"]

_FIELDS = ("keys", "values", "state", "show", "click", "seen", "step")
SERVING_MAGIC = b"SFEMBED1"
_SERVING_HEADER = struct.Struct("<8sIIQII")
_SERVING_VERSION = 1


class TableSaveable(SaveableObject):
    """Saves a table's rows, optimizer state and counters under ``<name>/...`` (module docstring)."""

    def __init__(self, table):
        exported = table.export()
        device = table.handles[0].device
        specs = [SaveSpec(t, "", f"{table.name}/{f}", device=device) for f, t in zip(_FIELDS, exported)]
        with table.graph.colocate_with(table.handles[0].op):
            kind = convert_to_tensor(np.array(table.optimizer.kind.encode(), dtype=object), dtypes.string,
                                     name=f"{table.name}_optimizer_kind")
        specs.append(SaveSpec(kind, "", f"{table.name}/optimizer", device=device))
        super().__init__(table.handles[0], specs, table.name)
        self.table = table

    def restore(self, restored_tensors, restored_shapes):
        del restored_shapes
        return core_ops.group(*self._imports(restored_tensors, False), name=f"{self.table.name}_restore")

    def check_restored(self, restored_tensors, restored_shapes):
        """Every part checks the rows (optimizer, dimension, state width) without loading them."""
        del restored_shapes
        return self._imports(restored_tensors, True)

    def _imports(self, restored_tensors, validate_only):
        g = self.table.graph
        ops = []
        for h in self.table.handles:
            with g.colocate_with(h.op):
                ops.append(E.table_import(h, *restored_tensors, validate_only=validate_only))
        return ops

    reads_checkpoint = True  # a Saver has every part read the checkpoint, whatever its layout

    def restore_from_checkpoint(self, filename_tensor, validate_only: bool = False):
        """Every part reads the checkpoint itself, whole or saved shard by shard (see the module
        docstring)."""
        return _restore_parts(self.table, range(self.table.num_parts), filename_tensor, validate_only)


class TableShardSaveable(SaveableObject):
    """Shard ``part`` of a table sharded over tasks: its rows, saved on its own task under
    ``<name>/part-PPPPP-of-NNNNN/...`` (shard 0 adds ``<name>/optimizer``)."""

    def __init__(self, table, part):
        h = table.handles[part]
        where = shard_prefix(table.name, part, table.num_parts)
        with table.graph.colocate_with(h.op), table.graph.name_scope(None):
            exported = E.table_export(h, table.dim, table.state_width, name=f"{table.name}_export_part_{part}")
            specs = [SaveSpec(t, "", f"{where}/{f}", device=h.device) for f, t in zip(_FIELDS, exported)]
            if part == 0:
                kind = convert_to_tensor(np.array(table.optimizer.kind.encode(), dtype=object), dtypes.string,
                                         name=f"{table.name}_optimizer_kind")
                specs.append(SaveSpec(kind, "", f"{table.name}/optimizer", device=h.device))
        super().__init__(h, specs, where)
        self.table, self.part = table, part

    reads_checkpoint = True  # its saved names depend on the sharding it was saved with

    def restore(self, restored_tensors, restored_shapes):
        """Loads the rows of this shard's own saved tensors, read by name (only a checkpoint of the
        same sharding has them); a Saver uses ``restore_from_checkpoint``, which reads any."""
        del restored_shapes
        args = list(restored_tensors[:len(_FIELDS)]) + [self.table.optimizer.kind]
        with self.table.graph.colocate_with(self.op.op):
            return E.table_import(self.op, *args, name=f"{self.table.name}_restore_part_{self.part}")

    def restore_from_checkpoint(self, filename_tensor, validate_only: bool = False):
        return _restore_parts(self.table, [self.part], filename_tensor, validate_only)


def _restore_parts(table, parts, filename_tensor, validate_only):
    """The restore op of the table's ``parts`` (with ``validate_only``: the list of check ops)."""
    g = table.graph
    ops = []
    for p in parts:
        h = table.handles[p]
        with g.colocate_with(h.op):
            what = "check" if validate_only else "restore"
            ops.append(E.table_restore(h, filename_tensor, table.name, validate_only=validate_only,
                                       name=f"{table.name}_{what}_part_{p}"))
    if validate_only:
        return ops
    return ops[0] if len(ops) == 1 else core_ops.group(*ops, name=f"{table.name}_restore")


def table_saveables(table) -> list:
    """The SaveableObjects of ``table``: one, or one per shard of a table sharded over tasks."""
    if table.shard_devices:
        return [TableShardSaveable(table, p) for p in range(table.num_parts)]
    return [TableSaveable(table)]


def _parts(table_or_parts, sess=None):
    if isinstance(table_or_parts, (list, tuple)):
        return list(table_or_parts)
    if sess is None:
        raise ValueError("Saving a graph EmbeddingTable needs its session: save_tables(tables, prefix, sess).")
    return table_or_parts.resources(sess)


def save_tables(tables, prefix, sess=None) -> str:
    """Writes ``tables`` ({name: table} or a list of graph tables; a graph table needs ``sess``;
    runtime tables are given as lists of parts in the dict) as one bundle at ``prefix``."""
    if not isinstance(tables, dict):
        tables = {t.name: t for t in tables}
    with BundleWriter(prefix) as w:
        for name, t in sorted(tables.items()):
            parts = _parts(t, sess)
            ex = [p.export() for p in parts]
            for f in _FIELDS[:-1]:
                w.add(f"{name}/{f}", np.concatenate([e[f] for e in ex]))
            w.add(f"{name}/step", np.int64(ex[0]["step"]))
            w.add(f"{name}/optimizer", np.array(parts[0].spec.optimizer.encode(), dtype=object), dtypes.string)
    return prefix


def restore_tables(tables, prefix, sess=None):
    """Loads ``tables`` (as for :func:`save_tables`) from the bundle at ``prefix``, whatever the
    number of parts and shards they were saved with. All or nothing: every table is read and
    checked before any is loaded."""
    if not isinstance(tables, dict):
        tables = {t.name: t for t in tables}
    loads = []
    with BundleReader(prefix) as r:
        for name, t in sorted(tables.items()):
            missing = [f for f in (*_FIELDS, "optimizer") if not r.has(f"{name}/{f}")]
            if missing:
                raise errors.NotFoundError(None, None, f"Embedding table {name!r} is not in the checkpoint {prefix} "
                                                       f"(missing {', '.join(f'{name}/{f}' for f in missing)}); "
                                                       f"nothing was restored.")
            saved = r.read(f"{name}/optimizer")
            saved = saved.item() if hasattr(saved, "item") else saved
            saved = saved.decode() if isinstance(saved, bytes) else str(saved)
            arrays = {f: r.read(f"{name}/{f}") for f in _FIELDS}
            for p in _parts(t, sess):
                try:
                    p.check_load(arrays["keys"], arrays["values"], arrays["state"], arrays["show"], arrays["click"],
                                 arrays["seen"], saved)
                except errors.InvalidArgumentError as e:
                    raise errors.InvalidArgumentError(None, None, f"{e.message} (checkpoint {prefix}; nothing was "
                                                                  f"restored)") from None
                loads.append((p, arrays))
    for p, a in loads:
        p.load(a["keys"], a["values"], a["state"], a["show"], a["click"], a["seen"], int(a["step"]))


# ---------------------------------------------------------------------------- serving export
def _write_atomically(path, chunks):
    tmp = f"{path}.tmp{os.getpid()}"
    crc = 0
    try:
        with open(tmp, "wb") as f:
            for c in chunks:
                b = c if isinstance(c, bytes) else np.ascontiguousarray(c).reshape(-1).view(np.uint8)  # empty too
                crc = zlib.crc32(b, crc)
                f.write(b)
            f.write(struct.pack("<I", crc & 0xFFFFFFFF))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def export_for_serving(table_or_parts, path, sess=None) -> str:
    """Writes ``key -> embedding`` of a table (graph table + ``sess``, or runtime parts) to ``path``
    in the serving format of the module docstring. Returns ``path``."""
    ex = [p.export() for p in _parts(table_or_parts, sess)]
    keys = np.concatenate([e["keys"] for e in ex])
    values = np.concatenate([e["values"] for e in ex])
    order = np.argsort(keys, kind="stable")
    keys = np.ascontiguousarray(keys[order], dtype="<u8")
    values = np.ascontiguousarray(values[order], dtype="<f4")
    dim = values.shape[1]
    header = _SERVING_HEADER.pack(SERVING_MAGIC, _SERVING_VERSION, dim, keys.shape[0], 1, 0)
    _write_atomically(os.fspath(path), [header, keys, values])
    return os.fspath(path)


def load_serving(path, verify: bool = True):
    """``(keys uint64 [n] ascending, values float32 [n, dim])`` of a serving export; DataLossError
    when the file is truncated or fails its checksum."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < _SERVING_HEADER.size + 4:
        raise errors.DataLossError(None, None, f"{path} is not a sparseflow embedding export (too short).")
    magic, version, dim, n, dt, _ = _SERVING_HEADER.unpack_from(raw, 0)
    if magic != SERVING_MAGIC or version > _SERVING_VERSION or dt != 1:
        raise errors.DataLossError(None, None, f"{path} is not a sparseflow embedding export (bad header).")
    want = _SERVING_HEADER.size + 8 * n + 4 * n * dim + 4
    if len(raw) != want:
        raise errors.DataLossError(None, None, f"{path} is truncated or corrupt: {len(raw)} bytes, expected {want} "
                                               f"for {n} keys of dim {dim}.")
    if verify:
        (crc,) = struct.unpack_from("<I", raw, want - 4)
        if zlib.crc32(memoryview(raw)[:want - 4]) & 0xFFFFFFFF != crc:
            raise errors.DataLossError(None, None, f"{path} is corrupt: its CRC-32 does not match.")
    off = _SERVING_HEADER.size
    keys = np.frombuffer(raw, dtype="<u8", count=n, offset=off).astype(np.uint64)
    values = np.frombuffer(raw, dtype="<f4", count=n * dim, offset=off + 8 * n).astype(np.float32).reshape(n, dim)
    return keys, values


class ServingTable:
    """A read-only ``key -> embedding`` map from a serving export: ``lookup(keys)`` gives
    ``keys.shape + [dim]``, zeros for keys not in the export."""

    def __init__(self, path, verify: bool = True):
        self.keys, self.values = load_serving(path, verify)
        self.dim = self.values.shape[1]

    def __len__(self):
        return self.keys.shape[0]

    def lookup(self, keys):
        keys = np.asarray(keys)
        flat = keys.reshape(-1)
        flat = flat.view(np.uint64) if flat.dtype == np.int64 else flat.astype(np.uint64)
        pos = np.searchsorted(self.keys, flat)
        pos_c = np.minimum(pos, max(len(self) - 1, 0))
        hit = (pos < len(self)) & (self.keys[pos_c] == flat) if len(self) else np.zeros(flat.shape, bool)
        out = np.zeros((flat.shape[0], self.dim), dtype=np.float32)
        out[hit] = self.values[pos_c[hit]]
        return out.reshape(keys.shape + (self.dim,))


class ServingExportHook(SessionRunHook):
    """Writes the serving export of ``tables`` to ``<directory>/<table name>.emb`` when the
    session ends (e.g. in ``MonitoredTrainingSession(hooks=[...])``)."""

    def __init__(self, tables, directory):
        self._tables = list(tables)
        self._dir = os.fspath(directory)

    def end(self, session):
        os.makedirs(self._dir, exist_ok=True)
        for t in self._tables:
            export_for_serving(t, os.path.join(self._dir, f"{t.name}.emb"), sess=session)
