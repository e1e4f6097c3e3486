"""Collectives across the tasks of a cluster: the executor a ``tf.train.Server`` installs (the
Python calls of ``sparseflow.distribute.collectives`` and the collective ops' kernels use it).

``ClusterCollectiveExecutor`` extends the process-local executor (kernels/collective_executor.py):

- **Groups** are joined at the leader task (``ConfigProto.experimental.collective_group_leader``;
  by default ``/job:chief/replica:0/task:0`` when the cluster has a chief, else task 0 of the
  member's job) with ``CollectiveJoinGroup``.
- **Links** to the next member of the ring: in-process for a member of this process; shared memory
  for a member on the same host (collective_shm.py); gRPC (``CollectiveSend``) otherwise.
  ``SPARSEFLOW_COLLECTIVE_TRANSPORT=grpc`` forces gRPC between processes, ``=shm`` also between
  servers of one process (tests, benchmarks).
- **MPI**: in a job started by ``mpiexec`` with mpi4py installed, MPI's all-reduce carries the
  all-reduces its measured rule picks (collective_mpi.py; ``SPARSEFLOW_COLLECTIVE_MPI`` or ``mpi=``).
- **Failures**: a run that fails tells every member (``CollectiveAbort``), so they fail at once with
  the same error. While a member waits, the task it waits on is probed every few seconds: a dead
  task fails the run with ``UnavailableError`` naming it. At the deadline, ``CollectiveStatus``
  names the members that have not started the run (or cannot be reached).

Example (two servers in one process):
    >>> import numpy as np, threading
    >>> import sparseflow as tf
    >>> s0 = tf.train.Server({"worker": ["127.0.0.1:0"]}, "worker", 0)
    >>> s1 = tf.train.Server({"worker": {0: s0.address, 1: "127.0.0.1:0"}}, "worker", 1)
    >>> out = {}
    >>> def run(s, x):
    ...     out[s.task] = s.worker.collectives.all_reduce(x, device=f"{s.task}/device:CPU:0", group_size=2,
    ...                                                   group_key=1, instance_key=1)
    >>> ts = [threading.Thread(target=run, args=(s, np.arange(3.0) * i)) for i, s in enumerate((s0, s1))]
    >>> _ = [t.start() for t in ts]; _ = [t.join() for t in ts]
    >>> [v.tolist() for v in out.values()]
    [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    >>> s0.stop(); s1.stop()
"""

from __future__ import annotations

import concurrent.futures
import os
import socket
import time

import numpy as np

from sparseflow._src.distributed.collective_mpi import carrier
from sparseflow._src.distributed.collective_service import GrpcLink
from sparseflow._src.distributed.collective_shm import ShmEndpoint, connect_or_none
from sparseflow._src.framework import errors
from sparseflow._src.kernels import collective_ring as R
from sparseflow._src.kernels.collective_executor import (
    _EXECUTORS,
    CollectiveExecutor,
    Group,
    Member,
    member_order,
)

PROBE_EVERY = 3.0  # seconds between liveness probes of the member a run waits on
TRANSPORTS = ("auto", "grpc", "shm")


def host_id() -> str:
    """This machine: host name and boot id (processes with the same one share /dev/shm)."""
    boot = ""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        pass
    return f"{socket.gethostname()}/{boot}"


class ClusterCollectiveExecutor(CollectiveExecutor):
    """The collective executor of a Server's task (see the module docstring)."""

    def __init__(self, server, transport: str | None = None, mpi: str | None = None):
        super().__init__()
        self.server = server
        self.transport = (transport or os.environ.get("SPARSEFLOW_COLLECTIVE_TRANSPORT", "auto")).lower()
        if self.transport not in TRANSPORTS:
            raise ValueError(f"SPARSEFLOW_COLLECTIVE_TRANSPORT must be one of {TRANSPORTS}, got {self.transport!r}.")
        self.host = host_id()
        self.shm = None
        if self.transport != "grpc":
            try:
                self.shm = ShmEndpoint(self._deliver, self.peer_lost)
            except OSError:
                self.shm = None
        self._probe_pool = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="sparseflow-coll-probe")
        self.mpi = carrier(mpi)

    # ------------------------------------------------------------------ membership
    def member(self, device: str) -> Member:
        inc = self.server.worker.devices.incarnations.get(device, 0)
        return Member(device, self.server.task, self.server.address, self.host, self.executor_id,
                      self.shm.path if self.shm is not None else "", inc,
                      self.mpi.member_tag() if self.mpi is not None else "")

    def leader_task(self, device: str) -> str:
        cfg = getattr(self.server, "config", None)
        leader = ""
        if cfg is not None and cfg.HasField("experimental"):
            leader = cfg.experimental.collective_group_leader
        if leader:
            return _task_of(leader)
        spec = self.server.cluster_spec
        if "chief" in spec.jobs:
            return "/job:chief/replica:0/task:0"
        job = _task_of(device).split("/")[1].split(":", 1)[1]
        indices = spec.task_indices(job) if job in spec.jobs else [0]
        return f"/job:{job}/replica:0/task:{min(indices)}"

    def _join(self, key, size, member, deadline, check):
        leader = self.leader_task(member.device)
        if leader == self.server.task:
            return self.leader.join(key, size, member, deadline, check, self.missing_hint)
        left = max(deadline - time.monotonic(), 0.001)
        try:
            return self.server.remote_worker(leader).collective_join(key, size, member, left)
        except errors.UnavailableError as e:
            raise errors.UnavailableError(None, None, f"Collective group {key}: its leader {leader} cannot be "
                                                      f"reached: {e.message}") from None

    def missing_hint(self, joined) -> str:
        tasks = {_task_of(d) for d in joined}
        jobs = {t.split("/")[1].split(":", 1)[1] for t in tasks}
        spec = self.server.cluster_spec
        missing = [f"/job:{j}/replica:0/task:{i}" for j in sorted(jobs) if j in spec.jobs
                   for i in spec.task_indices(j) if f"/job:{j}/replica:0/task:{i}" not in tasks]
        return f" Tasks of {', '.join(sorted(jobs))} that have not joined: {', '.join(missing)}." if missing else ""

    # ------------------------------------------------------------------ links
    def _make_link(self, group: Group, src: Member, dst: Member) -> R.Link:
        peer = f"member {dst.device} ({dst.address})"
        local = _EXECUTORS.get(dst.executor_id)
        if local is not None and self.transport == "auto":
            return R.InProcessLink(local.mailbox, dst.device)
        if self.transport != "grpc" and dst.shm_endpoint and dst.host == self.host and self.shm is not None:
            link = connect_or_none(dst.shm_endpoint, src.device, peer, max(self.piece_bytes, 4096))
            if link is not None:
                return link
        if local is not None and dst.task == self.server.task:
            return R.InProcessLink(local.mailbox, dst.device)
        return GrpcLink(self.server.remote_worker(dst.task), peer)

    def _algorithm(self, kind, ring, value, merge_op, final_op, root, shape, dtype, group, out, label):
        mpi = self.mpi
        if mpi is None or mpi.world_ranks(group) is None:
            return super()._algorithm(kind, ring, value, merge_op, final_op, root, shape, dtype, group, out, label)
        carried = kind == R.KIND_REDUCE and mpi.carries(group, np.asarray(value), merge_op)
        if not carried:
            mpi.pass_turn(ring.exec_id)
        try:
            return super()._algorithm(kind, ring, value, merge_op, final_op, root, shape, dtype, group, out, label)
        finally:
            if carried:
                mpi.pass_turn(ring.exec_id)  # nothing once the run took its turn; else (an early error) gives it up

    def _reduce(self, ring: R.Ring, group: Group, flat, merge_op: str, ufunc) -> None:
        if self.mpi is not None and self.mpi.carries(group, flat, merge_op):
            self.mpi.all_reduce(ring, group, flat, merge_op)
        else:
            R.all_reduce(ring, flat, ufunc)

    def _deliver(self, key, msg):
        self.mailbox.put(key, msg)

    def peer_lost(self, device: str, error):
        """A member's shared-memory link closed: fail the runs of its groups that still wait."""
        with self._lock:
            gens = {(g.key, g.generation) for g in self._groups.values()
                    if any(m.device == device for m in g.members)}
            for k in [k for k, g in self._groups.items() if (g.key, g.generation) in gens]:
                del self._groups[k]
        if gens:
            self.mailbox.fail_matching(lambda e: (e[0], e[1]) in gens, error, drop=False)

    # ------------------------------------------------------------------ failures
    def _broadcast_abort(self, group: Group, device: str, error):
        tasks = {m.task for m in group.members if m.executor_id != self.executor_id}
        for m in group.members:
            ex = _EXECUTORS.get(m.executor_id)
            if ex is not None and ex is not self:
                ex.abort_group(group.key, group.generation, error)
                tasks.discard(m.task)
        leader = self.leader_task(device)
        if leader != self.server.task:
            tasks.add(leader)
        self.leader.mark_broken(group.key, group.generation)
        pending = []
        for t in tasks:
            try:
                pending.append(self.server.remote_worker(t).collective_abort_async(group.key, group.generation,
                                                                                   error))
            except errors.OpError:
                pass
        # Wait a little: the others must hear the cause before this member goes on (and maybe exits,
        # which they would otherwise see first and blame on this member).
        concurrent.futures.wait(pending, timeout=2.0)

    def watchdog(self, group: Group, rank: int):
        """A check() for a waiting run: probes the task of the member it waits on every few seconds
        and raises UnavailableError naming it once it cannot be reached."""
        prev = group.members[(rank - 1) % group.size]
        if _EXECUTORS.get(prev.executor_id) is not None or prev.task == self.server.task:
            return None  # in this process: it cannot die alone
        try:
            remote = self.server.remote_worker(prev.task)
        except errors.OpError:
            return None
        state = {"next": time.monotonic() + PROBE_EVERY, "probe": None}

        def check():
            probe = state["probe"]
            if probe is not None and probe.done():
                state["probe"] = None
                exc = probe.exception()
                if isinstance(exc, errors.UnavailableError):
                    raise errors.UnavailableError(None, None, f"Collective member {prev.device} ({prev.task} at "
                                                              f"{prev.address}) is unreachable: {exc.message}")
            now = time.monotonic()
            if state["probe"] is None and now >= state["next"]:
                state["next"] = now + PROBE_EVERY
                state["probe"] = self._probe_pool.submit(remote.get_status, 2.0, False)

        return check

    def _timeout_error(self, group: Group, rank: int, exec_id, what: str, seconds: float):
        seq = exec_id[3]
        lagging, unreachable = [], []
        futures = {}
        for t in sorted({m.task for m in group.members}):
            if t == self.server.task:
                continue
            try:
                futures[t] = self.server.remote_worker(t).collective_status_future(group.key, group.generation,
                                                                                   exec_id[2], 2.0)
            except errors.OpError as e:
                unreachable.append(f"{t} ({e.message})")
        started = dict(self.runs_started(group.key, group.generation, exec_id[2]))
        for t, f in futures.items():
            try:
                resp = f.result()
                started.update(zip(resp.device, resp.runs_started))
            except errors.OpError as e:
                unreachable.append(f"{t} ({type(e).__name__})")
        for m in group.members:
            if m.task not in {u.split(" ")[0] for u in unreachable} and started.get(m.device, 0) <= seq:
                lagging.append(m.device)
        parts = []
        if unreachable:
            parts.append(f"unreachable: {', '.join(unreachable)}")
        if lagging:
            parts.append(f"not started this run (#{seq + 1} of instance {exec_id[2]}): {', '.join(lagging)}")
        if not parts:
            prev = group.members[(rank - 1) % group.size].device
            parts.append(f"every member started it; no data came from {prev}")
        return errors.DeadlineExceededError(None, None, f"{what}: timed out after {seconds:.1f} s; "
                                                        f"{'; '.join(parts)}.")

    def _ring_check(self, group, rank, check):
        dog = self.watchdog(group, rank)
        if dog is None:
            return check
        if check is None:
            return dog

        def both():
            check()
            dog()

        return both

    def close(self):
        super().close()
        if self.shm is not None:
            self.shm.close()
        self._probe_pool.shutdown(wait=False)


def _task_of(device: str) -> str:
    i = device.find("/device:")
    d = device if i < 0 else device[:i]
    if "/replica:" not in d:
        job, _, rest = d.partition("/task:")
        d = f"{job}/replica:0/task:{rest or 0}"
    return d


__all__ = ["ClusterCollectiveExecutor", "host_id", "member_order"]
