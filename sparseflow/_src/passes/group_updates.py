"""group_updates: the dense optimizer updates of many variables as one node, one pass on all cores.

``ApplyAdam`` (``ApplyMomentum``, ``ApplyGradientDescent``, ...) nodes on one device that share
their scalar inputs (the same learning-rate, beta-power, ... tensors) and attrs, and whose ref
output nothing reads, become one ``_GroupedApply`` node: its kernel updates every variable in
one parallel sweep instead of one kernel call (and one hand-off to the pool) per variable. Nodes
that waited on any member (``^member``: the beta-power updates, the train op's group) wait on the
grouped node; the members' own control inputs move to it. Run targets are never grouped, nor
updates whose gradient is computed (even in part) on another task: a parameter server applies
each such gradient on its own, as soon as it arrives (a group would wait for the last one, and
the other workers would read the earlier ones' variables stale for longer).

Example:
    >>> from sparseflow._src.framework.ir import GraphIR, NodeIR
    >>> from sparseflow._src.framework import dtypes
    >>> from sparseflow._src.passes.context import PassContext
    >>> f = dtypes.float32
    >>> def feed(n): return NodeIR(n, "_Feed", [], out_dtypes=[f], out_shapes=[[]])
    >>> def gd(n, v, g): return NodeIR(n, "ApplyGradientDescent", [v, "lr", g], attrs={"T": f}, out_dtypes=[f])
    >>> g = GraphIR([feed("v1"), feed("v2"), feed("g1"), feed("g2"), feed("lr"), gd("u1", "v1", "g1"),
    ...              gd("u2", "v2", "g2"), NodeIR("train", "NoOp", ["^u1", "^u2"])])
    >>> out = group_updates(g, PassContext(targets=["train"]))
    >>> [n.op for n in out][-2:], out.node("train").inputs
    (['_GroupedApply', 'NoOp'], ['^u1/grouped'])
"""

from __future__ import annotations

from sparseflow._src.framework.device_spec import task_of_device
from sparseflow._src.framework.ir import GraphIR, NodeIR, parse_input
from sparseflow._src.framework.op_def import get_op_def
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.fuse import _stable_topo
from sparseflow._src.passes.graph_utils import unique_name

GROUPED_APPLY = "_GroupedApply"
GROUPABLE = frozenset(["ApplyGradientDescent", "ApplyMomentum", "ApplyAdam", "ApplyAdagrad", "ApplyRMSProp",
                       "ApplyCenteredRMSProp", "ApplyAdadelta", "ApplyFtrl", "ApplyFtrlV2",
                       "ApplyProximalGradientDescent"])
_FLAGS = ("use_nesterov", "update_slots", "multiply_linear_by_lr")


def group_updates(ir: GraphIR, ctx: PassContext) -> GraphIR:
    """The pass (see the module docstring)."""
    read = {parse_input(s)[0] for n in ir for s in n.data_inputs}
    groups: dict[tuple, list[NodeIR]] = {}
    remote = _remote_fed(ir)
    for n in ir:
        if n.op not in GROUPABLE or n.name in read or n.name in ctx.targets:
            continue
        split = _split(n)
        if split is None:
            continue
        _, grad, scalars = split
        if remote(parse_input(grad)[0], task_of_device(n.device)):
            continue
        key = (n.op, n.device, tuple(scalars), repr(n.attrs.get("T")), bool(n.attrs.get("use_locking", False)),
               tuple(bool(n.attrs.get(f, f == "update_slots")) for f in _FLAGS))
        groups.setdefault(key, []).append(n)
    groups = {k: v for k, v in groups.items() if len(v) > 1}
    if not groups:
        return ir
    replaced: dict[str, str] = {}  # member -> grouped node
    grouped: dict[str, NodeIR] = {}  # first member's name -> grouped node
    taken = {n.name for n in ir}
    for members in groups.values():
        node = _grouped(members, unique_name(taken, f"{members[0].name}/grouped"))
        taken.add(node.name)
        grouped[members[0].name] = node
        for m in members:
            replaced[m.name] = node.name
    pos = {n.name: i for i, n in enumerate(ir)}
    out = []
    for n in ir:
        if n.name in grouped:
            out.append(grouped[n.name])
            pos[grouped[n.name].name] = pos[n.name]
        if n.name in replaced:
            continue
        out.append(_rewire_controls(n, replaced))
    try:
        return GraphIR(_stable_topo(out, pos), ir.library, ir.versions)
    except ValueError:  # a member waited (through control edges) on another member's effects: keep them apart
        return ir


def _remote_fed(ir: GraphIR):
    """``fn(node name, task)``: whether the node's value depends, through data inputs, on a node of
    another task than ``task`` (a node of an unplaced graph is on every task)."""
    by_name = {n.name: n for n in ir}
    memo: dict[tuple, bool] = {}

    def remote(name: str, task: str) -> bool:
        if (name, task) in memo:
            return memo[(name, task)]
        stack, seen = [name], {name}  # depth-first, without recursion (long chains of nodes)
        found = False
        while stack and not found:
            n = by_name.get(stack.pop())
            if n is None:
                continue
            t = task_of_device(n.device)
            if memo.get((n.name, task)) or (t and task and t != task):
                found = True
                break
            for x in n.data_inputs:
                src = parse_input(x)[0]
                if src not in seen and memo.get((src, task)) is not False:
                    seen.add(src)
                    stack.append(src)
        if not found:
            memo.update(((s, task), False) for s in seen)
        memo[(name, task)] = found
        return found

    return remote


def _split(n: NodeIR):
    """(ref inputs, gradient input, scalar inputs) of an ``Apply*`` node, by its OpDef."""
    try:
        op_def = get_op_def(n.op)
    except KeyError:
        return None
    data = n.data_inputs
    if len(data) != len(op_def.input_args):
        return None
    refs, grad, scalars = [], None, []
    for arg, t in zip(op_def.input_args, data):
        if arg.is_ref:
            refs.append(t)
        elif arg.name in ("grad", "delta"):
            grad = t
        else:
            scalars.append(t)
    return (refs, grad, scalars) if grad is not None and refs else None


def _grouped(members: list[NodeIR], name: str) -> NodeIR:
    refs, grads = [], []
    for m in members:
        r, g, scalars = _split(m)
        refs += r
        grads.append(g)
    first = members[0]
    names = {m.name for m in members}
    controls = list(dict.fromkeys(f"^{c}" for m in members for c in m.control_inputs if c not in names))
    attrs = {"base": first.op[len("Apply"):], "N": len(members), "R": len(refs) // len(members), "NR": len(refs),
             "S": len(scalars), "T": first.attrs["T"], "use_locking": bool(first.attrs.get("use_locking", False)),
             "members": [m.name for m in members]}
    for f in _FLAGS:
        if f in first.attrs:
            attrs[f] = bool(first.attrs[f])
    return NodeIR(name, GROUPED_APPLY, refs + grads + scalars + controls, first.device, attrs, [], [], first.site)


def _rewire_controls(n: NodeIR, replaced: dict) -> NodeIR:
    if not any(i.startswith("^") and i[1:] in replaced for i in n.inputs):
        return n
    ins = [f"^{replaced[i[1:]]}" if i.startswith("^") and i[1:] in replaced else i for i in n.inputs]
    data = [i for i in ins if not i.startswith("^")]
    return n.copy(inputs=data + list(dict.fromkeys(i for i in ins if i.startswith("^"))))
