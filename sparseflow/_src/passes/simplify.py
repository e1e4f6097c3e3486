"""simplify: arithmetic and shape rewrites that turn a node into one of its inputs.

Each rule is a row of a table, keyed by op type. A rule returns the tensor the node equals,
or None:

- neutral elements: ``x*1``, ``1*x``, ``x+0``, ``0+x``, ``x-0``, ``x/1``, ``x and True``,
  ``x or False`` — only when the constant's static shape broadcasts into x's without changing it
  (``x * ones([3])`` with x of shape ``[]`` or ``[None]`` stays: the result could be larger);
- involutions: ``Neg(Neg(x))``, ``LogicalNot(LogicalNot(x))``;
- ``Identity``/``StopGradient``/``Snapshot`` chains;
- reshapes that restore a shape: ``Reshape``/``Squeeze``/``ExpandDims`` chains whose fully known
  output shape equals the shape of a tensor they started from, ``BroadcastTo`` to x's own shape;
- ``Transpose`` by the identity permutation, ``Cast`` to the same dtype.

The result dtype must equal x's. A simplified node is *bypassed* (its consumers read x and it is
dropped) unless a bypass would change meaning; then it becomes ``Identity(x)`` with its name
and control inputs kept. That happens when the node is fetched or a target (its name must stay
valid), has control inputs, is waited for through a control edge, or when x is a ref (a variable:
the Identity reads it here, as ``w/read`` does). An ``Identity`` on another device than its input
is an explicit copy and stays. Inputs that lose their last consumer (e.g. the Const ``1``) are
dropped when they are stateless.

Example:
    >>> import numpy as np
    >>> from sparseflow._src.framework import dtypes
    >>> from sparseflow._src.framework.ir import GraphIR, NodeIR
    >>> from sparseflow._src.framework.tensor_shape import TensorShape
    >>> from sparseflow._src.passes.context import PassContext
    >>> f, s = dtypes.float32, TensorShape([2])
    >>> g = GraphIR([NodeIR("x", "Placeholder", [], attrs={"dtype": f}, out_dtypes=[f], out_shapes=[s]),
    ...              NodeIR("a", "Neg", ["x:0"], attrs={"T": f}, out_dtypes=[f], out_shapes=[s]),
    ...              NodeIR("b", "Neg", ["a:0"], attrs={"T": f}, out_dtypes=[f], out_shapes=[s]),
    ...              NodeIR("y", "Square", ["b:0"], attrs={"T": f}, out_dtypes=[f], out_shapes=[s])])
    >>> print(simplify(g, PassContext(fetches=["y:0"])).node("y").format())
    %y = Square[T=float32](x:0)
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework.ir import GraphIR, NodeIR, parse_input
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.graph_utils import (
    const_value,
    control_sources,
    is_ref_tensor,
    is_stateful,
    norm_tensor,
    preserved_names,
    producer,
    remove_dead,
    stable_topological_order,
    tensor_dtype,
    tensor_shape,
)

IDENTITY_OPS = frozenset({"Identity", "StopGradient", "Snapshot", "PreventGradient"})
RESHAPE_OPS = frozenset({"Reshape", "Squeeze", "ExpandDims"})


def _broadcasts_into(c: np.ndarray, shape) -> bool:
    """True when broadcasting a constant of ``c.shape`` against ``shape`` gives ``shape``."""
    if c.ndim == 0:
        return True
    if shape is None or shape.ndims is None or c.ndim > shape.ndims:
        return False
    for cd, xd in zip(reversed(c.shape), reversed(shape.as_list())):
        if cd != 1 and cd != xd:
            return False
    return True


def _neutral(value, which: str):
    """Rule: ``op(x, c)`` / ``op(c, x)`` equals x when c is all ``value`` (side: left/right/both)."""

    def rule(ir: GraphIR, node: NodeIR):
        data = node.data_inputs
        if len(data) != 2:
            return None
        sides = {"right": [(0, 1)], "left": [(1, 0)], "both": [(0, 1), (1, 0)]}[which]
        for xi, ci in sides:
            c = const_value(ir, data[ci])
            if c is None or c.dtype == object or c.size == 0:
                continue
            one = c[(0,) * c.ndim] if c.ndim and not any(c.strides) else c  # a broadcast fill: its one value
            if not np.all(one == value):
                continue
            x = data[xi]
            if _broadcasts_into(c, tensor_shape(ir, x)):
                return x
        return None

    return rule


def _involution(ir: GraphIR, node: NodeIR):
    inner, _ = producer(ir, node.data_inputs[0])
    if inner is not None and inner.op == node.op and not inner.control_inputs:
        return inner.data_inputs[0]
    return None


def _identity(ir: GraphIR, node: NodeIR):
    x = node.data_inputs[0]
    src, _ = producer(ir, x)
    if node.op == "Identity" and node.device and src is not None and src.device != node.device:
        return None  # an explicit copy to another device
    return x


def _same_shape(ir: GraphIR, node: NodeIR):
    """Reshape-like chains: the deepest tensor of the chain whose static shape is the output's."""
    out = node.out_shapes[0] if node.out_shapes else None
    if out is None or not out.is_fully_defined():
        return None
    found = None
    x = node.data_inputs[0]
    while True:
        shape = tensor_shape(ir, x)
        if shape is not None and shape.is_fully_defined() and shape.as_list() == out.as_list():
            found = x
        src, _ = producer(ir, x)
        if src is None or src.op not in RESHAPE_OPS or src.control_inputs or len(src.out_dtypes) != 1:
            return found
        x = src.data_inputs[0]


def _broadcast_to_same(ir: GraphIR, node: NodeIR):
    out = node.out_shapes[0] if node.out_shapes else None
    shape = tensor_shape(ir, node.data_inputs[0])
    if out is None or shape is None or not out.is_fully_defined() or not shape.is_fully_defined():
        return None
    return node.data_inputs[0] if out.as_list() == shape.as_list() else None


def _transpose(ir: GraphIR, node: NodeIR):
    x, perm = node.data_inputs[:2]
    p = const_value(ir, perm)
    shape = tensor_shape(ir, x)
    if p is None or p.ndim != 1 or shape is None or shape.ndims != p.size:
        return None
    return x if np.array_equal(p, np.arange(p.size)) else None


def _cast(ir: GraphIR, node: NodeIR):
    src, dst = node.attrs.get("SrcT"), node.attrs.get("DstT")
    if src is not None and dst is not None and src.base_dtype == dst.base_dtype:
        return node.data_inputs[0]
    return None


# op type -> rule(ir, node) -> the tensor name the node equals, or None.
RULES = {
    "Mul": _neutral(1, "both"),
    "Add": _neutral(0, "both"),
    "AddV2": _neutral(0, "both"),
    "Sub": _neutral(0, "right"),
    "RealDiv": _neutral(1, "right"),
    "Div": _neutral(1, "right"),
    "DivNoNan": _neutral(1, "right"),
    "LogicalAnd": _neutral(True, "both"),
    "LogicalOr": _neutral(False, "both"),
    "Neg": _involution,
    "LogicalNot": _involution,
    "Reshape": _same_shape,
    "Squeeze": _same_shape,
    "ExpandDims": _same_shape,
    "BroadcastTo": _broadcast_to_same,
    "Transpose": _transpose,
    "Cast": _cast,
    **{op: _identity for op in IDENTITY_OPS},
}


def simplified_input(ir: GraphIR, node: NodeIR) -> str | None:
    """The tensor ``node`` equals by one of the RULES (same dtype), or None."""
    rule = RULES.get(node.op)
    if rule is None or len(node.out_dtypes) != 1 or not node.data_inputs:
        return None
    x = rule(ir, node)
    if x is None:
        return None
    x = norm_tensor(x)
    dt = tensor_dtype(ir, x)
    if dt is None or dt.base_dtype != node.out_dtypes[0].base_dtype:
        return None
    return x


def _as_identity(node: NodeIR, x: str) -> NodeIR:
    attrs = {"T": node.out_dtypes[0].base_dtype}
    if "_class" in node.attrs:
        attrs["_class"] = node.attrs["_class"]
    return NodeIR(node.name, "Identity", [x] + [f"^{c}" for c in node.control_inputs], node.device, attrs,
                  list(node.out_dtypes), list(node.out_shapes), node.site)


def simplify(ir: GraphIR, ctx: PassContext) -> GraphIR:
    """Applies the RULES in one topological sweep (see the module docstring)."""
    keep = preserved_names(ctx)
    waited_for = control_sources(ir)
    forward: dict[str, str] = {}  # "n:0" of a bypassed node -> the tensor it equals
    cur = GraphIR([], ir.library, ir.versions)  # nodes so far, rewired; rules look up producers here
    dropped: set[str] = set()
    touched: set[str] = set()  # producers that lost a consumer
    for node in stable_topological_order(ir):
        inputs = []
        for s in node.inputs:
            t = s if s.startswith("^") else forward.get(norm_tensor(s), s)
            if t != s:
                touched.add(parse_input(s)[0])
            inputs.append(t)
        if inputs != node.inputs:
            node = node.copy(inputs=inputs)
        x = simplified_input(cur, node)
        if x is None:
            cur.add(node)
            continue
        bypass = (node.name not in keep and node.name not in waited_for and not node.control_inputs
                  and not is_ref_tensor(cur, x))
        if bypass:
            forward[f"{node.name}:0"] = x
            dropped.add(node.name)
            touched.update(parse_input(s)[0] for s in node.inputs)
        elif node.op == "Identity" and [norm_tensor(i) for i in node.data_inputs] == [x]:
            cur.add(node)
        else:
            touched.update(parse_input(s)[0] for s in node.data_inputs if norm_tensor(s) != x)
            cur.add(_as_identity(node, x))
    if not dropped and all(cur.node(n.name) is n for n in ir):
        return ir
    out = GraphIR([cur.node(n.name) for n in ir if n.name not in dropped], ir.library, ir.versions)
    stateless = {n for n in touched if n in out and not is_stateful(out.node(n), ctx)}
    return remove_dead(out, stateless, keep)
