"""place: give every node a full device name (``/job:J/replica:R/task:T/device:TYPE:N``).

Follows TensorFlow's placer (``common_runtime/placer.cc``, ``colocation_graph.cc``):

1. **Colocation groups** (union-find): nodes sharing a ``_class`` entry ``loc:@name``
   (``tf.colocate_with``) and nodes joined by a ref or resource edge into a ``Ref(T)`` input (an
   ``Assign`` goes where its variable is).
2. **Requested devices**: the partial specs of a group's members are merged (``/job:localhost``
   and ``/device:CPU:1`` give ``/job:localhost/device:CPU:1``); incompatible specs are an error
   naming both nodes, except that soft placement drops conflicting device types/indices. The
   group goes to the first of ``ctx.devices`` matching the merged spec (the client device
   first when it matches). A spec that matches no device is an error ("Cannot assign a device
   for operation ...") unless ``ctx.allow_soft_placement``, which falls back to the client
   device (on a cluster, ``ctx.soft_placement_across_tasks`` is False: soft placement then only
   relaxes the device type and index within the requested task, and a task that does not exist
   is an error naming it).
3. **Unconstrained nodes** go to ``ctx.client_device``, with TensorFlow's two heuristics:
   A) a *generator* (no data inputs, one non-ref output, e.g. a Const) goes to its consumers'
   device when they all agree; B) a metadata op (Shape, Size, Rank, ShapeN) goes with its input.
4. ``_Feed`` and ``_Fetch`` always stay on the client device.

With ``ctx.log_device_placement`` every assignment is appended to ``ctx.log`` as a line
``"name: (Op): device"`` (TensorFlow's format).

Example:
    >>> from sparseflow._src.framework.ir import GraphIR, NodeIR
    >>> from sparseflow._src.passes.context import PassContext
    >>> cpus = [f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(2)]
    >>> g = GraphIR([NodeIR("a", "NoOp", [], device="/cpu:1"), NodeIR("b", "NoOp", ["^a"])])
    >>> [n.device[-5:] for n in place(g, PassContext(devices=cpus, client_device=cpus[0]))]
    ['CPU:1', 'CPU:0']
"""

from __future__ import annotations

from sparseflow._src.framework import errors
from sparseflow._src.framework.device_spec import DeviceSpec
from sparseflow._src.framework.ir import GraphIR, NodeIR, parse_input
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.graph_utils import ref_input_flags, stable_topological_order

CLIENT_OPS = frozenset({"_Feed", "_Fetch"})
METADATA_OPS = frozenset({"Shape", "Size", "Rank", "ShapeN"})


class _UnionFind:
    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        root = self.parent.setdefault(x, x)
        while root != self.parent[root]:
            root = self.parent[root]
        while x != root:  # path compression
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: str, b: str):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def colocation_groups(ir: GraphIR) -> dict[str, list[str]]:
    """Group root -> member node names (graph order), from ``_class`` attrs and ref/resource edges."""
    uf = _UnionFind()
    for node in ir:
        if node.op in CLIENT_OPS:
            continue
        uf.find(node.name)
        for c in node.attrs.get("_class") or ():
            c = c.decode() if isinstance(c, bytes) else str(c)
            if c.startswith("loc:@"):
                other = c[5:]
                uf.union(node.name, other if other in ir else c)
        flags = ref_input_flags(node)
        for j, s in enumerate(node.data_inputs):
            src, k, _ = parse_input(s)
            prod = ir.get(src)
            if prod is None or prod.op in CLIENT_OPS or k >= len(prod.out_dtypes):
                continue
            dt = prod.out_dtypes[k]
            if dt is None:
                continue
            if (dt.is_ref_dtype and j < len(flags) and flags[j]) or dt.base_dtype.name == "resource":
                uf.union(node.name, src)
    groups: dict[str, list[str]] = {}
    for node in ir:
        if node.op not in CLIENT_OPS:
            groups.setdefault(uf.find(node.name), []).append(node.name)
    return groups


def _merge_specs(a: DeviceSpec, a_who: str, b: DeviceSpec, b_who: str, soft: bool) -> DeviceSpec:
    """``a`` and ``b`` merged; conflicting job/replica/task are errors, device type/index too
    unless ``soft`` (then they are dropped)."""
    def conflict(field):
        raise ValueError(
            f"Cannot colocate nodes {a_who} and {b_who}: they request incompatible devices "
            f"{a.to_string() or '<any>'} and {b.to_string() or '<any>'} (different {field}). Nodes are "
            f"colocated by tf.colocate_with / a '_class' attr, or because one uses the other's variable.")

    fields = {}
    for f in ("job", "replica", "task"):
        x, y = getattr(a, f), getattr(b, f)
        if x is not None and y is not None and x != y:
            conflict(f)
        fields[f] = x if x is not None else y
    dtype, index = a.device_type, a.device_index
    if b.device_type is not None:
        if dtype is not None and dtype != b.device_type:
            if not soft:
                conflict("device type")
            dtype, index = None, None
        else:
            dtype = b.device_type
            if b.device_index is not None:
                if index is not None and index != b.device_index:
                    if not soft:
                        conflict("device index")
                    index = None
                else:
                    index = b.device_index
    return DeviceSpec(fields["job"], fields["replica"], fields["task"], dtype, index)


def _unplaceable(node: NodeIR, spec: DeviceSpec, members: list[NodeIR], ctx: PassContext):
    also = [m for m in members if m is not node and m.device]
    via = ""
    if also:
        via = " (merged with the devices of its colocated nodes " + ", ".join(
            f"'{m.name}' on {m.device}" for m in also[:5]) + ")"
    what = (f"Cannot assign a device for operation '{node.name}': Operation was explicitly assigned to "
            f"{spec.to_string()}{via} but available devices are [ {', '.join(ctx.devices)} ]. Make sure the "
            f"device specification refers to a valid device, or set allow_soft_placement=True in the "
            f"session config to let sparseflow place it on an available device.")
    return ValueError(errors.op_error_message(node, what))


def _group_device(members: list[NodeIR], ctx: PassContext, specs: list[DeviceSpec]) -> str | None:
    """The device of a group with requested specs (None when no member requests one)."""
    spec, who, first = None, "", None
    for m in members:
        if not m.device:
            continue
        s = DeviceSpec.from_string(m.device)
        if spec is None:
            spec, who, first = s, f"'{m.name}'", m
        else:
            spec = _merge_specs(spec, who, s, f"'{m.name}'", ctx.allow_soft_placement)
            who = f"'{m.name}'"
    if spec is None:
        return None
    matching = [d for d, full in zip(ctx.devices, specs) if spec.is_compatible_with(full)]
    if ctx.client_device in matching:
        return ctx.client_device
    if matching:
        return matching[0]
    if ctx.allow_soft_placement:
        if ctx.soft_placement_across_tasks:
            return ctx.client_device
        task_only = DeviceSpec(spec.job, spec.replica, spec.task, None, None)  # any device of that task
        matching = [d for d, full in zip(ctx.devices, specs) if task_only.is_compatible_with(full)]
        if matching:
            return matching[0]
    raise _unplaceable(first, spec, members, ctx)


def place(ir: GraphIR, ctx: PassContext) -> GraphIR:
    """Assigns a full device to every node (see the module docstring)."""
    specs = [DeviceSpec.from_string(d) for d in ctx.devices]
    groups = colocation_groups(ir)
    device: dict[str, str] = {}
    free: set[str] = set()  # single unconstrained nodes: heuristics apply
    for members in groups.values():
        nodes = [ir.node(m) for m in members]
        dev = _group_device(nodes, ctx, specs)
        if dev is None and len(nodes) == 1:
            free.add(members[0])
            continue
        for m in members:
            device[m] = dev or ctx.client_device
    generators = []
    for node in stable_topological_order(ir):
        if node.op in CLIENT_OPS:
            device[node.name] = ctx.client_device
        elif node.name not in free:
            continue
        elif _is_generator(node):
            generators.append(node)
        elif node.op in METADATA_OPS and node.data_inputs:
            src = parse_input(node.data_inputs[0])[0]  # B: with its input
            device[node.name] = device.get(src, ctx.client_device)
        else:
            device[node.name] = ctx.client_device
    consumers: dict[str, set[str]] = {}
    for node in ir:
        for s in node.data_inputs:
            consumers.setdefault(parse_input(s)[0], set()).add(node.name)
    for node in generators:  # A: with its consumers when they agree
        devs = {device.get(c, ctx.client_device) for c in consumers.get(node.name, ())}
        device[node.name] = devs.pop() if len(devs) == 1 else ctx.client_device
    out = GraphIR([n if n.device == device[n.name] else n.copy(device=device[n.name]) for n in ir],
                  ir.library, ir.versions)
    if ctx.log_device_placement:
        ctx.log.extend(f"{n.name}: ({n.op}): {n.device}" for n in out)
    return out


def _is_generator(node: NodeIR) -> bool:
    return (not node.data_inputs and len(node.out_dtypes) == 1 and node.out_dtypes[0] is not None
            and not node.out_dtypes[0].is_ref_dtype)
