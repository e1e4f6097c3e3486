"""RunMetadata.step_stats from a traced run: one NodeExecStats per executed op, per device."""

from __future__ import annotations

import threading

import numpy as np


def fill_step_stats(run_metadata, stats):
    """``stats``: (node, start seconds, end seconds, output) tuples in execution order, and
    DeviceStepStats protos that other tasks recorded (copied as they are)."""
    if run_metadata is None:
        return
    by_device: dict[str, object] = {}
    tid = threading.get_ident() & 0x7FFFFFFF
    for item in stats:
        if not isinstance(item, tuple):
            run_metadata.step_stats.dev_stats.add().CopyFrom(item)
            continue
        node, t0, t1, out = item
        dev = by_device.get(node.device)
        if dev is None:
            dev = run_metadata.step_stats.dev_stats.add()
            dev.device = node.device
            by_device[node.device] = dev
        ns = dev.node_stats.add()
        ns.node_name = node.name
        start = int(t0 * 1e6)
        ns.all_start_micros = start
        ns.op_start_rel_micros = 0
        ns.op_end_rel_micros = max(0, int(t1 * 1e6) - start)
        ns.all_end_rel_micros = ns.op_end_rel_micros
        ns.timeline_label = f"{node.name} = {node.op}({', '.join(node.inputs)})"
        ns.thread_id = tid
        outs = out if isinstance(out, (list, tuple)) and len(node.out_dtypes) > 1 else (
            [out] if node.out_dtypes else [])
        for slot, v in enumerate(outs):
            if not isinstance(v, (np.ndarray, np.generic)):
                continue
            o = ns.output.add()
            o.slot = slot
            o.tensor_description.dtype = node.out_dtypes[slot].base_dtype.as_datatype_enum
            for d in np.shape(v):
                o.tensor_description.shape.dim.add().size = int(d)
