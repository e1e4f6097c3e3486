"""WorkerService: protos in, ``runtime.worker.Worker`` calls out (and back). No logic of its own
beyond decoding, deadlines and refusing repeated request ids.

Example:
    >>> from sparseflow._src.distributed.proto import worker_service_pb2
    >>> [m.name for m in worker_service_pb2.DESCRIPTOR.services_by_name["WorkerService"].methods][:3]
    ['GetStatus', 'CreateWorkerSession', 'DeleteWorkerSession']
"""

from __future__ import annotations

import collections
import threading
import time

from sparseflow._src.distributed import wire
from sparseflow._src.distributed.collective_service import CollectiveServicer
from sparseflow._src.distributed.proto import worker_pb2
from sparseflow._src.distributed.rpc import error_from_status, status_code_of
from sparseflow._src.distributed.table_service import TableServicer
from sparseflow._src.framework import errors
from sparseflow._src.runtime.plan import FEED_OP, FETCH_OP
from sparseflow._src.runtime.threads import ElasticPool

# 2: RunGraph returns the values of its request's reply_keys; 3: RecvTensorStream, RunGraph streams
# the values of its request's stream_keys as they are sent
PROTOCOL_VERSION = 3
_RUN_POOL = ElasticPool("sparseflow-rungraph")  # runs a streaming RunGraph's graph while its handler streams


def check_protocol(version: int, who: str):
    if version != PROTOCOL_VERSION:
        raise errors.FailedPreconditionError(
            None, None, f"{who} speaks sparseflow protocol version {version}, this task speaks {PROTOCOL_VERSION}: "
                        f"run the same sparseflow version on every task.")


class RecentRequestIds:
    """Remembers the last request ids; a repeated one is refused (a retried call must not run twice)."""

    def __init__(self, size: int = 4096):
        self._ids: set = set()
        self._order: collections.deque = collections.deque()
        self._size = size
        self._lock = threading.Lock()

    def track(self, request_id: int, what: str):
        if not request_id:
            return
        with self._lock:
            if request_id in self._ids:
                raise errors.AbortedError(None, None, f"{what}: request {request_id:x} was already received (a "
                                                      f"retried call); it is not run twice.")
            self._ids.add(request_id)
            self._order.append(request_id)
            if len(self._order) > self._size:
                self._ids.discard(self._order.popleft())


class ChunkStore:
    """Large tensors being fetched chunk by chunk, dropped once every chunk was taken (or after
    ``ttl`` seconds: a receiver that died mid-transfer)."""

    def __init__(self, ttl: float = 600.0):
        self._items: dict = {}  # key -> [raw memoryview, chunk size, chunks left, expiry]
        self._ttl = ttl
        self._lock = threading.Lock()

    def put(self, key, raw, chunk: int):
        now = time.monotonic()
        with self._lock:
            for k in [k for k, v in self._items.items() if v[3] < now]:
                del self._items[k]
            self._items[key] = [raw, chunk, -(-raw.nbytes // chunk), now + self._ttl]

    def take(self, key, offset: int) -> bytes:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                raise errors.NotFoundError(None, None, f"No chunked tensor {key[1]} of step {key[0]:x} here (it was "
                                                       f"fully taken, or expired).")
            raw, chunk, left, _ = item
            if offset < 0 or offset % chunk or offset >= raw.nbytes:
                raise errors.InvalidArgumentError(None, None, f"Bad chunk offset {offset} for {key[1]}.")
            item[2] = left - 1
            if item[2] <= 0:
                del self._items[key]
        return bytes(raw[offset:offset + chunk])


def error_to_status(exc: BaseException) -> worker_pb2.ErrorStatus:
    msg = exc.message if isinstance(exc, errors.OpError) else f"{type(exc).__name__}: {exc}"
    return worker_pb2.ErrorStatus(code=status_code_of(exc).value[0], message=msg)


def error_from_proto(status: worker_pb2.ErrorStatus) -> errors.OpError:
    import grpc

    code = next((c for c in grpc.StatusCode if c.value[0] == status.code), grpc.StatusCode.UNKNOWN)
    return error_from_status(code, status.message)


class _Sent:
    """The values this task sends under ``keys`` in one step, collected as they are sent (for a
    streamed reply), and signals from other threads (the call ended, the graph has run)."""

    def __init__(self, worker, step_id: int, keys: list):
        self._worker, self._step_id, self._keys = worker, step_id, keys
        self.table = worker.steps.get(step_id).rendezvous.local
        self.left = set(range(len(keys)))  # positions not taken yet
        self._cond = threading.Condition()
        self._got: list = []  # (position, value, error) not taken yet
        self._signals: list = []
        self._callbacks = [lambda v, e, i=i: self._arrive(i, v, e) for i in range(len(keys))]

    def start(self):
        for key, callback in zip(self._keys, self._callbacks):
            self._worker.recv_tensor_async(self._step_id, key, callback)

    def _arrive(self, i, value, err):
        with self._cond:
            self._got.append((i, value, err))
            self._cond.notify()

    def signal(self, what):
        with self._cond:
            self._signals.append(what)
            self._cond.notify()

    def take(self, timeout: float | None = None) -> tuple[list, list]:
        """Waits (up to ``timeout``) until something arrived or was signalled: ``(arrivals by position,
        signals)``."""
        with self._cond:
            if not self._got and not self._signals:
                self._cond.wait(timeout)
            got, self._got = sorted(self._got, key=lambda a: a[0]), []
            signals = list(self._signals)
        self.left.difference_update(i for i, _, err in got if err is None)
        return got, signals

    def withdraw(self):
        """Withdraws the waits for the keys not sent yet (the call is over)."""
        for i in self.left:
            self.table.cancel_recv(self._keys[i], self._callbacks[i])


class WorkerServicer(TableServicer, CollectiveServicer):
    """Serves one task's ``Worker`` (see the module docstring); TablePull / TablePush come from
    ``TableServicer`` (table_service.py), the Collective* calls from ``CollectiveServicer``
    (collective_service.py)."""

    def __init__(self, worker, learn_cluster=None):
        self.worker = worker
        self.learn_cluster = learn_cluster  # fn(ClusterDef): the server learns tasks a master knows
        self._chunks = ChunkStore()
        self._requests = RecentRequestIds()
        self._init_table_service()

    def GetStatus(self, req, context):
        check_protocol(req.protocol_version, "The caller")
        resp = worker_pb2.GetStatusResponse(protocol_version=PROTOCOL_VERSION, task=self.worker.task)
        for d in self.worker.get_status():
            resp.device_attributes.add(name=d.name, device_type=d.device_type, memory_limit=d.memory_limit_bytes,
                                       incarnation=d.incarnation)
        return resp

    def CreateWorkerSession(self, req, context):
        check_protocol(req.protocol_version, f"The master {req.master_task or '(unnamed)'}")
        if req.HasField("cluster") and self.learn_cluster is not None:
            self.learn_cluster(req.cluster)
        self.worker.create_worker_session(req.session_handle)
        return worker_pb2.CreateWorkerSessionResponse()

    def DeleteWorkerSession(self, req, context):
        self.worker.delete_worker_session(req.session_handle)
        return worker_pb2.DeleteWorkerSessionResponse()

    def RegisterGraph(self, req, context):
        ir = wire.partition_from_graph_def(req.graph_def)
        nodes = ir.nodes
        feeds = sorted((n for n in nodes if n.op == FEED_OP), key=lambda n: n.attrs.get("index", 0))
        fetches = sorted((n for n in nodes if n.op == FETCH_OP), key=lambda n: n.attrs.get("index", 0))
        gh = self.worker.register_graph(req.session_handle, nodes, ir.library, [n.name for n in feeds],
                                        [n.name for n in fetches],
                                        [list(b.recv_node) for b in req.recv_batch])
        return worker_pb2.RegisterGraphResponse(graph_handle=gh)

    def DeregisterGraph(self, req, context):
        self.worker.deregister_graph(req.session_handle, req.graph_handle)
        return worker_pb2.DeregisterGraphResponse()

    def RunGraph(self, req, context):
        """Runs the step's graph; yields the values of ``req.stream_key`` as the graph sends them (the
        graph runs on a pool thread meanwhile), then the last message with fetches and stats."""
        self._requests.track(req.request_id, "RunGraph")
        for sid in req.cleanup_step_ids:
            self.worker.cleanup_graph(sid)
        deadline = time.monotonic() + req.timeout_in_ms / 1000.0 if req.timeout_in_ms > 0 else None
        feeds = [wire.tensor_from_proto(t.tensor, t.name) for t in req.send]
        stats = [] if req.record_timeline else None
        keys = list(req.stream_key)

        def run():
            return self.worker.run_graph(req.session_handle, req.graph_handle, req.step_id, feeds, deadline, None,
                                         stats)

        if not keys:
            yield self._last_response(req, run(), stats)
            return
        sent = _Sent(self.worker, req.step_id, keys)

        def run_and_tell():
            try:
                out = (run(), None)
            except BaseException as e:  # noqa: BLE001 - raised in the handler
                out = (None, e)
            sent.signal(out)

        try:
            sent.start()
            _RUN_POOL.submit(run_and_tell)
            failed = None
            while True:
                got, signals = sent.take()
                finished = bool(signals)  # every send of the graph happened before: nothing arrives later
                resp = worker_pb2.RunGraphResponse()
                for i, value, err in got:
                    if err is not None:
                        failed = failed or err  # the step was aborted: the graph's own error names the op
                        continue
                    self._fill(resp.sent.add(), req.step_id, keys[i], value)
                    resp.sent_index.append(i)
                if finished:
                    out, err = signals[0]
                    if err is not None or failed is not None:
                        raise err if err is not None else failed
                    if sent.left:
                        raise errors.InternalError(None, None, f"RunGraph on {self.worker.task}: the step sent no "
                                                               f"{keys[min(sent.left)]} to stream to the master.")
                    yield self._last_response(req, out, stats, resp)
                    return
                if resp.sent_index:
                    yield resp
        finally:
            sent.withdraw()

    def _last_response(self, req, out, stats, resp=None):
        resp = worker_pb2.RunGraphResponse() if resp is None else resp
        for name, value in zip(req.recv_key, out or ()):
            wire.tensor_to_proto(value, resp.recv.add(name=name).tensor)
        if stats:
            from sparseflow._src.framework.proto.config_pb2 import RunMetadata
            from sparseflow._src.runtime.step_stats import fill_step_stats

            md = RunMetadata()
            fill_step_stats(md, stats)
            resp.step_stats.CopyFrom(md.step_stats)
        return resp

    def CleanupGraph(self, req, context):
        err = error_from_proto(req.abort_with) if req.HasField("abort_with") else None
        for sid in [req.step_id, *req.more_step_ids]:
            if sid:
                self.worker.cleanup_graph(sid, err)
        return worker_pb2.CleanupGraphResponse()

    def CleanupAll(self, req, context):
        self.worker.cleanup_all(list(req.container) or None)
        return worker_pb2.CleanupAllResponse()

    def RecvTensor(self, req, context):
        self._requests.track(req.request_id, "RecvTensor")
        value = self._wait_for(req.step_id, [req.rendezvous_key], context)[0][1]
        resp = worker_pb2.RecvTensorResponse()
        self._fill(resp, req.step_id, req.rendezvous_key, value)
        return resp

    def RecvTensors(self, req, context):
        self._requests.track(req.request_id, "RecvTensors")
        keys = list(req.rendezvous_key)
        got = self._wait_for(req.step_id, keys, context, any_ready=req.any_ready)
        resp = worker_pb2.RecvTensorsResponse()
        for i, value in got:
            self._fill(resp.tensor.add(), req.step_id, keys[i], value)
        if len(got) < len(keys):
            resp.index.extend(i for i, _ in got)
        return resp

    def RecvTensorStream(self, req, context):
        """Yields a RecvTensorsResponse whenever some of the request's keys were sent (every key sent
        by then, ``index`` naming them), until every key was."""
        self._requests.track(req.request_id, "RecvTensorStream")
        keys = list(req.rendezvous_key)
        if not keys:
            return
        sent = _Sent(self.worker, req.step_id, keys)
        if not context.add_callback(lambda: sent.signal("ended")):
            return
        try:
            sent.start()
            while sent.left:
                got, signals = sent.take(5.0)
                if signals or (not got and not context.is_active()):
                    # The receiver cancelled (its step failed: the master ends the step here with that
                    # step's first error) or went away (the master learns it from the receiver's RunGraph).
                    return
                if not got:
                    continue
                resp = worker_pb2.RecvTensorsResponse()
                for i, value, err in got:
                    if err is not None:
                        raise err
                    self._fill(resp.tensor.add(), req.step_id, keys[i], value)
                    resp.index.append(i)
                yield resp
        finally:
            sent.withdraw()

    def _wait_for(self, step_id: int, keys: list, context, any_ready: bool = False) -> list:
        """``(position, value)`` of the values this task sends under ``keys`` in ``step_id``, once
        all are there (``any_ready``: once one is, with every other one there by then; the waits for
        the rest are withdrawn, and a value sent meanwhile goes back to the step's table for the
        caller's next call)."""
        box: dict = {}
        ready = threading.Event()
        lock = threading.Lock()
        answered = []
        table = self.worker.steps.get(step_id).rendezvous.local

        def done(key, value, err):
            with lock:
                late = bool(answered)
                if not late:
                    box[key] = (value, err)
                    if any_ready or len(box) == len(keys) or err is not None:
                        ready.set()
            if late and err is None:  # sent after the reply was made: kept for the next call
                try:
                    table.send(key, value)
                except errors.OpError:  # the step was aborted meanwhile
                    pass

        callbacks = {key: (lambda v, e, key=key: done(key, v, e)) for key in keys}
        for key in keys:
            self.worker.recv_tensor_async(step_id, key, callbacks[key])
        while not ready.wait(1.0):
            if not context.is_active():  # the receiver gave up (its step was aborted or it died)
                table.abort(errors.CancelledError(None, None, f"The receiver of {keys[0]} went away."))
                ready.wait(1.0)
                break
        with lock:
            answered.append(True)
            got = dict(box)
        for key in keys:
            if key not in got:
                table.cancel_recv(key, callbacks[key])
        for _value, err in got.values():
            if err is not None:
                raise err
        if not got or (len(got) != len(keys) and not any_ready):
            raise errors.CancelledError(None, None, f"RecvTensor {keys[0]} was cancelled.")
        return [(i, got[k][0]) for i, k in enumerate(keys) if k in got]

    def _fill(self, resp, step_id: int, key: str, value):
        resp.send_start_micros = int(time.time() * 1e6)
        if wire.is_chunkable(value):
            raw = wire.tensor_header(value, resp.tensor)
            resp.total_bytes, resp.chunk_bytes = raw.nbytes, wire.CHUNK_BYTES
            self._chunks.put((step_id, key), raw, wire.CHUNK_BYTES)
        else:
            wire.tensor_to_proto(value, resp.tensor)

    def RecvTensorChunk(self, req, context):
        data = self._chunks.take((req.step_id, req.rendezvous_key), req.offset)
        return worker_pb2.RecvTensorChunkResponse(data=data)
