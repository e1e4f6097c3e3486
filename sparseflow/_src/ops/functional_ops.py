"""Functional control flow: the ``If`` and ``While`` ops, the function graphs they run, nested
structures of loop values, and ``foldl`` / ``foldr`` / ``scan`` / ``map_fn``.

A branch or loop body is built by calling the user's function inside a ``ControlFlowGraph`` (a
``FuncGraph``): outer tensors it uses are captured as placeholders and become extra inputs of the
functional op; an outer variable used as an l-value (e.g. ``tf.assign`` in a branch) becomes a
``VariableV2`` in the body that shares the variable's storage. The functions stay in the graph's
library (``graph._functions``) under the names in the op's attrs, for the runtime and gradients.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     squares = tf.map_fn(lambda x: x * x, tf.constant([1.0, 2.0, 3.0]))
    ...     with tf.Session() as sess:
    ...         print(sess.run(squares))
    [1. 4. 9.]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.function import FuncGraph, GraphFunction
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import get_op_def, register_op
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.sparse_tensor import IndexedSlices, SparseTensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import Dimension, TensorShape, dimension_value
from sparseflow._src.ops.tensor_array_ops import TensorArray

__all__ = ["foldl", "foldr", "scan", "map_fn"]

register_op("If", inputs=["cond: Tcond", "input: Tin"], outputs=["output: Tout"],
            attrs=["Tcond: type", "Tin: list(type)", "Tout: list(type)", "then_branch: func",
                   "else_branch: func", "output_shapes: list(shape) = []"],
            shape_fn=lambda op: list(op._attrs["output_shapes"]) or None, is_stateful=True)
register_op("While", inputs=["input: T"], outputs=["output: T"],
            attrs=["T: list(type)", "cond: func", "body: func", "output_shapes: list(shape) = []",
                   "parallel_iterations: int = 10"],
            shape_fn=lambda op: list(op._attrs["output_shapes"]) or None, is_stateful=True)


# ---------------------------------------------------------------------- nested structures
def is_sequence(x) -> bool:
    """Lists, tuples (incl. namedtuples) and dicts nest; everything else is a leaf."""
    return isinstance(x, (list, tuple, dict))


def _children(x):
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(structure) -> list:
    """The leaves of ``structure`` in order (dicts by sorted key)."""
    if not is_sequence(structure):
        return [structure]
    out = []
    for c in _children(structure):
        out.extend(flatten(c))
    return out


def _rebuild(template, children):
    if isinstance(template, dict):
        keys = sorted(template)
        return type(template)((k, children[keys.index(k)]) for k in template)
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*children)
    return type(template)(children)


def pack_sequence_as(structure, flat):
    """``flat`` leaves arranged like ``structure``."""
    flat = list(flat)

    def build(s, pos):
        if not is_sequence(s):
            return flat[pos], pos + 1
        kids = []
        for c in _children(s):
            k, pos = build(c, pos)
            kids.append(k)
        return _rebuild(s, kids), pos

    n = len(flatten(structure))
    if n != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {n} elements, but flat_sequence had "
                         f"{len(flat)} elements. Structure: {structure}, flat_sequence: {flat}.")
    return build(structure, 0)[0]


def assert_same_structure(a, b, check_types=True):
    """ValueError when the nesting differs; TypeError when sequence types differ."""
    if is_sequence(a) != is_sequence(b):
        raise ValueError(f"The two structures don't have the same nested structure.\n\n"
                         f"First structure: {a}\n\nSecond structure: {b}")
    if not is_sequence(a):
        return
    if check_types and type(a) is not type(b) and not (isinstance(a, list) and isinstance(b, list)):
        raise TypeError(f"The two structures don't have the same sequence type. First structure has type "
                        f"{type(a)}, while second structure has type {type(b)}.")
    if isinstance(a, dict) and sorted(a) != sorted(b):
        raise ValueError(f"The two dictionaries don't have the same set of keys. First structure has keys "
                         f"{sorted(a)}, while second structure has keys {sorted(b)}.")
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        raise ValueError(f"The two structures don't have the same number of elements.\n\n"
                         f"First structure: {a}\n\nSecond structure: {b}")
    for x, y in zip(ca, cb):
        assert_same_structure(x, y, check_types)


def map_structure(fn, *structures):
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])


# ---------------------------------------------------------------------- leaves <-> tensors
def flatten_to_tensors(structure, convert=True) -> list[Tensor]:
    """The tensors carrying ``structure``: TensorArrays as flows, sparse values as components."""
    out = []
    for leaf in flatten(structure):
        if isinstance(leaf, TensorArray):
            out.append(leaf.flow)
        elif isinstance(leaf, SparseTensor):
            out.extend([leaf.indices, leaf.values, leaf.dense_shape])
        elif isinstance(leaf, IndexedSlices):
            out.extend([leaf.values, leaf.indices])
            if leaf.dense_shape is not None:
                out.append(leaf.dense_shape)
        else:
            out.append(convert_to_tensor(leaf) if convert else leaf)
    return out


def pack_from_tensors(structure, tensors):
    """``structure`` with its leaves rebuilt from ``tensors`` (the inverse of ``flatten_to_tensors``)."""
    it = iter(tensors)
    leaves = []
    for leaf in flatten(structure):
        if isinstance(leaf, TensorArray):
            leaves.append(leaf._with_flow(next(it)))
        elif isinstance(leaf, SparseTensor):
            leaves.append(SparseTensor(next(it), next(it), next(it)))
        elif isinstance(leaf, IndexedSlices):
            values, indices = next(it), next(it)
            leaves.append(IndexedSlices(values, indices, next(it) if leaf.dense_shape is not None else None))
        else:
            leaves.append(next(it))
    return pack_sequence_as(structure, leaves)


# ---------------------------------------------------------------------- function graphs
class ControlFlowGraph(FuncGraph):
    """A branch or loop body: captures outer tensors by value and outer variables by reference."""

    # Random ops inside take their op seeds from the enclosing graph's counter, as in TF1, where a
    # branch or loop body is part of the graph that holds it.
    seed_counter_graph = property(lambda self: getattr(self.outer_graph, "seed_counter_graph", self.outer_graph))

    def __init__(self, name, outer_graph):
        super().__init__(name, outer_graph)
        self._device_stack = list(outer_graph._device_stack)
        self._variable_aliases: dict = {}

    def _capture(self, tensor: Tensor) -> Tensor:
        if tensor in self.captures:
            return self.captures[tensor]
        if tensor.dtype.is_ref_dtype and tensor.op.type in ("VariableV2", "Variable"):
            return self._alias_variable(tensor)
        g = self.outer_graph
        while g is not None and g is not tensor.graph:
            g = getattr(g, "outer_graph", None)
        if g is None:
            raise ValueError(f"Tensor {tensor.name} cannot be used in {self.name}: it belongs to a graph "
                             f"that does not enclose this function (e.g. another branch or loop body).")
        outer_t = tensor if tensor.graph is self.outer_graph else self.outer_graph._capture(tensor)
        if outer_t in self.captures:
            return self.captures[outer_t]
        with self.control_dependencies(None):
            op = self._create_op_internal(
                "Placeholder", [], [outer_t.dtype.base_dtype],
                {"dtype": outer_t.dtype.base_dtype, "shape": outer_t.shape},
                self._unscoped_name("capture_" + outer_t.op.name.replace("/", "_")),
                get_op_def("Placeholder"))
        self.captures[outer_t] = op.outputs[0]
        return op.outputs[0]

    def _unscoped_name(self, base: str) -> str:
        saved, self._name_stack = self._name_stack, ""
        try:
            return self.unique_name(base) + "/"
        finally:
            self._name_stack = saved

    def _alias_variable(self, ref: Tensor) -> Tensor:
        """A VariableV2 here with the outer variable's storage (same container and shared name)."""
        alias = self._variable_aliases.get(ref)
        if alias is None:
            a = ref.op._attrs
            attrs = {"shape": a["shape"], "dtype": a["dtype"], "container": a.get("container", ""),
                     "shared_name": a.get("shared_name") or ref.op.name}
            with self.control_dependencies(None):
                op = self._create_op_internal("VariableV2", [], [ref.dtype], attrs,
                                              self._unscoped_name("capture_" + ref.op.name.replace("/", "_")),
                                              get_op_def("VariableV2"))
            op._device = ref.op.device
            alias = self._variable_aliases[ref] = op.outputs[0]
            alias._shape = ref.shape
        return alias


def function_name(graph, base: str) -> str:
    """A library name unique in the outermost graph: ``<base>_<n>``."""
    root = graph
    while getattr(root, "outer_graph", None) is not None:
        root = root.outer_graph
    n = root._extra_state.get("sparseflow.function_uid", 0) + 1
    root._extra_state["sparseflow.function_uid"] = n
    return f"{base.replace('/', '_')}_{n}"


def capture_all(graphs) -> list[Tensor]:
    """The union of the graphs' captures; afterwards every graph captures all of them in that order."""
    order: list[Tensor] = []
    for g in graphs:
        for t in g.captures:
            if t not in order:
                order.append(t)
    for g in graphs:
        for t in order:
            g._capture(t)
        g.captures = {t: g.captures[t] for t in order}
    return order


def _side_effect_ops(g) -> list[Operation]:
    """Ops of ``g`` that must run when the function runs even if no output needs them."""
    out = []
    for op in g.get_operations():
        if op.type in ("VariableV2", "Placeholder") or op.op_def is None:
            continue
        if op.op_def.is_stateful or any(a.is_ref for a in op.op_def.input_args):
            out.append(op)
    return out


def make_function(g: ControlFlowGraph, inputs, outputs) -> GraphFunction:
    """Registers ``g`` as a GraphFunction in the library of every enclosing graph."""
    fn = GraphFunction(g.name, g, list(inputs), list(outputs), _side_effect_ops(g))
    outer = g.outer_graph
    while outer is not None:
        outer._add_function(fn)
        outer = getattr(outer, "outer_graph", None)
    return fn


def inside(g, t: Tensor) -> Tensor:
    """``t`` as a tensor of function graph ``g`` (captured if it comes from outside)."""
    return t if t.graph is g else g._capture(t)


# ---------------------------------------------------------------------- fold / scan / map
def _leading_dim(elems_flat):
    n = dimension_value(elems_flat[0].shape[0]) if elems_flat[0].shape.ndims else None
    if n is not None:
        return n
    from sparseflow._src.ops import array_ops

    return array_ops.shape(elems_flat[0])[0]


def _input_tas(elems_flat, n):
    return [TensorArray(dtype=e.dtype, size=n, dynamic_size=False, infer_shape=True).unstack(e)
            for e in elems_flat]


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, default, reverse):
    from sparseflow._src.ops import control_flow_ops

    g = get_default_graph()
    with g.name_scope(name or default):
        elems_flat = [convert_to_tensor(e, name="elem") for e in flatten(elems)]
        n = _leading_dim(elems_flat)
        tas = pack_sequence_as(elems, _input_tas(elems_flat, n))
        if initializer is None:
            a = map_structure(lambda ta: ta.read(n - 1 if reverse else 0), tas)
            i = n - 1 if reverse else 1
        else:
            a = initializer
            i = n if reverse else 0

        def compute(i, a):
            if reverse:
                i = i - 1
            a = fn(a, map_structure(lambda ta: ta.read(i), tas))
            return [i if reverse else i + 1, a]

        cond = (lambda i, a: i > 0) if reverse else (lambda i, a: i < n)
        _, r_a = control_flow_ops.while_loop(cond, compute, [i, a], parallel_iterations=parallel_iterations,
                                             back_prop=back_prop, swap_memory=swap_memory,
                                             maximum_iterations=n)
        return r_a


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """``fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1])`` (first element when no initializer).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.foldl(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]))))
    123
    """
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, "foldl", False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """Like ``foldl`` from the last element to the first (``fn(acc, elem)``)."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, "foldr", True)


def _fix_leading(results_flat, elems_flat):
    n_static = Dimension(dimension_value(elems_flat[0].shape.with_rank_at_least(1)[0]))
    for e in elems_flat[1:]:
        n_static = n_static.merge_with(Dimension(dimension_value(e.shape.with_rank_at_least(1)[0])))
    for r in results_flat:
        r.set_shape(TensorShape([n_static]).concatenate(r.shape[1:]))


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """The sequence of accumulators ``a_i = fn(a_{i-1}, elems[i])`` stacked (``a_0`` is the first
    element when there is no initializer).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3, 4]))))
    [ 1  3  6 10]
    """
    from sparseflow._src.ops import control_flow_ops

    in_seq = is_sequence(elems)
    out_template = elems if initializer is None else initializer
    out_seq = is_sequence(out_template)
    g = get_default_graph()
    with g.name_scope(name or "scan"):
        elems_flat = [convert_to_tensor(e, name="elem") for e in (flatten(elems) if in_seq else [elems])]
        n = _leading_dim(elems_flat)
        elems_ta = [TensorArray(dtype=e.dtype, size=n, dynamic_size=False, element_shape=e.shape[1:],
                                infer_shape=True).unstack(e) for e in elems_flat]
        if initializer is None:
            a_flat = [ta.read(n - 1 if reverse else 0) for ta in elems_ta]
            i = 1
        else:
            a_flat = [convert_to_tensor(x) for x in (flatten(initializer) if out_seq else [initializer])]
            i = 0
        accs = [TensorArray(dtype=a.dtype, size=n, element_shape=a.shape if infer_shape else None,
                            dynamic_size=False, infer_shape=infer_shape) for a in a_flat]
        if initializer is None:
            accs = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(accs, a_flat)]

        def pack(template, is_seq, flat):
            return pack_sequence_as(template, flat) if is_seq else flat[0]

        def compute(i, a_flat, tas):
            packed_elems = pack(elems, in_seq, [ta.read(i) for ta in elems_ta])
            a_out = fn(pack(out_template, out_seq, a_flat), packed_elems)
            assert_same_structure(out_template, a_out)
            flat_out = flatten(a_out) if out_seq else [a_out]
            tas = [ta.write(i, v) for ta, v in zip(tas, flat_out)]
            return (i - 1 if reverse else i + 1, flat_out, tas)

        if reverse:
            initial_i, cond = n - 1 - i, (lambda i, _1, _2: i >= 0)
        else:
            initial_i, cond = i, (lambda i, _1, _2: i < n)
        _, _, r_a = control_flow_ops.while_loop(cond, compute, (initial_i, a_flat, accs),
                                                parallel_iterations=parallel_iterations, back_prop=back_prop,
                                                swap_memory=swap_memory, maximum_iterations=n)
        results = [r.stack() for r in r_a]
        _fix_leading(results, elems_flat)
        return pack(out_template, out_seq, results)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None):
    """``fn`` applied to each row of ``elems`` (or of each tensor of a nested ``elems``), stacked.
    ``dtype`` gives the output structure and dtypes when they differ from ``elems``."""
    from sparseflow._src.ops import constant_op, control_flow_ops

    in_seq = is_sequence(elems)
    out_seq = in_seq if dtype is None else is_sequence(dtype)
    g = get_default_graph()
    with g.name_scope(name or "map"):
        elems_flat = [convert_to_tensor(e, name="elem") for e in (flatten(elems) if in_seq else [elems])]
        dtype_struct = dtype if dtype is not None else (
            pack_sequence_as(elems, [e.dtype for e in elems_flat]) if in_seq else elems_flat[0].dtype)
        dtype_flat = flatten(dtype_struct) if out_seq else [dtype_struct]
        n = _leading_dim(elems_flat)
        elems_ta = _input_tas(elems_flat, n)
        accs = [TensorArray(dtype=dtypes.as_dtype(dt), size=n, dynamic_size=False, infer_shape=infer_shape)
                for dt in dtype_flat]

        def compute(i, tas):
            reads = [ta.read(i) for ta in elems_ta]
            packed = pack_sequence_as(elems, reads) if in_seq else reads[0]
            out = fn(packed)
            assert_same_structure(dtype if dtype is not None else elems, out)
            flat_out = flatten(out) if out_seq else [out]
            return (i + 1, [ta.write(i, v) for ta, v in zip(tas, flat_out)])

        _, r_a = control_flow_ops.while_loop(lambda i, _: i < n, compute, (constant_op.constant(0), accs),
                                             parallel_iterations=parallel_iterations or 10,
                                             back_prop=back_prop, swap_memory=swap_memory,
                                             maximum_iterations=n)
        results = [r.stack() for r in r_a]
        _fix_leading(results, elems_flat)
        return pack_sequence_as(dtype_struct, results) if out_seq else results[0]

