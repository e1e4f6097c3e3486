"""``tf.import_graph_def``: builds the nodes of a GraphDef into the default graph.

Nodes are created through the op registry in topological order (whatever the GraphDef order),
with attrs converted by their OpDef kinds, missing attrs taken from OpDef defaults, output dtypes
inferred from the OpDef and shape functions run. The whole GraphDef is checked before anything
is added, and a failure while adding removes what was added, so a bad GraphDef leaves the graph
as it was. Every problem of a malformed GraphDef is a ValueError (or an OpError, e.g. NotFoundError
for an op sparseflow lacks) naming the node: sizes from the GraphDef (argument counts, tensor
shapes) are checked before anything is allocated, and a constant that repeats one value is not
expanded.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default() as g1:
    ...     x = tf.placeholder(tf.float32, [None], name="x")
    ...     y = tf.identity(x, name="y")
    >>> with tf.Graph().as_default() as g2:
    ...     c = tf.constant([1.0, 2.0], name="c")
    ...     (y2,) = tf.import_graph_def(g1.as_graph_def(), input_map={"x:0": c}, return_elements=["y:0"])
    >>> y2.name, y2.op.inputs[0].name
    ('import/y:0', 'c:0')
"""

from __future__ import annotations

import contextlib
import re

from sparseflow._src.framework import errors
from sparseflow._src.framework.graph import detach_op, get_default_graph
from sparseflow._src.framework.graph_io import (
    FuncRef,
    arg_dtypes,
    node_attrs_to_python,
    output_arg_slots,
    shape_from_proto,
)
from sparseflow._src.framework.ir import parse_input
from sparseflow._src.framework.op_def import get_op_def, is_registered
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.proto import graph_pb2
from sparseflow._src.framework.toposort import CycleError, stable_toposort

_NODE_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_>./-]*$")


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None,
                     producer_op_list=None):
    """Imports ``graph_def`` into the default graph (TensorFlow's ``tf.import_graph_def``).

    Args:
      graph_def: a GraphDef (ours, or any message that serializes to one).
      input_map: {"n:k" or "^n": Tensor/Operation of the default graph} replacing inputs.
      return_elements: tensor names ("n:k") and op names ("n") to return, in order.
      name: name scope of the imported nodes (default "import", made unique; "" for none).
      op_dict: ignored (deprecated in TensorFlow too).
      producer_op_list: an OpList of the producer; attrs our OpDefs lack that hold the
        producer's default value are dropped.
    Returns:
      The Tensors/Operations named by ``return_elements``, or None.
    """
    del op_dict
    graph_def = _as_graph_def(graph_def)
    if input_map is not None and not isinstance(input_map, dict):
        raise TypeError("input_map must be a dictionary mapping strings to Tensor objects.")
    if return_elements is not None and not all(isinstance(x, str) for x in return_elements):
        raise TypeError("return_elements must be a list of strings.")
    input_map = dict(input_map or {})
    if not all(isinstance(k, str) for k in input_map):
        raise TypeError("All keys for input_map must be strings.")
    graph = get_default_graph()
    with graph.name_scope("import" if name is None else name) as scope:
        input_map = _convert_input_map(graph, input_map, name)
        prefix = scope[:-1] if scope else ""
        _check_return_elements(return_elements, graph_def, input_map)
        added_fns = _add_functions(graph, graph_def.library)
        try:
            created = _import_nodes(graph, list(graph_def.node), prefix, input_map, producer_op_list)
        except BaseException:
            for fn_name in added_fns:
                graph._functions.pop(fn_name, None)
            raise
    if return_elements is None:
        return None
    return [_return_element(graph, r, created, input_map) for r in return_elements]


def _check_return_elements(return_elements, graph_def, input_map):
    names = {nd.name for nd in graph_def.node}
    for r in return_elements or ():
        src, _, idx = r.rpartition(":")
        if not (r in input_map or r in names or (src in names and idx.isdigit())):
            raise ValueError(f"Requested return_element {r!r} not found in graph_def.")


def _as_graph_def(graph_def):
    if isinstance(graph_def, graph_pb2.GraphDef):
        return graph_def
    full_name = getattr(getattr(graph_def, "DESCRIPTOR", None), "full_name", "")
    if full_name.endswith(".GraphDef") and hasattr(graph_def, "SerializeToString"):
        return graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
    raise TypeError(f"graph_def must be a GraphDef proto, got {type(graph_def).__name__}.")


def _convert_input_map(graph, input_map, name):
    out = {}
    for key, value in input_map.items():
        if key.startswith("^"):
            if isinstance(value, Tensor):
                value = value.op
            if not isinstance(value, Operation):
                raise TypeError(f"input_map[{key!r}] maps a control input and must be an Operation, got "
                                f"{type(value).__name__}.")
        elif not isinstance(value, Tensor):
            if name == "":
                raise ValueError("tf.import_graph_def() requires a non-empty `name` if `input_map` "
                                 "contains non-Tensor values. Try calling tf.convert_to_tensor() on "
                                 "`input_map` values before calling tf.import_graph_def().")
            from sparseflow._src.framework.tensor_conversion import convert_to_tensor

            with graph.name_scope("_inputs"):
                value = convert_to_tensor(value)
        if value.graph is not graph and not graph.building_function:  # function graphs capture
            raise ValueError(f"input_map[{key!r}] ({value.name}) must be in the graph the GraphDef is "
                             f"imported into.")
        if not key.startswith("^") and ":" not in key:
            key += ":0"
        out[key] = value
    return out


class _Node:
    """A checked NodeDef: its OpDef, Python attrs, and parsed inputs."""

    __slots__ = ("nd", "op_def", "attrs", "data", "control", "shapes")

    def __init__(self, nd, op_def, attrs, data, control, shapes):
        self.nd, self.op_def, self.attrs, self.data, self.control, self.shapes = (
            nd, op_def, attrs, data, control, shapes)


def _check_node(nd, names, input_map, producer_ops) -> _Node:
    if not is_registered(nd.op):
        raise errors.NotFoundError(None, None, f"Op type not registered '{nd.op}' (node '{nd.name}' of "
                                               f"the imported GraphDef): sparseflow does not implement "
                                               f"this op yet.")
    op_def = get_op_def(nd.op)
    attrs = node_attrs_to_python(nd, op_def)
    shapes = attrs.pop("_output_shapes", None)
    if nd.op in producer_ops:
        defaults = producer_ops[nd.op]
        for k in [k for k in attrs if k not in op_def.attrs and k in defaults]:
            if defaults[k] == nd.attr[k]:
                del attrs[k]
    data, control = [], []
    for s in nd.input:
        src, k, is_ctrl = parse_input(s)
        if src == nd.name and f"{src}:{k}" not in input_map:
            raise ValueError(f"Node '{nd.name}' is its own input ('{s}'); a GraphDef must not have cycles.")
        if is_ctrl:
            control.append(src)
            if src not in names and s not in input_map:
                raise ValueError(f"Node '{nd.name}': unknown control input node '{src}'.")
            continue
        if control:
            raise ValueError(f"Node '{nd.name}': control input '^{control[-1]}' comes before data input "
                             f"'{s}'; control inputs must come after all data inputs.")
        if f"{src}:{k}" not in input_map and src not in names:
            raise ValueError(f"Node '{nd.name}': input '{s}' names node '{src}', which is not in the "
                             f"GraphDef.")
        data.append((src, k))
    try:
        want = arg_dtypes(op_def, attrs, outputs=False)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"Node '{nd.name}' (op {nd.op}): bad list attr: {e}") from None
    if len(want) != len(data):
        raise ValueError(f"Node '{nd.name}' (op {nd.op}) has {len(data)} data inputs, but its OpDef and "
                         f"attrs need {len(want)}.")
    return _Node(nd, op_def, attrs, data, control, shapes)


def _topological(nodes: list[_Node], input_map) -> list[_Node]:
    index = {n.nd.name: i for i, n in enumerate(nodes)}

    def sources(i):
        n = nodes[i]
        yield from (index[s] for s, k in n.data if f"{s}:{k}" not in input_map)
        yield from (index[c] for c in n.control if "^" + c not in input_map)

    try:
        return [nodes[i] for i in stable_toposort(len(nodes), sources)]
    except CycleError as e:
        stuck = [nodes[i].nd.name for i in e.stuck]
        raise ValueError(f"GraphDef has a cycle through nodes: {', '.join(stuck[:10])}"
                         f"{' ...' if len(stuck) > 10 else ''}.") from None


def _producer_defaults(producer_op_list) -> dict:
    out = {}
    for op in getattr(producer_op_list, "op", ()):
        out[op.name] = {a.name: a.default_value for a in op.attr if a.HasField("default_value")}
    return out


def _import_nodes(graph, node_defs, prefix: str, input_map: dict, producer_op_list=None) -> dict:
    """Checks and creates ``node_defs`` in ``graph``; returns {GraphDef node name: Operation}."""
    names = set()
    for nd in node_defs:
        if not _NODE_NAME.match(nd.name):
            raise ValueError(f"Node name '{nd.name}' is not valid (it must match "
                             f"[A-Za-z0-9.][A-Za-z0-9_>./-]*).")
        if nd.name in names:
            raise ValueError(f"Duplicate node name in GraphDef: '{nd.name}'.")
        names.add(nd.name)
    producer_ops = _producer_defaults(producer_op_list)
    checked = []
    for nd in node_defs:
        with _about(nd):
            checked.append(_check_node(nd, names, input_map, producer_ops))
    used = {s for n in checked for s in [f"{a}:{k}" for a, k in n.data] + ["^" + c for c in n.control]}
    unused = sorted(k for k in input_map if k not in used and parse_input(k)[0] not in names)
    if unused:
        raise ValueError(f"Attempted to map inputs that were not found in graph_def: [{', '.join(unused)}]")
    order = _topological(checked, input_map)
    created: dict[str, Operation] = {}
    added: list[Operation] = []
    names_in_use = dict(graph._names_in_use)
    try:
        for n in order:
            with _about(n.nd):
                op = _create(graph, n, prefix, created, input_map, names)
            created[n.nd.name] = op
            added.append(op)
        _apply_colocation(created)
    except BaseException:
        _remove_ops(graph, added)
        graph._names_in_use = names_in_use
        raise
    return created


@contextlib.contextmanager
def _about(nd):
    """Errors while checking or creating node ``nd`` name it: ValueError/TypeError get the node's name
    when they lack it, OpErrors pass, and any other failure (a shape function meeting values it does
    not expect) becomes a ValueError about the node."""
    try:
        yield
    except errors.OpError:
        raise
    except (ValueError, TypeError) as e:
        if f"'{nd.name}'" in str(e) or f" {nd.name} " in f" {e} ":
            raise
        raise type(e)(f"Node '{nd.name}' (op {nd.op}): {e}") from e
    except MemoryError:
        raise errors.ResourceExhaustedError(None, None, f"Node '{nd.name}' (op {nd.op}) of the imported GraphDef "
                                                        f"needs more memory than is available.") from None
    except Exception as e:  # noqa: BLE001 - a malformed node is reported as one, whatever broke
        raise ValueError(f"Node '{nd.name}' (op {nd.op}) is malformed: {type(e).__name__}: {e}") from e


def _create(graph, n: _Node, prefix, created, input_map, names) -> Operation:
    nd = n.nd
    inputs = []
    for src, k in n.data:
        t = input_map.get(f"{src}:{k}")
        if t is None:
            outs = created[src]._outputs
            if k >= len(outs):
                raise ValueError(f"Node '{nd.name}': input '{src}:{k}' does not exist; node '{src}' has "
                                 f"{len(outs)} outputs.")
            t = outs[k]
        inputs.append(t)
    for i, (t, want) in enumerate(zip(inputs, arg_dtypes(n.op_def, n.attrs, outputs=False))):
        ok = t.dtype == want if want.is_ref_dtype else t.dtype.base_dtype == want
        if not ok:
            raise ValueError(f"Input {i} of node {nd.name} was passed {t.dtype.name} from {t.name} "
                             f"incompatible with expected {want.name}.")
    control = []
    for c in n.control:
        op = input_map.get("^" + c)
        control.append(op if op is not None else created[c])
    attrs = dict(n.attrs)
    if "_class" in attrs:
        attrs["_class"] = [_renamed_loc(v, prefix, names, created) for v in attrs["_class"]]
    full = f"{prefix}/{nd.name}" if prefix else nd.name
    saved_stack, graph._name_stack = graph._name_stack, ""
    try:
        unique = graph.unique_name(full)
    finally:
        graph._name_stack = saved_stack
    op = graph._create_op_internal(nd.op, inputs, arg_dtypes(n.op_def, n.attrs, outputs=True), attrs,
                                   unique + "/", n.op_def, extra_control_inputs=control)
    if graph._device_stack:
        from sparseflow._src.framework.device_spec import merge_device

        op._device = merge_device(op._device, nd.device) if nd.device else op._device
    else:
        op._device = nd.device
    if n.shapes is not None and len(n.shapes) == len(op._outputs):
        for t, s in zip(op._outputs, n.shapes):
            try:
                t.set_shape(s)
            except ValueError:
                pass  # a recorded shape that disagrees with the shape fn: keep the shape fn's
    return op


def _renamed_loc(value, prefix, names, created) -> str:
    """A colocation entry "loc:@n" naming an imported node, renamed like that node."""
    s = value.decode() if isinstance(value, bytes) else str(value)
    target = s[5:] if s.startswith("loc:@") else None
    if target in created:
        return "loc:@" + created[target].name
    if target in names and prefix:
        return f"loc:@{prefix}/{target}"
    return s


def _apply_colocation(created):
    """Ops colocated ("_class": loc:@n) with an imported op n take n's device, like TensorFlow."""
    by_name = {op.name: op for op in created.values()}
    for op in created.values():
        for v in op._attrs.get("_class", ()):
            s = v.decode() if isinstance(v, bytes) else str(v)
            other = by_name.get(s[5:]) if s.startswith("loc:@") else None
            if other is not None and other is not op and other.device and not op.device:
                op._device = other.device


def _remove_ops(graph, ops):
    """Takes back ops added by a failed import (the graph is append-only otherwise)."""
    if not ops:
        return
    gone = set(ops)
    for op in reversed(ops):
        detach_op(op)
        graph._nodes_by_name.pop(op.name, None)
    graph._nodes_in_order = [o for o in graph._nodes_in_order if o not in gone]
    graph._mutated()


def _return_element(graph, name, created, input_map):
    if name in input_map:
        return input_map[name]
    if ":" in name:
        src, _, idx = name.rpartition(":")
        op = created.get(src)
        if op is not None and idx.isdigit() and int(idx) < len(op._outputs):
            return op._outputs[int(idx)]
    elif name in created:
        return created[name]
    raise ValueError(f"Requested return_element {name!r} not found in graph_def.")


# ---------------------------------------------------------------------------------------- functions
def _add_functions(graph, library) -> list[str]:
    added = []
    for fn in functions_from_library(library, graph, skip=set(graph._functions)):
        graph._add_function(fn)
        added.append(fn.name)
    return added


def functions_from_library(library, outer_graph, skip=()) -> list:
    """GraphFunctions built from the FunctionDefs of ``library`` (those named in ``skip`` are left
    out). Input args become placeholders (captured inputs of the original are ordinary inputs)."""
    out = []
    for f in library.function:
        if f.signature.name in skip:
            continue
        try:
            out.append(function_from_function_def(f, outer_graph))
        except errors.OpError as e:
            raise type(e)(None, None, f"In library function '{f.signature.name}': {e.message}") from None
        except (ValueError, TypeError) as e:
            raise type(e)(f"In library function '{f.signature.name}': {e}") from None
        except Exception as e:  # noqa: BLE001 - a malformed FunctionDef, whatever broke
            raise ValueError(f"In library function '{f.signature.name}': {type(e).__name__}: {e}") from None
    return out


def function_from_function_def(fdef, outer_graph):
    from sparseflow._src.framework.function import FuncGraph, GraphFunction
    from sparseflow._src.framework.graph_io import dtype_from_enum
    from sparseflow._src.framework.tensor_shape import unknown_shape

    sig = fdef.signature
    fg = FuncGraph(sig.name, outer_graph)
    args = {}
    inputs = []
    for i, arg in enumerate(sig.input_arg):
        dt = dtype_from_enum(arg.type)
        shapes = fdef.arg_attr[i].attr["_output_shapes"].list.shape if i in fdef.arg_attr else ()
        shape = shape_from_proto(shapes[0]) if len(shapes) else unknown_shape()
        op = fg._create_op_internal("Placeholder", [], [dt], {"dtype": dt, "shape": shape},
                                    fg.unique_name(arg.name) + "/", get_op_def("Placeholder"))
        t = op._outputs[0]
        args[arg.name] = t
        inputs.append(t)
    body = {nd.name: nd for nd in fdef.node_def}
    slots = {}
    for nd in fdef.node_def:
        if is_registered(nd.op):
            op_def = get_op_def(nd.op)
            slots[nd.name] = {s: i for i, s in enumerate(output_arg_slots(op_def, node_attrs_to_python(nd,
                                                                                                    op_def)))}

    def to_graph_ref(ref: str) -> str:
        ctrl = ref.startswith("^")
        parts = ref.lstrip("^").split(":")
        if parts[0] in args and parts[0] not in body:
            return f"^{parts[0]}" if ctrl else f"{parts[0]}:0"
        if ctrl:
            return ref
        if len(parts) == 3 and parts[2].isdigit():
            flat = slots.get(parts[0], {}).get((parts[1], int(parts[2])))
        elif len(parts) == 2:
            flat = slots.get(parts[0], {}).get((parts[1], 0))
        else:
            flat = None
        if flat is None:
            raise ValueError(f"Function '{sig.name}': cannot resolve input '{ref}'.")
        return f"{parts[0]}:{flat}"

    nodes = []
    for nd in fdef.node_def:
        copy = type(nd)()
        copy.CopyFrom(nd)
        del copy.input[:]
        copy.input.extend(to_graph_ref(r) for r in nd.input)
        nodes.append(copy)
    arg_map = {f"{a}:0": t for a, t in args.items()}
    arg_map.update({f"^{a}": t.op for a, t in args.items()})
    used = {r for n in nodes for r in n.input}
    created = _import_nodes(fg, nodes, "", {k: v for k, v in arg_map.items() if k in used})
    outputs = []
    for arg in sig.output_arg:
        ref = to_graph_ref(fdef.ret[arg.name])
        src, k, _ = parse_input(ref)
        outputs.append(args[src] if src in args and src not in created else created[src]._outputs[k])
    control_outputs = [created[fdef.control_ret[c]] for c in sig.control_output]
    return GraphFunction(sig.name, fg, inputs, outputs, control_outputs)


__all__ = ["import_graph_def", "FuncRef"]
