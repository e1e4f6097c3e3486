"""MasterService: master sessions for clients in other processes, on a Server.

A remote client sends its GraphDef (``CreateSession``) and the nodes it adds later
(``ExtendSession``, append-only, versioned); the session compiles signatures with the same
``MasterSession`` an in-process client uses, over the server's ``ClusterEnv``. Feeds and fetches
travel by tensor name (``RunStep``) or by position (``MakeCallable``/``RunCallable``).

Example:
    >>> src = GraphDefSource()
    >>> src.version
    0
"""

from __future__ import annotations

import itertools
import secrets
import threading
import weakref

from sparseflow._src.distributed import wire
from sparseflow._src.distributed.cluster_env import ClusterEnv
from sparseflow._src.distributed.proto import master_pb2
from sparseflow._src.distributed.worker_service import RecentRequestIds, check_protocol
from sparseflow._src.framework import errors
from sparseflow._src.framework.graph_io import graph_def_to_ir
from sparseflow._src.framework.ir import GraphIR
from sparseflow._src.runtime.master import MasterSession, deadline_from


class GraphDefSource:
    """A client graph received as GraphDefs: append-only, versioned (ExtendSession)."""

    def __init__(self):
        self._ir = GraphIR()
        self.version = 0
        self.graph = None  # no Python graph: the client is in another process

    def extend(self, graph_def, current_version: int | None = None):
        if current_version is not None and current_version != self.version:
            raise errors.AbortedError(None, None, f"The client extends graph version {current_version}, the "
                                                  f"session has version {self.version}.")
        try:
            add = graph_def_to_ir(graph_def)
        except (ValueError, TypeError, KeyError) as e:
            raise errors.InvalidArgumentError(None, None, f"Malformed GraphDef: {e}") from None
        for n in add.nodes:
            if n.name in self._ir:
                raise errors.InvalidArgumentError(None, None, f"ExtendSession: node '{n.name}' already exists in the "
                                                              f"session's graph.")
        for n in add.nodes:
            self._ir.add(n)
        self._ir.library.update(add.library)
        if add.versions is not None:
            self._ir.versions = add.versions
        self.version += 1
        return self.version

    def ir(self) -> GraphIR:
        return self._ir.copy()


class _RemoteSession:
    def __init__(self, master: MasterSession, source: GraphDefSource, config):
        self.master = master
        self.source = source
        self.config = config
        self.callables: dict[int, tuple] = {}
        self.lock = threading.Lock()


class MasterServicer:
    """Serves master sessions of remote clients on ``server`` (see the module docstring)."""

    def __init__(self, server):
        self.server = server
        self._sessions: dict[str, _RemoteSession] = {}
        self._lock = threading.Lock()
        self._callable_ids = itertools.count(1)
        self._requests = RecentRequestIds()
        self.in_process_sessions: weakref.WeakSet = weakref.WeakSet()  # sessions of clients in this process

    def _session(self, handle: str) -> _RemoteSession:
        s = self._sessions.get(handle)
        if s is None:
            raise errors.AbortedError(None, None, f"Session {handle} is not found. Possibly, this master "
                                                  f"({self.server.task}) has restarted.")
        return s

    def new_env(self, config) -> ClusterEnv:
        wait = self.server.task_wait_seconds
        if config is not None and getattr(config, "operation_timeout_in_ms", 0):
            wait = config.operation_timeout_in_ms / 1000.0
        return ClusterEnv(self.server, wait)

    # ------------------------------------------------------------------ sessions
    def CreateSession(self, req, context):
        check_protocol(req.protocol_version, "The client")
        source = GraphDefSource()
        source.extend(req.graph_def)
        source.version = 0
        config = req.config if req.HasField("config") else None
        handle = f"{secrets.randbits(64):016x}"
        master = MasterSession(handle, source, self.new_env(config), config)
        with self._lock:
            self._sessions[handle] = _RemoteSession(master, source, config)
        return master_pb2.CreateSessionResponse(session_handle=handle, graph_version=0)

    def ExtendSession(self, req, context):
        s = self._session(req.session_handle)
        with s.lock:
            v = s.source.extend(req.graph_def, req.current_graph_version)
        return master_pb2.ExtendSessionResponse(new_graph_version=v)

    def CloseSession(self, req, context):
        with self._lock:
            s = self._sessions.pop(req.session_handle, None)
        if s is not None:
            s.master.close()
        return master_pb2.CloseSessionResponse()

    def ListDevices(self, req, context):
        resp = master_pb2.ListDevicesResponse()
        for d in self.server.worker.get_status():
            resp.local_device.add(name=d.name, device_type="CPU", incarnation=d.incarnation)
        s = self._sessions.get(req.session_handle) if req.session_handle else None
        if s is not None:
            env = s.master.env
            for name, inc in sorted(env.incarnations().items()):
                if not name.startswith(self.server.worker.task + "/"):
                    resp.remote_device.add(name=name, device_type="CPU", incarnation=inc)
        return resp

    def Reset(self, req, context):
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for s in sessions:
            s.master.close()
        for m in list(self.in_process_sessions):
            m.close()
        containers = list(req.container) or None
        self.server.worker.cleanup_all(containers)
        for task in self.server.cluster_spec.device_names():
            if task != self.server.worker.task and (not req.device_filters or
                                                    any(task.startswith(f) for f in req.device_filters)):
                try:
                    self.server.remote_worker(task).cleanup_all(containers)
                except errors.UnavailableError:
                    pass
        return master_pb2.ResetResponse()

    def PartialRunSetup(self, req, context):
        self._requests.track(req.request_id, "PartialRunSetup")
        s = self._session(req.session_handle)
        handle = s.master.partial_run_setup(list(req.feed), list(req.fetch), list(req.target))
        return master_pb2.PartialRunSetupResponse(partial_run_handle=handle)

    # ------------------------------------------------------------------ steps
    def RunStep(self, req, context):
        self._requests.track(req.request_id, "RunStep")
        s = self._session(req.session_handle)
        names = [t.name for t in req.feed]
        values = [wire.tensor_from_proto(t.tensor, f"feed {t.name}") for t in req.feed]
        if req.partial_run_handle:
            options = req.options if req.HasField("options") else None
            out = s.master.partial_run(req.partial_run_handle, names, values, list(req.fetch),
                                       deadline_from(options, s.config), options)
            resp = master_pb2.RunStepResponse()
            for name, value in zip(req.fetch, out):
                wire.tensor_to_proto(value, resp.tensor.add(name=name).tensor)
            return resp
        graph = s.master.compile(names, list(req.fetch), list(req.target))
        options = req.options if req.HasField("options") else None
        out = self._run(s, graph, values, options)
        resp = master_pb2.RunStepResponse()
        for name, value in zip(req.fetch, out[0]):
            wire.tensor_to_proto(value, resp.tensor.add(name=name).tensor)
        if out[1] is not None:
            resp.metadata.CopyFrom(out[1])
        return resp

    def MakeCallable(self, req, context):
        self._requests.track(req.request_id, "MakeCallable")
        s = self._session(req.session_handle)
        o = req.options
        graph = s.master.compile(list(o.feed), list(o.fetch), list(o.target))
        run_options = o.run_options if o.HasField("run_options") else None
        handle = next(self._callable_ids)
        with s.lock:
            s.callables[handle] = (graph, run_options, len(o.feed))
        return master_pb2.MakeCallableResponse(handle=handle)

    def RunCallable(self, req, context):
        self._requests.track(req.request_id, "RunCallable")
        s = self._session(req.session_handle)
        entry = s.callables.get(req.handle)
        if entry is None:
            raise errors.InvalidArgumentError(None, None, f"No callable {req.handle} in session {req.session_handle}.")
        graph, run_options, n = entry
        if len(req.feed) != n:
            raise errors.InvalidArgumentError(None, None, f"The callable takes {n} feeds, got {len(req.feed)}.")
        values = [wire.tensor_from_proto(t, f"feed {i}") for i, t in enumerate(req.feed)]
        out, md = self._run(s, graph, values, run_options)
        resp = master_pb2.RunCallableResponse()
        for value in out:
            wire.tensor_to_proto(value, resp.fetch.add())
        if md is not None:
            resp.metadata.CopyFrom(md)
        return resp

    def ReleaseCallable(self, req, context):
        s = self._session(req.session_handle)
        with s.lock:
            s.callables.pop(req.handle, None)
        return master_pb2.ReleaseCallableResponse()

    def _run(self, s: _RemoteSession, graph, values, options):
        from sparseflow._src.framework.proto.config_pb2 import RunMetadata
        from sparseflow._src.runtime.step_stats import fill_step_stats

        deadline = deadline_from(options, s.config)
        trace = getattr(options, "trace_level", 0) if options is not None else 0
        stats = [] if trace else None
        out = graph.run(values, deadline, options, stats)
        md = None
        if stats is not None or getattr(options, "output_partition_graphs", False):
            md = RunMetadata()
            if stats is not None:
                fill_step_stats(md, stats)
            if getattr(options, "output_partition_graphs", False):
                for ir in graph.partition_irs.values():
                    md.partition_graphs.add().CopyFrom(wire.partition_to_graph_def(ir.nodes, {}))
        return out, md


