"""Partial runs: one step fed and fetched in stages (TF1's ``partial_run_setup`` / ``partial_run``).

``setup(feeds, fetches)`` names everything the step may be fed and may return; the step's ops are
those the fetches need, cut at the feeds. As in TensorFlow's executor, every op of the step runs
as soon as the feeds it depends on have arrived, and only once: the ops that need no feed at setup
(a cluster's master starts them with the first ``run``, as TensorFlow's distributed master does),
at each ``run`` those that the newly fed values make runnable. A stage is one ordinary run
of the master (prune, place, partition, cached plan) whose feeds are the values the step knows so
far (fed, or produced by earlier stages and needed later) and whose fetches are what later stages
and the caller need, so no op's side effect (a variable update, a dequeue) repeats. Ops that only
produce a handle or a reference (a variable, a queue, a table) hold no step state and run again in
the stage that uses them.

Errors are TensorFlow's: a fetch or feed not named at setup, fed or fetched twice, a fetch whose
feeds have not all arrived, a handle that is unknown or finished ("Must run 'setup' before
performing partial runs!"). A failed stage ends the partial run.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.placeholder(tf.float32, []); b = tf.placeholder(tf.float32, [])
    ...     r1 = a + 1.0; r2 = r1 * b
    ...     with tf.Session() as sess:
    ...         h = sess.partial_run_setup([r1, r2], [a, b])
    ...         print(sess.partial_run(h, r1, feed_dict={a: 2.0}), sess.partial_run(h, r2, feed_dict={b: 4.0}))
    3.0 12.0
"""

from __future__ import annotations

import threading

from sparseflow._src.framework import errors
from sparseflow._src.framework.dtypes import resource, variant
from sparseflow._src.framework.ir import GraphIR, parse_input

__all__ = ["PartialRun", "no_setup_message"]


def no_setup_message(cluster: bool) -> str:
    """TensorFlow's words for an unknown or finished handle (its local and distributed masters differ)."""
    return "Must run PartialRunSetup before performing partial runs" if cluster else \
        "Must run 'setup' before performing partial runs!"


def _tensor(name: str) -> str:
    node, index, _ = parse_input(name)
    return f"{node}:{index}"


def _is_handle(dtype) -> bool:
    return dtype is not None and (dtype.is_ref_dtype or dtype.base_dtype in (resource, variant))


class PartialRun:
    """The state of one partial run over ``ir`` (see the module docstring). ``compile(key, make_ir,
    feeds, fetches, targets)`` is the master's ``compile_variant``: a signature of ``make_ir()``
    (cached by ``key``) with ``run(values, deadline, options, stats)``."""

    def __init__(self, ir: GraphIR, compile, feeds, fetches, targets=(), deadline=None, options=None,
                 cluster=False):
        self._compile = compile
        self._ir = ir
        self._nodes = {n.name: n for n in ir.nodes}
        self.feeds = [_tensor(f) for f in feeds]
        self.fetches = [_tensor(f) for f in fetches]
        self.targets = list(targets)
        for t in self.feeds + self.fetches:
            if parse_input(t)[0] not in self._nodes:
                raise errors.InvalidArgumentError(None, None, f"Tensor {t} of the partial run is not in the graph.")
        for op in self.targets:
            if op not in self._nodes:
                raise errors.InvalidArgumentError(None, None, f"Operation {op} of the partial run is not in the graph.")
        self.lock = threading.Lock()
        self.values: dict[str, object] = {}  # tensor -> value known to the step (fed, or made by a stage)
        self.executed: set[str] = set()
        self.fed: set[str] = set()
        self.fetched: set[str] = set()
        self.done = False
        self._ops = self._step_ops()
        self._feed_deps = self._feeds_needed()
        self.cluster = cluster
        if not cluster:  # a local session's executor starts at setup; a cluster's with the first partial run
            self._stage(deadline, options)

    # ------------------------------------------------------------------ the step's graph
    def _producer(self, tensor: str) -> str:
        return parse_input(tensor)[0]

    def _step_ops(self) -> list[str]:
        """The ops the fetches and targets need, cut at the feeds, in graph order."""
        feeds = set(self.feeds)
        needed: set[str] = set()
        stack = [self._producer(t) for t in self.fetches if t not in feeds] + list(self.targets)
        while stack:
            name = stack.pop()
            if name in needed:
                continue
            needed.add(name)
            for inp in self._nodes[name].inputs:
                src, index, control = parse_input(inp)
                if control or f"{src}:{index}" not in feeds:
                    stack.append(src)
        return [n for n in self._nodes if n in needed]

    def _feeds_needed(self) -> dict[str, frozenset]:
        """Per op of the step: the setup feeds it depends on."""
        feeds = set(self.feeds)
        deps: dict[str, frozenset] = {}
        for name in self._ops:  # graph order is topological
            acc: set[str] = set()
            for inp in self._nodes[name].inputs:
                src, index, control = parse_input(inp)
                t = f"{src}:{index}"
                if not control and t in feeds:
                    acc.add(t)
                else:
                    acc |= deps.get(src, frozenset())
            deps[name] = frozenset(acc)
        return deps

    def _out_dtype(self, tensor: str):
        node, index, _ = parse_input(tensor)
        dts = self._nodes[node].out_dtypes
        return dts[index] if index < len(dts) else None

    def _reruns(self, name: str) -> bool:
        """An op that only makes handles or references from nothing: it runs again where needed."""
        n = self._nodes[name]
        return not n.data_inputs and bool(n.out_dtypes) and all(_is_handle(d) for d in n.out_dtypes)

    # ------------------------------------------------------------------ stages
    def _stage(self, deadline, options) -> None:
        """Runs every op of the step that has not run and whose feeds have all arrived."""
        ready = [n for n in self._ops if n not in self.executed and self._feed_deps[n] <= self.fed]
        if not ready:
            return
        stage = set(ready)
        later = [n for n in self._ops if n not in self.executed and n not in stage]
        keep: list[str] = []  # outputs of this stage that later stages or the caller need
        consumed: set[str] = set()
        for name in ready + later:
            for inp in self._nodes[name].inputs:
                src, index, control = parse_input(inp)
                if control:
                    continue
                t = f"{src}:{index}"
                if name in stage:
                    consumed.add(src)
                elif src in stage and t not in self.values and t not in keep and not self._reruns(src):
                    keep.append(t)
        for t in self.fetches:
            if self._producer(t) in stage and t not in keep and t not in self.fed:
                keep.append(t)
        # Every op of the stage must run: fetch what is kept, run the rest from its sinks.
        targets = [n for n in ready if n not in consumed and not any(self._producer(t) == n for t in keep)]
        if not keep and not targets:
            return
        # The stage's graph: its ops' inputs from ops that ran are fed, their control edges to them dropped.
        inputs = {_tensor(i) for n in stage for i in self._nodes[n].inputs if not i.startswith("^")}
        feed_names = [t for t in self.values if t in inputs]
        executed = frozenset(self.executed)

        def stage_ir():
            return GraphIR([n if n.name not in stage else n.copy(inputs=[i for i in n.inputs if not (
                i.startswith("^") and i[1:] in executed)]) for n in self._ir.nodes], self._ir.library,
                self._ir.versions)

        run = self._compile((frozenset(stage), executed), stage_ir, feed_names, keep, targets)
        out = run.run([self.values[t] for t in feed_names], deadline, options, None)
        self.values.update(zip(keep, out))
        self.executed.update(n for n in ready if not self._reruns(n))

    def run(self, feed_names, feed_values, fetches, deadline=None, options=None) -> list:
        """Feeds ``feed_names``, runs what becomes runnable, returns the values of ``fetches``."""
        feed_names = [_tensor(f) for f in feed_names]
        fetches = [_tensor(f) for f in fetches]
        with self.lock:
            if self.done:
                raise errors.InvalidArgumentError(None, None, no_setup_message(self.cluster))
            for f in feed_names:
                if f not in self.feeds:
                    raise errors.InvalidArgumentError(None, None, f"The feed {f} was not specified in "
                                                                  f"partial_run_setup.")
                if f in self.fed:
                    raise errors.InvalidArgumentError(None, None, f"The feed {f} has already been fed.")
            for f in fetches:
                if f not in self.fetches:
                    raise errors.InvalidArgumentError(None, None, f"The fetch {f} was not specified in "
                                                                  f"partial_run_setup.")
                if f in self.fetched:
                    raise errors.InvalidArgumentError(None, None, f"The fetch {f} has already been fetched.")
            fed = self.fed | set(feed_names)
            for f in fetches:
                missing = sorted(self._feed_deps.get(self._producer(f), frozenset()) - fed) if f not in fed else []
                if missing:
                    raise errors.InvalidArgumentError(None, None, f"Fetch {missing[0]} can't be computed from the "
                                                                  f"feeds that have been fed so far.")
            self.values.update(zip(feed_names, feed_values))
            self.fed = fed
            try:
                self._stage(deadline, options)
            except errors.OpError:
                self.done = True
                raise
            self.fetched.update(fetches)
            if self.fetched >= set(self.fetches):
                self.done = True
            return [self.values[f] for f in fetches]
