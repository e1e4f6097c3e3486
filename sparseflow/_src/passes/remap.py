"""remap: a dense layer's ops as one node each way, so their elementwise work is one memory pass;
a slice of a product as the product of the slice.

Three patterns, all on one device, float32/float64, rank-2 values:

- forward, ``Relu(BiasAdd(MatMul(a, b), bias))`` (or without the Relu) becomes ``_FusedMatMul``
  (``fused_ops = ["BiasAdd", "Relu"]``, TensorFlow's name and attrs for the same rewrite): the
  bias and the activation are applied in place on the product, on all cores. ``Add``/``AddV2`` of
  a product and a vector of its last dimension counts as a BiasAdd (``tf.matmul(x, w) + b``).
- backward, ``BiasAddGrad(ReluGrad(g, y))`` becomes ``_FusedReluGradBiasAddGrad`` with the two
  outputs (``g * (y > 0)`` and its column sums), computed in one pass.
- ``Slice(MatMul(a, b), begin, size)`` whose product nothing else reads becomes ``_SlicedMatMul``:
  only the rows and columns the slice keeps are computed. The gradient of a concat ends so (the
  first layer's input gradient, sliced to the columns of the inputs that need one: 416 embedding
  columns of W1's 429, the numeric columns' slice pruned as no one reads it), and the result is
  contiguous, so the Reshape that follows is a view instead of a copy.

The fused node takes the name of the pattern's last op (forward, and the Slice) or of the
``ReluGrad`` (backward), so ``name:0`` stays valid; BiasAddGrad's value becomes output 1. The intermediate
values must not be used elsewhere, except by ops that read only their shape (``Shape``, ``Size``,
``Rank``, ``ShapeN``: the fused value has the same shape), and no fetched value disappears.
Control edges of the replaced nodes move to the fused node.

Example:
    >>> from sparseflow._src.framework.ir import GraphIR, NodeIR
    >>> from sparseflow._src.framework import dtypes
    >>> from sparseflow._src.passes.context import PassContext
    >>> f = dtypes.float32
    >>> g = GraphIR([NodeIR("x", "_Feed", [], out_dtypes=[f], out_shapes=[[None, 3]]),
    ...              NodeIR("w", "_Feed", [], out_dtypes=[f], out_shapes=[[3, 2]]),
    ...              NodeIR("b", "_Feed", [], out_dtypes=[f], out_shapes=[[2]]),
    ...              NodeIR("m", "MatMul", ["x", "w"], attrs={"T": f}, out_dtypes=[f], out_shapes=[[None, 2]]),
    ...              NodeIR("a", "BiasAdd", ["m", "b"], attrs={"T": f}, out_dtypes=[f], out_shapes=[[None, 2]]),
    ...              NodeIR("r", "Relu", ["a"], attrs={"T": f}, out_dtypes=[f], out_shapes=[[None, 2]]),
    ...              NodeIR("_fetch_0", "_Fetch", ["r:0"])])
    >>> out = remap(g, PassContext())
    >>> out.node("r").op, out.node("r").attrs["fused_ops"], "m" in out
    ('_FusedMatMul', ['BiasAdd', 'Relu'], False)
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.ir import GraphIR, NodeIR, parse_input
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.fuse import _stable_topo

FUSED_MATMUL = "_FusedMatMul"
FUSED_RELU_GRAD_BIAS_GRAD = "_FusedReluGradBiasAddGrad"
SLICED_MATMUL = "_SlicedMatMul"
SHAPE_ONLY_OPS = frozenset(["Shape", "ShapeN", "Size", "Rank"])
_FLOATS = (dtypes.float32, dtypes.float64)


def remap(ir: GraphIR, ctx: PassContext) -> GraphIR:
    """The pass: every matching pattern replaced by its fused node (see the module docstring)."""
    users = _data_users(ir)
    taken: set[str] = set()  # nodes already part of a rewrite
    fused: dict[str, NodeIR] = {}  # name -> replacement
    removed: set[str] = set()
    mapping: dict[str, str] = {}  # "old:k" or "^old" -> replacement
    keep = set(ctx.targets)  # run targets stay; fetched values are rewired through their _Fetch nodes
    for n in ir:
        if n.op == "Relu":
            _forward(ir, n, users, keep, taken, fused, removed, mapping)
    for n in ir:
        if n.op in ("BiasAdd", "Add", "AddV2") and n.name not in taken:
            _forward(ir, n, users, keep, taken, fused, removed, mapping)
    for n in ir:
        if n.op == "BiasAddGrad":
            _backward(ir, n, users, keep, taken, fused, removed, mapping)
    for n in ir:
        if n.op == "Slice":
            _sliced(ir, n, users, keep, taken, fused, removed, mapping)
    if not fused:
        return ir
    pos = {n.name: i for i, n in enumerate(ir)}
    out = []
    for n in ir:
        if n.name in removed:
            continue
        out.append(_rewire(fused.get(n.name, n), mapping))
    return GraphIR(_stable_topo(out, pos), ir.library, ir.versions)


# ---------------------------------------------------------------------------- patterns
def _forward(ir, last, users, keep, taken, fused, removed, mapping):
    """``last`` is a Relu (over a bias add) or a bias add; fuse it with the MatMul below."""
    add = ir.get(parse_input(last.data_inputs[0])[0]) if last.op == "Relu" else last
    if add is None or add.name in taken or not _is_bias_add(ir, add):
        return
    m_tensor, bias = _bias_operands(ir, add)
    mm = ir.get(parse_input(m_tensor)[0])
    if mm is None or mm.op != "MatMul" or mm.name in taken or parse_input(m_tensor)[1] != 0:
        return
    chain = [mm, add] + ([last] if last is not add else [])
    if not _same_device_float(chain) or any(x.name in keep for x in chain[:-1]):
        return
    for inner, outer in zip(chain[:-1], chain[1:]):
        if not all(u == outer.name or ir.node(u).op in SHAPE_ONLY_OPS for u in users.get(f"{inner.name}:0", ())):
            return
    a, b = mm.data_inputs
    controls = _controls(chain)
    attrs = {"T": mm.attrs.get("T", mm.out_dtypes[0]), "transpose_a": bool(mm.attrs.get("transpose_a", False)),
             "transpose_b": bool(mm.attrs.get("transpose_b", False)), "num_args": 1,
             "fused_ops": ["BiasAdd"] + (["Relu"] if last.op == "Relu" else []), "epsilon": 0.0,
             "leakyrelu_alpha": 0.2}
    node = NodeIR(last.name, FUSED_MATMUL, [a, b, bias] + controls, last.device, attrs, list(last.out_dtypes),
                  list(last.out_shapes), last.site)
    fused[last.name] = node
    for x in chain:
        taken.add(x.name)
    for x in chain[:-1]:
        removed.add(x.name)
        mapping[f"{x.name}:0"] = f"{last.name}:0"  # only shape readers remain
        mapping[f"^{x.name}"] = f"^{last.name}"


def _backward(ir, bg, users, keep, taken, fused, removed, mapping):
    rg = ir.get(parse_input(bg.data_inputs[0])[0])
    if rg is None or rg.op != "ReluGrad" or rg.name in taken or bg.name in taken or bg.name in keep:
        return
    if bg.attrs.get("data_format", "NHWC") not in ("NHWC", b"NHWC") or not _same_device_float([rg, bg]):
        return
    if _rank(rg.out_shapes[0]) != 2:
        return
    g, y = rg.data_inputs
    attrs = {"T": rg.attrs.get("T", rg.out_dtypes[0])}
    node = NodeIR(rg.name, FUSED_RELU_GRAD_BIAS_GRAD, [g, y] + _controls([rg, bg]), rg.device, attrs,
                  [rg.out_dtypes[0], bg.out_dtypes[0]], [rg.out_shapes[0], bg.out_shapes[0]], rg.site)
    fused[rg.name] = node
    taken.update((rg.name, bg.name))
    removed.add(bg.name)
    mapping[f"{bg.name}:0"] = f"{rg.name}:1"
    mapping[f"^{bg.name}"] = f"^{rg.name}"


def _sliced(ir, sl, users, keep, taken, fused, removed, mapping):
    """``sl`` is a Slice; compute only its part of the MatMul below, if nothing else reads the product."""
    x, begin, size = sl.data_inputs
    mm = ir.get(parse_input(x)[0])
    if mm is None or mm.op != "MatMul" or mm.name in taken or sl.name in taken or mm.name in keep:
        return
    if parse_input(x)[1] != 0 or users.get(f"{mm.name}:0", []) != [sl.name] or not _same_device_float([mm, sl]):
        return
    if _rank(mm.out_shapes[0]) != 2:
        return
    a, b = mm.data_inputs
    attrs = {"T": mm.attrs.get("T", mm.out_dtypes[0]), "transpose_a": bool(mm.attrs.get("transpose_a", False)),
             "transpose_b": bool(mm.attrs.get("transpose_b", False)),
             "Index": sl.attrs.get("Index", dtypes.int32)}
    fused[sl.name] = NodeIR(sl.name, SLICED_MATMUL, [a, b, begin, size] + _controls([mm, sl]), sl.device, attrs,
                            list(sl.out_dtypes), list(sl.out_shapes), sl.site)
    taken.update((mm.name, sl.name))
    removed.add(mm.name)
    mapping[f"^{mm.name}"] = f"^{sl.name}"


# ---------------------------------------------------------------------------- helpers
def _data_users(ir: GraphIR) -> dict[str, list[str]]:
    """tensor ``"n:k"`` -> names of the nodes that read it (control edges excluded)."""
    out: dict[str, list[str]] = {}
    for n in ir:
        for s in n.data_inputs:
            src, k, _ = parse_input(s)
            out.setdefault(f"{src}:{k}", []).append(n.name)
    return out


def _rank(shape):
    if shape is None:
        return None
    s = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    return s.ndims


def _static(shape):
    if shape is None:
        return None
    s = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    return s.as_tuple() if s.ndims is not None else None


def _is_bias_add(ir, n) -> bool:
    if n.op == "BiasAdd":
        return n.attrs.get("data_format", "NHWC") in ("NHWC", b"NHWC") and _rank(n.out_shapes[0]) == 2
    if n.op not in ("Add", "AddV2") or len(n.data_inputs) != 2:
        return False
    return _bias_operands(ir, n) is not None


def _bias_operands(ir, n):
    """(product tensor, bias tensor) of a bias add, or None."""
    if n.op == "BiasAdd":
        return n.data_inputs[0], n.data_inputs[1]
    out = _static(n.out_shapes[0]) if n.out_shapes else None
    if out is None or len(out) != 2 or out[1] is None:
        return None
    for i in (0, 1):
        x, v = n.data_inputs[i], n.data_inputs[1 - i]
        px, pv = ir.get(parse_input(x)[0]), ir.get(parse_input(v)[0])
        if px is None or pv is None or px.op != "MatMul":
            continue
        xs = _static(px.out_shapes[parse_input(x)[1]])
        vs = _static(pv.out_shapes[parse_input(v)[1]]) if parse_input(v)[1] < len(pv.out_shapes) else None
        if xs is not None and len(xs) == 2 and xs[1] == out[1] and vs == (out[1],):
            return x, v
    return None


def _same_device_float(nodes) -> bool:
    dev = nodes[0].device
    for x in nodes:
        if x.device != dev or len(x.out_dtypes) < 1 or x.out_dtypes[0] not in _FLOATS:
            return False
    return True


def _controls(nodes) -> list[str]:
    names = {x.name for x in nodes}
    return list(dict.fromkeys(f"^{c}" for x in nodes for c in x.control_inputs if c not in names))


def _rewire(n: NodeIR, mapping: dict) -> NodeIR:
    if not mapping:
        return n
    new, changed = [], False
    for s in n.inputs:
        src, k, ctrl = parse_input(s)
        key = f"^{src}" if ctrl else f"{src}:{k}"
        t = mapping.get(key)
        if t is None:
            new.append(s)
        elif not ctrl or t not in new:
            new.append(t)
            changed = True
        else:
            changed = True  # a repeated control edge
    if not changed:
        return n
    return n.copy(inputs=[i for i in new if not i.startswith("^")] + [i for i in new if i.startswith("^")])
