"""Execution plans: the optimized, partitioned graph of one run signature as straight-line code.

Every node becomes one line of a generated Python function, ``v7 = k7(v3, v5)``, with kernels
and their pre-bound attrs as closure constants, values in local variables, and ``del`` after a
value's last use. A failing line is mapped back to its node through the line number, so the
error names the op, its type, device and the user's line that created it, at no cost per step.

Steps whose values depend only on shapes (a gradient's shape arithmetic) are kept from the last
run with the same shapes (``plan_memo``). Two more executors share the compiled steps:
``run_traced`` (step stats, deadlines and cancellation checked between ops) and ``run_parallel``
(a dataflow executor on a thread pool).
"""

from __future__ import annotations

import itertools
import os
import threading
import time

from sparseflow._src.framework import errors
from sparseflow._src.framework.ir import NodeIR, parse_input
from sparseflow._src.framework.op_def import get_op_def, input_arg_flags
from sparseflow._src.framework.toposort import CycleError, stable_toposort
from sparseflow._src.kernels.registry import KernelNode, get_kernel
from sparseflow._src.runtime import plan_memo
from sparseflow._src.runtime.plan_lanes import fork_runner, is_large, order_table_pairs, plan_forks

_plan_ids = itertools.count()
CHECK_EVERY = 32  # ops between cancellation/deadline checks in a straight-line plan with a context

# Independent heavy steps of a plan run two at once, one per core (plan_lanes); "0" turns it off.
PLAN_FORKS = os.environ.get("SPARSEFLOW_PLAN_FORKS", "1").strip().lower() not in ("0", "false", "no", "off")

FEED_OP = "_Feed"
FETCH_OP = "_Fetch"


def _device_type(device: str) -> str:
    i = device.rfind("/device:")
    if i < 0:
        return "CPU"
    return device[i + 8:].split(":")[0]


class Step:
    """One node of a plan: its kernel and where its inputs and outputs live."""

    __slots__ = ("node", "compute", "needs_context", "inputs", "deref", "outputs", "num_outputs",
                 "index", "users")

    def __init__(self, node, compute, needs_context, inputs, deref, num_outputs, index):
        self.node = node
        self.compute = compute
        self.needs_context = needs_context
        self.inputs = inputs  # list of (producer step index or -1 for feed, output index / feed index)
        self.deref = deref  # per input: read the variable behind a ref
        self.num_outputs = num_outputs
        self.index = index
        self.users: list[int] = []


class StepContext:
    """Per-run state handed to kernels registered with ``needs_context``."""

    __slots__ = ("rendezvous", "step_id", "deadline", "cancelled", "session", "frame", "run_options")

    def __init__(self, rendezvous, step_id, deadline=None, session=None, run_options=None, cancelled=None):
        self.rendezvous = rendezvous
        self.step_id = step_id
        self.deadline = deadline
        self.cancelled = cancelled if cancelled is not None else threading.Event()
        self.session = session
        self.frame = "0:0"
        self.run_options = run_options

    def remaining(self):
        """Seconds left before the deadline (None when there is none)."""
        if self.deadline is None:
            return None
        return self.deadline - time.monotonic()

    def check(self, node=None):
        """Raises CancelledError / DeadlineExceededError (naming ``node``) when the step must stop."""
        if self.cancelled.is_set():
            err = getattr(self.rendezvous, "aborted", None)
            if err is not None:
                raise err
            raise errors.CancelledError(None, node, "Step was cancelled." if node is None else
                                        errors.op_error_message(node, "Step was cancelled."))
        if self.deadline is not None and time.monotonic() > self.deadline:
            what = "Timed out waiting for the step to finish (RunOptions.timeout_in_ms)."
            raise errors.DeadlineExceededError(None, node, what if node is None else
                                               errors.op_error_message(node, what))


def kernel_error(node, exc: BaseException) -> errors.OpError:
    """An OpError of the right class whose message names the node and the user's line."""
    if isinstance(exc, errors.OpError):
        cls, what = type(exc), exc.message
    elif isinstance(exc, MemoryError):
        cls, what = errors.ResourceExhaustedError, f"Out of memory: {exc}"
    elif isinstance(exc, (ValueError, IndexError, TypeError, ZeroDivisionError, FloatingPointError,
                          OverflowError, KeyError)):
        cls, what = errors.InvalidArgumentError, f"{type(exc).__name__}: {exc}"
    else:
        cls, what = errors.InternalError, f"{type(exc).__name__}: {exc}"
    if cls is errors.FeedError:
        cls = errors.InvalidArgumentError
    if "\n  in op '" in what:
        return cls(getattr(exc, "node_def", None), getattr(exc, "op", None), what)
    msg = errors.op_error_message(node, what, "While executing this op; check its inputs' values and shapes.")
    return cls(None, node, msg)


class Plan:
    """A compiled run signature: feeds in, fetches out, targets run."""

    def __init__(self, nodes: list[NodeIR], feed_nodes: list[str], fetch_nodes: list[str], devices, session,
                 extra_deps: dict[str, list[str]] | None = None, library: dict | None = None,
                 kernel_scope: str = ""):
        self.session = session
        self.kernel_scope = kernel_scope
        self.library = library or {}
        self.feed_count = len(feed_nodes)
        self.fetch_count = len(fetch_nodes)
        by_name = {n.name: n for n in nodes}
        order = _topo(nodes, extra_deps or {})
        if PLAN_FORKS:
            order = order_table_pairs(order, extra_deps or {})
        self.steps: list[Step] = []
        index_of: dict[str, int] = {}
        feed_index = {name: i for i, name in enumerate(feed_nodes)}
        self.fetch_sources: list[tuple[int, int]] = []
        fetch_set = {name: i for i, name in enumerate(fetch_nodes)}
        fetch_src: dict[int, tuple[int, int]] = {}
        # Identity nodes of a variable (its "read" snapshot) forward the variable itself: their users
        # read its value when *they* run, as TensorFlow's Identity aliases the variable's buffer. So
        # `beta1_power * beta1` after an update sees the update, even if "read" was scheduled first.
        aliases: set[str] = set()
        for node in order:
            if node.op == FEED_OP:
                index_of[node.name] = -1 - feed_index[node.name]
                continue
            ins = []
            data = node.data_inputs
            flags = _ref_flags(node)
            deref = []
            for j, s in enumerate(data):
                src, k, _ = parse_input(s)
                p = index_of[src]
                ins.append((p, k))
                producer = by_name[src]
                is_ref_value = (k < len(producer.out_dtypes) and producer.out_dtypes[k].is_ref_dtype) or \
                    (k == 0 and src in aliases)
                deref.append(is_ref_value and not (flags[j] if j < len(flags) else False))
            if node.op == FETCH_OP:
                fetch_src[fetch_set[node.name]] = (ins[0], deref[0])
                continue
            if node.op == "Identity" and len(data) == 1 and deref[0] and not node.control_inputs:
                aliases.add(node.name)
                deref[0] = False
                compute, needs_ctx = _forward, False
            else:
                compute, needs_ctx = self._instantiate(node, devices)
            step = Step(node, compute, needs_ctx, ins, deref, len(node.out_dtypes), len(self.steps))
            index_of[node.name] = len(self.steps)
            self.steps.append(step)
        self.fetches = [fetch_src[i] for i in range(len(fetch_nodes))]
        for st in self.steps:
            for p, _ in st.inputs:
                if p >= 0 and st.index not in self.steps[p].users:
                    self.steps[p].users.append(st.index)
        # Steps that must wait for others without a data edge (each _Recv waits for its _Send).
        self.after: dict[int, set[int]] = {}
        for st in self.steps:
            for c in st.node.control_inputs:
                j = index_of.get(c, -1)
                if j >= 0:
                    self.after.setdefault(st.index, set()).add(j)
        for name, deps in (extra_deps or {}).items():
            i = index_of.get(name, -1)
            for d in deps:
                j = index_of.get(d, -1)
                if i >= 0 and j >= 0:
                    self.after.setdefault(i, set()).add(j)
        self.needs_context = any(s.needs_context for s in self.steps)
        self.checks_cancellation = self.needs_context
        self._fn, self._line_to_step = self._generate()

    # ------------------------------------------------------------------ build
    def _instantiate(self, node: NodeIR, devices):
        kdef = get_kernel(node.op, _device_type(node.device))
        if kdef is None:
            raise errors.NotFoundError(None, node, errors.op_error_message(
                node, f"No {_device_type(node.device)} kernel registered for op type {node.op}.",
                "Place the op on a device that has a kernel, or enable allow_soft_placement."))
        resources = devices.resources(node.device) if devices is not None else None
        kn = KernelNode(node.name, node.op, node.attrs, _input_dtypes(node), list(node.out_dtypes), node.device,
                        resources, getattr(self.session, "_session_state", None), node.site, [],
                        list(node.out_shapes))
        if self.library:
            from sparseflow._src.runtime.functions import FunctionRunner

            kn.function_runner = FunctionRunner(self.library, self.session, devices, node.device)
        try:
            if kdef.stateful and self.session is not None:
                compute = self.session.stateful_kernel(node, kdef, kn, self.kernel_scope)
            else:
                compute = kdef.factory(kn)
        except errors.OpError:
            raise
        except Exception as e:  # a bad attr found while building the kernel
            raise kernel_error(node, e) from e
        return compute, kdef.needs_context

    def _generate(self):
        """Source of ``run(feeds, ctx)`` with one line per step; returns (fn, line -> step)."""
        last_use: dict[tuple[int, int], int] = {}
        for st in self.steps:
            for p, k in st.inputs:
                last_use[(p, k)] = st.index
        fetched = {pk for pk, _ in self.fetches}
        lines = ["def run(feeds, ctx, _deref=_deref):"]
        if self.feed_count:
            lines.append("    " + "".join(f"f{i}, " for i in range(self.feed_count)) + "= feeds")
        env = {"_deref": _deref}
        line_to_step = {}
        # A plan that runs with a step context checks cancellation and the deadline before every
        # kernel that may wait (Recv, queues, ...) and every CHECK_EVERY ops.
        checked = self.checks_cancellation
        since_check = 0

        def ref(p, k):
            return f"f{-1 - p}" if p < 0 else f"v{p}_{k}"

        used_outputs: dict[int, set[int]] = {}
        for st in self.steps:
            for p, k in st.inputs:
                if p >= 0:
                    used_outputs.setdefault(p, set()).add(k)
        for p, k in fetched:
            if p >= 0:
                used_outputs.setdefault(p, set()).add(k)
        forks = plan_forks(self.steps, self.after) if PLAN_FORKS else {}
        # shape-only steps: kept from the last run with the same shapes (plan_memo)
        memo = plan_memo.shape_only_steps(self.steps, self.after) if plan_memo.ENABLED else {}
        if memo:
            env.update(_c=[(plan_memo.NEVER, None)] * len(self.steps), _sk=plan_memo.shape_key,
                       _remember=plan_memo.remember)
        joins: list[int] = []  # forks started, not yet joined

        def join(f):
            joins.remove(f)
            lines.append(f"    v{f}_0 = _j{f}(); del _j{f}" if used_outputs.get(f) else f"    _j{f}(); del _j{f}")
            line_to_step[len(lines)] = f

        carried: dict[int, set[int]] = {}  # NoOp step -> forks it waited for (joined by its users)
        for st in self.steps:
            deps = {p for p, _ in st.inputs} | self.after.get(st.index, set())
            due = {f for f in joins if f in deps or (forks[f] is not None and st.index >= forks[f])}
            for d in deps & carried.keys():
                due |= carried[d] & set(joins)
            if st.node.op == "NoOp" and not st.inputs and not st.needs_context:
                carried[st.index] = due  # a NoOp does nothing: those who wait for it join its forks
                due = {f for f in due if forks[f] is not None and st.index >= forks[f]}
            for f in sorted(due):
                join(f)
            kname = f"k{st.index}"
            env[kname] = st.compute
            args = [f"_deref({ref(p, k)})" if d else ref(p, k) for (p, k), d in zip(st.inputs, st.deref)]
            if st.needs_context:
                args.insert(0, "ctx")
            if st.index in forks:  # started beside the caller, joined before its first use (plan_lanes)
                env[kname] = fork_runner(st.compute, is_large(st.node))
                lines.append(f"    _j{st.index} = {kname}({', '.join(args)})")
                line_to_step[len(lines)] = st.index
                joins.append(st.index)
                dead = [ref(p, k) for (p, k) in dict.fromkeys(st.inputs)
                        if p >= 0 and last_use.get((p, k)) == st.index and (p, k) not in fetched]
                if dead:
                    lines.append("    del " + ", ".join(dead))
                continue
            call = f"{kname}({', '.join(args)})"
            pre = ""
            if st.index in memo and st.index not in forks:
                if st.node.op in plan_memo.SHAPE_READERS:
                    pre = f"_k{st.index} = ({''.join(f'_sk({a}), ' for a in args)}); "
                key = f"({''.join(f'_k{s}, ' for s in memo[st.index])})"
                pre += f"_e = _c[{st.index}]; "
                call = f"(_e[1] if _e[0] == {key} else _remember(_c, {st.index}, {key}, {call}))"
            if checked and (st.needs_context or since_check >= CHECK_EVERY):
                env[f"n{st.index}"] = st.node
                lines.append(f"    ctx.check(n{st.index})")
                since_check = 0
            since_check += 1
            used = used_outputs.get(st.index, set())
            if st.num_outputs == 0 or not used:
                line = f"    {pre}{call}"
            elif st.num_outputs == 1:
                line = f"    {pre}v{st.index}_0 = {call}"
            else:
                line = f"    {pre}_t = {call}; " + "; ".join(f"v{st.index}_{k} = _t[{k}]" for k in sorted(used))
            lines.append(line)
            line_to_step[len(lines)] = st.index
            dead = [ref(p, k) for (p, k) in dict.fromkeys(st.inputs)
                    if p >= 0 and last_use.get((p, k)) == st.index and (p, k) not in fetched]
            if dead:
                lines.append("    del " + ", ".join(dead))
        for f in list(joins):
            join(f)
        outs = [f"_deref({ref(p, k)})" if d else ref(p, k) for (p, k), d in self.fetches]
        lines.append(f"    return [{', '.join(outs)}]")
        src = "\n".join(lines) + "\n"
        filename = f"<sparseflow-plan-{next(_plan_ids)}>"
        exec(compile(src, filename, "exec"), env)  # noqa: S102 - code generated here from our own plan
        self.source = src
        self._filename = filename
        return env["run"], line_to_step

    # ------------------------------------------------------------------ run
    def run(self, feeds: list, ctx: StepContext | None):
        try:
            return self._fn(feeds, ctx)
        except BaseException as e:
            raise self._map_error(e) from e

    def _map_error(self, exc: BaseException):
        if isinstance(exc, KeyboardInterrupt):
            return exc
        tb = exc.__traceback__
        step = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self._filename:
                step = self._line_to_step.get(tb.tb_lineno)
            tb = tb.tb_next
        if step is None:
            if isinstance(exc, errors.OpError):
                return exc
            return errors.InternalError(None, None, f"{type(exc).__name__}: {exc} (while running a plan)")
        return kernel_error(self.steps[step].node, exc)

    def run_traced(self, feeds: list, ctx: StepContext | None, stats: list | None):
        """Runs step by step, checking the deadline and cancellation, recording per-op times."""
        values: dict[tuple[int, int], object] = {}
        for st in self.steps:
            if ctx is not None:
                ctx.check(st.node)
            args = []
            for (p, k), d in zip(st.inputs, st.deref):
                v = feeds[-1 - p] if p < 0 else values[(p, k)]
                args.append(_deref(v) if d else v)
            if st.needs_context:
                args.insert(0, ctx)
            t0 = time.time()
            try:
                out = st.compute(*args)
            except BaseException as e:
                raise kernel_error(st.node, e) from e
            t1 = time.time()
            if stats is not None:
                stats.append((st.node, t0, t1, out))
            _store(values, st, out)
        return [_deref(feeds[-1 - p] if p < 0 else values[(p, k)]) if d else
                (feeds[-1 - p] if p < 0 else values[(p, k)]) for (p, k), d in self.fetches]

    def run_parallel(self, feeds: list, ctx: StepContext | None, pool):
        """A dataflow executor: each step is submitted to ``pool`` once its inputs are ready."""
        values: dict[tuple[int, int], object] = {}
        waits = [{p for p, _ in st.inputs if p >= 0} | self.after.get(st.index, set()) for st in self.steps]
        pending = [len(w) for w in waits]
        users: dict[int, list[int]] = {}
        for i, w in enumerate(waits):
            for p in w:
                users.setdefault(p, []).append(i)
        # Values are freed after their last use, as in the sequential plan.
        fetched = {pk for pk, _ in self.fetches}
        uses: dict[tuple[int, int], int] = {}
        for st in self.steps:
            for p, k in st.inputs:
                if p >= 0 and (p, k) not in fetched:
                    uses[(p, k)] = uses.get((p, k), 0) + 1
        lock = threading.Condition()
        done = threading.Event()
        remaining = [len(self.steps)]
        failure: list = []  # (error, found by a check before the kernel ran)
        inflight = [0]  # kernels running on pool threads

        def fail(st: Step, e: BaseException, checked: bool = False):
            with lock:
                failure.append((kernel_error(st.node, e), checked))
                first = failure[0][0]
            if ctx is not None:
                ctx.cancelled.set()
                if ctx.rendezvous is not None:
                    ctx.rendezvous.abort(first)
            done.set()

        def execute(st: Step):
            if failure:
                return
            try:
                if ctx is not None:
                    ctx.check(st.node)
            except BaseException as e:
                fail(st, e, checked=True)
                return
            with lock:
                inflight[0] += 1
            try:
                run_kernel(st)
            finally:
                with lock:
                    inflight[0] -= 1
                    lock.notify_all()

        def run_kernel(st: Step):
            try:
                start_async = getattr(st.compute, "start_async", None)
                if start_async is not None and ctx is not None:
                    # An asynchronous kernel (a _Recv) holds no pool thread while it waits.
                    start_async(ctx, lambda value, err: finish_async(st, value, err))
                    return
                args = []
                for (p, k), d in zip(st.inputs, st.deref):
                    v = feeds[-1 - p] if p < 0 else values[(p, k)]
                    args.append(_deref(v) if d else v)
                if st.needs_context:
                    args.insert(0, ctx)
                out = st.compute(*args)
                _store(values, st, out)
            except BaseException as e:
                fail(st, e)
                return
            finish(st)

        def finish_async(st: Step, value, err):
            if err is not None:
                fail(st, err)
                return
            _store(values, st, value)
            finish(st)

        def finish(st: Step):
            ready = []
            with lock:
                for pk in st.inputs:
                    n = uses.get(pk)
                    if n is not None:
                        if n == 1:
                            del uses[pk]
                            values.pop(pk, None)
                        else:
                            uses[pk] = n - 1
                for u in users.get(st.index, ()):
                    pending[u] -= 1
                    if pending[u] == 0:
                        ready.append(self.steps[u])
                remaining[0] -= 1
                if remaining[0] == 0:
                    done.set()
            for r in ready:
                pool.submit(execute, r)

        if not self.steps:
            done.set()
        initial = [st for st in self.steps if pending[st.index] == 0]  # before any step can finish
        for st in initial:
            pool.submit(execute, st)
        timeout = ctx.remaining() if ctx is not None else None
        if not done.wait(timeout if timeout is None or timeout > 0 else 0):
            if ctx is not None:
                ctx.cancelled.set()
            raise errors.DeadlineExceededError(None, None, "Timed out waiting for the step to finish "
                                                           "(RunOptions.timeout_in_ms).")
        if failure:
            # Let the kernels still running see the cancellation, then report the error of a kernel
            # that ran (a queue op that was waiting) rather than that of a check before another op.
            with lock:
                lock.wait_for(lambda: inflight[0] == 0, timeout=30.0)
                ran = [e for e, checked in failure if not checked]
                raise (ran or [failure[0][0]])[0]
        return [_deref(feeds[-1 - p] if p < 0 else values[(p, k)]) if d else
                (feeds[-1 - p] if p < 0 else values[(p, k)]) for (p, k), d in self.fetches]


def _store(values, st: Step, out):
    if st.num_outputs == 1:
        values[(st.index, 0)] = out
    elif st.num_outputs > 1:
        for k in range(st.num_outputs):
            values[(st.index, k)] = out[k]


def _forward(x):
    return x


def _deref(v):
    read = getattr(v, "read", None)
    return read() if read is not None else v


def _ref_flags(node: NodeIR) -> list[bool]:
    try:
        return input_arg_flags(get_op_def(node.op), node.attrs)
    except KeyError:
        return []


def _input_dtypes(node: NodeIR) -> list:
    return [None] * len(node.data_inputs)


def _topo(nodes: list[NodeIR], extra_deps: dict[str, list[str]]) -> list[NodeIR]:
    pos = {n.name: i for i, n in enumerate(nodes)}

    def sources(i):
        n = nodes[i]
        yield from (pos.get(parse_input(x)[0], -1) for x in n.inputs)
        yield from (pos.get(d, -1) for d in extra_deps.get(n.name, ()))

    try:
        return [nodes[i] for i in stable_toposort(len(nodes), sources)]
    except CycleError as e:
        stuck = sorted(nodes[i].name for i in e.stuck)
        raise errors.InvalidArgumentError(None, None, f"Graph has a cycle through nodes: {', '.join(stuck[:10])}") \
            from None
