"""CPU kernels of EmbeddingClusterPull / EmbeddingClusterPush (sparseflow/_src/embedding/cluster_ops.py)
and of synchronous training's EmbeddingClusterAccumulate / ApplyAccumulated / SetSyncStep
(sparseflow/_src/embedding/sync_ops.py).

Per step, for N tables at once: each table's unique keys are split by owning shard
(``shard_ids(key, num_shards, PART_SALT)``: a hash of the key, so skewed ids such as multiples of
the shard count spread evenly), the pieces are grouped by the task holding each shard, one request
per task is sent (all concurrently; a shard on this very task is served in-process while the
others are in flight), and the replies are scattered back into each table's ``[U, dim]`` matrix.
Every shard of every table gets an item, even an empty one, so each task sees exactly one pull and
one push per step and its tables' step counters (eviction ages) advance with the steps.

Kernels reach other tasks through the worker the runtime puts in the session's kernel state
(``node.session["worker"]``): ``worker.task``, ``worker.devices`` (shards of this task) and
``worker.remote(task)`` (another task's worker interface, whose ``table_pull_async`` /
``table_push_async`` the distributed layer implements over gRPC). This module never imports the
distributed layer.

A push with ``staleness`` k > 0 (bounded staleness: ``HybridStrategy``) does not wait for its
replies: it first waits for its own run of k runs ago, then sends and returns. The runs in flight
are kept per worker (:func:`pending_pushes`); a failed one fails the next run of the op, and
:func:`flush_pending_pushes` waits for all of them (a strategy's ``finish``).

Synchronous training sends the same shape of requests: a worker's accumulate (one
``TableAccumulate`` per task, an item for every shard of every table, so each shard counts one push
per worker step), and the chief's apply (one ``TableApplyAccumulated`` per task) and set-step
(``TableSetSyncStep``). The apply waits on the parameter servers until the workers' pushes are in;
its call has no deadline but the step's, and is cancelled when the step is (the servers' waits then
end too). A shard on this very task waits in-process, under the step's cancellation and deadline.
"""

from __future__ import annotations

import collections
import concurrent.futures
import threading
import time

import numpy as np
from google.protobuf import text_format

from sparseflow._src.framework import errors
from sparseflow._src.framework.proto.embedding_table_pb2 import EmbeddingTableConfig
from sparseflow._src.kernels import embedding_hash as H
from sparseflow._src.kernels.embedding_service import (
    AccumulateItem,
    ApplyItem,
    PullItem,
    PushItem,
    SyncStepItem,
    parse_config,
    shards_of,
)
from sparseflow._src.kernels.registry import register_kernel

_EMPTY_I = np.zeros(0, np.int32)
_EMPTY_F = np.zeros(0, np.float32)
_POLL_SECONDS = 0.1  # how often a kernel waiting for replies checks that its step is still alive


def _task_of(device: str) -> str:
    i = device.find("/device:")
    return device if i < 0 else device[:i]


class _Member:
    """One table of a grouped op: its config bytes, shards and the task of each shard."""

    __slots__ = ("config", "table", "tasks", "dim")

    def __init__(self, text: str, node):
        msg = EmbeddingTableConfig()
        try:
            text_format.Parse(text, msg)
        except text_format.ParseError as e:
            raise errors.InvalidArgumentError(None, None, f"{node.op_type} {node.name}: malformed table config: {e}"
                                              ) from None
        self.config = msg.SerializeToString(deterministic=True)
        self.table = parse_config(self.config)
        self.tasks = [_task_of(d) for d in self.table.shard_devices]
        self.dim = self.table.spec.dim

    def split(self, keys):
        """[(part, positions or None for all)] of ``keys`` by owning shard."""
        n = self.table.num_parts
        if n == 1:
            return [(0, None)]
        ids = np.empty(keys.shape[0], dtype=np.int32)
        H.shard_ids(keys, n, H.PART_SALT, ids)
        perm, off = H.partition(ids, n)
        return [(p, perm[off[p]:off[p + 1]]) for p in range(n)]


class _LocalClient:
    """The shards of this task, called in-process (a completed future per call)."""

    def __init__(self, shards):
        self._shards = shards

    def table_pull_async(self, items, timeout=None, ctx=None):
        return _run(lambda: (self._shards.incarnation, self._shards.pull(items)))

    def table_push_async(self, items, timeout=None, ctx=None):
        return _run(lambda: (self._shards.incarnation, self._shards.push(items)))

    def table_accumulate_async(self, items, timeout=None, ctx=None):
        return _run(lambda: (self._shards.incarnation, self._shards.accumulate(items)))

    def table_apply_accumulated_async(self, items, timeout=None, ctx=None):
        return _run(lambda: (self._shards.incarnation, self._shards.apply_accumulated(items, ctx)))

    def table_set_sync_step_async(self, items, timeout=None, ctx=None):
        return _run(lambda: (self._shards.incarnation, self._shards.set_sync_step(items)))


def _run(fn):
    f = concurrent.futures.Future()
    try:
        f.set_result(fn())
    except BaseException as e:  # noqa: BLE001 - handed to the waiting kernel
        f.set_exception(e)
    return f


class _Router:
    """task -> the client of its shards (in-process for this task, its worker interface otherwise)."""

    def __init__(self, node):
        state = node.session if isinstance(node.session, dict) else {}
        self.worker = state.get("worker")
        self.node = node
        self._clients: dict = {}
        self._incarnations: dict = {}  # task -> incarnation of its first answer

    def client(self, task: str):
        c = self._clients.get(task)
        if c is not None:
            return c
        w = self.worker
        if w is None:
            raise errors.FailedPreconditionError(None, None, f"{self.node.op_type} runs only in a session (it needs "
                                                             f"its worker to reach the table shards).")
        if task == w.task:
            c = _LocalClient(shards_of(w.devices))
        elif w.remote is None:
            raise errors.InvalidArgumentError(
                None, None, f"A table shard is on {task}, but this session runs in one process ({w.task}): connect "
                            f"the session to a tf.train.Server of a cluster that has {task}.")
        else:
            c = w.remote(task)
        self._clients[task] = c
        return c

    def call(self, ctx, requests, method, *args):
        """Sends ``requests`` ({task: items}) concurrently; returns {task: result}. This task's own
        shards are served inline while the remote requests are in flight. A task that answers with
        another incarnation than at first has restarted (its shards lost their rows): AbortedError."""
        timeout = ctx.remaining() if ctx is not None else None
        pending = {}
        local = None
        try:
            for task, items in requests.items():
                client = self.client(task)
                if isinstance(client, _LocalClient):
                    local = (task, client, items)
                    continue
                pending[task] = getattr(client, method)(items, *args, timeout=timeout)
            replies = {}
            if local is not None:  # a blocking call (the chief's apply) waits under the step's ctx
                replies[local[0]] = getattr(local[1], method)(local[2], *args, ctx=ctx).result()
            waiting = set(pending.values())
            while waiting:
                _, waiting = concurrent.futures.wait(waiting, timeout=_POLL_SECONDS)
                if waiting and ctx is not None:
                    ctx.check(None)
            for task, f in pending.items():
                replies[task] = f.result()
            return {task: self._checked(task, inc, reply) for task, (inc, reply) in replies.items()}
        except BaseException:
            for f in pending.values():
                rpc = getattr(f, "rpc", None)
                if rpc is not None and not f.done():
                    rpc.cancel()
            raise

    def send(self, requests, method) -> dict:
        """Sends ``requests`` ({task: items}) without waiting: {task: future}. This task's own shards
        are served inline (their future is done)."""
        pending = {}
        for task, items in requests.items():
            pending[task] = getattr(self.client(task), method)(items, timeout=None)
        return pending

    def _checked(self, task, incarnation, reply):
        first = self._incarnations.setdefault(task, incarnation)
        if first != incarnation:
            raise errors.AbortedError(
                None, None, f"{task} restarted (incarnation {first:016x}, now {incarnation:016x}): the embedding-table "
                            f"shards it holds lost their rows. Restore the tables from a checkpoint in a new session.")
        return reply


def _keys_u64(keys, what):
    keys = np.asarray(keys)
    if keys.ndim != 1:
        raise errors.InvalidArgumentError(None, None, f"{what}: keys must be a vector, got shape {list(keys.shape)}.")
    keys = np.ascontiguousarray(keys)
    return keys.view(np.uint64) if keys.dtype == np.int64 else keys


def _per_key(arr, n, dtype, what):
    arr = np.asarray(arr)
    if arr.size == 0:
        return None
    if arr.shape != (n,):
        raise errors.InvalidArgumentError(None, None, f"{what}: {list(arr.shape)} values for {n} keys.")
    return np.ascontiguousarray(arr, dtype=dtype)


@register_kernel("EmbeddingClusterPull", needs_context=True)
def _cluster_pull(node):
    members = [_Member(t, node) for t in node.attrs["tables"]]
    training = [bool(x) for x in node.attrs["training"]]
    router = _Router(node)
    n = len(members)

    def compute(ctx, *inputs):
        requests: dict[str, list] = {}
        where: dict[str, list] = {}
        outs = []
        for t, m in enumerate(members):
            keys = _keys_u64(inputs[t], f"pull from {m.table.name!r}")
            counts = _per_key(inputs[n + t], keys.shape[0], np.int32, f"pull from {m.table.name!r}: counts")
            outs.append(None if m.table.num_parts == 1 else np.empty((keys.shape[0], m.dim), np.float32))
            for part, pos in m.split(keys):
                k = keys if pos is None else keys[pos]
                c = _EMPTY_I if counts is None else (counts if pos is None else counts[pos])
                task = m.tasks[part]
                requests.setdefault(task, []).append(PullItem(m.config, part, k, c, m.dim, training[t]))
                where.setdefault(task, []).append((t, pos))
        replies = router.call(ctx, requests, "table_pull_async")
        for task, rows_list in replies.items():
            for (t, pos), rows in zip(where[task], rows_list):
                if pos is None:
                    outs[t] = rows
                else:
                    outs[t][pos] = rows
        return outs[0] if n == 1 else tuple(outs)  # one output is returned as itself

    return compute


class PendingPushes:
    """The pushes of one worker sent without waiting (``staleness`` > 0): per push op, its runs in
    flight, oldest first; each run is ``(router, {task: future})``."""

    def __init__(self):
        self._lock = threading.Lock()
        self._runs: dict[str, collections.deque] = {}

    def add(self, op_name: str, router, futures: dict) -> None:
        with self._lock:
            self._runs.setdefault(op_name, collections.deque()).append((router, futures))

    def in_flight(self, op_name: str | None = None) -> int:
        with self._lock:
            runs = [self._runs.get(op_name, ())] if op_name is not None else list(self._runs.values())
            return sum(len(r) for r in runs)

    def wait_below(self, op_name: str, limit: int, ctx=None, deadline: float | None = None) -> None:
        """Waits (oldest first) until fewer than ``limit`` runs of ``op_name`` are in flight; raises
        the error of a run that failed."""
        while True:
            with self._lock:
                runs = self._runs.get(op_name)
                if not runs or len(runs) < limit:
                    return
                router, futures = runs[0]
            _wait_replies(futures, ctx, deadline, f"a push of {op_name!r}")
            with self._lock:
                if runs and runs[0][1] is futures:
                    runs.popleft()
            for task, f in futures.items():
                router._checked(task, *f.result())

    def flush(self, timeout: float | None = None) -> None:
        """Waits for every run in flight (DeadlineExceededError after ``timeout`` seconds)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            names = list(self._runs)
        for name in names:
            self.wait_below(name, 1, None, deadline)


def _wait_replies(futures: dict, ctx, deadline, what):
    waiting = set(futures.values())
    while waiting:
        _, waiting = concurrent.futures.wait(waiting, timeout=_POLL_SECONDS)
        if waiting and ctx is not None:
            ctx.check(None)
        if waiting and deadline is not None and time.monotonic() > deadline:
            raise errors.DeadlineExceededError(None, None, f"Timed out waiting for {what} to be applied.")


_pending_lock = threading.Lock()


def pending_pushes(worker) -> PendingPushes:
    """The pushes in flight of ``worker`` (a runtime Worker), made on first use."""
    p = getattr(worker, "pending_table_pushes", None)
    if p is None:
        with _pending_lock:
            p = getattr(worker, "pending_table_pushes", None)
            if p is None:
                p = worker.pending_table_pushes = PendingPushes()
    return p


def flush_pending_pushes(worker, timeout: float | None = None) -> None:
    """Waits until every push ``worker`` sent without waiting has been applied (or raises its error)."""
    p = getattr(worker, "pending_table_pushes", None)
    if p is not None:
        p.flush(timeout)


@register_kernel("EmbeddingClusterPush", needs_context=True)
def _cluster_push(node):
    members = [_Member(t, node) for t in node.attrs["tables"]]
    router = _Router(node)
    n = len(members)
    staleness = int(node.attrs.get("staleness", 0) or 0)

    def compute(ctx, *inputs):
        requests: dict[str, list] = {}
        for t, m in enumerate(members):
            what = f"push to {m.table.name!r}"
            keys = _keys_u64(inputs[t], what)
            u = keys.shape[0]
            grads = np.asarray(inputs[n + t])
            if grads.shape != (u, m.dim):
                raise errors.InvalidArgumentError(None, None, f"{what}: gradients of shape {list(grads.shape)} for "
                                                              f"{u} keys of dim {m.dim}.")
            grads = np.ascontiguousarray(grads, dtype=np.float32)
            counts = _per_key(inputs[2 * n + t], u, np.float32, f"{what}: counts")
            clicks = _per_key(inputs[3 * n + t], u, np.float32, f"{what}: clicks")
            lr = float(inputs[4 * n + t])
            for part, pos in m.split(keys):
                def sel(a, pos=pos):
                    return _EMPTY_F if a is None else (a if pos is None else a[pos])

                item = PushItem(m.config, part, sel(keys), sel(grads), sel(counts), sel(clicks), lr)
                requests.setdefault(m.tasks[part], []).append(item)
        if staleness <= 0:
            router.call(ctx, requests, "table_push_async")
            return
        if router.worker is None:
            raise errors.FailedPreconditionError(None, None, f"{node.op_type} runs only in a session.")
        pending = pending_pushes(router.worker)
        pending.wait_below(node.name, staleness, ctx)
        pending.add(node.name, router, router.send(requests, "table_push_async"))

    return compute


# ---------------------------------------------------------------------- synchronous training
def _per_shard_requests(members, make_item):
    """{task: [item for every shard of every member]} with ``make_item(t, member, part)``."""
    requests: dict[str, list] = {}
    for t, m in enumerate(members):
        for part in range(m.table.num_parts):
            requests.setdefault(m.tasks[part], []).append(make_item(t, m, part))
    return requests


@register_kernel("EmbeddingClusterAccumulate", needs_context=True)
def _cluster_accumulate(node):
    members = [_Member(t, node) for t in node.attrs["tables"]]
    router = _Router(node)
    n = len(members)

    def compute(ctx, *inputs):
        requests: dict[str, list] = {}
        for t, m in enumerate(members):
            what = f"synchronous push to {m.table.name!r}"
            keys = _keys_u64(inputs[t], what)
            u = keys.shape[0]
            grads = np.asarray(inputs[n + t])
            if grads.shape != (u, m.dim):
                raise errors.InvalidArgumentError(None, None, f"{what}: gradients of shape {list(grads.shape)} for "
                                                              f"{u} keys of dim {m.dim}.")
            grads = np.ascontiguousarray(grads, dtype=np.float32)
            counts = _per_key(inputs[2 * n + t], u, np.float32, f"{what}: counts")
            clicks = _per_key(inputs[3 * n + t], u, np.float32, f"{what}: clicks")
            local_step = int(inputs[4 * n + t])
            for part, pos in m.split(keys):  # every shard gets an item: it counts one push per worker step
                def sel(a, pos=pos):
                    return _EMPTY_F if a is None else (a if pos is None else a[pos])

                item = AccumulateItem(m.config, part, sel(keys), sel(grads), sel(counts), sel(clicks), local_step)
                requests.setdefault(m.tasks[part], []).append(item)
        router.call(ctx, requests, "table_accumulate_async")

    return compute


@register_kernel("EmbeddingClusterApplyAccumulated", needs_context=True)
def _cluster_apply_accumulated(node):
    members = [_Member(t, node) for t in node.attrs["tables"]]
    router = _Router(node)
    n = len(members)

    def compute(ctx, *inputs):
        required = [int(inputs[t]) for t in range(n)]
        for m, r in zip(members, required):
            if r < 1:
                raise errors.InvalidArgumentError(None, None, f"Synchronous step of embedding table {m.table.name!r}:"
                                                              f" num_required must be positive, got {r}.")
        rates = [float(inputs[n + t]) for t in range(n)]
        router.call(ctx, _per_shard_requests(members, lambda t, m, part: ApplyItem(m.config, part, required[t],
                                                                                    rates[t])),
                    "table_apply_accumulated_async")

    return compute


@register_kernel("EmbeddingClusterSetSyncStep", needs_context=True)
def _cluster_set_sync_step(node):
    members = [_Member(t, node) for t in node.attrs["tables"]]
    router = _Router(node)

    def compute(ctx, *steps):
        router.call(ctx, _per_shard_requests(members, lambda t, m, part: SyncStepItem(m.config, part,
                                                                                       int(steps[t]))),
                    "table_set_sync_step_async")

    return compute
