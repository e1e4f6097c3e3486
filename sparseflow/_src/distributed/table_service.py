"""TablePull / TablePush (and, for synchronous training, TableAccumulate / TableApplyAccumulated /
TableSetSyncStep): the WorkerService RPCs of embedding tables sharded over tasks.

The servicer side (``TableServicer``, mixed into ``WorkerServicer``) turns the protos into
``kernels.embedding_service.TableShards`` calls on this task's devices; the client side
(``TableClient``, mixed into ``RemoteWorker``) is what a worker's cluster pull/push kernels call
for a shard on another task. Keys, rows and gradients travel as raw little-endian bytes, one bytes
field per table per request; decoding is one copy into an aligned, writable array (a pull's rows,
which the worker only reads, are a read-only view of the reply where aligned). A push carries
a request id and is applied at most once; the servicer counts the requests it served
(``table_requests``, e.g. ``{"TablePull": 3, "TablePush": 3}``) for tests and monitoring.

``TableApplyAccumulated`` blocks until the workers' pushes of the step are in: the servicer waits
under the call's cancellation (the chief's session closed or its step failed: the client cancels
the call) and the request's ``timeout_in_ms`` (the chief's step deadline), never forever.

Example:
    >>> from sparseflow._src.distributed.proto import worker_service_pb2
    >>> [m.name for m in worker_service_pb2.DESCRIPTOR.services_by_name["WorkerService"].methods
    ...  if m.name.startswith("Table")]
    ['TablePull', 'TablePush', 'TableAccumulate', 'TableApplyAccumulated', 'TableSetSyncStep']
"""

from __future__ import annotations

import collections
import threading
import time
from concurrent.futures import Future

import numpy as np

from sparseflow._src.distributed.proto import worker_pb2
from sparseflow._src.distributed.rpc import DEFAULT_RPC_TIMEOUT
from sparseflow._src.framework import errors
from sparseflow._src.kernels.embedding_service import (
    AccumulateItem,
    ApplyItem,
    PullItem,
    PushItem,
    SyncStepItem,
    shards_of,
)

_U64 = np.dtype("<u8")
_I32 = np.dtype("<i4")
_F32 = np.dtype("<f4")


def decode(raw: bytes, dtype: np.dtype, what: str, count: int | None = None, copy: bool = True) -> np.ndarray:
    """The array of the raw little-endian bytes ``raw`` (``count`` elements when given): an aligned,
    writable copy, or with ``copy=False`` a read-only view of ``raw`` where its alignment and byte
    order allow (the rows of a pull reply, which are only read)."""
    if len(raw) % dtype.itemsize or (count is not None and len(raw) != count * dtype.itemsize):
        want = f"{count} x {dtype.itemsize}" if count is not None else f"a multiple of {dtype.itemsize}"
        raise errors.InvalidArgumentError(None, None, f"Malformed {what}: {len(raw)} bytes, expected {want}.")
    arr = np.frombuffer(raw, dtype=dtype)
    if copy or not (arr.dtype.isnative and arr.flags.aligned):
        arr = arr.astype(dtype.newbyteorder("="), copy=True)
    return arr


class TableServicer:
    """The TablePull / TablePush handlers of a ``WorkerServicer`` (which has ``worker`` and
    ``_requests``)."""

    def _init_table_service(self):
        self.table_requests = collections.Counter()
        self._table_lock = threading.Lock()

    def _count(self, method: str):
        with self._table_lock:
            self.table_requests[method] += 1

    def TablePull(self, req, context):
        self._count("TablePull")
        shards = shards_of(self.worker.devices)
        items = []
        for it in req.tables:
            keys = decode(it.keys, _U64, "TablePull keys")
            counts = decode(it.counts, _I32, "TablePull counts", keys.shape[0] if it.counts else 0)
            items.append(PullItem(it.config, it.part, keys, counts, training=bool(it.training)))
        values = shards.pull(items)
        return worker_pb2.TablePullResponse(values=[v.tobytes() for v in values], incarnation=shards.incarnation)

    def TablePush(self, req, context):
        self._count("TablePush")
        self._requests.track(req.request_id, "TablePush")
        shards = shards_of(self.worker.devices)
        items = []
        for it in req.tables:
            dim = shards.table(it.config).spec.dim
            keys = decode(it.keys, _U64, "TablePush keys")
            n = keys.shape[0]
            grads = decode(it.grads, _F32, "TablePush gradients", n * dim).reshape(n, dim)
            counts = decode(it.counts, _F32, "TablePush counts", n if it.counts else 0)
            clicks = decode(it.clicks, _F32, "TablePush clicks", n if it.clicks else 0)
            items.append(PushItem(it.config, it.part, keys, grads, counts, clicks, float(it.learning_rate)))
        return worker_pb2.TablePushResponse(dropped=shards.push(items), incarnation=shards.incarnation)

    def TableAccumulate(self, req, context):
        self._count("TableAccumulate")
        self._requests.track(req.request_id, "TableAccumulate")
        shards = shards_of(self.worker.devices)
        items = []
        for it in req.tables:
            dim = shards.table(it.config).spec.dim
            keys = decode(it.keys, _U64, "TableAccumulate keys")
            n = keys.shape[0]
            grads = decode(it.grads, _F32, "TableAccumulate gradients", n * dim).reshape(n, dim)
            counts = decode(it.counts, _F32, "TableAccumulate counts", n if it.counts else 0)
            clicks = decode(it.clicks, _F32, "TableAccumulate clicks", n if it.clicks else 0)
            items.append(AccumulateItem(it.config, it.part, keys, grads, counts, clicks, int(it.local_step)))
        return worker_pb2.TableAccumulateResponse(accepted=shards.accumulate(items), incarnation=shards.incarnation)

    def TableApplyAccumulated(self, req, context):
        self._count("TableApplyAccumulated")
        self._requests.track(req.request_id, "TableApplyAccumulated")
        shards = shards_of(self.worker.devices)
        items = [ApplyItem(it.config, it.part, int(it.num_required), float(it.learning_rate)) for it in req.tables]
        applied = shards.apply_accumulated(items, CallWait(context, req.timeout_in_ms))
        return worker_pb2.TableApplyAccumulatedResponse(num_aggregated=[a[0] for a in applied],
                                                        dropped=[a[1] for a in applied],
                                                        incarnation=shards.incarnation)

    def TableSetSyncStep(self, req, context):
        self._count("TableSetSyncStep")
        shards = shards_of(self.worker.devices)
        shards.set_sync_step([SyncStepItem(it.config, it.part, int(it.global_step)) for it in req.tables])
        return worker_pb2.TableSetSyncStepResponse(incarnation=shards.incarnation)


class CallWait:
    """What a blocking wait inside an RPC handler checks (blocking.py's ``ctx``): ``cancelled`` is set
    when the call ends early (the client cancelled it, or the server stops), ``remaining()`` counts
    down ``timeout_in_ms`` (none when 0)."""

    def __init__(self, context, timeout_in_ms: int = 0):
        self.cancelled = threading.Event()
        self.deadline = time.monotonic() + timeout_in_ms / 1000.0 if timeout_in_ms > 0 else None
        if context is not None and not context.add_callback(self.cancelled.set):
            self.cancelled.set()  # the call has already ended

    def remaining(self):
        return None if self.deadline is None else self.deadline - time.monotonic()


class TableClient:
    """``table_pull_async`` / ``table_push_async`` of a ``RemoteWorker`` (which has ``_client``,
    ``task`` and ``next_request_id()``): futures of ``(the task's incarnation, decoded reply)``,
    with ``.rpc`` to cancel."""

    def table_pull_async(self, items, timeout: float | None = None):
        req = worker_pb2.TablePullRequest()
        for it in items:
            req.tables.add(config=it.config, part=it.part, keys=it.keys.astype(_U64, copy=False).tobytes(),
                           counts=it.counts.astype(_I32, copy=False).tobytes(), training=bool(it.training))
        shapes = [(it.keys.shape[0], it.dim) for it in items]
        f = self._client.future("TablePull", req, _timeout(timeout))
        return _chain(f, lambda resp: self._rows(resp, shapes))

    def _rows(self, resp, shapes):
        if len(resp.values) != len(shapes):
            raise errors.InternalError(None, None, f"{self.task} answered TablePull with {len(resp.values)} tables for "
                                                   f"{len(shapes)} requested.")
        return resp.incarnation, [decode(v, _F32, f"TablePull rows from {self.task}", n * dim, copy=False
                                         ).reshape(n, dim) for v, (n, dim) in zip(resp.values, shapes)]

    def table_push_async(self, items, timeout: float | None = None):
        req = worker_pb2.TablePushRequest(request_id=self.next_request_id())
        for it in items:
            req.tables.add(config=it.config, part=it.part, keys=it.keys.astype(_U64, copy=False).tobytes(),
                           grads=it.grads.astype(_F32, copy=False).tobytes(),
                           counts=it.counts.astype(_F32, copy=False).tobytes(),
                           clicks=it.clicks.astype(_F32, copy=False).tobytes(), learning_rate=it.learning_rate)
        f = self._client.future("TablePush", req, _timeout(timeout))
        return _chain(f, lambda resp: (resp.incarnation, list(resp.dropped)))

    def table_accumulate_async(self, items, timeout: float | None = None):
        req = worker_pb2.TableAccumulateRequest(request_id=self.next_request_id())
        for it in items:
            req.tables.add(config=it.config, part=it.part, keys=it.keys.astype(_U64, copy=False).tobytes(),
                           grads=it.grads.astype(_F32, copy=False).tobytes(),
                           counts=it.counts.astype(_F32, copy=False).tobytes(),
                           clicks=it.clicks.astype(_F32, copy=False).tobytes(), local_step=int(it.local_step))
        f = self._client.future("TableAccumulate", req, _timeout(timeout))
        return _chain(f, lambda resp: (resp.incarnation, list(resp.accepted)))

    def table_apply_accumulated_async(self, items, timeout: float | None = None):
        """Waits on the server for the workers' pushes: no deadline but the step's (``timeout``), which
        the server enforces itself (naming the table); the call's own deadline is a little later."""
        req = worker_pb2.TableApplyAccumulatedRequest(request_id=self.next_request_id())
        for it in items:
            req.tables.add(config=it.config, part=it.part, num_required=int(it.num_required),
                           learning_rate=it.learning_rate)
        rpc_timeout = None
        if timeout is not None:
            req.timeout_in_ms = max(1, int(timeout * 1000))
            rpc_timeout = max(0.001, timeout) + 5.0
        f = self._client.future("TableApplyAccumulated", req, rpc_timeout)
        return _chain(f, lambda resp: (resp.incarnation, list(zip(resp.num_aggregated, resp.dropped))))

    def table_set_sync_step_async(self, items, timeout: float | None = None):
        req = worker_pb2.TableSetSyncStepRequest()
        for it in items:
            req.tables.add(config=it.config, part=it.part, global_step=int(it.global_step))
        f = self._client.future("TableSetSyncStep", req, _timeout(timeout))
        return _chain(f, lambda resp: (resp.incarnation, None))


def _timeout(timeout):
    return DEFAULT_RPC_TIMEOUT if timeout is None else max(0.001, timeout)


def _chain(f, fn) -> Future:
    """A future of ``fn(result of f)`` (decoded when the reply arrives); ``.rpc`` cancels the call."""
    out: Future = Future()
    out.rpc = f.rpc

    def done(fut):
        try:
            out.set_result(fn(fut.result()))
        except BaseException as e:  # noqa: BLE001 - handed to the waiting kernel
            out.set_exception(e)

    f.add_done_callback(done)
    return out
