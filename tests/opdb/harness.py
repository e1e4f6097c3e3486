"""Builds and runs op-database entries with any TF1-style module (sparseflow or tf.compat.v1).

One graph per (entry, mode) holds every (sample, dtype) of the entry; one ``Session.run`` fetches
them all, and only when that fails is each sample run alone in a fresh session (so one expected
error does not hide the others' values). Gradients are built afterwards in the same graph with
``tf.gradients(ys, xs, grad_ys=u)``: ``xs`` are the sample's floating and complex inputs, ``ys`` its
floating and complex outputs, ``u`` a fixed upstream gradient fed the way the mode feeds inputs (so
unknown rank reaches the gradient functions too).

Complex gradients follow TensorFlow's convention: ``u`` stands for the real loss
``L = sum(Re(conj(u) * y))`` over the outputs, and the gradient of ``L`` with respect to an input
``z = x + iy`` is ``dL/dx + i dL/dy`` (for a holomorphic op, ``u * conj(f'(z))``).

A record (one per sample, dtype and mode) is plain data::

    {"fp": "<fingerprint of inputs and attrs>",
     "out": [{"dtype": "float32", "static": [None, 3], "value": <encoded array>}, ...],
     "error": ["build" | "run", "InvalidArgumentError"],          # instead of "out"
     "grad": [<encoded array> | None per x] | {"error": [phase, type]}}
"""

from __future__ import annotations

import hashlib

import numpy as np

from tests.opdb import spec
from tests.opdb.values import encode

GRAD_DTYPES = ("float32", "float64", "complex64", "complex128")
FD_DTYPES = ("float64", "complex128")  # the finite-difference check runs where every input is of these


def dtype_name(d) -> str:
    name = d.base_dtype.name if hasattr(d, "base_dtype") else str(d)
    return {"half": "float16"}.get(name, name)


def array_dtype(a: np.ndarray) -> str:
    return "string" if a.dtype == object or a.dtype.kind in "SU" else str(a.dtype)


def static_shape(t):
    s = t.shape
    if s.ndims is None:
        return None
    return [getattr(d, "value", d) for d in s.dims]


def fingerprint(resolved: dict, attrs: dict) -> str:
    h = hashlib.sha1()

    def feed(v):
        if isinstance(v, spec.Const):
            h.update(b"C")
            v = v.value
        if isinstance(v, list):
            h.update(b"[%d" % len(v))
            for x in v:
                feed(x)
            return
        a = np.asarray(v)
        h.update(f"{array_dtype(a)}{a.shape}".encode())
        h.update(repr(a.tolist()).encode() if a.dtype == object else np.ascontiguousarray(a).tobytes())

    for k in sorted(resolved):
        h.update(k.encode())
        feed(resolved[k])
    h.update(repr(sorted((k, repr(v)) for k, v in attrs.items())).encode())
    return h.hexdigest()[:12]


def error_type(e: BaseException) -> str:
    msg = str(e)
    if "No OpKernel was registered" in msg or "no registered kernels" in msg:
        return "NoKernel"
    return type(e).__name__


def upstream(shape, dtype: str) -> np.ndarray:
    """The fixed upstream gradient for an output of ``shape``: small, nonzero, not constant (complex
    dtypes: an imaginary part of another pattern too)."""
    n = int(np.prod(shape, dtype=np.int64))
    u = (np.arange(n) % 7 - 3) * 0.25 + 0.125
    if spec.kind(dtype) == "complex":
        u = u + 1j * ((np.arange(n) % 5 - 2) * 0.375 + 0.0625)
    return u.astype(spec.np_dtype(dtype)).reshape(shape)


def direction(shape, dtype: str) -> np.ndarray:
    """The fixed direction ``v`` of the finite-difference check for an input of ``shape``."""
    if not shape:
        return np.asarray(0.375 - 0.625j if spec.kind(dtype) == "complex" else 0.375, spec.np_dtype(dtype))
    return upstream(shape, dtype)[::-1]


def _flatten(result, tensors, ops):
    if result is None:
        return
    if isinstance(result, (list, tuple)):
        for r in result:
            _flatten(r, tensors, ops)
    elif hasattr(result, "outputs") and hasattr(result, "type") and not hasattr(result, "op"):
        ops.append(result)  # an Operation: run for its effect
    else:
        tensors.append(result)


def _is_grad_dtype(d) -> bool:
    return dtype_name(d) in GRAD_DTYPES


class Built:
    """One (sample, dtype) built into the graph of one mode."""

    def __init__(self, sample, dtype):
        self.sample, self.dtype = sample, dtype
        self.key = f"{sample.name}|{dtype}"
        self.graph = None
        self.feeds = {}  # placeholder -> value
        self.xs, self.x_values = [], []  # differentiable inputs and their values
        self.outputs, self.targets, self.init = [], [], None
        self.error = None
        self.fp = ""
        self.grad_fetch, self.grad_slots, self.grad_static, self.grad_feeds = [], [], [], {}


class EntryRun:
    """The graph of one entry in one mode, its session, and the records it produces."""

    def __init__(self, tf, entry, mode, dtypes, graph_per_dtype=False):
        self.tf, self.entry, self.mode = tf, entry, mode
        self.graph_per_dtype = graph_per_dtype
        self.builts = []
        self.graphs = []  # one graph per sample holding every dtype of it, or one per (sample, dtype)
        for sample in entry.samples:
            if mode not in sample.modes:
                continue
            todo = [(i, dtype) for i, dtype in enumerate(dtypes) if spec.applies(sample, dtype)]
            for chunk in ([[x] for x in todo] if graph_per_dtype else [todo]):
                graph = tf.Graph()
                with graph.as_default():
                    group = [self._build(sample, dtype, i) for i, dtype in chunk]
                for b in group:
                    b.graph = graph
                self.graphs.append(graph)
                self.builts.extend(group)
        self.records = {b.key: {"fp": b.fp} for b in self.builts}
        self.resolved = {b.key: spec.with_dtype(b.sample, b.dtype) for b in self.builts}

    def groups(self, builts):
        """``builts`` split by the graph they live in."""
        out = {}
        for b in builts:
            out.setdefault(id(b.graph), []).append(b)
        return list(out.values())

    # ------------------------------------------------------------ building
    def _input(self, value, name, built, differentiable):
        tf = self.tf
        if isinstance(value, list):
            return [self._input(v, f"{name}_{i}", built, differentiable) for i, v in enumerate(value)]
        const = isinstance(value, spec.Const)
        a = np.asarray(value.value if const else value)
        d = tf.as_dtype(array_dtype(a))
        if const or self.mode == "const":
            t = tf.constant(a, dtype=d, name=name)
        else:
            shape = {"static": a.shape, "dims": [None] * a.ndim, "rank": None}[self.mode]
            t = tf.placeholder(d, shape=shape, name=name)
            built.feeds[t] = a
        if differentiable and not const and _is_grad_dtype(d):
            built.xs.append(t)
            built.x_values.append(a)
        return t

    def _build(self, sample, dtype, i):
        tf, entry = self.tf, self.entry
        b = Built(sample, dtype)
        resolved = spec.with_dtype(sample, dtype)
        b.fp = fingerprint(resolved, sample.attrs)
        with tf.name_scope(f"s{i}"):
            kwargs = {k: self._input(v, k, b, True) for k, v in resolved.items()}
            kwargs.update(sample.attrs)
            before = set(tf.global_variables())
            try:
                result = entry.build(tf, **kwargs) if entry.build else getattr(tf.raw_ops, entry.op_type)(**kwargs)
            except Exception as e:  # noqa: BLE001 - a build error is a recorded result
                b.error = ("build", error_type(e))
                return b
            _flatten(result, b.outputs, b.targets)
            new_vars = [v for v in tf.global_variables() if v not in before]
            if new_vars:
                b.init = tf.variables_initializer(new_vars)
        return b

    # ------------------------------------------------------------ running
    def _session(self, graph):
        if self.entry.cpu_devices > 1 or self.graph_per_dtype:
            config = self.tf.ConfigProto(device_count={"CPU": self.entry.cpu_devices})
            if self.graph_per_dtype:
                # TensorFlow (which records this way) skips its graph optimizer on graphs of fewer
                # than 4 nodes, and a few ops' results depend on it (Split of a scalar, num_split=1):
                # optimize every graph, as any real program's.
                config.graph_options.rewrite_options.min_graph_nodes = -1
            return self.tf.Session(graph=graph, config=config)
        return self.tf.Session(graph=graph)

    def _run(self, sess, builts, what):
        feeds, fetches = {}, []
        for b in builts:
            feeds.update(b.feeds)
            if what == "grad":
                feeds.update(b.grad_feeds)
        inits = [b.init for b in builts if b.init is not None]
        if inits:
            sess.run(inits, feeds)
        for b in builts:
            fetches.append(b.grad_fetch if what == "grad" else (b.outputs, b.targets))
        return sess.run(fetches, feeds)

    def _run_all(self, builts, what, store):
        """Runs each graph's ``builts`` together, or one by one when that fails (fresh sessions for
        stateful entries, so every sample starts from the same state)."""
        for group in self.groups(builts):
            graph = group[0].graph
            if not self.entry.stateful and len(group) > 1:
                try:
                    with self._session(graph) as sess:
                        values = self._run(sess, group, what)
                except Exception:  # noqa: BLE001 - some sample fails: find which, below
                    values = None
                if values is not None:
                    for b, v in zip(group, values):
                        store(b, v, None)
                    continue
            sess = None if self.entry.stateful else self._session(graph)
            for b in group:
                own = sess or self._session(graph)
                try:
                    v = self._run(own, [b], what)[0]
                except Exception as e:  # noqa: BLE001 - a run error is a recorded result
                    store(b, None, ("run", error_type(e)))
                else:
                    store(b, v, None)
                finally:
                    if own is not sess:
                        own.close()
            if sess is not None:
                sess.close()

    def forward(self):
        for b in self.builts:
            if b.error:
                self.records[b.key]["error"] = list(b.error)

        def store(b, value, err):
            if err:
                self.records[b.key]["error"] = list(err)
                return
            outs, _ = value
            self.records[b.key]["out"] = [
                {"dtype": dtype_name(t.dtype), "static": static_shape(t), "value": encode(np.asarray(v))}
                for t, v in zip(b.outputs, outs)]

        self._run_all([b for b in self.builts if not b.error], "forward", store)
        return self.records

    def gradients(self):
        """Adds a "grad" entry to each record whose sample has float or complex inputs and outputs."""
        tf = self.tf
        todo = []
        for i, b in enumerate(self.builts):
            rec = self.records[b.key]
            if not b.sample.grad or "out" not in rec or not b.xs:
                continue
            with b.graph.as_default():
                ys = [(t, o) for t, o in zip(b.outputs, rec["out"]) if _is_grad_dtype(t.dtype)]
                if not ys:
                    continue
                with tf.name_scope(f"g{i}"):
                    us = []
                    for j, (t, o) in enumerate(ys):
                        u = upstream(o["value"]["shape"], dtype_name(t.dtype))
                        if self.mode == "const":
                            us.append(tf.constant(u, name=f"u{j}"))
                        else:
                            shape = {"static": u.shape, "dims": [None] * u.ndim, "rank": None}[self.mode]
                            ph = tf.placeholder(t.dtype.base_dtype, shape=shape, name=f"u{j}")
                            b.grad_feeds[ph] = u
                            us.append(ph)
                    try:
                        grads = tf.gradients([t for t, _ in ys], b.xs, grad_ys=us)
                        grads = [None if g is None else tf.convert_to_tensor(g) for g in grads]
                    except Exception as e:  # noqa: BLE001 - a recorded result
                        rec["grad"] = {"error": ["build", error_type(e)]}
                        continue
                b.grad_slots = [g is not None for g in grads]
                b.grad_fetch = [g for g in grads if g is not None]
                b.grad_static = [static_shape(g) for g in b.grad_fetch]
                todo.append(b)

        def store(b, value, err):
            if err:
                self.records[b.key]["grad"] = {"error": list(err)}
                return
            it = iter(value)
            self.records[b.key]["grad"] = [encode(np.asarray(next(it))) if s else None for s in b.grad_slots]

        self._run_all(todo, "grad", store)
        return self.records

    def directional_derivatives(self, keys, h=1e-6):
        """(analytic, numeric) directional derivatives of ``L = sum(Re(conj(u) * y))`` along a fixed
        ``v`` per key: ``sum(Re(conj(g) * v))`` by the gradients ``g``, and central differences."""
        out = {}
        by_key = {b.key: b for b in self.builts}
        for key in keys:
            b, rec = by_key[key], self.records[key]
            grads = rec.get("grad")
            if not isinstance(grads, list) or self.mode == "const":
                continue
            # Inputs without a gradient (None: not differentiable, like PadV2's constant_values) stay put.
            vs = [np.zeros_like(x) if g is None else direction(np.shape(x), array_dtype(np.asarray(x)))
                  for x, g in zip(b.x_values, grads)]
            analytic = sum(float(np.sum((np.conj(_decode(g)) * v).real)) for g, v in zip(grads, vs) if g is not None)
            ys = [t for t in b.outputs if _is_grad_dtype(t.dtype)]
            with self._session(b.graph) as sess:
                runs = []
                for sign in (1.0, -1.0):
                    feeds = dict(b.feeds)
                    for x, x0, v in zip(b.xs, b.x_values, vs):
                        feeds[x] = x0 + sign * h * v
                    runs.append(sess.run(ys, feeds))
            numeric = 0.0
            for t, p, m in zip(ys, *runs):  # outputs that stay infinite (log 0) do not move
                p, m = np.asarray(p), np.asarray(m)
                moved = np.isfinite(p) & np.isfinite(m)
                u = upstream(p.shape, "complex128" if t.dtype.is_complex else "float64")
                numeric += float(np.sum(np.where(moved, (np.conj(u) * (p - m)).real, 0.0)))
            out[key] = (analytic, numeric / (2 * h))
        return out


def _decode(v):
    from tests.opdb.values import decode

    return decode(v)


def entry_dtypes(entry, allowed_of_type_attr) -> list:
    """The dtypes an entry runs in: its own list, or the type attr's allowed types minus exclusions."""
    if entry.dtypes is not None:
        return list(entry.dtypes)
    if allowed_of_type_attr is None:
        return [None]
    return [d for d in allowed_of_type_attr if d not in spec.EXCLUDED_DTYPES]


def run_entry(tf, entry, dtypes, modes=spec.MODES, with_grads=True, graph_per_dtype=False):
    """{mode: EntryRun} with forward (and gradient) records filled in. ``graph_per_dtype``: each
    (sample, dtype) in its own graph (TensorFlow places a whole graph at its first run, so one
    dtype without a kernel fails every run of a graph that holds it)."""
    if entry.workdir:  # relative file names resolve in a fresh directory per mode, the same in every run
        import os
        import tempfile

        here = os.getcwd()
        runs = {}
        try:
            for mode in modes:
                with tempfile.TemporaryDirectory() as d:
                    os.chdir(d)
                    runs.update(_run_modes(tf, entry, dtypes, (mode,), with_grads, graph_per_dtype))
                    os.chdir(here)
        finally:
            os.chdir(here)
        return runs
    return _run_modes(tf, entry, dtypes, modes, with_grads, graph_per_dtype)


def _run_modes(tf, entry, dtypes, modes, with_grads, graph_per_dtype=False):
    runs = {}
    for mode in modes:
        r = EntryRun(tf, entry, mode, dtypes, graph_per_dtype)
        r.forward()
        if with_grads:
            r.gradients()
        runs[mode] = r
    return runs
