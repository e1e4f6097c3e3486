"""CPU kernels of the collective ops (ops/collective_ops.py): each run hands its tensor to the
collective executor of the session's worker (kernels/collective_executor.py) under the step's
deadline and cancellation, and ``timeout_seconds``.

The executor is the one the task's ``tf.train.Server`` installed (members in other processes
reached over shared memory or gRPC), or, in a local session, an in-process one (members are
devices of this process).

``CollectiveReduceStart`` copies its inputs into one flat buffer and hands the run to a thread of
its own (runs never queue behind each other, so members that start buckets in different orders
cannot deadlock), returning a handle at once; ``CollectiveReduceDone`` waits for
it under the step's deadline and cancellation and splits the buffer back. A run that fails in the
background aborts its step at once (with the run's error, naming the missing member), so an op
that waits meanwhile -- on a queue, a table, another task -- stops too instead of hanging.
"""

from __future__ import annotations

import concurrent.futures
import threading

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels import collective_ring as R
from sparseflow._src.kernels.collective_executor import executor_of
from sparseflow._src.kernels.registry import register_kernel

#: ops whose kernel only starts a run and never blocks: the master orders them as early as it can
STARTS_EARLY = frozenset({"CollectiveReduceStart"})
_POLL_SECONDS = 0.1  # how often a Done waiting for its run checks the step


def _start_run(fn) -> concurrent.futures.Future:
    """``fn()`` on a thread of its own (runs never queue behind each other: members that start their
    buckets in different orders cannot deadlock)."""
    fut: concurrent.futures.Future = concurrent.futures.Future()

    def body():
        if fut.set_running_or_notify_cancel():
            try:
                fut.set_result(fn())
            except BaseException as e:  # noqa: BLE001 - handed to the Done kernel
                fut.set_exception(e)

    threading.Thread(target=body, name="sparseflow-collective-run", daemon=True).start()
    return fut


def _worker(node):
    state = node.session if isinstance(node.session, dict) else {}
    worker = state.get("worker")
    if worker is None:
        raise errors.FailedPreconditionError(None, None, f"{node.op_type} {node.name!r} runs only in a session.")
    return worker


def _runner(node, kind):
    attrs = node.attrs
    timeout = float(attrs.get("timeout_seconds", 0.0) or 0.0)
    what = f"{node.op_type} {node.name!r}"

    def run(ctx, value, group_size, group_key, instance_key, **kw):
        ex = executor_of(_worker(node))
        check = (lambda: ctx.check(None)) if ctx is not None else None
        return ex.run(kind, value, device=node.device, group_size=int(group_size), group_key=int(group_key),
                      instance_key=int(instance_key), timeout=timeout,
                      deadline=ctx.deadline if ctx is not None else None, check=check, what=what, **kw)

    return run


def _v1_keys(node):
    a = node.attrs
    return int(a["group_size"]), int(a["group_key"]), int(a["instance_key"])


def _recv_shape(node, shape) -> tuple:
    dims = [int(d) for d in np.asarray(shape).reshape(-1)] if not hasattr(shape, "as_list") else None
    if dims is None:
        if shape.rank is None or any(d is None for d in shape.as_list()):
            raise errors.InvalidArgumentError(None, None, f"{node.op_type} {node.name!r} needs a fully defined "
                                                          f"shape, got {shape}.")
        dims = shape.as_list()
    if any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(None, None, f"{node.op_type} {node.name!r}: negative dimension in "
                                                      f"shape {dims}.")
    return tuple(dims)


@register_kernel("CollectiveReduce", needs_context=True)
def _reduce(node):
    run = _runner(node, R.KIND_REDUCE)
    keys = _v1_keys(node)
    merge, final = node.attrs["merge_op"], node.attrs["final_op"]
    return lambda ctx, x: run(ctx, x, *keys, merge_op=merge, final_op=final)


@register_kernel("CollectiveReduceV2", needs_context=True)
def _reduce_v2(node):
    run = _runner(node, R.KIND_REDUCE)
    merge, final = node.attrs["merge_op"], node.attrs["final_op"]
    return lambda ctx, x, size, key, instance, *tokens: run(ctx, x, size, key, instance, merge_op=merge,
                                                            final_op=final)


@register_kernel("CollectiveGather", needs_context=True)
def _gather(node):
    run = _runner(node, R.KIND_GATHER)
    keys = _v1_keys(node)
    return lambda ctx, x: run(ctx, x, *keys)


@register_kernel("CollectiveGatherV2", needs_context=True)
def _gather_v2(node):
    run = _runner(node, R.KIND_GATHER)
    return lambda ctx, x, size, key, instance, *tokens: run(ctx, x, size, key, instance)


@register_kernel("CollectiveBcastSend", needs_context=True)
def _bcast_send(node):
    run = _runner(node, R.KIND_BCAST)
    keys = _v1_keys(node)
    want = _recv_shape(node, node.attrs["shape"])

    def compute(ctx, x):
        x = np.asarray(x)
        if tuple(x.shape) != want:
            raise errors.InvalidArgumentError(None, None, f"{node.op_type} {node.name!r}: input of shape "
                                                          f"{list(x.shape)}, the op's shape attr is {list(want)}.")
        return run(ctx, x, *keys, root=True)

    return compute


@register_kernel("CollectiveBcastSendV2", needs_context=True)
def _bcast_send_v2(node):
    run = _runner(node, R.KIND_BCAST)
    return lambda ctx, x, size, key, instance: run(ctx, x, size, key, instance, root=True)


@register_kernel("CollectiveBcastRecv", needs_context=True)
def _bcast_recv(node):
    run = _runner(node, R.KIND_BCAST)
    keys = _v1_keys(node)
    shape = _recv_shape(node, node.attrs["shape"])
    dtype = np.dtype(node.attrs["T"].as_numpy_dtype)
    return lambda ctx: run(ctx, None, *keys, root=False, shape=shape, dtype=dtype)


@register_kernel("CollectiveBcastRecvV2", needs_context=True)
def _bcast_recv_v2(node):
    run = _runner(node, R.KIND_BCAST)
    dtype = np.dtype(node.attrs["T"].as_numpy_dtype)
    return lambda ctx, size, key, instance, shape: run(ctx, None, size, key, instance, root=False,
                                                       shape=_recv_shape(node, shape), dtype=dtype)


class _StartedRun:
    """The handle of a ``CollectiveReduceStart``: the run's future and the inputs' shapes."""

    __slots__ = ("future", "shapes", "what")

    def __init__(self, future, shapes, what):
        self.future, self.shapes, self.what = future, shapes, what


def _abort_step(ctx, error):
    """A run failed in the background: the step stops now, with its error (ops waiting elsewhere
    see it at their next check)."""
    if ctx is None:
        return
    abort = getattr(ctx.rendezvous, "abort", None)
    if abort is not None:
        abort(error)
    ctx.cancelled.set()


@register_kernel("CollectiveReduceStart", needs_context=True)
def _reduce_start(node):
    run = _runner(node, R.KIND_REDUCE)
    size, key, instance = _v1_keys(node)
    merge, final = node.attrs["merge_op"], node.attrs["final_op"]
    dtype = np.dtype(node.attrs["T"].as_numpy_dtype)
    what = f"{node.op_type} {node.name!r}"

    def compute(ctx, *inputs):
        arrays = [np.asarray(x) for x in inputs]
        for a in arrays:
            if a.dtype != dtype:
                raise errors.InvalidArgumentError(None, None, f"{what}: an input of dtype {a.dtype}, the op's T "
                                                              f"is {dtype}.")
        flat = np.concatenate([a.reshape(-1) for a in arrays]) if len(arrays) > 1 else arrays[0].reshape(-1).copy()

        def work():
            try:
                return run(ctx, flat, size, key, instance, merge_op=merge, final_op=final, out=flat)
            except BaseException as e:
                _abort_step(ctx, e)
                raise

        return _StartedRun(_start_run(work), [a.shape for a in arrays], what)

    return compute


@register_kernel("CollectiveReduceDone", needs_context=True)
def _reduce_done(node):
    n = int(node.attrs["N"])

    def compute(ctx, handle):
        if not isinstance(handle, _StartedRun):
            raise errors.InvalidArgumentError(None, None, f"{node.op_type} {node.name!r}: its input is not the handle "
                                                          f"of a CollectiveReduceStart.")
        if len(handle.shapes) != n:
            raise errors.InvalidArgumentError(None, None, f"{node.op_type} {node.name!r}: N={n}, the run it waits "
                                                          f"for reduces {len(handle.shapes)} tensors.")
        while True:
            try:
                flat = handle.future.result(timeout=_POLL_SECONDS)
                break
            except concurrent.futures.TimeoutError:
                if ctx is not None:
                    ctx.check(None)
        outs, at = [], 0
        for shape in handle.shapes:
            count = int(np.prod(shape, dtype=np.int64))
            outs.append(flat[at:at + count].reshape(shape))
            at += count
        return outs[0] if n == 1 else tuple(outs)

    return compute
