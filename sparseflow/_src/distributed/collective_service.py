"""The collective RPCs of the WorkerService: the servicer side (``CollectiveServicer``, mixed into
``WorkerServicer``), the client side (``CollectiveClient``, mixed into ``RemoteWorker``) and the
gRPC link of the ring (``GrpcLink``).

- ``CollectiveJoinGroup``: served by the group's leader task; waits (under the call's deadline and
  cancellation) until every member joined, then answers with the members in rank order.
- ``CollectiveSend``: one piece of a run for a member on this task; its raw bytes go to the
  executor's mailbox as they are (a read-only view, no copy).
- ``CollectiveAbort`` / ``CollectiveStatus``: failure propagation and "who has not arrived".

Example:
    >>> from sparseflow._src.distributed.proto import worker_service_pb2
    >>> [m.name for m in worker_service_pb2.DESCRIPTOR.services_by_name["WorkerService"].methods][-4:]
    ['CollectiveJoinGroup', 'CollectiveSend', 'CollectiveAbort', 'CollectiveStatus']
"""

from __future__ import annotations

import threading
import time

import numpy as np

from sparseflow._src.distributed.proto import worker_pb2
from sparseflow._src.framework import errors
from sparseflow._src.kernels import collective_ring as R
from sparseflow._src.kernels.collective_executor import Group, Member


def member_to_proto(m: Member, out: worker_pb2.CollectiveMember):
    out.device, out.task, out.address, out.host = m.device, m.task, m.address, m.host
    out.executor_id, out.shm_endpoint, out.incarnation = m.executor_id, m.shm_endpoint, m.incarnation
    out.mpi = m.mpi
    return out


def member_from_proto(p: worker_pb2.CollectiveMember) -> Member:
    if not p.device.startswith("/job:"):
        raise errors.InvalidArgumentError(None, None, f"Collective member with a malformed device {p.device!r}.")
    return Member(p.device, p.task, p.address, p.host, p.executor_id, p.shm_endpoint, p.incarnation, p.mpi)


class CollectiveServicer:
    """The collective handlers of a ``WorkerServicer`` (which has ``worker``); the executor is
    ``worker.collectives`` (installed by the Server)."""

    def _executor(self):
        ex = getattr(self.worker, "collectives", None)
        if ex is None:
            raise errors.UnavailableError(None, None, f"{self.worker.task} runs no collective executor.")
        return ex

    def CollectiveJoinGroup(self, req, context):
        ex = self._executor()
        if req.group_size < 1:
            raise errors.InvalidArgumentError(None, None, f"Collective group {req.group_key}: group_size must be "
                                                          f"positive, got {req.group_size}.")
        timeout = req.timeout_in_ms / 1000.0 if req.timeout_in_ms > 0 else 600.0

        def check():
            if context is not None and not context.is_active():
                raise errors.CancelledError(None, None, "The joining member went away.")

        group = ex.leader.join(req.group_key, req.group_size, member_from_proto(req.member),
                               time.monotonic() + timeout, check, ex.missing_hint)
        resp = worker_pb2.CollectiveJoinGroupResponse(generation=group.generation)
        for m in group.members:
            member_to_proto(m, resp.members.add())
        return resp

    def CollectiveSend(self, req, context):
        ex = self._executor()
        key = ((req.group_key, req.generation, req.instance_key, req.seq), req.dst_rank, req.step, req.piece)
        ex.mailbox.put(key, R.Message(tuple(req.meta), req.data, None, req.src_rank))
        return worker_pb2.CollectiveSendResponse()

    def CollectiveAbort(self, req, context):
        from sparseflow._src.distributed.worker_service import error_from_proto

        self._executor().abort_group(req.group_key, req.generation, error_from_proto(req.error))
        return worker_pb2.CollectiveAbortResponse()

    def CollectiveStatus(self, req, context):
        started = self._executor().runs_started(req.group_key, req.generation, req.instance_key)
        return worker_pb2.CollectiveStatusResponse(device=list(started), runs_started=list(started.values()))


class CollectiveClient:
    """The collective calls of a ``RemoteWorker`` (which has ``_client``)."""

    def collective_join(self, group_key: int, group_size: int, member: Member, timeout: float) -> Group:
        req = worker_pb2.CollectiveJoinGroupRequest(group_key=group_key, group_size=group_size,
                                                    timeout_in_ms=max(int(timeout * 1000), 1))
        member_to_proto(member, req.member)
        resp = self._client.call("CollectiveJoinGroup", req, timeout + 5.0, wait_for_ready=True)
        members = tuple(member_from_proto(p) for p in resp.members)
        if len(members) != group_size:
            raise errors.InternalError(None, None, f"The leader {self.task} answered group {group_key} with "
                                                   f"{len(members)} members, expected {group_size}.")
        return Group(group_key, group_size, resp.generation, members)

    def collective_send_future(self, req: worker_pb2.CollectiveSendRequest, timeout: float):
        return self._client.future("CollectiveSend", req, timeout)

    def collective_abort_async(self, group_key: int, generation: int, error: errors.OpError):
        from sparseflow._src.distributed.worker_service import error_to_status

        req = worker_pb2.CollectiveAbortRequest(group_key=group_key, generation=generation,
                                                error=error_to_status(error))
        return self._client.future("CollectiveAbort", req, 5.0)

    def collective_status_future(self, group_key: int, generation: int, instance_key: int, timeout: float):
        req = worker_pb2.CollectiveStatusRequest(group_key=group_key, generation=generation,
                                                 instance_key=instance_key)
        return self._client.future("CollectiveStatus", req, timeout)


class GrpcLink(R.Link):
    """Sends pieces to a member on another host with ``CollectiveSend``, ``window`` calls in flight."""

    def __init__(self, remote, peer: str, window: int = 4, timeout: float = 60.0):
        super().__init__(peer)
        self._remote = remote
        self._window = window
        self._timeout = timeout
        self._inflight = 0
        self._wcv = threading.Condition()

    def _ready(self) -> bool:
        return self._inflight < self._window

    def _transmit(self, exec_id, dst_rank, step, piece, src_rank, meta, array):
        arr = np.ascontiguousarray(array)
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        req = worker_pb2.CollectiveSendRequest(group_key=exec_id[0], generation=exec_id[1], instance_key=exec_id[2],
                                               seq=exec_id[3], src_rank=src_rank, dst_rank=dst_rank, step=step,
                                               piece=piece, meta=list(meta), data=arr.tobytes())
        with self._wcv:
            while self._inflight >= self._window:
                self._wcv.wait()
            self._inflight += 1
        try:
            fut = self._remote.collective_send_future(req, self._timeout)
        except BaseException:
            self._done_one()
            raise

        def done(f):
            self._done_one()
            exc = f.exception()
            if exc is not None:
                self.fail(exec_id, exc)

        fut.add_done_callback(done)

    def flush(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        if not super().flush(timeout):
            return False
        with self._wcv:  # the calls in flight, too: a peer may wait for the last piece
            while self._inflight > 0:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._wcv.wait(min(left, 0.25))
        return True

    def _done_one(self):
        with self._wcv:
            self._inflight -= 1
            self._wcv.notify_all()
