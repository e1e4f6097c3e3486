"""The worker role: one task's devices, and the graphs masters register and run on them.

A ``Worker`` owns a process-level ``DeviceMgr``: variables, tables and queues live in the
devices' resource managers and outlive any one client session (a local ``tf.Session`` owns a
worker of its own, so its variables end with it, as in TensorFlow). Per master session there is
a ``WorkerSession`` (its stateful kernels and per-session kernel state) and its registered graphs,
each a ``PartitionGraph`` (one plan per device). Steps meet at a per-step rendezvous (step.py);
another task's ``_Recv`` pulls a value with ``recv_tensor_async``, which checks the sender's
incarnation so that a restarted task never answers a stale key.

The same object serves an in-process master directly and a remote one through the
distributed layer's WorkerService, which only translates protos to these calls.

Example:
    >>> w = Worker(DeviceMgr.local(1, job="worker", task=0))
    >>> w.task, [d.name[-5:] for d in w.get_status()]
    ('/job:worker/replica:0/task:0', ['CPU:0'])
"""

from __future__ import annotations

import itertools
import threading
import time

from sparseflow._src.framework import errors
from sparseflow._src.framework.rendezvous_key import parse_key
from sparseflow._src.runtime.devices import DeviceMgr
from sparseflow._src.runtime.partition_graph import PartitionGraph
from sparseflow._src.runtime.step import StepTable, task_of_device
from sparseflow._src.runtime.threads import ElasticPool


class DeviceAttributes:
    """What ``GetStatus`` tells about a device (TensorFlow's DeviceAttributes fields)."""

    __slots__ = ("name", "device_type", "memory_limit_bytes", "incarnation")

    def __init__(self, name, device_type, memory_limit_bytes, incarnation):
        self.name = name
        self.device_type = device_type
        self.memory_limit_bytes = memory_limit_bytes
        self.incarnation = incarnation

    def __repr__(self):
        return f"_DeviceAttributes({self.name}, {self.device_type}, {self.memory_limit_bytes}, {self.incarnation})"


class WorkerSession:
    """One master session's state on a worker: stateful kernels, kernel state, registered graphs."""

    def __init__(self, handle: str, worker: Worker, client_graph=None):
        self.handle = handle
        self.worker = worker
        self._stateful_kernels: dict = {}
        # Per-session state shared by stateful kernels (random counters, ...); "graph" lets kernels of
        # host-side resources (datasets) find the client's Python objects when it runs in-process;
        # "worker" lets kernels reach this task's devices and other tasks (worker.remote(task)): the
        # cluster pull/push kernels of sharded embedding tables (kernels/embedding_cluster.py).
        self._session_state: dict = {"graph": client_graph, "worker": worker}
        self.graphs: dict[str, PartitionGraph] = {}
        self._lock = threading.Lock()

    def stateful_kernel(self, node, kdef, kernel_node, scope: str = ""):
        """The kernel of a stateful node, built once per session and node (``scope``: function body)."""
        key = (scope, node.device, node.name, node.op)
        k = self._stateful_kernels.get(key)
        if k is None:
            with self._lock:
                k = self._stateful_kernels.get(key)
                if k is None:
                    k = self._stateful_kernels[key] = kdef.factory(kernel_node)
        return k

    def reset_kernels(self):
        self._stateful_kernels.clear()


class Worker:
    """A task's worker (see the module docstring). ``remote(task)`` gives another task's worker
    interface, for pulling tensors; None on a single-process worker."""

    def __init__(self, devices: DeviceMgr, remote=None):
        self.devices = devices
        self.task = task_of_device(devices.names[0])
        self.remote = remote
        # The collective executor (kernels/collective_executor.py): a Server installs one that reaches
        # other tasks; otherwise the collective kernels create an in-process one on first use.
        self.collectives = None
        self.steps = StepTable(self.task, self._remote_of)
        self._sessions: dict[str, WorkerSession] = {}
        self._graph_ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pool = ElasticPool("sparseflow-recv")
        self.started = time.time()

    def _remote_of(self, task: str):
        if self.remote is None:
            raise errors.InternalError(None, None, f"{self.task} has no route to {task}.")
        return self.remote(task)

    # ------------------------------------------------------------------ status and sessions
    def get_status(self) -> list[DeviceAttributes]:
        return [DeviceAttributes(n, "CPU", 0, self.devices.incarnations[n]) for n in self.devices.names]

    def create_worker_session(self, handle: str, client_graph=None) -> WorkerSession:
        with self._lock:
            ws = self._sessions.get(handle)
            if ws is None:
                ws = self._sessions[handle] = WorkerSession(handle, self, client_graph)
            return ws

    def session(self, handle: str) -> WorkerSession:
        ws = self._sessions.get(handle)
        if ws is None:
            raise errors.AbortedError(None, None, f"Session {handle} is not found on {self.task}. Possibly, this "
                                                  f"worker ({self.task}) just restarted.")
        return ws

    def delete_worker_session(self, handle: str):
        with self._lock:
            self._sessions.pop(handle, None)

    # ------------------------------------------------------------------ graphs
    def register_graph(self, handle: str, nodes, library, feed_nodes=(), fetch_nodes=(), recv_batches=(),
                       streamed=()) -> str:
        """Compiles one task's nodes (in the step's global order) into plans; returns the graph handle.
        ``recv_batches``: lists of ``_Recv`` names pulled in one call each; ``streamed``: ``_Recv`` names
        whose values the master delivers from their senders' RunGraph streams (runtime/recv_batches.py)."""
        ws = self.session(handle)
        unknown = sorted({n.device for n in nodes} - set(self.devices.names))
        if unknown:
            raise errors.InvalidArgumentError(None, None, f"{self.task} has no device {unknown[0]} (its devices: "
                                                          f"{', '.join(self.devices.names)}).")
        graph = PartitionGraph(list(nodes), library, list(feed_nodes), list(fetch_nodes), self.devices, ws,
                               recv_batches, streamed)
        gh = f"{next(self._graph_ids):016x}"
        with ws._lock:
            ws.graphs[gh] = graph
        return gh

    def graph(self, handle: str, graph_handle: str) -> PartitionGraph:
        g = self.session(handle).graphs.get(graph_handle)
        if g is None:
            raise errors.AbortedError(None, None, f"Graph handle {graph_handle} is not found on {self.task}. "
                                                  f"Possibly, this worker just restarted.")
        return g

    def deregister_graph(self, handle: str, graph_handle: str):
        ws = self._sessions.get(handle)
        if ws is not None:
            with ws._lock:
                ws.graphs.pop(graph_handle, None)

    def run_graph(self, handle: str, graph_handle: str, step_id: int, feeds=(), deadline: float | None = None,
                  run_options=None, stats: list | None = None, pool=None) -> list:
        """Runs a registered graph for one step; returns its fetches (only the client task has any)."""
        graph = self.graph(handle, graph_handle)
        step = self.steps.get(step_id)
        if step.error is not None:
            raise step.error
        step.running += 1
        try:
            return graph.run(list(feeds), step, deadline, self.session(handle), run_options, stats, pool)
        except BaseException as e:
            step.abort(e)
            if isinstance(step.error, errors.CancelledError) and isinstance(e, errors.OpError):
                raise  # a cancelled step: the kernel's own error names the op that was waiting
            raise step.error from None
        finally:
            step.running -= 1

    def cleanup_graph(self, step_id: int, error: BaseException | None = None):
        """Ends ``step_id`` here; with ``error``, a step still running here is aborted with it."""
        self.steps.end(step_id, error)

    def cleanup_all(self, containers=None):
        """Destroys the resources of ``containers`` (every container when None) on every device."""
        self.devices.clear(containers)
        with self._lock:
            for ws in self._sessions.values():
                ws.reset_kernels()

    # ------------------------------------------------------------------ tensors for other tasks
    def recv_tensor_async(self, step_id: int, key: str, callback):
        """Calls ``callback(value, error)`` when this task has sent ``key`` in ``step_id``."""
        try:
            src, incarnation, _, _, _ = parse_key(key)
            mine = self.devices.incarnations.get(src)
            if mine is None:
                raise errors.InvalidArgumentError(None, None, f"RecvTensor for {key}: {src} is not a device of "
                                                              f"{self.task}.")
            if mine != incarnation:
                raise errors.AbortedError(None, None, f"RecvTensor for {key}: {src} has restarted (incarnation "
                                                      f"{mine:016x}, the key has {incarnation:016x}).")
        except errors.OpError as e:
            callback(None, e)
            return lambda: None
        self.steps.get(step_id).rendezvous.local.recv_async(key, callback)
        return lambda: None
