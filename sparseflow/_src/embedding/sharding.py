"""Embedding tables sharded over tasks: which devices hold the shards, and the table config the
shards are created from.

A table is sharded over tasks when ``EmbeddingTable(devices=...)`` names tasks
(``["/job:ps/task:0", "/job:ps/task:1"]``), or when it is created with ``devices=None`` under
``tf.device(tf.train.replica_device_setter(...))`` of a cluster with ps tasks (one shard per ps
task). Key ``k`` belongs to shard ``shard_ids(k, n, PART_SALT)``, a hash of the key, so ids that
are all multiples of ``n`` spread evenly. The shard of each task is created on its first pull from
the config (:func:`config_text`), which every pull and push carries. Its float settings are
rounded to float32 once, here, so that graph attrs (float32 in a GraphDef) and the config agree
exactly on every task.

Example:
    >>> shard_devices(["/job:ps/task:0", "/job:ps/task:1"])
    ['/job:ps/replica:0/task:0/device:CPU:0', '/job:ps/replica:0/task:1/device:CPU:0']
    >>> shard_devices(["/cpu:0", "/cpu:1"]) is None   # parts on devices of one process
    True
"""

from __future__ import annotations

import numpy as np
from google.protobuf import text_format

from sparseflow._src.framework.device_spec import DeviceSpec
from sparseflow._src.framework.proto.embedding_table_pb2 import EmbeddingTableConfig

__all__ = ["shard_devices", "ps_devices_of_device_stack", "float32_exact", "config_text"]


def shard_devices(devices) -> list[str] | None:
    """Full device names of the shards when every entry of ``devices`` names a job and a task;
    None when none does (parts on devices of one process). A mix is a ValueError."""
    if not devices:
        return None
    specs = [DeviceSpec.from_string(d if isinstance(d, str) else d.to_string()) for d in devices]
    tasked = [s.job is not None and s.task is not None for s in specs]
    if not any(tasked):
        if any(s.job is not None for s in specs):
            raise ValueError(f"Embedding-table devices {list(devices)} name a job but no task: name each shard's task "
                             f"(\"/job:ps/task:0\", \"/job:ps/task:1\", ...).")
        return None
    if not all(tasked):
        raise ValueError(f"Embedding-table devices {list(devices)} mix tasks and local devices: give every shard a "
                         f"job and task, or none.")
    out = [DeviceSpec(s.job, s.replica or 0, s.task, s.device_type or "CPU", s.device_index or 0).to_string()
           for s in specs]
    if len(set(out)) != len(out):
        raise ValueError(f"Embedding-table devices {list(devices)} name a device twice: one shard per device.")
    return out


def ps_devices_of_device_stack(graph) -> list[str] | None:
    """One device per ps task when the innermost device scope of ``graph`` is a
    ``tf.train.replica_device_setter`` with ps tasks, or the devices a placement object's bound
    device function names in its ``table_shard_devices`` (a strategy's: tasks of several jobs);
    None otherwise."""
    for entry in reversed(getattr(graph, "_device_stack", [])):
        if entry is None or not callable(entry):
            return None  # an explicit device scope (or device(None)) decides
        chooser = getattr(entry, "__self__", None)
        listed = getattr(chooser, "table_shard_devices", None)
        if listed:
            return list(listed)
        tasks = getattr(chooser, "_ps_tasks", None)
        ps_device = getattr(chooser, "_ps_device", None)
        if isinstance(tasks, int) and tasks > 0 and ps_device:
            ps = DeviceSpec.from_string(ps_device if isinstance(ps_device, str) else ps_device.to_string())
            job = ps.job or "ps"
            return [f"/job:{job}/task:{i}" for i in range(tasks)]
    return None


def float32_exact(values) -> list[float]:
    """``values`` rounded to float32 (as Python floats)."""
    return [float(np.float32(v)) for v in values]


def config_text(table) -> str:
    """The text-format ``EmbeddingTableConfig`` of a sharded table (graph attr of its pull/push ops)."""
    ev = table.eviction.attrs()
    cfg = EmbeddingTableConfig(
        name=table.name, container=table.container, dim=table.dim, optimizer=table.optimizer.kind,
        optimizer_params=float32_exact(table.optimizer.params()), initializer=table.initializer[0],
        initializer_params=float32_exact(table.initializer[1]), seed=table.seed,
        min_count=table.admission.min_count, evict_max_age=ev["evict_max_age"],
        evict_min_show=ev["evict_min_show"], evict_every_n_steps=ev["evict_every_n_steps"],
        show_decay=ev["show_decay"], num_shards=table.num_shards, shard_devices=table.shard_devices)
    return text_format.MessageToString(cfg, as_one_line=True)  # floats print exactly (shortest round trip)
