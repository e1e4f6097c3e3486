"""A traced step as a Chrome trace (``chrome://tracing``, Perfetto): TensorFlow's ``Timeline``.

``Timeline(run_metadata.step_stats).generate_chrome_trace_format()`` gives the JSON text: one
process per device (``<device> Compute``) whose complete events ("X") are the executed ops (name:
the op type; args: node name, op type, inputs), one row per thread; with ``show_dataflow`` a flow
arrow ("s" to "t") from the op that produced each input to the op that used it, and with
``show_memory`` each output tensor as an object (``<device> Tensors``: created, snapshot with its
dtype and shape, deleted after its last use).

Example:
    >>> import json
    >>> import sparseflow as tf
    >>> from sparseflow.client import timeline
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.placeholder(tf.float32, [1, 2], name="x")
    ...     z = tf.reduce_sum(tf.matmul(x, x, transpose_b=True, name="mm"), name="z")
    ...     md = tf.RunMetadata()
    ...     _ = sess.run(z, {x: [[1.0, 2.0]]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
    ...                  run_metadata=md)
    >>> trace = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format())
    >>> [(e["name"], e["args"]["name"]) for e in trace["traceEvents"] if e["ph"] == "X"]
    [('MatMul', 'mm'), ('Const', 'Const'), ('Sum', 'z')]
    >>> [e["ph"] for e in trace["traceEvents"] if e.get("cat") == "DataFlow"]
    ['s', 't', 's', 't']
"""

from __future__ import annotations

import json
import re

__all__ = ["Timeline"]

_LABEL = re.compile(r"^(?P<name>[^=]*?)\s*=\s*(?P<op>[\w.:]*)\((?P<inputs>.*)\)\s*$")


def _parse_label(label: str, node_name: str):
    """``name = Op(in1, in2)`` -> (op type, [inputs]); unknown forms -> (node name, [])."""
    m = _LABEL.match(label or "")
    if not m:
        return node_name, []
    inputs = [s.strip() for s in m.group("inputs").split(",") if s.strip()]
    return m.group("op") or node_name, inputs


class Timeline:
    """The Chrome trace of a StepStats proto (``run_metadata.step_stats``)."""

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph  # accepted for TensorFlow's signature; node inputs come from the labels

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False, op_time="schedule"):
        """The trace as JSON text (see the module docstring)."""
        del op_time  # one timing per node here: its start and its end
        events: list[dict] = []
        ops = []  # (node name, device pid, tid, start, end, inputs)
        for pid, dev in enumerate(self._step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": 2 * pid,
                           "args": {"name": f"{dev.device} Compute"}})
            events.append({"name": "process_sort_index", "ph": "M", "pid": 2 * pid, "args": {"sort_index": 2 * pid}})
            if show_memory:
                events.append({"name": "process_name", "ph": "M", "pid": 2 * pid + 1,
                               "args": {"name": f"{dev.device} Tensors"}})
            threads = set()
            for ns in dev.node_stats:
                op_type, inputs = _parse_label(ns.timeline_label, ns.node_name)
                start, dur = ns.all_start_micros, max(ns.all_end_rel_micros, 0)
                if ns.thread_id not in threads:
                    threads.add(ns.thread_id)
                    events.append({"name": "thread_name", "ph": "M", "pid": 2 * pid, "tid": ns.thread_id,
                                   "args": {"name": f"thread {ns.thread_id}"}})
                args = {"name": ns.node_name, "op": op_type}
                args.update({f"input{i}": name for i, name in enumerate(inputs)})
                events.append({"name": op_type, "ph": "X", "cat": "Op", "pid": 2 * pid, "tid": ns.thread_id,
                               "ts": start, "dur": dur, "args": args})
                ops.append((ns, 2 * pid, start, start + dur, inputs))
        if show_dataflow:
            events.extend(self._flows(ops))
        if show_memory:
            events.extend(self._tensors(ops))
        return json.dumps({"traceEvents": events}, separators=(",", ":"))

    @staticmethod
    def _flows(ops):
        produced = {ns.node_name: (pid, ns.thread_id, end) for ns, pid, _, end, _ in ops}
        out, flow_id = [], 0
        for ns, pid, start, _, inputs in ops:
            for name in inputs:
                src = produced.get(name.lstrip("^").split(":")[0])
                if src is None:
                    continue
                s_pid, s_tid, s_end = src
                out.append({"name": "dataflow", "ph": "s", "cat": "DataFlow", "id": flow_id, "pid": s_pid,
                            "tid": s_tid, "ts": s_end})
                out.append({"name": "dataflow", "ph": "t", "cat": "DataFlow", "id": flow_id, "pid": pid,
                            "tid": ns.thread_id, "ts": start})
                flow_id += 1
        return out

    @staticmethod
    def _tensors(ops):
        from sparseflow._src.framework import dtypes

        last_use: dict[str, int] = {}
        for _, _, _, end, inputs in ops:
            for name in inputs:
                key = name if ":" in name else f"{name}:0"
                last_use[key] = max(last_use.get(key, 0), end)
        out = []
        for ns, pid, _, end, _ in ops:
            for o in ns.output:
                name = f"{ns.node_name}:{o.slot}"
                desc = o.tensor_description
                shape = [d.size for d in desc.shape.dim]
                try:
                    dtype = dtypes.as_dtype(desc.dtype).name
                except (TypeError, ValueError, KeyError):
                    dtype = str(desc.dtype)
                base = {"name": name, "cat": "Tensor", "id": name, "pid": pid + 1, "tid": 0}
                out.append({**base, "ph": "N", "ts": end})
                out.append({**base, "ph": "O", "ts": end, "args": {"snapshot": {"dtype": dtype, "shape": shape}}})
                out.append({**base, "ph": "D", "ts": max(end, last_use.get(name, end))})
        return out
