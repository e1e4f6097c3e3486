"""A registered graph: one task's share of a run signature, one compiled Plan per device.

The master hands each task the nodes it runs, in one global topological order of the whole
step in which every ``_Send`` comes before its ``_Recv``. Each device's plan runs its nodes in
that order, so partitions that wait on each other never deadlock, whether they run in threads
of one process or in different processes. The partition holding ``_Feed``/``_Fetch`` (the
client device's) runs in the calling thread; the others run on an elastic pool.

Executors: ``fast`` (the straight-line plan), ``traced`` (step stats; also checks the deadline
between ops) and ``parallel`` (a dataflow executor on an inter-op pool).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     with tf.device("/cpu:1"):
    ...         a = tf.constant(2.0) * 3.0
    ...     b = a + 1.0
    ...     with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
    ...         print(sess.run(b))
    7.0
"""

from __future__ import annotations

import time

from sparseflow._src.framework import errors
from sparseflow._src.framework.ir import NodeIR
from sparseflow._src.runtime.plan import FEED_OP, FETCH_OP, Plan, StepContext
from sparseflow._src.runtime.threads import ElasticPool

_POOL = ElasticPool("sparseflow-partition")


class Partition:
    """One device's plan of a registered graph."""

    __slots__ = ("device", "plan")

    def __init__(self, device: str, plan: Plan):
        self.device = device
        self.plan = plan


class PartitionGraph:
    """The partitions one task runs for one signature (see the module docstring)."""

    def __init__(self, nodes: list[NodeIR], library: dict, feed_nodes: list[str], fetch_nodes: list[str],
                 devices, session, recv_batches=(), streamed=()):
        by_device: dict[str, list[NodeIR]] = {}
        main = None
        for n in nodes:
            by_device.setdefault(n.device, []).append(n)
            if main is None and n.op in (FEED_OP, FETCH_OP):
                main = n.device
        if main is None:
            main = next(iter(by_device), "")
        self.main = Partition(main, Plan(by_device.pop(main, []), feed_nodes, fetch_nodes, devices, session,
                                         library=library))
        self.others = [Partition(d, Plan(ns, [], [], devices, session, library=library))
                       for d, ns in sorted(by_device.items())]
        self.needs_context = bool(self.others) or self.main.plan.needs_context
        self.nodes = nodes
        # Pulled from other tasks when a step starts: batches in one call each, the others one by one;
        # the receives in `streamed` (names) come in their sender's RunGraph stream, through the master:
        # stream_keys is sender task -> their rendezvous keys.
        self.stream_keys = _stream_keys(nodes, streamed)
        self.streamed = [k for keys in self.stream_keys.values() for k in keys]
        streamed = set(streamed)
        self.remote_batches = _remote_recv_batches([n for n in nodes if n.name not in streamed], recv_batches)

    @property
    def plans(self) -> list[Plan]:
        return [self.main.plan] + [p.plan for p in self.others]

    def run(self, feeds: list, step, deadline: float | None, session, run_options=None, stats: list | None = None,
            pool=None) -> list:
        """Runs every partition of this task for ``step`` (a StepState); returns the fetches."""
        if self.streamed:
            step.rendezvous.expect(self.streamed)
        if self.remote_batches:
            step.rendezvous.prefetch(self.remote_batches)
        if not self.others:
            ctx = StepContext(step.rendezvous, step.step_id, deadline, session, run_options, step.cancelled)
            return _execute(self.main.plan, feeds, ctx, stats, pool)
        futures = []
        for p in self.others:
            ctx = StepContext(step.rendezvous, step.step_id, deadline, session, run_options, step.cancelled)
            part_stats = [] if stats is not None else None
            futures.append((_POOL.submit(_run_other, p.plan, ctx, part_stats, pool, step), part_stats))
        ctx = StepContext(step.rendezvous, step.step_id, deadline, session, run_options, step.cancelled)
        try:
            out = _execute(self.main.plan, feeds, ctx, stats, pool)
        except BaseException as e:
            step.abort(e)
            for f, _ in futures:
                f.exception()
            raise step.error from None
        for f, part_stats in futures:
            f.result()  # _run_other raises nothing; errors are in step.error
            if stats is not None:
                stats.extend(part_stats)
        if step.error is not None:
            raise step.error
        return out


def _remote_recv_batches(nodes, batches) -> list[list[str]]:
    """Rendezvous keys of the step-level ``_Recv`` nodes whose sender is on another task, grouped
    by ``batches`` (lists of node names); every other such key alone."""
    from sparseflow._src.framework.rendezvous_key import create_key
    from sparseflow._src.runtime.step import task_of_device

    keys = {}
    for n in nodes:
        if n.op == "_Recv":
            a = n.attrs
            if task_of_device(a["send_device"]) != task_of_device(a["recv_device"]):
                keys[n.name] = create_key(a["send_device"], a["send_device_incarnation"], a["recv_device"],
                                          a["tensor_name"])
    out = []
    for batch in batches:
        group = [keys.pop(name) for name in batch if name in keys]
        if group:
            out.append(group)
    out.extend([k] for k in keys.values())
    return out


def _stream_keys(nodes, streamed) -> dict[str, list[str]]:
    """Sender task -> rendezvous keys of the ``_Recv`` nodes named in ``streamed``."""
    from sparseflow._src.framework.rendezvous_key import create_key
    from sparseflow._src.runtime.step import task_of_device

    streamed = set(streamed)
    out: dict[str, list[str]] = {}
    for n in nodes:
        if n.op == "_Recv" and n.name in streamed:
            a = n.attrs
            out.setdefault(task_of_device(a["send_device"]), []).append(
                create_key(a["send_device"], a["send_device_incarnation"], a["recv_device"], a["tensor_name"]))
    return out


def _run_other(plan: Plan, ctx: StepContext, stats, pool, step):
    try:
        _execute(plan, [], ctx, stats, pool)
    except BaseException as e:  # noqa: BLE001 - the first error of the step is kept and reported
        step.abort(e)


def _execute(plan: Plan, feeds: list, ctx: StepContext, stats: list | None, pool) -> list:
    if stats is not None:
        return plan.run_traced(feeds, ctx, stats)
    if pool is not None:
        return plan.run_parallel(feeds, ctx, pool)
    if ctx.deadline is not None and not plan.checks_cancellation:
        return plan.run_traced(feeds, ctx, None)
    return plan.run(feeds, ctx)


def remaining_ms(deadline: float | None) -> int:
    if deadline is None:
        return 0
    left = int((deadline - time.monotonic()) * 1000)
    if left <= 0:
        raise errors.DeadlineExceededError(None, None, "Timed out waiting for the step to finish "
                                                       "(RunOptions.timeout_in_ms).")
    return left
