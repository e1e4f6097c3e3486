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

import secrets
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from sparseflow._src.framework import default_session, errors
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.sparse_tensor import SparseTensor
from sparseflow._src.kernels.host_memory import keep_freed_buffers
from sparseflow._src.kernels.intra_op import set_intra_op_threads
from sparseflow._src.runtime.devices import DeviceMgr, cpu_count_of
from sparseflow._src.runtime.feeds import FeedConverter
from sparseflow._src.runtime.fetch import FetchMapper
from sparseflow._src.runtime.master import GraphSource, MasterEnv, MasterSession, deadline_from
from sparseflow._src.runtime.session_handle import TensorHandle
from sparseflow._src.runtime.step_stats import fill_step_stats
from sparseflow._src.runtime.worker import Worker

# Session targets other than "" ("grpc://host:port") are opened by factories that higher layers
# register (the distributed runtime registers "grpc://"): prefix -> fn(target, graph, config) -> master.
_TARGET_FACTORIES: dict = {}


def register_session_target(prefix: str, factory) -> None:
    """Lets ``tf.Session(target)`` open targets starting with ``prefix`` through ``factory``."""
    _TARGET_FACTORIES[prefix] = factory


class _CompiledRun:
    """A compiled signature with what it needs to take feeds and give fetches."""

    __slots__ = ("graph", "feed_converters", "fetch_tensors", "runs", "simple", "fetch_converters")

    def __init__(self, graph, feed_converters, fetch_tensors, simple=False):
        self.graph = graph  # the master's ClientGraph
        self.feed_converters = feed_converters
        self.fetch_tensors = fetch_tensors
        self.runs = 0
        self.simple = simple  # one straight-line plan, only Tensor fetches: plan.run(feeds, None)
        self.fetch_converters = [_to_fetch_value] * len(fetch_tensors)  # used when simple: only Tensors

    @property
    def explain_text(self):
        return self.graph.explain_text


class BaseSession:
    """A TF1 session: the client of a master (in-process for ``target=""``, a cluster's otherwise)."""

    def __init__(self, target: str = "", graph=None, config=None):
        if target is None:
            target = ""
        if not isinstance(target, str):
            target = target.decode() if isinstance(target, bytes) else str(target)
        self._graph = graph if graph is not None else get_default_graph()
        self._config = config
        self._target = target
        self._cache: dict = {}
        self._run_cache: dict = {}  # (fetches, feed keys) -> (graph mutations, compiled, mapper, unique)
        self._lock = threading.RLock()
        self._closed = False
        # BLAS threads and kernels' chunks follow intra_op_parallelism_threads (process-wide, 0: defaults)
        set_intra_op_threads(getattr(config, "intra_op_parallelism_threads", 0) if config is not None else 0)
        keep_freed_buffers()  # freed tensor buffers reused by the next step, not faulted in again (once)
        threads = getattr(config, "inter_op_parallelism_threads", 0) if config is not None else 0
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="sparseflow-inter-op") \
            if threads and threads > 1 else None
        self._default_ctx = None
        self._worker = None
        if target:
            factory = next((f for p, f in _TARGET_FACTORIES.items() if target.startswith(p)), None)
            if factory is None:
                raise errors.InvalidArgumentError(
                    None, None, f"Session target {target!r} is not supported: use '' for a local session or "
                                f"'grpc://host:port' (a tf.train.Server's target; `import sparseflow` registers it).")
            self._master = factory(target, self._graph, config)
        else:
            num_cpus = cpu_count_of(config)
            # A local session owns its worker: its devices, variables and tables end with it.
            self._worker = Worker(DeviceMgr.local(num_cpus))
            self._master = MasterSession(f"{secrets.randbits(64):016x}", GraphSource(self._graph),
                                         MasterEnv(self._worker), config)

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
        """The devices of this session's own worker (a local session's)."""
        if self._worker is None:
            return self._master.env.local_worker.devices
        return self._worker.devices

    def list_devices(self):
        return self._master.list_devices()

    # ------------------------------------------------------------------ lifecycle
    def close(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._cache.clear()
            self._run_cache.clear()
            self._master.close()
            if self._worker is not None:
                self._worker.steps.abort_all(errors.CancelledError(None, None, "Session has been closed."))
                self._worker.devices.clear()
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

    @staticmethod
    def reset(target, containers=None, config=None):
        """Clears resource containers (all when None) on every task of ``target``'s cluster and closes
        every session of its master (TensorFlow's ``tf.Session.reset``); a no-op for ``target=""``,
        whose resources end with each session."""
        if not target:
            return
        factory = next((f for p, f in _TARGET_FACTORIES.items() if target.startswith(p)), None)
        if factory is None:
            raise errors.InvalidArgumentError(None, None, f"Session.reset: target {target!r} is not supported.")
        master = factory(target, None, config)
        try:
            master.reset(list(containers) if containers else None)
        finally:
            master.close()

    def reset_containers(self, containers=None):
        """Destroys the resources (variables, tables) of ``containers`` (all when None) on this
        session's worker."""
        self._master.env.local_worker.cleanup_all(containers)
        self._cache.clear()
        self._run_cache.clear()

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
        mapper = FetchMapper.build(self._resolve_fetch, fetches, self)
        unique = mapper.unique_fetches()
        feed_keys, feed_values = self._flatten_feeds(feed_dict)
        if not unique:  # nothing to fetch or run (e.g. `sess.run([])`): TensorFlow returns the empty structure
            return mapper.build_results({})
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
            values.append(v.eval() if isinstance(v, TensorHandle) else v)  # a handle feeds the value it keeps
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

    def _compile(self, feeds: list[Tensor], fetches: list) -> _CompiledRun:
        fetch_tensors = [f for f in fetches if isinstance(f, Tensor)]
        targets = [f for f in fetches if isinstance(f, Operation)]
        if not fetches:
            raise errors.InvalidArgumentError(None, None, "Must specify at least one target to fetch or execute.")
        graph = self._master.compile([t.name for t in feeds], [t.name for t in fetch_tensors],
                                     [op.name for op in targets])
        converters = [FeedConverter(t) for t in feeds]
        timeout = getattr(self._config, "operation_timeout_in_ms", 0) if self._config is not None else 0
        simple = graph.direct_plan is not None and not (timeout and timeout > 0) and self._pool is None and \
            len(fetch_tensors) == len(fetches)
        return _CompiledRun(graph, converters, fetches, simple)

    def _run_compiled(self, c: _CompiledRun, feed_values, options=None, run_metadata=None):
        feeds = [conv(v) for conv, v in zip(c.feed_converters, feed_values)]
        if options is None and c.simple:  # no step, deadline, tracing or thread pool
            c.runs += 1
            return [conv(v) for conv, v in zip(c.fetch_converters, c.graph.direct_plan.run(feeds, None))]
        deadline = deadline_from(options, self._config)
        trace = getattr(options, "trace_level", 0) if options is not None else 0
        stats = [] if trace and run_metadata is not None else None
        c.runs += 1
        if run_metadata is not None and getattr(options, "output_partition_graphs", False):
            _add_partition_graphs(run_metadata, c.graph)
        out = c.graph.run(feeds, deadline, options, stats, self._pool)
        if stats is not None:
            fill_step_stats(run_metadata, stats)
        results = []
        it = iter(out)
        for f in c.fetch_tensors:
            results.append(_to_fetch_value(next(it)) if isinstance(f, Tensor) else None)
        return results

    # ------------------------------------------------------------------ partial runs
    def partial_run_setup(self, fetches, feeds=None):
        """Starts a partial run that may fetch ``fetches`` and be fed ``feeds``; returns its handle
        for :meth:`partial_run` (see ``runtime/partial_run.py``: each op runs once, as soon as the
        feeds it needs have arrived)."""
        self._check_open()
        unique = FetchMapper.build(self._resolve_fetch, fetches).unique_fetches()
        feed_keys, _ = self._flatten_feeds(dict.fromkeys(feeds or ()))
        tensors = [f.name for f in unique if isinstance(f, Tensor)]
        ops = [f.name for f in unique if isinstance(f, Operation)]
        return self._master.partial_run_setup([t.name for t in feed_keys], tensors, ops)

    def partial_run(self, handle, fetches, feed_dict=None):
        """Feeds ``feed_dict`` to the partial run ``handle`` and returns ``fetches`` (named at setup)."""
        self._check_open()
        mapper = FetchMapper.build(self._resolve_fetch, fetches, self)
        unique = mapper.unique_fetches()
        ops = [f for f in unique if isinstance(f, Operation)]
        if ops:
            raise RuntimeError(f"partial_run() requires empty `target_list`. Received: target_list={ops} (non-empty)")
        feed_keys, feed_values = self._flatten_feeds(feed_dict)
        values = [FeedConverter(t)(v) for t, v in zip(feed_keys, feed_values)]
        out = self._master.partial_run(handle, [t.name for t in feed_keys], values, [f.name for f in unique])
        return mapper.build_results({f: _to_fetch_value(v) for f, v in zip(unique, out)})

    # ------------------------------------------------------------------ callables / explain
    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function ``f(*feed_values)`` that runs ``fetches`` with the plan compiled once."""
        self._check_open()
        mapper = FetchMapper.build(self._resolve_fetch, fetches, self)
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
        mapper = FetchMapper.build(self._resolve_fetch, fetches, self)
        feed_keys, _ = self._flatten_feeds(feed_dict)
        return self._get_compiled(tuple(feed_keys), tuple(mapper.unique_fetches())).explain_text


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


def _add_partition_graphs(run_metadata, graph):
    from sparseflow._src.framework.graph_io import ir_to_graph_def

    for ir in graph.partition_irs.values():
        run_metadata.partition_graphs.add().CopyFrom(ir_to_graph_def(ir))
