"""The worker interface of another task, over gRPC (what masters and rendezvous call).

It offers the calls an in-process ``runtime.worker.Worker`` offers the master, with futures for
the per-step ones: ``run_graph_async``, ``cleanup_graph_async``, ``recv_tensor_async``,
``recv_tensors_async`` (a batch of keys in one streamed call, each value as it is sent), and the
embedding-table shards' ``table_pull_async`` / ``table_push_async`` (table_service.py). Every
call has a deadline; a task that cannot be reached is an ``UnavailableError`` naming it.

Example:
    >>> from sparseflow._src.distributed.rpc import Security
    >>> w = RemoteWorker("/job:ps/replica:0/task:0", "127.0.0.1:1", Security())
    >>> w.task
    '/job:ps/replica:0/task:0'
"""

from __future__ import annotations

import itertools
import secrets
import time
from concurrent.futures import Future

import numpy as np

from sparseflow._src.distributed import wire
from sparseflow._src.distributed.collective_service import CollectiveClient
from sparseflow._src.distributed.proto import worker_pb2, worker_service_pb2
from sparseflow._src.distributed.rpc import Client
from sparseflow._src.distributed.table_service import TableClient
from sparseflow._src.distributed.worker_service import PROTOCOL_VERSION, error_to_status
from sparseflow._src.framework import errors
from sparseflow._src.runtime.threads import ElasticPool

_SERVICE = worker_service_pb2.DESCRIPTOR.services_by_name["WorkerService"]
_request_ids = itertools.count(secrets.randbits(40) << 20)
_CHUNK_POOL = ElasticPool("sparseflow-chunks")
_STREAM_POOL = ElasticPool("sparseflow-streams")  # one thread per RecvTensorStream in flight takes its messages


class RemoteWorker(TableClient, CollectiveClient):
    """Calls one task's WorkerService (see the module docstring); the embedding-table calls
    (``table_pull_async``, ``table_push_async``) come from ``TableClient``."""

    def __init__(self, task: str, address: str, security):
        self.task = task
        self.address = address
        self._client = Client(address, _SERVICE, security, peer_name=f"{task} ({address})")

    @staticmethod
    def next_request_id() -> int:
        return next(_request_ids)

    # ------------------------------------------------------------------ discovery and sessions
    def get_status(self, timeout: float, wait_for_ready: bool = True) -> worker_pb2.GetStatusResponse:
        return self._client.call("GetStatus", worker_pb2.GetStatusRequest(protocol_version=PROTOCOL_VERSION),
                                 timeout, wait_for_ready=wait_for_ready)

    def create_worker_session(self, handle: str, master_task: str, master_incarnation: int, cluster_def=None):
        req = worker_pb2.CreateWorkerSessionRequest(session_handle=handle, master_task=master_task,
                                                    master_incarnation=master_incarnation,
                                                    protocol_version=PROTOCOL_VERSION)
        if cluster_def is not None:
            req.cluster.CopyFrom(cluster_def)
        self._client.call("CreateWorkerSession", req)

    def delete_worker_session_async(self, handle: str):
        self._client.future("DeleteWorkerSession", worker_pb2.DeleteWorkerSessionRequest(session_handle=handle),
                            10.0)

    # ------------------------------------------------------------------ graphs and steps
    def register_graph(self, handle: str, nodes, library, versions=None, recv_batches=()) -> str:
        gd = wire.partition_to_graph_def(nodes, library, versions)
        req = worker_pb2.RegisterGraphRequest(session_handle=handle, graph_def=gd)
        for batch in recv_batches:
            req.recv_batch.add(recv_node=list(batch))
        return self._client.call("RegisterGraph", req).graph_handle

    def deregister_graph_async(self, handle: str, graph_handle: str):
        self._client.future("DeregisterGraph", worker_pb2.DeregisterGraphRequest(session_handle=handle,
                                                                                 graph_handle=graph_handle), 10.0)

    def run_graph_async(self, handle: str, graph_handle: str, step_id: int, deadline: float | None,
                        trace: bool = False, cleanup_step_ids=(), stream_keys=(), deliver=None) -> Future:
        """A future of the step's stats (a list of DeviceStepStats protos, empty unless ``trace``), with
        ``.rpc.cancel()``. ``stream_keys``: rendezvous keys this task sends to the caller's task in the
        step; the response stream brings their values as they are sent, handed to
        ``deliver([(key, value), ...])`` (all of them before the future completes)."""
        req = worker_pb2.RunGraphRequest(session_handle=handle, graph_handle=graph_handle, step_id=step_id,
                                         record_timeline=trace, request_id=next(_request_ids))
        req.cleanup_step_ids.extend(cleanup_step_ids)
        keys = list(stream_keys)
        req.stream_key.extend(keys)
        timeout = None
        if deadline is not None:
            left = deadline - time.monotonic()
            req.timeout_in_ms = max(1, int(left * 1000))
            timeout = max(0.001, left) + 5.0  # the worker reports the deadline itself, naming the op
        out: Future = Future()
        out.rpc = self._client.stream("RunGraph", req, timeout)
        _STREAM_POOL.submit(self._take_run_graph, step_id, keys, out.rpc, deliver, out)
        return out

    def _take_run_graph(self, step_id: int, keys: list, call, deliver, out: Future):
        left = set(range(len(keys)))
        stats = []
        try:
            for resp in call:
                idx = list(resp.sent_index)
                if len(idx) != len(resp.sent) or len(set(idx)) != len(idx) or not left.issuperset(idx):
                    raise errors.InternalError(None, None, f"RunGraph on {self.task} streamed {len(resp.sent)} "
                                                           f"values naming positions {idx[:8]} of {len(keys)} "
                                                           f"stream keys ({len(left)} not yet sent).")
                left.difference_update(idx)
                values = [(keys[i], self._value_of(step_id, keys[i], item)) for i, item in zip(idx, resp.sent)]
                if values:
                    deliver(values)
                if resp.HasField("step_stats"):
                    stats = list(resp.step_stats.dev_stats)
            if left:
                raise errors.InternalError(None, None, f"RunGraph on {self.task} ended without streaming "
                                                       f"{keys[min(left)]} ({len(left)} of {len(keys)} keys).")
        except BaseException as e:  # noqa: BLE001 - handed to the master
            out.set_exception(e)
            return
        out.set_result(stats)

    def _value_of(self, step_id: int, key: str, item):
        """The value of a RecvTensorResponse (its chunks fetched here when it was announced)."""
        if not item.total_bytes:
            return wire.tensor_from_proto(item.tensor, key)
        box = []
        self._fetch_chunks(step_id, key, item, lambda value, err: box.append((value, err)))
        value, err = box[0]
        if err is not None:
            raise err
        return value

    def cleanup_graph_async(self, step_id: int, error: BaseException | None = None):
        req = worker_pb2.CleanupGraphRequest(step_id=step_id)
        if error is not None:
            req.abort_with.CopyFrom(error_to_status(error))
        self._client.future("CleanupGraph", req, 10.0)

    def cleanup_steps_async(self, step_ids):
        ids = list(step_ids)
        if ids:
            self._client.future("CleanupGraph", worker_pb2.CleanupGraphRequest(step_id=ids[0],
                                                                              more_step_ids=ids[1:]), 10.0)

    def cleanup_all(self, containers=None):
        self._client.call("CleanupAll", worker_pb2.CleanupAllRequest(container=list(containers or [])))

    def recv_tensor_async(self, step_id: int, key: str, callback):
        """Pulls ``key`` of ``step_id`` from this task; ``callback(value, error)``; returns a cancel
        function."""
        req = worker_pb2.RecvTensorRequest(step_id=step_id, rendezvous_key=key, request_id=next(_request_ids))
        f = self._client.future("RecvTensor", req, None)

        def done(fut):
            try:
                resp = fut.result()
            except BaseException as e:  # noqa: BLE001 - handed to the receiver
                callback(None, e)
                return
            if resp.total_bytes:
                _CHUNK_POOL.submit(self._fetch_chunks, step_id, key, resp, callback)
                return
            try:
                value = wire.tensor_from_proto(resp.tensor, key)
            except errors.OpError as e:
                callback(None, e)
                return
            callback(value, None)

        f.add_done_callback(done)
        return lambda: f.rpc.cancel()

    def recv_tensors_async(self, step_id: int, keys, callback):
        """Pulls several keys of ``step_id`` in one streamed call (RecvTensorStream), each value as
        soon as this task has sent it; ``callback(key, value, error)`` per key (one call with the
        error if the pull fails); returns a cancel function."""
        keys = list(keys)
        req = worker_pb2.RecvTensorsRequest(step_id=step_id, rendezvous_key=keys, request_id=next(_request_ids))
        call = self._client.stream("RecvTensorStream", req, None)
        _STREAM_POOL.submit(self._take_stream, step_id, keys, call, callback)
        return call.cancel

    def _take_stream(self, step_id: int, keys: list, call, callback):
        left = set(range(len(keys)))
        try:
            for resp in call:
                idx = list(resp.index)
                if len(idx) != len(resp.tensor) or not idx or len(set(idx)) != len(idx) or not left.issuperset(idx):
                    raise errors.InternalError(None, None, f"RecvTensorStream from {self.task}: a message of "
                                                           f"{len(resp.tensor)} tensors names positions {idx[:8]} "
                                                           f"of {len(keys)} keys ({len(left)} not yet sent).")
                left.difference_update(idx)
                for i, item in zip(idx, resp.tensor):
                    key = keys[i]
                    if item.total_bytes:
                        _CHUNK_POOL.submit(self._fetch_chunks, step_id, key, item,
                                           lambda v, e, key=key: callback(key, v, e))
                        continue
                    callback(key, wire.tensor_from_proto(item.tensor, key), None)
            if left:
                raise errors.InternalError(None, None, f"RecvTensorStream from {self.task} ended with {len(left)} of "
                                                       f"{len(keys)} keys not sent (first: {keys[min(left)]}).")
        except BaseException as e:  # noqa: BLE001 - handed to the receiver
            callback(keys[min(left)] if left else keys[0], None, e)

    def _fetch_chunks(self, step_id: int, key: str, resp, callback):
        """Assembles a chunked tensor (RecvTensorChunk calls, two in flight)."""
        try:
            out = wire.empty_from_header(resp.tensor, resp.total_bytes, key)
            flat = out.reshape(-1).view(np.uint8)
            offsets = list(range(0, resp.total_bytes, resp.chunk_bytes))
            for i in range(0, len(offsets), 2):
                futs = [(o, self._client.future("RecvTensorChunk", worker_pb2.RecvTensorChunkRequest(
                    step_id=step_id, rendezvous_key=key, offset=o))) for o in offsets[i:i + 2]]
                for o, f in futs:
                    data = f.result().data
                    if len(data) != min(resp.chunk_bytes, resp.total_bytes - o):
                        raise errors.DataLossError(None, None, f"Chunk at {o} of {key} has {len(data)} bytes.")
                    flat[o:o + len(data)] = np.frombuffer(data, np.uint8)
        except BaseException as e:  # noqa: BLE001 - handed to the receiver
            callback(None, e)
            return
        callback(out, None)

    def close(self):
        self._client.close()

