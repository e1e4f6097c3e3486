"""Session: runs fetches of a graph with feeds, through the pass pipeline and cached plans.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None], name="x")
    ...     y = x * 2.0
    ...     with tf.Session() as sess:
    ...         print(sess.run({"y": y}, feed_dict={x: [1.0, 2.0]}))
    {'y': array([2., 4.], dtype=float32)}
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from sparseflow._src.framework import default_session, errors
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.ir import GraphIR
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.sparse_tensor import SparseTensor
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.pipeline import run_pipeline
from sparseflow._src.runtime.devices import DeviceMgr
from sparseflow._src.runtime.feeds import FeedConverter
from sparseflow._src.runtime.fetch import FetchMapper
from sparseflow._src.runtime.plan import Plan, StepContext
from sparseflow._src.runtime.rendezvous import LocalRendezvous
from sparseflow._src.runtime.step_stats import fill_step_stats

_step_ids = itertools.count(1)


class _CompiledRun:
    """A cached plan with what it needs to take feeds and give fetches."""

    __slots__ = ("plan", "feed_converters", "fetch_tensors", "explain_text", "runs", "simple",
                 "fetch_converters")

    def __init__(self, plan, feed_converters, fetch_tensors, explain_text, simple=False):
        self.plan = plan
        self.feed_converters = feed_converters
        self.fetch_tensors = fetch_tensors
        self.explain_text = explain_text
        self.runs = 0
        self.simple = simple  # only Tensor fetches, run as plain plan.run(feeds, None)
        self.fetch_converters = [_to_fetch_value] * len(fetch_tensors)  # used when simple: only Tensors


class BaseSession:
    """A TF1 session on this process's devices (``ConfigProto(device_count={"CPU": n})``)."""

    def __init__(self, target: str = "", graph=None, config=None):
        if target:
            raise errors.UnimplementedError(None, None, f"Session target {target!r}: remote sessions come with "
                                                        f"the distributed runtime; use target='' for a local one.")
        self._graph = graph if graph is not None else get_default_graph()
        self._config = config
        self._target = target
        num_cpus = 1
        if config is not None:
            try:
                num_cpus = int(dict(config.device_count).get("CPU", 1)) or 1
            except (AttributeError, TypeError):
                num_cpus = 1
        self._devices = DeviceMgr.local(num_cpus)
        self._cache: dict = {}
        self._run_cache: dict = {}  # (fetches, feed keys) -> (graph mutations, compiled, mapper, unique)
        self._lock = threading.RLock()
        self._closed = False
        self._stateful_kernels: dict = {}
        # Per-session state shared by stateful kernels (random counters, ...); "graph" lets kernels of
        # host-side resources (datasets, tables) find objects the graph registered by name.
        self._session_state: dict = {"graph": self._graph}
        threads = getattr(config, "inter_op_parallelism_threads", 0) if config is not None else 0
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="sparseflow-inter-op") \
            if threads and threads > 1 else None
        self._default_ctx = None
        self._live_steps = _LiveSteps()

    # ------------------------------------------------------------------ properties
    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return self._target

    @property
    def devices(self) -> DeviceMgr:
        return self._devices

    def list_devices(self):
        return [_DeviceAttributes(n, "CPU", 0, self._devices.incarnations[n]) for n in self._devices.names]

    # ------------------------------------------------------------------ lifecycle
    def close(self):
        self._live_steps.cancel_all()  # unblocks steps waiting in other threads (queues, accumulators)
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._cache.clear()
            self._run_cache.clear()
            self._stateful_kernels.clear()
            self._devices.clear()
            if self._pool is not None:
                self._pool.shutdown(wait=False)

    def __enter__(self):
        if self._default_ctx is None:
            self._default_ctx = default_session.default_session(self)
            self._graph_ctx = self._graph.as_default()
            self._graph_ctx.__enter__()
            self._default_ctx.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._default_ctx is not None:
            self._default_ctx.__exit__(exc_type, exc, tb)
            self._graph_ctx.__exit__(exc_type, exc, tb)
            self._default_ctx = None
        self.close()
        return False

    def __del__(self):
        try:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def as_default(self):
        """Makes this the default session for ``Tensor.eval`` / ``Operation.run`` in a ``with``."""
        return default_session.default_session(self)

    def _check_open(self):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")

    def reset_containers(self, containers=None):
        """Destroys the resources (variables, tables) of ``containers`` (all when None)."""
        self._devices.clear(containers)
        self._stateful_kernels.clear()
        self._cache.clear()
        self._run_cache.clear()

    # ------------------------------------------------------------------ stateful kernels
    def stateful_kernel(self, node, kdef, kernel_node, scope: str = ""):
        """The kernel of a stateful node, built once per session (``scope``: the function body)."""
        key = (scope, node.device, node.name, node.op)
        k = self._stateful_kernels.get(key)
        if k is None:
            k = self._stateful_kernels[key] = kdef.factory(kernel_node)
        return k

    # ------------------------------------------------------------------ run
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops and evaluates the tensors in ``fetches`` (any nesting), feeding ``feed_dict``."""
        self._check_open()
        # Fast path: the same fetches (hashable: a Tensor, an Operation, a name) and feed keys as an
        # earlier run of the unchanged graph skip resolving names and building the fetch mapper.
        try:
            key = (fetches, tuple(feed_dict) if feed_dict else ())
            hit = self._run_cache.get(key)
        except TypeError:  # unhashable fetches (lists, dicts): resolved on every run
            key = hit = None
        if hit is not None and hit[0] == self._graph._mutations:
            results = self._run_compiled(hit[1], feed_dict.values() if feed_dict else (), options, run_metadata)
            return results[0] if hit[2] is None else hit[2].build_results(dict(zip(hit[3], results)))
        mapper = FetchMapper.build(self._resolve_fetch, fetches)
        unique = mapper.unique_fetches()
        feed_keys, feed_values = self._flatten_feeds(feed_dict)
        compiled = self._get_compiled(tuple(feed_keys), tuple(unique))
        results = self._run_compiled(compiled, feed_values, options, run_metadata)
        if key is not None and len(feed_keys) == len(key[1]):  # SparseTensor feeds expand: not cached
            if len(self._run_cache) >= 4096:  # new fetch objects every run (a growing graph): stay bounded
                self._run_cache.clear()
            single = mapper.kind == "leaf"
            self._run_cache[key] = (self._graph._mutations, compiled, None if single else mapper, unique)
        return mapper.build_results(dict(zip(unique, results)))

    def _resolve_fetch(self, fetch):
        try:
            el = self._graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        except (KeyError, ValueError) as e:
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                             f"({str(e).strip(chr(34) + chr(39))})") from None
        if not self._graph.is_fetchable(el):
            raise errors.InvalidArgumentError(None, None, f"Operation {el.name!r} has been marked as not fetchable.")
        return el

    def _flatten_feeds(self, feed_dict):
        keys, values = [], []
        if not feed_dict:
            return keys, values
        for k, v in feed_dict.items():
            if isinstance(k, SparseTensor) or hasattr(k, "_is_sparse_tensor"):
                parts = (v.indices, v.values, v.dense_shape) if hasattr(v, "indices") else tuple(v)
                for t, pv in zip((k.indices, k.values, k.dense_shape), parts):
                    keys.append(self._resolve_feed(t))
                    values.append(pv)
                continue
            keys.append(self._resolve_feed(k))
            values.append(v)
        return keys, values

    def _resolve_feed(self, key) -> Tensor:
        try:
            t = self._graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
        except (KeyError, ValueError) as e:
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e}") from None
        if not self._graph.is_feedable(t):
            raise ValueError(f"Tensor {t.name} may not be fed.")
        return t

    def _get_compiled(self, feed_keys: tuple, fetches: tuple) -> _CompiledRun:
        key = (feed_keys, fetches, self._graph._mutations)
        c = self._cache.get(key)
        if c is None:
            with self._lock:
                c = self._cache.get(key)
                if c is None:
                    c = self._cache[key] = self._compile(list(feed_keys), list(fetches))
        return c

    def _pass_context(self, feeds, fetch_tensors, targets) -> PassContext:
        cfg = self._config
        soft = bool(getattr(cfg, "allow_soft_placement", True)) if cfg is not None else True
        return PassContext(feeds=[t.name for t in feeds], fetches=[t.name for t in fetch_tensors],
                           targets=[op.name for op in targets], devices=list(self._devices.names),
                           client_device=self._devices.names[0], allow_soft_placement=soft,
                           log_device_placement=bool(getattr(cfg, "log_device_placement", False)),
                           evaluate=_evaluate_constant_subgraph,
                           incarnations=dict(self._devices.incarnations),
                           disabled=_disabled_passes(cfg))

    def _compile(self, feeds: list[Tensor], fetches: list) -> _CompiledRun:
        if len(set(feeds)) != len(feeds):
            raise errors.InvalidArgumentError(None, None, "The same tensor is fed twice.")
        fetch_tensors = [f for f in fetches if isinstance(f, Tensor)]
        targets = [f for f in fetches if isinstance(f, Operation)]
        if not fetches:
            raise errors.InvalidArgumentError(None, None, "Must specify at least one target to fetch or execute.")
        ctx = self._pass_context(feeds, fetch_tensors, targets)
        ir = GraphIR.from_graph(self._graph)
        try:
            ir = run_pipeline(ir, ctx)
        except ValueError as e:
            raise errors.InvalidArgumentError(None, None, str(e)) from e
        if ctx.log_device_placement:
            for e in ctx.log:
                if isinstance(e, str):
                    print(e, file=sys.stderr)
        feed_nodes = [f"_feed_{i}" for i in range(len(feeds))]
        fetch_nodes = [f"_fetch_{i}" for i in range(len(fetch_tensors))]
        plan = Plan(ir.nodes, feed_nodes, fetch_nodes, self._devices, self, _send_recv_deps(ir), library=ir.library)
        converters = [FeedConverter(t) for t in feeds]
        explain = _explain_text(ir, ctx)
        # Results by unique fetch: Tensors get values, Operations get None.
        timeout = getattr(self._config, "operation_timeout_in_ms", 0) if self._config is not None else 0
        simple = not plan.needs_context and not (timeout and timeout > 0) and self._pool is None and \
            len(fetch_tensors) == len(fetches)
        return _CompiledRun(plan, converters, fetches, explain, simple)

    def _run_compiled(self, c: _CompiledRun, feed_values, options=None, run_metadata=None):
        feeds = [conv(v) for conv, v in zip(c.feed_converters, feed_values)]
        plan = c.plan
        if options is None and c.simple:  # no step context, deadline, tracing or thread pool
            c.runs += 1
            return [conv(v) for conv, v in zip(c.fetch_converters, plan.run(feeds, None))]
        timeout_ms = getattr(options, "timeout_in_ms", 0) if options is not None else 0
        if not timeout_ms and self._config is not None:
            timeout_ms = getattr(self._config, "operation_timeout_in_ms", 0) or 0
        trace = getattr(options, "trace_level", 0) if options is not None else 0
        ctx = None
        if plan.needs_context or timeout_ms or self._pool is not None or trace:
            deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms and timeout_ms > 0 else None
            ctx = StepContext(LocalRendezvous(), next(_step_ids), deadline, self, options)
        c.runs += 1
        if run_metadata is not None and getattr(options, "output_partition_graphs", False):
            _add_partition_graphs(run_metadata, c.plan)
        with self._live_steps.track(ctx, self):
            if trace and run_metadata is not None:
                stats = []
                out = plan.run_traced(feeds, ctx, stats)
                fill_step_stats(run_metadata, stats)
            elif self._pool is not None:
                out = plan.run_parallel(feeds, ctx, self._pool)
            elif timeout_ms and timeout_ms > 0:
                out = plan.run_traced(feeds, ctx, None)
            else:
                out = plan.run(feeds, ctx)
        results = []
        it = iter(out)
        for f in c.fetch_tensors:
            results.append(_to_fetch_value(next(it)) if isinstance(f, Tensor) else None)
        return results

    # ------------------------------------------------------------------ callables / explain
    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function ``f(*feed_values)`` that runs ``fetches`` with the plan compiled once."""
        self._check_open()
        mapper = FetchMapper.build(self._resolve_fetch, fetches)
        unique = mapper.unique_fetches()
        feed_keys = [self._resolve_feed(k) for k in (feed_list or [])]
        compiled = self._get_compiled(tuple(feed_keys), tuple(unique))
        n = len(feed_keys)

        def call(*args, **kwargs):
            self._check_open()
            if len(args) != n:
                raise TypeError(f"The callable takes {n} feed values, got {len(args)}.")
            results = self._run_compiled(compiled, args, kwargs.get("options"), kwargs.get("run_metadata"))
            return mapper.build_results(dict(zip(unique, results)))

        return call

    def explain(self, fetches, feed_dict=None) -> str:
        """The optimized, placed and partitioned graph that ``run(fetches, feed_dict)`` executes."""
        mapper = FetchMapper.build(self._resolve_fetch, fetches)
        feed_keys, _ = self._flatten_feeds(feed_dict)
        return self._get_compiled(tuple(feed_keys), tuple(mapper.unique_fetches())).explain_text


class _LiveSteps:
    """The step contexts of a session's runs in flight, so that ``close()`` can cancel them: a kernel
    blocked in one (a dequeue, a take_grad) sees ``ctx.cancelled`` and raises CancelledError."""

    def __init__(self):
        self._lock = threading.Lock()
        self._steps: set = set()

    @contextlib.contextmanager
    def track(self, ctx, session):
        if ctx is None:  # plans without context-needing kernels never block
            yield
            return
        with self._lock:
            self._steps.add(ctx)
        if session._closed:  # closed while this run was starting
            ctx.cancelled.set()
        try:
            yield
        finally:
            with self._lock:
                self._steps.discard(ctx)

    def cancel_all(self):
        with self._lock:
            steps = list(self._steps)
        for ctx in steps:
            ctx.cancelled.set()


class Session(BaseSession):
    """``tf.Session``: use as a context manager, or call ``close()`` when done."""


class InteractiveSession(BaseSession):
    """A session that installs itself as the default session when created."""

    def __init__(self, target: str = "", graph=None, config=None):
        super().__init__(target, graph, config)
        default_session.push(self)
        self._graph_ctx2 = self._graph.as_default()
        self._graph_ctx2.__enter__()

    def close(self):
        super().close()
        default_session.remove(self)
        if getattr(self, "_graph_ctx2", None) is not None:
            try:
                self._graph_ctx2.__exit__(None, None, None)
            except Exception:  # noqa: BLE001 - graph stack already unwound
                pass
            self._graph_ctx2 = None


class _DeviceAttributes:
    def __init__(self, name, device_type, memory_limit, incarnation):
        self.name = name
        self.device_type = device_type
        self.memory_limit_bytes = memory_limit
        self.incarnation = incarnation

    def __repr__(self):
        return f"_DeviceAttributes({self.name}, {self.device_type}, {self.memory_limit_bytes}, {self.incarnation})"


def _to_fetch_value(v):
    t = type(v)
    if t is np.float32 or t is np.float64 or t is np.int64 or t is np.int32:
        return v
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return v[()]
        if not v.flags.writeable:  # a constant or a variable's storage: the caller gets its own copy
            return v.copy()
        return v
    if isinstance(v, np.generic):
        return v
    if isinstance(v, (bytes, str)):
        return v
    return np.asarray(v)


def _add_partition_graphs(run_metadata, plan):
    from sparseflow._src.framework.graph_io import ir_to_graph_def

    by_device: dict[str, list] = {}
    for st in plan.steps:
        by_device.setdefault(st.node.device, []).append(st.node)
    for dev in sorted(by_device):
        run_metadata.partition_graphs.add().CopyFrom(ir_to_graph_def(GraphIR(by_device[dev])))


def _send_recv_deps(ir: GraphIR) -> dict[str, list[str]]:
    """Each _Recv runs after the _Send with the same key (they meet at the rendezvous)."""
    sends = {}
    for n in ir:
        if n.op == "_Send":
            sends[(n.attrs["tensor_name"], n.attrs["send_device"], n.attrs["recv_device"])] = n.name
    deps: dict[str, list[str]] = {}
    for n in ir:
        if n.op == "_Recv":
            s = sends.get((n.attrs["tensor_name"], n.attrs["send_device"], n.attrs["recv_device"]))
            if s is not None:
                deps.setdefault(n.name, []).append(s)
    return deps


def _disabled_passes(config) -> set:
    out = set()
    if config is None:
        return out
    try:
        opts = config.graph_options.optimizer_options
        if getattr(opts, "global_jit_level", 0) == -1:  # OptimizerOptions.OFF: no compiled fusion
            out.add("fuse")
        if getattr(opts, "opt_level", 0) == -1:  # L0: no optimizations
            out.update({"cse", "constant_fold", "simplify", "fuse"})
        if opts.HasField("do_constant_folding") and not opts.do_constant_folding:
            out.add("constant_fold")
        if opts.HasField("do_common_subexpression_elimination") and not opts.do_common_subexpression_elimination:
            out.add("cse")
    except (AttributeError, ValueError):
        pass
    return out


def _explain_text(ir: GraphIR, ctx: PassContext) -> str:
    lines = ["# passes: " + " -> ".join(f"{e[0]}({e[1]}->{e[2]} nodes, {e[3]:.2f} ms)"
                                       for e in ctx.log if isinstance(e, tuple))]
    by_device: dict[str, list] = {}
    for n in ir.topological_order():
        by_device.setdefault(n.device, []).append(n)
    for dev in sorted(by_device):
        lines.append(f"# partition {dev or '<client>'}")
        lines.extend(n.format() for n in by_device[dev])
    return "\n".join(lines)


def _evaluate_constant_subgraph(ir: GraphIR, fetches: list[str]) -> list:
    """Runs a small constant subgraph on the CPU (used by constant folding)."""
    from sparseflow._src.passes.prune import prune

    ctx = PassContext(feeds=[], fetches=list(fetches))
    pruned = prune(ir, ctx)
    nodes = [n.copy(device=n.device or ctx.client_device) for n in pruned]
    plan = Plan(nodes, [], [f"_fetch_{i}" for i in range(len(fetches))], None, None)
    return plan.run([], None)
