"""coalesce: independent ops of one kind on one device become one op (one request per step).

Some ops send a request to other tasks per run (the pull and push of embedding tables sharded
over parameter servers). A step with two lookups would send two pulls to every server; merged,
it sends one carrying both. An op type opts in with ``register_op(..., coalescable=True)``; its
inputs and outputs are all lists (``N * T`` or ``list(type)``), and each of its attrs is either a
list length (summed), a per-member list (concatenated) or a shared setting (a scalar: only nodes
with the same value are merged). Its kernel must treat member ``i`` of every list as one request,
independent of the others.

Nodes are merged when they have the same op type, device and shared settings, and no path (data or
control) leads from one to another, so the merged node cannot wait on itself: candidates are
taken in graph order and each joins the first group none of whose members reaches it. Nodes
inside while loops are left alone, as are two nodes that a run fetches or targets by name (a
merged node keeps the name of the one it may carry). Consumers are rewired to the merged node's
outputs, in member order.

Example:
    >>> from sparseflow._src.framework import dtypes
    >>> from sparseflow._src.framework.ir import GraphIR, NodeIR
    >>> from sparseflow._src.passes.context import PassContext
    >>> get_op_def("EmbeddingClusterPull").coalescable  # declared by the embedding layer
    True
    >>> cpu = "/cpu:0"
    >>> def pull(name, keys):
    ...     return NodeIR(name, "EmbeddingClusterPull", [keys, "c:0"], cpu, {"N": 1, "Tkeys": [dtypes.int64],
    ...                   "tables": [name], "dims": [4], "training": [True]}, [dtypes.float32])
    >>> k = NodeIR("k", "Placeholder", [], cpu, {"dtype": dtypes.int64}, [dtypes.int64])
    >>> c = NodeIR("c", "Placeholder", [], cpu, {"dtype": dtypes.int32}, [dtypes.int32])
    >>> g = GraphIR([k, c, pull("a", "k:0"), pull("b", "k:0"), NodeIR("y", "AddN", ["b:0", "a:0"], cpu)])
    >>> out = coalesce(g, PassContext(fetches=["y:0"]))
    >>> merged = out.node("a")
    >>> merged.attrs["N"], merged.attrs["tables"], merged.inputs, out.node("y").inputs
    (2, ['a', 'b'], ['k:0', 'k:0', 'c:0', 'c:0'], ['a:1', 'a:0'])
"""

from __future__ import annotations

import collections

from sparseflow._src.framework.ir import GraphIR, NodeIR, parse_input
from sparseflow._src.framework.op_def import SHARED_ATTR_TYPES, get_op_def
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.graph_utils import preserved_names

__all__ = ["coalesce"]

_LOOP_ENTRY = frozenset({"Enter", "RefEnter"})
_LOOP_EXIT = frozenset({"Exit", "RefExit"})


def _coalescable(op: str) -> bool:
    try:
        return get_op_def(op).coalescable
    except KeyError:
        return False


def _rule(op_def):
    """(count attrs: summed, list attrs: concatenated) of a coalescable op."""
    counts = {a.number_attr for a in list(op_def.input_args) + list(op_def.output_args) if a.number_attr}
    return sorted(counts), [k for k, a in op_def.attrs.items() if k not in counts and a.type.startswith("list(")]


def _shared_settings(node: NodeIR) -> tuple:
    """The values of the node's scalar attrs (nodes that differ in one are not merged)."""
    op_def = get_op_def(node.op)
    return tuple((k, node.attrs.get(k, a.default)) for k, a in sorted(op_def.attrs.items())
                 if a.type in SHARED_ATTR_TYPES)


def _arg_lengths(op_def, attrs, args) -> list[int]:
    return [attrs.get(a.number_attr, 0) if a.number_attr else len(attrs.get(a.type_list_attr, ())) for a in args]


def _in_loops(ir: GraphIR, consumers) -> set:
    """Nodes inside while loops: reachable from an Enter without leaving through an Exit."""
    seen: set = set()
    stack = [n.name for n in ir if n.op in _LOOP_ENTRY]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        for c in consumers.get(name, ()):
            if c not in seen and ir.node(c).op not in _LOOP_EXIT:
                stack.append(c)
    return seen


def _groups(ir: GraphIR, ctx: PassContext):
    by_key = collections.defaultdict(list)
    for n in ir:
        if _coalescable(n.op):
            by_key[(n.op, n.device, _shared_settings(n))].append(n)
    return [ns for ns in by_key.values() if len(ns) > 1]


def coalesce(ir: GraphIR, ctx: PassContext) -> GraphIR:
    candidates = _groups(ir, ctx)
    if not candidates:
        return ir
    ir = ir.copy()
    keep_names = preserved_names(ctx)
    for nodes in candidates:
        consumers = ir.consumers()
        looped = _in_loops(ir, consumers)
        pending = [n for n in nodes if n.name not in looped]
        while len(pending) > 1:
            group, reached, rest, named = [], set(), [], 0
            for n in pending:
                preserved = n.name in keep_names
                if n.name in reached or (preserved and named):
                    rest.append(n)
                    continue
                group.append(n)
                named += preserved
                _mark_descendants(n.name, consumers, reached)
            if len(group) > 1:
                _merge(ir, group, keep_names)
                consumers = ir.consumers()
            pending = rest
    return ir


def _mark_descendants(name, consumers, reached: set):
    stack = [name]
    while stack:
        for c in consumers.get(stack.pop(), ()):
            if c not in reached:
                reached.add(c)
                stack.append(c)


def _merge(ir: GraphIR, members: list[NodeIR], keep_names: set):
    op_def = get_op_def(members[0].op)
    count_attrs, list_attrs = _rule(op_def)
    head = next((m for m in members if m.name in keep_names), members[0])
    in_lens = [_arg_lengths(op_def, m.attrs, op_def.input_args) for m in members]
    out_lens = [_arg_lengths(op_def, m.attrs, op_def.output_args) for m in members]
    inputs = []
    for a in range(len(op_def.input_args)):
        for m, lens in zip(members, in_lens):
            start = sum(lens[:a])
            inputs.extend(m.data_inputs[start:start + lens[a]])
    controls = list(dict.fromkeys(f"^{c}" for m in members for c in m.control_inputs))
    attrs = {k: v for k, v in head.attrs.items() if k != "_class"}
    for k in count_attrs:
        attrs[k] = sum(m.attrs[k] for m in members)
    for k in list_attrs:
        attrs[k] = [x for m in members for x in m.attrs[k]]
    out_dtypes, out_shapes, remap = [], [], {}
    for a in range(len(op_def.output_args)):
        for m, lens in zip(members, out_lens):
            start = sum(lens[:a])
            for i in range(lens[a]):
                remap[(m.name, start + i)] = len(out_dtypes)
                out_dtypes.append(m.out_dtypes[start + i])
                out_shapes.append(m.out_shapes[start + i] if start + i < len(m.out_shapes) else None)
    merged = head.copy(inputs=inputs + controls, attrs=attrs, out_dtypes=out_dtypes,
                       out_shapes=out_shapes if all(s is not None for s in out_shapes) else [])
    gone = {m.name for m in members}
    for n in ir:
        if n.name in gone or not any(parse_input(i)[0] in gone for i in n.inputs):
            continue
        new = []
        for i in n.inputs:
            src, k, is_ctrl = parse_input(i)
            if src not in gone:
                new.append(i)
            elif is_ctrl:
                new.append(f"^{head.name}")
            else:
                new.append(f"{head.name}:{remap[(src, k)]}")
        data = [i for i in new if not i.startswith("^")]
        ir.replace(n.copy(inputs=data + list(dict.fromkeys(i for i in new if i.startswith("^")))))
    for m in members:
        if m.name != head.name:
            ir.remove(m.name)
    ir.replace(merged)
