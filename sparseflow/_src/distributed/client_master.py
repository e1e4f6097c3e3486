"""``tf.Session("grpc://host:port")``: how a client session reaches a cluster's master.

When a ``Server`` with that target lives in this process (``tf.Session(server.target)``, the
usual between-graph setup), the session gets a ``MasterSession`` over the server's cluster
environment, reading the client's live graph: no RPC to itself, and feeds and fetches are never
serialized. Otherwise the master is in another process: ``RemoteMaster`` sends the graph
(``CreateSession``, then ``ExtendSession`` with the nodes added since), compiles each signature
once (``MakeCallable``) and runs it (``RunCallable``).

Example:
    >>> open_session_master.__name__
    'open_session_master'
"""

from __future__ import annotations

import itertools
import secrets
import time

from sparseflow._src.distributed import wire
from sparseflow._src.distributed.proto import master_pb2, master_service_pb2
from sparseflow._src.distributed.rpc import Client, Security
from sparseflow._src.distributed.server import local_server
from sparseflow._src.distributed.worker_service import PROTOCOL_VERSION
from sparseflow._src.framework import errors
from sparseflow._src.framework.graph_io import _add_library, op_to_node_def
from sparseflow._src.framework.proto import config_pb2, graph_pb2
from sparseflow._src.runtime.master import GraphSource, MasterSession

_SERVICE = master_service_pb2.DESCRIPTOR.services_by_name["MasterService"]
_request_ids = itertools.count(secrets.randbits(40) << 20)


def open_session_master(target: str, graph, config):
    """The master of a ``grpc://`` session target (see the module docstring)."""
    server = local_server(target)
    if server is not None:
        if graph is None:  # Session.reset: the server's master itself
            return _LocalMasterAdmin(server)
        env = server.master.new_env(config)
        master = MasterSession(f"{secrets.randbits(64):016x}", GraphSource(graph), env, config)
        server.master.in_process_sessions.add(master)  # Reset closes them too
        return master
    return RemoteMaster(target, graph, config)


class _LocalMasterAdmin:
    """Master-wide calls (Reset) on a server of this process."""

    def __init__(self, server):
        self.server = server

    def reset(self, containers=None):
        self.server.master.Reset(master_pb2.ResetRequest(container=list(containers or [])), None)

    def close(self):
        pass


class RemoteMaster:
    """A master session in another process (see the module docstring)."""

    def __init__(self, target: str, graph, config, security: Security | None = None):
        self.target = target
        self.graph = graph
        self.config = config
        address = target[len("grpc://"):]
        self._client = Client(address, _SERVICE, security or Security.from_env(), peer_name=f"master {address}")
        self.handle = None
        self._version = 0
        self._sent_ops = 0
        self._sent_functions: set = set()
        self._graphs: dict = {}
        self._closed = False
        self.env = None

    def _new_nodes(self) -> graph_pb2.GraphDef:
        ops = self.graph.get_operations()
        gd = graph_pb2.GraphDef()
        for op in ops[self._sent_ops:]:
            gd.node.add().CopyFrom(op_to_node_def(op))
        functions = {k: v for k, v in getattr(self.graph, "_functions", {}).items() if k not in self._sent_functions}
        _add_library(gd, functions)
        self._sent_ops = len(ops)
        self._sent_functions.update(functions)
        return gd

    def _sync(self):
        if self.handle is None:
            req = master_pb2.CreateSessionRequest(graph_def=self._new_nodes(), target=self.target,
                                                  protocol_version=PROTOCOL_VERSION)
            if self.config is not None:
                req.config.CopyFrom(self.config)
            resp = self._client.call("CreateSession", req, timeout=_create_timeout(self.config))
            self.handle = resp.session_handle
            self._version = resp.graph_version
        elif len(self.graph.get_operations()) > self._sent_ops:
            req = master_pb2.ExtendSessionRequest(session_handle=self.handle, graph_def=self._new_nodes(),
                                                  current_graph_version=self._version)
            self._version = self._client.call("ExtendSession", req).new_graph_version

    def compile(self, feeds, fetches, targets):
        key = (tuple(feeds), tuple(fetches), tuple(targets), self.graph._mutations)
        c = self._graphs.get(key)
        if c is None:
            if self._closed:
                raise errors.CancelledError(None, None, "Session has been closed.")
            self._sync()
            opts = config_pb2.CallableOptions(feed=list(feeds), fetch=list(fetches), target=list(targets))
            resp = self._client.call("MakeCallable", master_pb2.MakeCallableRequest(
                session_handle=self.handle, options=opts, request_id=next(_request_ids)),
                timeout=_create_timeout(self.config))
            c = self._graphs[key] = RemoteCallable(self, resp.handle, list(feeds), list(fetches), list(targets))
        return c

    def partial_run_setup(self, feeds, fetches, targets) -> str:
        if self._closed:
            raise errors.CancelledError(None, None, "Session has been closed.")
        self._sync()
        req = master_pb2.PartialRunSetupRequest(session_handle=self.handle, feed=list(feeds), fetch=list(fetches),
                                                target=list(targets), request_id=next(_request_ids))
        return self._client.call("PartialRunSetup", req, timeout=_create_timeout(self.config)).partial_run_handle

    def partial_run(self, handle, feeds, values, fetches) -> list:
        req = master_pb2.RunStepRequest(session_handle=self.handle, fetch=list(fetches), partial_run_handle=handle,
                                        request_id=next(_request_ids))
        for name, v in zip(feeds, values):
            wire.tensor_to_proto(v, req.feed.add(name=name).tensor)
        resp = self._client.call("RunStep", req, timeout=_create_timeout(self.config))
        return [wire.tensor_from_proto(t.tensor, t.name) for t in resp.tensor]

    def reset(self, containers=None):
        """Closes every session of the master and clears ``containers`` (all when None) on its tasks."""
        self._client.call("Reset", master_pb2.ResetRequest(container=list(containers or [])))

    def list_devices(self):
        from sparseflow._src.runtime.worker import DeviceAttributes

        self._sync()
        resp = self._client.call("ListDevices", master_pb2.ListDevicesRequest(session_handle=self.handle))
        return [DeviceAttributes(d.name, d.device_type, d.memory_limit, d.incarnation)
                for d in list(resp.local_device) + list(resp.remote_device)]

    def close(self):
        if self._closed:
            return
        self._closed = True
        if self.handle is not None:
            try:
                self._client.call("CloseSession", master_pb2.CloseSessionRequest(session_handle=self.handle), 10.0)
            except errors.OpError:
                pass
        self._client.close()


class RemoteCallable:
    """One compiled signature on a remote master."""

    direct_plan = None
    partition_irs: dict = {}
    explain_text = "# explain() shows the plan of in-process sessions; this session's master is remote."

    def __init__(self, master: RemoteMaster, handle: int, feeds: list, fetches: list, targets: list):
        self.master = master
        self.handle = handle
        self.feeds, self.fetches, self.targets = feeds, fetches, targets

    def run(self, feeds: list, deadline: float | None = None, run_options=None, stats=None, pool=None) -> list:
        client = self.master._client
        timeout = None if deadline is None else max(0.001, deadline - time.monotonic()) + 5.0
        if run_options is None and stats is None:
            req = master_pb2.RunCallableRequest(session_handle=self.master.handle, handle=self.handle,
                                                request_id=next(_request_ids))
            for v in feeds:
                wire.tensor_to_proto(v, req.feed.add())
            return [wire.tensor_from_proto(t, "fetch") for t in client.call("RunCallable", req, timeout).fetch]
        # Per-run options (a timeout, tracing) travel with a RunStep.
        req = master_pb2.RunStepRequest(session_handle=self.master.handle, fetch=self.fetches, target=self.targets,
                                        request_id=next(_request_ids))
        for name, v in zip(self.feeds, feeds):
            wire.tensor_to_proto(v, req.feed.add(name=name).tensor)
        if run_options is not None:
            req.options.CopyFrom(run_options)
        resp = client.call("RunStep", req, timeout)
        if stats is not None:
            stats.extend(resp.metadata.step_stats.dev_stats)
        return [wire.tensor_from_proto(t.tensor, t.name) for t in resp.tensor]


def _create_timeout(config) -> float:
    ms = getattr(config, "operation_timeout_in_ms", 0) if config is not None else 0
    return ms / 1000.0 + 5.0 if ms else 120.0
