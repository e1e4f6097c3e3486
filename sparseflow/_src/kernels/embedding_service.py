"""The parameter-server side of embedding tables sharded over tasks: a task's shards, found (or
created on first use) in its devices' resource managers by their table config, read and trained
in batches of items (one item per table shard).

Two callers share it: the WorkerService's ``TablePull``/``TablePush`` (distributed/table_service.py
turns the protos into these calls) and, in-process, a worker's cluster pull/push kernels for the
shards on their own task (embedding_cluster.py). Synchronous training adds ``accumulate``,
``apply_accumulated`` and ``set_sync_step`` (the ``TableAccumulate``, ``TableApplyAccumulated`` and
``TableSetSyncStep`` RPCs; semantics in embedding_sync.py). A shard lives in the ResourceMgr of its device
under ``(container, "<table>_part_<p>")``, so it outlives client sessions, and graph ops placed on
that device (stats, eviction, checkpoints) see the very same object.

A table config is a serialized ``EmbeddingTableConfig`` (framework/proto/embedding_table.proto);
the bytes are the same on every request of a table and are parsed once per process.

Example:
    >>> import numpy as np
    >>> from sparseflow._src.framework.proto.embedding_table_pb2 import EmbeddingTableConfig
    >>> from sparseflow._src.runtime.devices import DeviceMgr
    >>> cfg = EmbeddingTableConfig(name="t", dim=2, optimizer="sgd", initializer="constant",
    ...                            initializer_params=[0.5], min_count=1, show_decay=1.0, num_shards=1,
    ...                            evict_max_age=-1,
    ...                            shard_devices=["/job:ps/replica:0/task:0/device:CPU:0"]).SerializeToString()
    >>> shards = TableShards(DeviceMgr.local(1, job="ps", task=0))
    >>> keys = np.array([3, 9], np.uint64)
    >>> shards.push([PushItem(cfg, 0, keys, np.ones((2, 2), np.float32), learning_rate=0.5)])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sparseflow._src.framework.errors.NotFoundError: Embedding table 't' has no shard 0 on ...
    >>> shards.pull([PullItem(cfg, 0, keys)])[0].tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    >>> shards.push([PushItem(cfg, 0, keys, np.ones((2, 2), np.float32), learning_rate=0.5)])
    [0]
    >>> shards.pull([PullItem(cfg, 0, keys, training=False)])[0].tolist()
    [[0.0, 0.0], [0.0, 0.0]]
"""

from __future__ import annotations

import dataclasses
import threading
import weakref

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.framework.proto.embedding_table_pb2 import EmbeddingTableConfig
from sparseflow._src.kernels import embedding_sync
from sparseflow._src.kernels.embedding_table import EmbeddingTableResource, TableSpec

__all__ = ["PullItem", "PushItem", "AccumulateItem", "ApplyItem", "SyncStepItem", "TableShards", "ShardedTable",
           "parse_config", "shard_name", "shards_of"]

_EMPTY_I = np.zeros(0, np.int32)
_EMPTY_F = np.zeros(0, np.float32)


def shard_name(table: str, part: int, num_parts: int) -> str:
    """The resource name of shard ``part`` of a table of ``num_parts`` shards."""
    return table if num_parts == 1 else f"{table}_part_{part}"


@dataclasses.dataclass(frozen=True)
class ShardedTable:
    """A parsed table config: the spec every shard has and where each shard lives."""

    name: str
    container: str
    spec: TableSpec
    num_shards: int
    shard_devices: tuple

    @property
    def num_parts(self) -> int:
        return len(self.shard_devices)

    def describe(self) -> str:
        s = self.spec
        return (f"dim {s.dim}, {s.optimizer} {list(s.optimizer_params)}, {s.initializer} "
                f"{list(s.initializer_params)}, seed {s.seed}, min_count {s.min_count}, {self.num_parts} shards")


def parse_config(config: bytes) -> ShardedTable:
    """The table a serialized ``EmbeddingTableConfig`` describes (InvalidArgumentError when bad)."""
    try:
        c = EmbeddingTableConfig.FromString(config)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise errors.InvalidArgumentError(None, None, f"Malformed embedding-table config: {e}") from None
    if not c.name or not c.shard_devices:
        raise errors.InvalidArgumentError(None, None, "An embedding-table config needs a name and shard devices.")
    spec = TableSpec(dim=int(c.dim), optimizer=c.optimizer, optimizer_params=tuple(c.optimizer_params),
                     initializer=c.initializer, initializer_params=tuple(c.initializer_params), seed=int(c.seed),
                     min_count=int(c.min_count), evict_max_age=int(c.evict_max_age),
                     evict_min_show=float(c.evict_min_show), evict_every_n_steps=int(c.evict_every_n_steps),
                     show_decay=float(c.show_decay))
    return ShardedTable(c.name, c.container, spec, max(1, int(c.num_shards)), tuple(c.shard_devices))


@dataclasses.dataclass
class PullItem:
    """Read the rows of ``keys`` (uint64, unique) of shard ``part`` of the table ``config``; a
    ``training`` pull inserts unseen keys (``dim``: the table's, for clients that decode replies)."""

    config: bytes
    part: int
    keys: np.ndarray
    counts: np.ndarray = dataclasses.field(default_factory=lambda: _EMPTY_I)
    dim: int = 0
    training: bool = True


@dataclasses.dataclass
class PushItem:
    """Apply ``grads`` ([keys, dim] float32) to the rows of ``keys`` of shard ``part``."""

    config: bytes
    part: int
    keys: np.ndarray
    grads: np.ndarray
    counts: np.ndarray = dataclasses.field(default_factory=lambda: _EMPTY_F)
    clicks: np.ndarray = dataclasses.field(default_factory=lambda: _EMPTY_F)
    learning_rate: float = 0.01


@dataclasses.dataclass
class AccumulateItem:
    """Add a worker's ``grads`` ([keys, dim] float32) for the rows of ``keys`` of shard ``part``,
    computed at ``local_step``, to the shard's synchronous step (counts/clicks: float32 per key or empty)."""

    config: bytes
    part: int
    keys: np.ndarray
    grads: np.ndarray
    counts: np.ndarray = dataclasses.field(default_factory=lambda: _EMPTY_F)
    clicks: np.ndarray = dataclasses.field(default_factory=lambda: _EMPTY_F)
    local_step: int = 0


@dataclasses.dataclass
class ApplyItem:
    """Wait for ``num_required`` pushes to shard ``part``, apply their average with ``learning_rate``."""

    config: bytes
    part: int
    num_required: int
    learning_rate: float


@dataclasses.dataclass
class SyncStepItem:
    """Set the synchronous step of shard ``part`` to ``global_step``."""

    config: bytes
    part: int
    global_step: int


class TableShards:
    """The embedding-table shards of one task (its ``DeviceMgr``); see the module docstring."""

    def __init__(self, devices):
        self.devices = devices
        self._configs: dict[bytes, ShardedTable] = {}
        self._lock = threading.Lock()

    @property
    def incarnation(self) -> int:
        """The task's incarnation (its first device's): a restarted task has another one."""
        return self.devices.incarnations[self.devices.names[0]]

    def table(self, config: bytes) -> ShardedTable:
        t = self._configs.get(config)
        if t is None:
            t = parse_config(config)
            with self._lock:
                if len(self._configs) > 4096:  # configs of long-gone graphs
                    self._configs.clear()
                self._configs[config] = t
        return t

    def shard(self, config: bytes, part: int, create: bool) -> EmbeddingTableResource:
        """Shard ``part`` of the table ``config`` on this task (created when ``create``)."""
        t = self.table(config)
        if not 0 <= part < t.num_parts:
            raise errors.InvalidArgumentError(None, None, f"Embedding table {t.name!r} has {t.num_parts} shard(s); "
                                                          f"there is no shard {part}.")
        device = t.shard_devices[part]
        try:
            rm = self.devices.resources(device)
        except KeyError:
            raise errors.InvalidArgumentError(
                None, None, f"Shard {part} of embedding table {t.name!r} belongs to {device}, which is not a device "
                            f"of this task ({', '.join(self.devices.names)}): check the cluster spec.") from None
        name = shard_name(t.name, part, t.num_parts)
        if create:
            res = rm.lookup_or_create(t.container, name, EmbeddingTableResource, spec=t.spec,
                                      num_shards=t.num_shards, part=part, num_parts=t.num_parts)
        else:
            try:
                res = rm.lookup(t.container, name)
            except errors.NotFoundError:
                raise errors.NotFoundError(
                    None, None, f"Embedding table {t.name!r} has no shard {part} on {device} (nothing pulled it "
                                f"there yet, or the task restarted since: restore the table from a checkpoint)."
                ) from None
        if not isinstance(res, EmbeddingTableResource):
            raise errors.InvalidArgumentError(None, None, f"Resource {name!r} on {device} is a {type(res).__name__}, "
                                                          f"not an embedding table.")
        if res.spec != t.spec or len(res.shards) != t.num_shards or (res.part, res.num_parts) != (part, t.num_parts):
            have = ShardedTable(t.name, t.container, res.spec, len(res.shards), (None,) * res.num_parts)
            raise errors.InvalidArgumentError(
                None, None, f"Embedding table {t.name!r} shard {part} on {device} exists with other settings "
                            f"({have.describe()}) than requested ({t.describe()}): one name, one table; give "
                            f"different tables different names.")
        return res

    def pull(self, items) -> list[np.ndarray]:
        """The rows of each item's keys (float32 [keys, dim] per item)."""
        out = []
        for it in items:
            res = self.shard(it.config, it.part, create=True)
            counts = it.counts if it.counts.size else _EMPTY_I
            if counts.size not in (0, it.keys.shape[0]):
                raise errors.InvalidArgumentError(None, None, f"Pull from {res.name!r}: {counts.size} counts for "
                                                              f"{it.keys.shape[0]} keys.")
            out.append(res.pull(it.keys, counts, training=it.training))
        return out

    def push(self, items) -> list[int]:
        """Applies each item; returns, per item, the distinct keys whose gradient was dropped."""
        resolved = [self.shard(it.config, it.part, create=False) for it in items]  # all found before any applies
        dropped = []
        for res, it in zip(resolved, items):
            dropped.append(res.push(it.keys, it.grads, it.counts, it.clicks, learning_rate=it.learning_rate))
        return dropped

    def accumulate(self, items) -> list[bool]:
        """Adds each item to its shard's synchronous step; per item, False when dropped as stale. The
        items of one shard in one request are one worker's push (their keys are concatenated)."""
        resolved = [self.shard(it.config, it.part, create=False) for it in items]
        merged: dict[int, list] = {}
        for res, it in zip(resolved, items):
            merged.setdefault(id(res), [res, it.local_step, []])[2].append(it)
        accepted = {}
        for key, (res, local_step, group) in merged.items():
            it = group[0] if len(group) == 1 else _concatenated(group)
            accepted[key] = embedding_sync.accumulator_of(res).accumulate(local_step, it.keys, it.grads,
                                                                          it.counts, it.clicks)
        return [accepted[id(res)] for res in resolved]

    def apply_accumulated(self, items, ctx=None) -> list[tuple[int, int]]:
        """The chief's update of each item's shard (waiting for its pushes; ``ctx``: ``cancelled`` and
        ``remaining()`` of the wait). Per item: (pushes averaged, keys dropped for want of a row)."""
        resolved = [self.shard(it.config, it.part, create=True) for it in items]
        return [embedding_sync.apply_accumulated(res, ctx, it.num_required, it.learning_rate)
                for res, it in zip(resolved, items)]

    def set_sync_step(self, items) -> None:
        """Sets the synchronous step of each item's shard (created when missing)."""
        for res, it in [(self.shard(it.config, it.part, create=True), it) for it in items]:
            embedding_sync.accumulator_of(res).set_global_step(it.global_step)


def _concatenated(items) -> AccumulateItem:
    """One push of the keys of several items of one shard (counters filled in where an item has none)."""
    sizes = [it.keys.shape[0] for it in items]

    def merged(arrays, fill):
        if all(a.size == 0 for a in arrays):
            return _EMPTY_F
        return np.concatenate([a if a.size else np.full(n, fill, np.float32) for a, n in zip(arrays, sizes)])

    return AccumulateItem(items[0].config, items[0].part, np.concatenate([it.keys for it in items]),
                          np.concatenate([it.grads for it in items]), merged([it.counts for it in items], 1.0),
                          merged([it.clicks for it in items], 0.0), items[0].local_step)


_SHARDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # DeviceMgr -> TableShards
_shards_lock = threading.Lock()


def shards_of(devices) -> TableShards:
    """The one ``TableShards`` of a task's ``DeviceMgr``."""
    s = _SHARDS.get(devices)
    if s is None:
        with _shards_lock:
            s = _SHARDS.get(devices)
            if s is None:
                s = _SHARDS[devices] = TableShards(devices)
    return s
