"""The master role: per run signature, prune/optimize/place/partition and register; per step, run.

A ``MasterSession`` reads its graph from a source (the client's live ``Graph`` in-process, or
the GraphDef a remote client sent and extended) and, for each new signature (feeds, fetches,
targets), runs the pass pipeline over the devices of its environment, orders the whole step
topologically (each ``_Send`` before its ``_Recv``), splits it by task, and registers each task's
nodes once with that task's worker. A step then runs every task's registered graph under one
step id: the client task's (which holds ``_Feed``/``_Fetch``) in the calling thread, the others
through their worker interfaces. The first error of any task aborts the step on every task and
is the error the client sees.

The environment (``MasterEnv``) says which devices exist and how to reach each task's worker: a
local Session's environment is its own in-process worker; a cluster's is built by the
distributed layer (device discovery with deadlines, gRPC worker clients).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default() as g:
    ...     y = tf.constant([1.0, 2.0]) * 2.0
    ...     with tf.Session() as sess:
    ...         print(sess.run(y))
    [2. 4.]
"""

from __future__ import annotations

import secrets
import sys
import threading
import time

from sparseflow._src.framework import errors
from sparseflow._src.framework.ir import GraphIR, parse_input
from sparseflow._src.kernels.registry import is_client_only
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.pipeline import run_pipeline
from sparseflow._src.runtime.partial_run import PartialRun, no_setup_message
from sparseflow._src.runtime.plan import Plan
from sparseflow._src.runtime.recv_batches import recv_batches, streamed_receives
from sparseflow._src.runtime.step import task_of_device


def new_step_id() -> int:
    """A random step id with the top 8 bits clear (TensorFlow reserves the top bits)."""
    return secrets.randbits(56) | 1


class MasterEnv:
    """Devices and workers of a master: here, one in-process worker (a local Session's)."""

    def __init__(self, local_worker):
        self.local_worker = local_worker

    @property
    def client_device(self) -> str:
        return self.local_worker.devices.names[0]

    def device_names(self) -> list[str]:
        return list(self.local_worker.devices.names)

    def incarnations(self) -> dict:
        return dict(self.local_worker.devices.incarnations)

    def prepare_tasks(self, tasks, session_handle: str, client_graph) -> None:
        """Makes sure every task in ``tasks`` is reachable and has a worker session."""

    def worker(self, task: str):
        if task == self.local_worker.task:
            return self.local_worker
        raise errors.InvalidArgumentError(None, None, f"No such task in this session: {task}")

    @property
    def is_cluster(self) -> bool:
        return False


class GraphSource:
    """The client's live Graph, read when a signature is compiled."""

    def __init__(self, graph):
        self.graph = graph

    @property
    def version(self):
        return self.graph._mutations

    def ir(self) -> GraphIR:
        return GraphIR.from_graph(self.graph)


class TaskPart:
    """One task's registered share of a signature, and the worker interface that runs it."""

    __slots__ = ("task", "worker", "graph_handle", "stream_keys")

    def __init__(self, task, worker, graph_handle, stream_keys=()):
        self.task = task
        self.worker = worker
        self.graph_handle = graph_handle
        self.stream_keys = list(stream_keys)  # keys its RunGraph stream brings to the master's task


class ClientGraph:
    """One compiled signature: the registered graph of each task it runs on."""

    def __init__(self, master, local: TaskPart, remote: list[TaskPart], local_graph, explain_text: str,
                 partition_irs: dict):
        self.master = master
        self.local = local
        self.remote = remote
        self.local_graph = local_graph  # the client task's PartitionGraph
        self.explain_text = explain_text
        self.partition_irs = partition_irs  # device -> GraphIR (RunOptions.output_partition_graphs)
        g = local_graph
        # A single straight-line plan that needs no step context runs without a step.
        self.direct_plan = g.main.plan if not remote and not g.needs_context else None

    def run(self, feeds: list, deadline: float | None = None, run_options=None, stats: list | None = None,
            pool=None) -> list:
        m = self.master
        worker = m.env.local_worker
        step_id = new_step_id()
        m.live_steps.add(step_id)
        try:
            if m._closed:  # closed while this run was starting
                raise errors.CancelledError(None, None, "Session has been closed.")
            if not self.remote:
                try:
                    return worker.run_graph(m.handle, self.local.graph_handle, step_id, feeds, deadline, run_options,
                                            stats, pool)
                finally:
                    worker.cleanup_graph(step_id)
            return self._run_tasks(step_id, feeds, deadline, run_options, stats, pool)
        finally:
            m.live_steps.discard(step_id)

    def _run_tasks(self, step_id, feeds, deadline, run_options, stats, pool) -> list:
        m = self.master
        worker = m.env.local_worker
        first: list = []
        lock = threading.Lock()

        def failed(err, source):
            with lock:
                if first:
                    return
                first.append(err)
            worker.cleanup_graph(step_id, err)
            for part in self.remote:
                if part is not source:
                    part.worker.cleanup_graph_async(step_id, err)

        trace = stats is not None
        futures = []
        cleanup = m.take_cleanups()
        def deliver(values):  # from a sender's RunGraph stream: values the local partition receives
            table = worker.steps.get(step_id).rendezvous.local
            for key, value in values:
                try:
                    table.send(key, value)
                except BaseException:  # noqa: BLE001 - the step was aborted meanwhile
                    return

        for part in self.remote:
            f = part.worker.run_graph_async(m.handle, part.graph_handle, step_id, deadline, trace,
                                            cleanup.get(part.task, ()), part.stream_keys, deliver)
            f.add_done_callback(lambda f, part=part: f.exception() is not None and failed(f.exception(), part))
            futures.append((part, f))
        out = None
        try:
            out = worker.run_graph(m.handle, self.local.graph_handle, step_id, feeds, deadline, run_options, stats,
                                   pool)
        except BaseException as e:  # noqa: BLE001 - the first error of the step wins
            failed(e, None)
        for part, f in futures:
            try:
                part_stats = f.result()
                if stats is not None and part_stats:
                    stats.extend(part_stats)
            except BaseException as e:  # noqa: BLE001
                failed(e, part)
        worker.cleanup_graph(step_id)
        if first:
            raise first[0]
        m.add_cleanup(step_id, [p.task for p in self.remote])
        return out


class MasterSession:
    """See the module docstring."""

    def __init__(self, handle: str, source, env: MasterEnv, config=None):
        self.handle = handle
        self.source = source
        self.env = env
        self.config = config
        self._graphs: dict = {}
        self._lock = threading.RLock()
        self._closed = False
        self._pending_cleanups: dict[str, list[int]] = {}
        self.live_steps: set[int] = set()  # steps in flight: close() cancels them on every task
        self._partial_runs: dict = {}
        env.local_worker.create_worker_session(handle, getattr(source, "graph", None))

    # ------------------------------------------------------------------ compile
    def compile(self, feeds: list[str], fetches: list[str], targets: list[str]) -> ClientGraph:
        """The compiled signature (cached per graph version)."""
        key = (tuple(feeds), tuple(fetches), tuple(targets), self.source.version)
        return self._cached(key, lambda: self._compile(feeds, fetches, targets))

    def _cached(self, key, build) -> ClientGraph:
        c = self._graphs.get(key)
        if c is None:
            with self._lock:
                if self._closed:
                    raise errors.CancelledError(None, None, "Session has been closed.")
                c = self._graphs.get(key)
                if c is None:
                    c = self._graphs[key] = build()
        return c

    def _pass_context(self, feeds, fetches, targets) -> PassContext:
        cfg = self.config
        soft = bool(getattr(cfg, "allow_soft_placement", True)) if cfg is not None else True
        return PassContext(feeds=list(feeds), fetches=list(fetches), targets=list(targets),
                           devices=self.env.device_names(), client_device=self.env.client_device,
                           allow_soft_placement=soft, soft_placement_across_tasks=not self.env.is_cluster,
                           log_device_placement=bool(getattr(cfg, "log_device_placement", False)),
                           evaluate=evaluate_constant_subgraph, incarnations=self.env.incarnations(),
                           disabled=disabled_passes(cfg))

    def compile_variant(self, key, make_ir, feeds: list[str], fetches: list[str], targets: list[str]) -> ClientGraph:
        """A signature of ``make_ir()``, a variant of the session's graph (a partial run's stage) that
        ``key`` identifies; cached per graph version as ``compile``'s are."""
        key = ("variant", key, tuple(feeds), tuple(fetches), tuple(targets), self.source.version)
        return self._cached(key, lambda: self._compile(feeds, fetches, targets, make_ir()))

    # ------------------------------------------------------------------ partial runs
    def partial_run_setup(self, feeds: list[str], fetches: list[str], targets: list[str], deadline=None,
                          options=None) -> str:
        """A new partial run (``partial_run.PartialRun``); returns its handle."""
        run = PartialRun(self.source.ir(), self.compile_variant, feeds, fetches, targets, deadline, options,
                         cluster=self.env.is_cluster)
        handle = f"{self.handle}-prun-{secrets.randbits(48):012x}"
        with self._lock:
            self._partial_runs[handle] = run
        return handle

    def partial_run(self, handle: str, feeds: list[str], values: list, fetches: list[str], deadline=None,
                    options=None) -> list:
        """Feeds and fetches one stage of the partial run ``handle``."""
        run = self._partial_runs.get(handle)
        if run is None:
            raise errors.InvalidArgumentError(None, None, no_setup_message(self.env.is_cluster))
        try:
            return run.run(feeds, values, fetches, deadline, options)
        finally:
            if run.done:
                self._partial_runs.pop(handle, None)

    def _compile(self, feeds, fetches, targets, ir=None) -> ClientGraph:
        if len(set(feeds)) != len(feeds):
            raise errors.InvalidArgumentError(None, None, "The same tensor is fed twice.")
        if not fetches and not targets:
            raise errors.InvalidArgumentError(None, None, "Must specify at least one target to fetch or execute.")
        ctx = self._pass_context(feeds, fetches, targets)
        ir = self.source.ir() if ir is None else ir
        if self.env.is_cluster:
            # Placement must know the tasks' devices and incarnations: ask the tasks the graph names.
            self.env.prepare_tasks(_requested_tasks(ir), self.handle, getattr(self.source, "graph", None))
            ctx.devices = self.env.device_names()
            ctx.incarnations = self.env.incarnations()
        try:
            ir = run_pipeline(ir, ctx)
        except ValueError as e:
            raise errors.InvalidArgumentError(None, None, str(e)) from e
        if ctx.log_device_placement:
            for e in ctx.log:
                if isinstance(e, str):
                    print(e, file=sys.stderr)
        local_task = self.env.local_worker.task
        order = _global_order(ir, local_task)
        by_task: dict[str, list] = {}
        for n in order:
            by_task.setdefault(task_of_device(n.device), []).append(n)
        self.env.prepare_tasks(sorted(by_task), self.handle, getattr(self.source, "graph", None))
        feed_nodes = [f"_feed_{i}" for i in range(len(feeds))]
        fetch_nodes = [f"_fetch_{i}" for i in range(len(fetches))]
        local_nodes = by_task.pop(local_task, [])
        worker = self.env.local_worker
        streamed = [name for names in streamed_receives(order, local_task).values() for name in names]
        gh = worker.register_graph(self.handle, local_nodes, ir.library, feed_nodes, fetch_nodes,
                                   recv_batches(order, local_task), streamed)
        local = TaskPart(local_task, worker, gh)
        stream_keys = worker.graph(self.handle, gh).stream_keys
        _refuse_client_only_nodes(by_task, local_task)
        remote = []
        for task, nodes in sorted(by_task.items()):
            iface = self.env.worker(task)
            remote.append(TaskPart(task, iface, iface.register_graph(self.handle, nodes, ir.library, ir.versions,
                                                                     recv_batches(order, task)),
                                   stream_keys.get(task, ())))
        parts: dict[str, list] = {}
        for n in order:
            parts.setdefault(n.device, []).append(n)
        partition_irs = {d: GraphIR(ns, ir.library, ir.versions) for d, ns in sorted(parts.items())}
        return ClientGraph(self, local, remote, worker.graph(self.handle, gh), explain_text(ir, ctx), partition_irs)

    def list_devices(self) -> list:
        """The devices this master knows: its own task's, and those of the tasks it has reached."""
        from sparseflow._src.runtime.worker import DeviceAttributes

        return [DeviceAttributes(n, "CPU", 0, inc) for n, inc in sorted(self.env.incarnations().items())]

    # ------------------------------------------------------------------ steps and lifecycle
    def take_cleanups(self) -> dict[str, list[int]]:
        with self._lock:
            out, self._pending_cleanups = self._pending_cleanups, {}
        return out

    def add_cleanup(self, step_id: int, tasks):
        with self._lock:
            for t in tasks:
                ids = self._pending_cleanups.setdefault(t, [])
                ids.append(step_id)
                if len(ids) > 256:  # a long idle stretch between runs of this signature: flush
                    pending = self._pending_cleanups.pop(t)
                    self.env.worker(t).cleanup_steps_async(pending)

    def close(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
            graphs, self._graphs = list(self._graphs.values()), {}
            self._partial_runs.clear()
            cleanups, self._pending_cleanups = self._pending_cleanups, {}
            live = list(self.live_steps)
        closed = errors.CancelledError(None, None, "Session has been closed.")
        tasks = {p.task: p.worker for g in graphs for p in g.remote}
        for step_id in live:  # a kernel blocked in one (a dequeue, a take_grad) raises CancelledError
            self.env.local_worker.cleanup_graph(step_id, closed)
            for iface in tasks.values():
                try:
                    iface.cleanup_graph_async(step_id, closed)
                except errors.OpError:
                    pass
        for t, ids in cleanups.items():
            try:
                self.env.worker(t).cleanup_steps_async(ids)
            except errors.OpError:
                pass
        for iface in tasks.values():
            try:
                iface.delete_worker_session_async(self.handle)
            except errors.OpError:
                pass
        self.env.local_worker.delete_worker_session(self.handle)


def _requested_tasks(ir: GraphIR) -> list[str]:
    """``/job:J/replica:R/task:T`` of the nodes whose device names a job and task."""
    from sparseflow._src.framework.device_spec import DeviceSpec

    out = set()
    for n in ir:
        if n.device:
            s = DeviceSpec.from_string(n.device)
            if s.job is not None and s.task is not None:
                out.add(f"/job:{s.job}/replica:{s.replica or 0}/task:{s.task}")
    return sorted(out)


def _global_order(ir: GraphIR, client_task: str | None = None) -> list:
    """Every node after its inputs and every ``_Recv`` after its ``_Send``; else in graph order, but:

    - a ``_Send`` of a computed value as soon as its input is ready: the receiver (a parameter
      server applying a gradient, say) starts while this partition goes on; a send of a variable's
      value (a read that aliases the variable) keeps its place, so it sees the updates before it;
    - a node of another task than ``client_task`` (the master's) as soon as its inputs are there,
      but such a send of a variable's value to ``client_task``, as TensorFlow's dataflow executor
      runs a parameter server's part of a step: it applies each gradient when that gradient
      arrives (the output layer's long before the first layer's), not all of them after the last
      one; an update kept until the end of the step is read stale by the other asynchronous
      workers for nearly a whole step. (Adam's beta powers, read by another ps's updates, reach
      it at the start of the step);
    - a collective as late as it can be: a partition's straight-line plan blocks in a collective
      until the other members arrive, and they may need what this partition sends (their inputs);
    - an op that only starts a collective (``STARTS_EARLY``: it never blocks) as early as it can, so
      that its run overlaps with the ops after it (a gradient bucket's all-reduce with the rest of
      the backward pass)."""
    from sparseflow._src.framework.toposort import stable_toposort
    from sparseflow._src.kernels.collective_kernels import STARTS_EARLY

    nodes = ir.nodes
    pos = {n.name: i for i, n in enumerate(nodes)}
    by_name = {n.name: n for n in nodes}

    def reads_variable(name: str, seen=0) -> bool:
        src, k, _ = parse_input(name)
        producer = by_name.get(src)
        if producer is None or seen > 8:
            return False
        if k < len(producer.out_dtypes) and producer.out_dtypes[k].is_ref_dtype:
            return True
        data = [x for x in producer.inputs if not x.startswith("^")]
        return producer.op == "Identity" and len(data) == 1 and reads_variable(data[0], seen + 1)

    def sends_variable(n) -> bool:
        return n.op == "_Send" and any(reads_variable(x) for x in n.inputs if not x.startswith("^"))

    early = {i for i, n in enumerate(nodes) if n.op == "_Send" and not sends_variable(n)}
    sends = {}
    for i, n in enumerate(nodes):
        if n.op == "_Send":
            sends[(n.attrs["tensor_name"], n.attrs["send_device"], n.attrs["recv_device"])] = i

    def sources(i):
        n = nodes[i]
        yield from (pos.get(parse_input(x)[0], -1) for x in n.inputs)
        if n.op == "_Recv":
            yield sends.get((n.attrs["tensor_name"], n.attrs["send_device"], n.attrs["recv_device"]), -1)

    if client_task is not None:
        early |= {i for i, n in enumerate(nodes) if task_of_device(n.device) != client_task and not (
            sends_variable(n) and task_of_device(n.attrs.get("recv_device", "")) == client_task)}

    def rank(i):
        op = nodes[i].op
        return -1 if op in STARTS_EARLY else 2 if op.startswith("Collective") else 0 if i in early else 1

    return [nodes[i] for i in stable_toposort(len(nodes), sources, rank)]


_OFF = 2  # RewriterConfig.Toggle.OFF
# RewriterConfig toggles (TensorFlow's Grappler optimizers) -> the passes that do their work here
_REWRITER_TOGGLES = {"constant_folding": ("constant_fold",), "common_subgraph_elimination": ("cse",),
                     "arithmetic_optimization": ("simplify",), "remapping": ("remap", "group_updates")}


def disabled_passes(config) -> set:
    """The optional passes ``config`` turns off: ``OptimizerOptions`` (L0: every optimization;
    ``do_constant_folding``, ``do_common_subexpression_elimination``, ``global_jit_level`` OFF:
    fusion) and ``RewriterConfig`` toggles set to OFF (constant folding, common subgraph
    elimination, arithmetic optimization, remapping)."""
    out = set()
    if config is None:
        return out
    try:
        opts = config.graph_options.optimizer_options
        if getattr(opts, "global_jit_level", 0) == -1:  # OptimizerOptions.OFF: no compiled fusion
            out.add("fuse")
        if getattr(opts, "opt_level", 0) == -1:  # L0: no optimizations
            out.update({"cse", "constant_fold", "simplify", "remap", "group_updates", "fuse"})
        if opts.HasField("do_constant_folding") and not opts.do_constant_folding:
            out.add("constant_fold")
        if opts.HasField("do_common_subexpression_elimination") and not opts.do_common_subexpression_elimination:
            out.add("cse")
        rewrite = config.graph_options.rewrite_options
        for toggle, passes in _REWRITER_TOGGLES.items():
            if getattr(rewrite, toggle, 0) == _OFF:
                out.update(passes)
    except (AttributeError, ValueError):
        pass
    return out


def explain_text(ir: GraphIR, ctx: PassContext) -> str:
    lines = ["# passes: " + " -> ".join(f"{e[0]}({e[1]}->{e[2]} nodes, {e[3]:.2f} ms)"
                                       for e in ctx.log if isinstance(e, tuple))]
    by_device: dict[str, list] = {}
    for n in ir.topological_order():
        by_device.setdefault(n.device, []).append(n)
    for dev in sorted(by_device):
        lines.append(f"# partition {dev or '<client>'}")
        lines.extend(n.format() for n in by_device[dev])
    return "\n".join(lines)


def evaluate_constant_subgraph(ir: GraphIR, fetches: list[str]) -> list:
    """Runs a small constant subgraph on the CPU (used by constant folding)."""
    from sparseflow._src.passes.prune import prune

    ctx = PassContext(feeds=[], fetches=list(fetches))
    pruned = prune(ir, ctx)
    nodes = [n.copy(device=n.device or ctx.client_device) for n in pruned]
    plan = Plan(nodes, [], [f"_fetch_{i}" for i in range(len(fetches))], None, None)
    return plan.run([], None)


def deadline_from(options, config) -> float | None:
    timeout_ms = getattr(options, "timeout_in_ms", 0) if options is not None else 0
    if not timeout_ms and config is not None:
        timeout_ms = getattr(config, "operation_timeout_in_ms", 0) or 0
    return time.monotonic() + timeout_ms / 1000.0 if timeout_ms and timeout_ms > 0 else None


def _refuse_client_only_nodes(remote_nodes: dict, client_task: str) -> None:
    """Nodes whose kernels call the client's Python objects (tf.py_func) run only on the client's task."""
    for nodes in remote_nodes.values():
        for n in nodes:
            if is_client_only(n.op):
                raise errors.InvalidArgumentError(
                    None, n, f"{n.op} node '{n.name}' is placed on {n.device}, another process than the client's "
                             f"({client_task}): tf.py_func and tf.numpy_function call a Python function of the "
                             f"client process and run only there. Place the node on the client's task (e.g. with "
                             f"tf.device('{client_task}')).")
