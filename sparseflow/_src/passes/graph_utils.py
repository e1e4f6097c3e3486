"""Facts about nodes and small rewiring helpers shared by the optimizing passes.

Everything here reads only the op registry (``framework.op_def``) and the IR, so passes that use
it stay pure functions ``(GraphIR, PassContext) -> GraphIR``.

Example:
    >>> import numpy as np
    >>> attr_key(np.array([1, 2], np.int32)) == attr_key(np.array([1, 2], np.int32))
    True
    >>> attr_key(np.array([1, 2], np.int32)) == attr_key(np.array([1, 2], np.int64))
    False
    >>> norm_tensor("x"), norm_tensor("x:1")
    ('x:0', 'x:1')
"""

from __future__ import annotations

import hashlib

import numpy as np

from sparseflow._src.framework.ir import GraphIR, NodeIR, parse_input
from sparseflow._src.framework.op_def import OpDef, get_op_def, input_arg_flags

# Nodes the runtime inserts or the user feeds: never merged, folded or simplified away.
STRUCTURAL_OPS = frozenset({"_Feed", "_Fetch", "_Send", "_Recv", "_HostSend", "_HostRecv", "_Arg",
                            "_Retval", "Placeholder", "PlaceholderV2", "PlaceholderWithDefault"})

# Control-flow primitives: their values depend on frames and dead tensors, not only on inputs.
CONTROL_FLOW_OPS = frozenset({
    "Enter", "Exit", "Switch", "Merge", "NextIteration", "LoopCond", "RefEnter", "RefExit", "RefSwitch",
    "RefMerge", "RefNextIteration", "RefSelect", "ControlTrigger", "If", "StatelessIf", "While",
    "StatelessWhile", "Case", "StatelessCase", "PartitionedCall", "StatefulPartitionedCall",
})

# Dtypes whose values are handles, never plain arrays.
HANDLE_DTYPES = frozenset({"resource", "variant"})


def op_def_or_none(op: str) -> OpDef | None:
    try:
        return get_op_def(op)
    except KeyError:
        return None


def is_stateful(node: NodeIR, ctx) -> bool:
    """True for stateful op types, types listed in ``ctx.stateful_ops``, and unknown types."""
    if node.op in getattr(ctx, "stateful_ops", ()):
        return True
    op_def = op_def_or_none(node.op)
    return op_def is None or op_def.is_stateful


def has_ref_input_args(node: NodeIR) -> bool:
    """True when the node declares a ``Ref(T)`` input (it may write through it); True if unknown."""
    op_def = op_def_or_none(node.op)
    if op_def is None:
        return True
    return any(arg.is_ref for arg in op_def.input_args)


def ref_input_flags(node: NodeIR) -> list[bool]:
    """One ``is_ref`` flag per data input (empty for unknown ops or attrs that do not fit)."""
    op_def = op_def_or_none(node.op)
    if op_def is None:
        return []
    try:
        return input_arg_flags(op_def, node.attrs)
    except (TypeError, ValueError):
        return []


def has_handle_or_ref_outputs(node: NodeIR) -> bool:
    return any(dt is None or dt.is_ref_dtype or dt.base_dtype.name in HANDLE_DTYPES for dt in node.out_dtypes)


def has_func_attrs(node: NodeIR) -> bool:
    op_def = op_def_or_none(node.op)
    if op_def is None:
        return True
    return any(a.type in ("func", "list(func)") for a in op_def.attrs.values())


def norm_tensor(s: str) -> str:
    """``"n"`` -> ``"n:0"``; control inputs and ``"n:k"`` unchanged."""
    if s.startswith("^"):
        return s
    name, k, _ = parse_input(s)
    return f"{name}:{k}"


def preserved_names(ctx) -> set[str]:
    """Node names a pass must keep: the fetched nodes and the targets of the run."""
    return {parse_input(t)[0] for t in ctx.fetches} | set(ctx.targets)


def control_sources(ir: GraphIR) -> set[str]:
    """Names of nodes that some node waits for through a control edge."""
    return {c for n in ir for c in n.control_inputs}


def producer(ir: GraphIR, tensor: str) -> tuple[NodeIR | None, int]:
    name, k, _ = parse_input(tensor)
    return ir.get(name), k


def tensor_dtype(ir: GraphIR, tensor: str):
    node, k = producer(ir, tensor)
    if node is None or k >= len(node.out_dtypes):
        return None
    return node.out_dtypes[k]


def tensor_shape(ir: GraphIR, tensor: str):
    """The static shape of ``tensor`` (a TensorShape), or None when unknown."""
    node, k = producer(ir, tensor)
    if node is None or k >= len(node.out_shapes):
        return None
    return node.out_shapes[k]


def is_ref_tensor(ir: GraphIR, tensor: str) -> bool:
    dt = tensor_dtype(ir, tensor)
    return dt is not None and dt.is_ref_dtype


def const_value(ir: GraphIR, tensor: str):
    """The value of ``tensor`` when a Const produces it, else None."""
    node, k = producer(ir, tensor)
    if node is None or node.op != "Const" or k != 0:
        return None
    return node.attrs.get("value")


def dedupe_inputs(inputs: list[str]) -> list[str]:
    """Data inputs kept in order; repeated control inputs dropped, controls after data."""
    data = [i for i in inputs if not i.startswith("^")]
    ctrl = list(dict.fromkeys(i for i in inputs if i.startswith("^")))
    return data + ctrl


class _ArrayKey:
    """Hashable stand-in for an array: equal iff dtype, shape and bytes are equal."""

    __slots__ = ("arr", "_hash")

    def __init__(self, arr: np.ndarray):
        self.arr = arr
        if arr.ndim and arr.size > 1 and not any(arr.strides):  # one value broadcast: never expanded
            body = ("fill", repr(arr[(0,) * arr.ndim]))
        elif arr.dtype == object:
            body = repr(arr.reshape(-1).tolist()).encode()
        else:
            body = hashlib.blake2b(np.ascontiguousarray(arr).reshape(-1).view(np.uint8).data,
                                   digest_size=16).digest() if arr.size else b""
        self._hash = hash((arr.dtype.str, arr.shape, body))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if not isinstance(other, _ArrayKey):
            return NotImplemented
        a, b = self.arr, other.arr
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        fills = [x.ndim and x.size > 1 and not any(x.strides) for x in (a, b)]
        if any(fills):
            return all(fills) and self._hash == other._hash and a[(0,) * a.ndim] == b[(0,) * b.ndim]
        if a.dtype == object:
            return a.reshape(-1).tolist() == b.reshape(-1).tolist()
        return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def attr_key(value):
    """A hashable key for an attr value; arrays compare by dtype, shape and bytes."""
    if isinstance(value, np.ndarray):
        return _ArrayKey(value)
    if isinstance(value, np.generic):
        return _ArrayKey(np.asarray(value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(attr_key(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple(sorted((k, attr_key(v)) for k, v in value.items()))
    if isinstance(value, float):
        return ("float", value.hex())  # -0.0 != 0.0, NaN == NaN
    try:
        hash(value)
    except TypeError:
        return ("repr", type(value).__name__, repr(value))
    return (type(value).__name__, value)


def stable_topological_order(ir: GraphIR) -> list[NodeIR]:
    """Nodes after their inputs, otherwise in graph order (so the first of equal nodes comes first)."""
    return ir.topological_order()


def remove_dead(ir: GraphIR, candidates: set[str], keep: set[str]) -> GraphIR:
    """Drops the ``candidates`` that nothing uses any more (repeatedly); ``keep`` always stays."""
    users: dict[str, int] = {n.name: 0 for n in ir}
    for n in ir:
        for i in n.inputs:
            src = parse_input(i)[0]
            if src in users:
                users[src] += 1
    keep = set(keep) | {n.name for n in ir if n.op in STRUCTURAL_OPS}
    dead: set[str] = set()
    stack = [c for c in candidates if c in users and users[c] == 0 and c not in keep]
    while stack:
        name = stack.pop()
        if name in dead:
            continue
        dead.add(name)
        for i in ir.node(name).inputs:
            src = parse_input(i)[0]
            if src in users:
                users[src] -= 1
                if users[src] == 0 and src in candidates and src not in keep:
                    stack.append(src)
    if not dead:
        return ir
    return GraphIR([n for n in ir if n.name not in dead], ir.library, ir.versions)


def unique_name(taken, base: str) -> str:
    """``base`` if free in ``taken`` (a GraphIR or set), else ``base_1``, ``base_2``, ..."""
    if base not in taken:
        return base
    i = 1
    while f"{base}_{i}" in taken:
        i += 1
    return f"{base}_{i}"
