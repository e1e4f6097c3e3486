"""The collective executor of a process: groups, runs, links, deadlines and failures.

A *group* is ``group_size`` member devices that agreed on a ``group_key``: each member joins at the
group's leader (``GroupLeader``), which answers once all have joined with the members in rank order
(by job, task and device index) and a *generation* number. A member that restarted, or a group a
member declared broken (a peer died, a deadline passed), starts a new generation when its members
join again: pieces of older generations are dropped, so a restarted job never mixes old and new.

A *run* is one execution of a collective instance: the n-th time a member runs ``instance_key`` in a
generation matches the n-th time every other member does (``exec_id = (group_key, generation,
instance_key, n)``). So a graph that runs the same collective op every step needs no per-step key.

This module knows no transport. ``CollectiveExecutor`` serves the members of one process among
themselves (a local session's devices); the distributed layer's subclass
(``distributed/collectives.py``) joins groups over gRPC and links members through shared memory or
gRPC. Every run has a deadline; on failure the member tells the others (``_broadcast_abort``) so
that they fail at once with the same error, naming the member that is missing.

Example:
    >>> import numpy as np, threading
    >>> ex = CollectiveExecutor()
    >>> out = {}
    >>> def member(d, x):
    ...     out[d] = ex.all_reduce(x, device=d, group_size=2, group_key=7, instance_key=1, final_op="Div")
    >>> ts = [threading.Thread(target=member, args=(f"/job:w/replica:0/task:0/device:CPU:{i}",
    ...                                             np.full(3, 2.0 * i, np.float32))) for i in (0, 1)]
    >>> _ = [t.start() for t in ts]; _ = [t.join() for t in ts]
    >>> sorted(v.tolist() for v in out.values())
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
"""

from __future__ import annotations

import dataclasses
import os
import re
import secrets
import threading
import time
import weakref

import numpy as np

from sparseflow._src.framework import dtypes, errors
from sparseflow._src.kernels import collective_ring as R

DEFAULT_TIMEOUT_SECONDS = float(os.environ.get("SPARSEFLOW_COLLECTIVE_TIMEOUT", "120"))


@dataclasses.dataclass(frozen=True)
class Member:
    """A member device and how to reach it: its task's gRPC address, its host, its process's
    executor (``executor_id``) and shared-memory endpoint, and its task's incarnation."""

    device: str
    task: str = ""
    address: str = ""
    host: str = ""
    executor_id: int = 0
    shm_endpoint: str = ""
    incarnation: int = 0
    mpi: str = ""  # "job/rank/policy" when MPI may carry the group's all-reduces (distributed/collective_mpi.py)


@dataclasses.dataclass(frozen=True)
class Group:
    key: int
    size: int
    generation: int
    members: tuple  # of Member, in rank order

    def rank_of(self, device: str) -> int:
        for i, m in enumerate(self.members):
            if m.device == device:
                return i
        raise errors.InternalError(None, None, f"{device} is not a member of collective group {self.key}.")


_NUM = re.compile(r"(\d+)$")


def member_order(device: str):
    """Rank order: job, replica, task, device type, device index (numbers compared as numbers)."""
    parts = {}
    for p in device.strip("/").split("/"):
        k, _, v = p.partition(":")
        parts[k] = v
    dev = parts.get("device", "")
    dtype, _, idx = dev.rpartition(":")
    num = lambda s: int(s) if s.isdigit() else -1  # noqa: E731
    return parts.get("job", ""), num(parts.get("replica", "0")), num(parts.get("task", "0")), dtype, num(idx), device


class _GroupState:
    def __init__(self, key, size, generation):
        self.key, self.size, self.generation = key, size, generation
        self.members: dict = {}
        self.group: Group | None = None
        self.broken = False
        self.error: errors.OpError | None = None


class GroupLeader:
    """Group resolution: who is in group ``key`` (see the module docstring). Thread-safe; the
    leader task serves it to the others over RPC."""

    def __init__(self, on_restart=None):
        self._cv = threading.Condition()
        self._groups: dict[int, _GroupState] = {}
        # on_restart(group, member): a member of the current generation joins again as another process
        # (it restarted); the others must drop that generation, which still names the old process.
        self._on_restart = on_restart

    def join(self, key: int, size: int, member: Member, deadline: float, check=None, missing_hint=None) -> Group:
        if self._on_restart is not None:
            with self._cv:
                st = self._groups.get(key)
                stale = st.group if st is not None and st.group is not None and not st.broken else None
                known = next((m for m in stale.members if m.device == member.device), None) if stale else None
            if known is not None and known != member:
                self._on_restart(stale, member)
        with self._cv:
            st = self._groups.get(key)
            if st is not None and st.group is not None and not st.broken:
                known = next((m for m in st.group.members if m.device == member.device), None)
                if known == member:
                    if size != st.size:
                        raise _size_error(key, size, st.size, member.device)
                    return st.group
            if st is None or st.group is not None or st.broken or st.error is not None:
                st = self._groups[key] = _GroupState(key, size, (st.generation + 1) if st else 1)
            if size != st.size:
                st.error = _size_error(key, size, st.size, member.device)
                self._cv.notify_all()  # the members waiting for this group fail with it too
                raise st.error
            st.members[member.device] = member
            if len(st.members) == st.size:
                ordered = tuple(sorted(st.members.values(), key=lambda m: member_order(m.device)))
                st.group = Group(key, size, st.generation, ordered)
                self._cv.notify_all()
            while st.group is None:
                if st.error is not None:
                    raise st.error
                if self._groups.get(key) is not st:
                    raise errors.AbortedError(None, None, f"Collective group {key} was restarted while "
                                                          f"{member.device} joined it; retry.")
                left = deadline - time.monotonic()
                if left <= 0:
                    joined = sorted(st.members, key=member_order)
                    hint = missing_hint(joined) if missing_hint is not None else ""
                    raise errors.DeadlineExceededError(
                        None, None, f"Collective group {key} has {len(joined)} of its {size} members after the "
                                    f"deadline; joined: {', '.join(joined)}.{hint} Start every member (and check "
                                    f"that they pass the same group_key and group_size).")
                self._cv.wait(min(left, 0.25))
                if check is not None:
                    self._cv.release()
                    try:
                        check()
                    finally:
                        self._cv.acquire()
            return st.group

    def mark_broken(self, key: int, generation: int):
        """A member reported a failure in ``generation``: the next join starts a new one."""
        with self._cv:
            st = self._groups.get(key)
            if st is not None and st.generation == generation:
                st.broken = True


def _size_error(key, size, known, device):
    return errors.InvalidArgumentError(
        None, None, f"Collective group {key}: {device} says group_size {size}, the group has {known} members. "
                    f"Every member must pass the same group_size for a group_key.")


class CollectiveExecutor:
    """Runs collectives for the member devices of one process (see the module docstring)."""

    transport = "inprocess"

    def __init__(self):
        self.executor_id = secrets.randbits(63)
        self.mailbox = R.Mailbox()
        self.leader = GroupLeader(self._member_restarted)
        self.piece_bytes = int(os.environ.get("SPARSEFLOW_COLLECTIVE_PIECE_BYTES", R.DEFAULT_PIECE_BYTES))
        self._lock = threading.Lock()
        self._groups: dict[tuple, Group] = {}  # (group_key, device) -> Group
        self._seq: dict[tuple, int] = {}  # (group_key, generation, instance_key, device) -> runs started
        self._links: dict[tuple, R.Link] = {}  # (src device, dst device, dst executor) -> Link
        _EXECUTORS[self.executor_id] = self

    # ------------------------------------------------------------------ what subclasses replace
    def member(self, device: str) -> Member:
        return Member(device, executor_id=self.executor_id)

    def _join(self, key: int, size: int, member: Member, deadline: float, check) -> Group:
        return self.leader.join(key, size, member, deadline, check)

    def _make_link(self, group: Group, src: Member, dst: Member) -> R.Link:
        target = _EXECUTORS.get(dst.executor_id)
        if target is None:
            raise errors.UnavailableError(None, None, f"Collective member {dst.device} is not reachable from "
                                                      f"{src.device} (it is in another process and this session "
                                                      f"has no server): run the session on a tf.train.Server.")
        return R.InProcessLink(target.mailbox, dst.device)

    def _broadcast_abort(self, group: Group, device: str, error: errors.OpError):
        for m in group.members:
            ex = _EXECUTORS.get(m.executor_id)
            if ex is not None and m.device != device:
                ex.abort_group(group.key, group.generation, error)
        self.leader.mark_broken(group.key, group.generation)

    def _ring_check(self, group: Group, rank: int, check):
        """The check() a waiting run calls (a subclass adds liveness probes of its peers)."""
        return check

    def _timeout_error(self, group: Group, rank: int, exec_id, what: str, seconds: float) -> errors.OpError:
        prev = group.members[(rank - 1) % group.size].device
        return errors.DeadlineExceededError(
            None, None, f"{what}: no data from {prev} within {seconds:.1f} s (it has not run this collective, "
                        f"or it is stuck or dead).")

    # ------------------------------------------------------------------ groups and failures
    def group(self, device: str, size: int, key: int, deadline: float, check=None) -> Group:
        g = self._groups.get((key, device))
        if g is not None:
            if g.size != size:
                raise _size_error(key, size, g.size, device)
            return g
        g = self._join(key, size, self.member(device), deadline, check)
        with self._lock:
            self._groups[(key, device)] = g
        self.mailbox.fail_matching(lambda e, k=key, gen=g.generation: e[0] == k and e[1] < gen,
                                   errors.AbortedError(None, None, f"Collective group {key} was restarted."))
        return g

    def _member_restarted(self, group: Group, member: Member):
        """A member of ``group`` joined again from a new process: every member drops the generation
        (their runs of it fail) and joins the next one."""
        error = errors.AbortedError(None, None, f"Collective group {group.key}: member {member.device} restarted "
                                                f"(it joined again from another process); retry.")
        self.abort_group(group.key, group.generation, error)
        try:
            self._broadcast_abort(group, member.device, error)
        except Exception:  # noqa: BLE001 - best effort: the others fail at their deadline otherwise
            pass

    def abort_group(self, key: int, generation: int, error: errors.OpError):
        """Another member failed in this generation: fail our runs of it, re-join next time."""
        with self._lock:
            for k in [k for k, g in self._groups.items() if k[0] == key and g.generation == generation]:
                del self._groups[k]
        self.mailbox.fail_matching(lambda e: e[0] == key and e[1] == generation, error)
        self.leader.mark_broken(key, generation)

    def runs_started(self, key: int, generation: int, instance_key: int) -> dict:
        """{device: runs of ``instance_key`` started} for this process's members (for timeouts)."""
        with self._lock:
            return {k[3]: n for k, n in self._seq.items() if k[:3] == (key, generation, instance_key)}

    def link(self, group: Group, src: int, dst: int) -> R.Link:
        m = group.members[dst]
        k = (group.members[src].device, m.device, m.executor_id)
        link = self._links.get(k)
        if link is None:
            with self._lock:
                link = self._links.get(k)
                if link is None:
                    link = self._links[k] = self._make_link(group, group.members[src], m)
                    link.on_error = self._link_failed
        return link

    def _link_failed(self, exec_id, error):
        self.mailbox.fail(exec_id, error)

    # ------------------------------------------------------------------ runs
    def run(self, kind: int, value, *, device: str, group_size: int, group_key: int, instance_key: int,
            merge_op: str = "Add", final_op: str = "Id", root: bool = False, shape=None, dtype=None,
            timeout: float | None = None, deadline: float | None = None, check=None, what: str = "Collective",
            out: np.ndarray | None = None):
        """One run of a collective by member ``device`` (see the ``all_reduce``... wrappers)."""
        if group_size < 1:
            raise errors.InvalidArgumentError(None, None, f"{what}: group_size must be positive, got {group_size}.")
        seconds = DEFAULT_TIMEOUT_SECONDS if not timeout or timeout <= 0 else float(timeout)
        end = time.monotonic() + seconds
        if deadline is not None:
            end = min(end, deadline)
        seconds = max(end - time.monotonic(), 0.0)
        group = self.group(device, group_size, group_key, end, check)
        rank = group.rank_of(device)
        sk = (group_key, group.generation, instance_key, device)
        with self._lock:
            seq = self._seq.get(sk, 0)
            self._seq[sk] = seq + 1
        exec_id = (group_key, group.generation, instance_key, seq)
        label = f"{what} (group_key {group_key}, instance_key {instance_key}, member {device})"

        def describe(r):
            return f"member {group.members[r].device} (rank {r})" if 0 <= r < group.size else f"rank {r}"

        ring = R.Ring(rank, group.size, exec_id, self.link(group, rank, (rank + 1) % group.size)
                      if group.size > 1 else None, self.mailbox, (), self.piece_bytes, end,
                      self._ring_check(group, rank, check),
                      lambda: self._timeout_error(group, rank, exec_id, label, seconds), describe)
        try:
            return self._algorithm(kind, ring, value, merge_op, final_op, root, shape, dtype, group, out, label)
        except errors.OpError as e:
            err = _with_label(e, label)
            if group.size > 1:
                self._fail_run(group, device, exec_id, err)
            raise err from None
        finally:
            self.mailbox.forget(exec_id, rank)

    def _fail_run(self, group: Group, device: str, exec_id, err):
        self.mailbox.fail(exec_id, err)
        with self._lock:
            for k in [k for k, g in self._groups.items() if k[0] == group.key and g.generation == group.generation]:
                del self._groups[k]
        try:
            self._broadcast_abort(group, device, err)
        except Exception:  # noqa: BLE001 - best effort: the others still have their deadlines
            pass

    def _algorithm(self, kind, ring, value, merge_op, final_op, root, shape, dtype, group, out, label):
        if kind == R.KIND_REDUCE:
            if merge_op not in R.MERGE_OPS:
                raise errors.InvalidArgumentError(None, None, f"{label}: merge_op must be one of "
                                                              f"{sorted(R.MERGE_OPS)}, got {merge_op!r}.")
            if final_op not in ("Id", "Div"):
                raise errors.InvalidArgumentError(None, None, f"{label}: final_op must be 'Id' or 'Div', got "
                                                              f"{final_op!r}.")
            arr = np.asarray(value)
            code, ufunc = R.MERGE_OPS[merge_op]
            result = out if out is not None else np.empty(arr.shape, arr.dtype)
            if result.shape != arr.shape or result.dtype != arr.dtype or not result.flags.c_contiguous:
                raise errors.InvalidArgumentError(None, None, f"{label}: out must be a contiguous {arr.dtype} array "
                                                              f"of shape {list(arr.shape)}.")
            if result is not arr:
                np.copyto(result, arr)
            flat = result.reshape(-1)
            ring.meta = (R.KIND_REDUCE, _enum(arr.dtype), flat.shape[0], code)
            self._reduce(ring, group, flat, merge_op, ufunc)
            if final_op == "Div":
                _divide(result, group.size)
            return result
        if kind == R.KIND_GATHER:
            arr = np.asarray(value)
            return R.all_gather(ring, arr, _enum(arr.dtype)).reshape((-1,) + arr.shape[1:])
        if kind == R.KIND_BCAST:
            if root:
                result = np.array(value, copy=True, order="C")
                root_rank = ring.rank
            else:
                result = np.empty(tuple(shape), dtype)
                root_rank = self._root_of(ring)
            ring.meta = (R.KIND_BCAST, _enum(result.dtype), result.size, root_rank, *result.shape)
            R.broadcast(ring, result.reshape(-1), root_rank)
            return result
        raise errors.InternalError(None, None, f"Unknown collective kind {kind}.")

    def _reduce(self, ring: R.Ring, group: Group, flat: np.ndarray, merge_op: str, ufunc) -> None:
        """All-reduces ``flat`` in place (a subclass may hand it to another transport)."""
        R.all_reduce(ring, flat, ufunc)

    @staticmethod
    def _root_of(ring: R.Ring) -> int:
        """The root's rank, which every piece carries in meta[3] (a receiver peeks at the first)."""
        msg = ring.recv(0, 0)
        root = int(msg.meta[3]) if len(msg.meta) > 3 else -1
        ring.mailbox.put((ring.exec_id, ring.rank, 0, 0), msg)  # back for broadcast() to take
        if not 0 <= root < ring.size:
            raise errors.InvalidArgumentError(None, None, f"Collective broadcast: a piece names root {root} "
                                                          f"in a group of {ring.size}.")
        return root

    # ------------------------------------------------------------------ convenience
    def all_reduce(self, value, *, device, group_size, group_key, instance_key, merge_op="Add", final_op="Id",
                   **kw):
        return self.run(R.KIND_REDUCE, value, device=device, group_size=group_size, group_key=group_key,
                        instance_key=instance_key, merge_op=merge_op, final_op=final_op, **kw)

    def all_gather(self, value, *, device, group_size, group_key, instance_key, **kw):
        return self.run(R.KIND_GATHER, value, device=device, group_size=group_size, group_key=group_key,
                        instance_key=instance_key, **kw)

    def broadcast(self, value, *, device, group_size, group_key, instance_key, root: bool, shape=None, dtype=None,
                  **kw):
        return self.run(R.KIND_BCAST, value, device=device, group_size=group_size, group_key=group_key,
                        instance_key=instance_key, root=root, shape=shape, dtype=dtype, **kw)

    def close(self):
        _EXECUTORS.pop(self.executor_id, None)
        with self._lock:
            links, self._links = list(self._links.values()), {}
        for link in links:
            link.close()


# executor_id -> executor of this process (weak: an executor lives as long as its worker or server).
_EXECUTORS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _enum(np_dtype) -> int:
    return dtypes.as_dtype(np.dtype(np_dtype)).as_datatype_enum


def _divide(arr: np.ndarray, n: int):
    if arr.dtype.kind == "f" or arr.dtype.kind == "c":
        np.divide(arr, arr.dtype.type(n), out=arr)
    elif arr.dtype.kind in "iu":  # TensorFlow's integer Div truncates toward zero
        q = np.abs(arr) // n
        np.copyto(arr, np.where(arr < 0, -q, q).astype(arr.dtype))
    else:
        raise errors.InvalidArgumentError(None, None, f"final_op 'Div' is not defined for {arr.dtype}.")


def _with_label(e: errors.OpError, label: str) -> errors.OpError:
    if e.message.startswith(label):
        return e
    return type(e)(None, None, f"{label}: {e.message}")


def executor_of(worker) -> CollectiveExecutor:
    """The executor of a runtime ``Worker``: the one its server installed, or an in-process one."""
    ex = getattr(worker, "collectives", None)
    if ex is None:
        with _lock:
            ex = getattr(worker, "collectives", None)
            if ex is None:
                ex = CollectiveExecutor()
                worker.collectives = ex
    return ex


_lock = threading.Lock()
