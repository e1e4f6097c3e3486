"""GraphDef export, and conversions between Python attr values and protobuf messages.

Python side: DType, TensorShape, np.ndarray (tensors; strings are object arrays of bytes), str,
int, float, bool, lists of these, and function names (``FuncRef``). Proto side: AttrValue,
TensorShapeProto, TensorProto and NameAttrList with TensorFlow's field numbers. ``graph_to_graph_def``
writes nodes in creation order with TensorFlow's input strings ("n", "n:k", "^n").

Example:
    >>> import numpy as np
    >>> p = make_tensor_proto(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> p.dtype, [d.size for d in p.tensor_shape.dim], make_ndarray(p)[1, 2]
    (1, [2, 3], np.float32(5.0))
    >>> attr_value_from_python([1, 2]).list.i
    [1, 2]
"""

from __future__ import annotations

import numpy as np
from google.protobuf import text_format

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import get_op_def, is_registered
from sparseflow._src.framework.proto import (
    attr_value_pb2,
    function_pb2,
    graph_pb2,
    node_def_pb2,
    tensor_pb2,
    tensor_shape_pb2,
)
from sparseflow._src.framework.tensor_proto import (  # noqa: F401 - re-exported: graph_io's public names
    MAX_EXPANDED_BYTES,
    dtype_from_enum,
    make_ndarray,
    make_tensor_proto,
    shape_from_proto,
    shape_to_proto,
)
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape

AttrValue = attr_value_pb2.AttrValue
NameAttrList = attr_value_pb2.NameAttrList
TensorProto = tensor_pb2.TensorProto
TensorShapeProto = tensor_shape_pb2.TensorShapeProto


class FuncRef(str):
    """The name of a library function used as a "func" attr value (serialized as NameAttrList)."""

    __slots__ = ()

    def __repr__(self):
        return f"FuncRef({str.__repr__(self)})"


# ---------------------------------------------------------------------------------------- attrs
def _infer_kind(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, FuncRef) or isinstance(value, NameAttrList) or hasattr(value, "graph") and hasattr(
            value, "outputs"):
        return "func"
    if isinstance(value, dtypes.DType):
        return "type"
    if isinstance(value, (TensorShape, TensorShapeProto)):
        return "shape"
    if isinstance(value, (np.ndarray, TensorProto)):
        return "tensor"
    if isinstance(value, (str, bytes)):
        return "string"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, (list, tuple)):
        return f"list({_infer_kind(value[0]) if len(value) else 'int'})"
    raise TypeError(f"Cannot convert attr value {value!r} of type {type(value).__name__} to an AttrValue.")


def _as_bytes(value) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _func_proto(value) -> NameAttrList:
    if isinstance(value, NameAttrList):
        return value
    return NameAttrList(name=value if isinstance(value, str) else value.name)


def _set_scalar(av, kind: str, value):
    if kind == "string":
        av.s = _as_bytes(value)
    elif kind == "int":
        av.i = int(value)
    elif kind == "float":
        av.f = float(value)
    elif kind == "bool":
        av.b = bool(value)
    elif kind == "type":
        av.type = dtypes.as_dtype(value).as_datatype_enum
    elif kind == "shape":
        av.shape.CopyFrom(value if isinstance(value, TensorShapeProto) else shape_to_proto(value))
    elif kind == "tensor":
        av.tensor.CopyFrom(make_tensor_proto(value))
    elif kind == "func":
        av.func.CopyFrom(_func_proto(value))
    else:
        raise TypeError(f"Unknown attr kind {kind!r}.")


def _append(lv, kind: str, value):
    if kind == "string":
        lv.s.append(_as_bytes(value))
    elif kind == "int":
        lv.i.append(int(value))
    elif kind == "float":
        lv.f.append(float(value))
    elif kind == "bool":
        lv.b.append(bool(value))
    elif kind == "type":
        lv.type.append(dtypes.as_dtype(value).as_datatype_enum)
    elif kind == "shape":
        lv.shape.add().CopyFrom(value if isinstance(value, TensorShapeProto) else shape_to_proto(value))
    elif kind == "tensor":
        lv.tensor.add().CopyFrom(make_tensor_proto(value))
    elif kind == "func":
        lv.func.add().CopyFrom(_func_proto(value))
    else:
        raise TypeError(f"Unknown list attr kind {kind!r}.")


def attr_value_from_python(value, kind: str | None = None) -> AttrValue:
    """A Python attr value -> AttrValue; ``kind`` is the OpDef attr type (inferred when None)."""
    if isinstance(value, AttrValue):
        return value
    av = AttrValue()
    kind = kind or _infer_kind(value)
    if kind.startswith("list("):
        av.list.SetInParent()
        inner = kind[5:-1]
        for v in value:
            _append(av.list, inner, v)
    else:
        _set_scalar(av, kind, value)
    return av


_LIST_FIELDS = ("s", "i", "f", "b", "type", "shape", "tensor", "func")
_FIELD_OF_KIND = {"string": "s", "int": "i", "float": "f", "bool": "b", "type": "type", "shape": "shape",
                  "tensor": "tensor", "func": "func"}


def _scalar_to_python(field: str, v):
    if field == "s":
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return bytes(v)
    if field == "type":
        return dtype_from_enum(v)
    if field == "shape":
        return shape_from_proto(v)
    if field == "tensor":
        arr = make_ndarray(v)
        arr.flags.writeable = False
        return arr
    if field == "func":
        return FuncRef(v.name) if not v.attr else v
    if field == "f":
        return float(v)
    return v


def attr_value_to_python(av: AttrValue, kind: str | None = None):
    """AttrValue -> Python value; with ``kind`` a mismatching value is a ValueError."""
    which = av.WhichOneof("value")
    if which is None:
        if kind is None:
            return av  # an empty value of an attr no OpDef declares: kept as it is
        if kind.startswith("list("):
            return []
        raise ValueError(f"AttrValue has no value (expected {kind}).")
    if which == "placeholder":
        return av
    if which == "list":
        lv = av.list
        if kind is not None and not kind.startswith("list("):
            raise ValueError(f"AttrValue had value with type 'list' when '{kind}' expected.")
        if kind is not None and kind.startswith("list("):
            fields = [_FIELD_OF_KIND.get(kind[5:-1], "")]
        else:
            fields = _LIST_FIELDS
        for f in fields:
            values = getattr(lv, f, ())
            if len(values):
                return [_scalar_to_python(f, v) for v in values]
        if kind is not None and kind.startswith("list(") and any(len(getattr(lv, f)) for f in _LIST_FIELDS):
            raise ValueError(f"AttrValue holds a list of another kind than {kind}.")
        return []
    if kind is not None and (kind.startswith("list(") or _FIELD_OF_KIND.get(kind) != which):
        names = {v: k for k, v in _FIELD_OF_KIND.items()}
        raise ValueError(f"AttrValue had value with type '{names.get(which, which)}' when '{kind}' expected.")
    return _scalar_to_python(which, getattr(av, which))


def attr_for_get_attr(value):
    """What TensorFlow's ``Operation.get_attr`` returns for a stored Python attr value: bytes for
    strings, DType, TensorShapeProto, TensorProto, NameAttrList, and lists thereof."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, FuncRef):
        return NameAttrList(name=value)
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, dtypes.DType, NameAttrList, TensorShapeProto, TensorProto)):
        return value
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, TensorShape):
        return shape_to_proto(value)
    if isinstance(value, np.ndarray):
        return make_tensor_proto(value)
    if isinstance(value, (list, tuple)):
        return [attr_for_get_attr(v) for v in value]
    if isinstance(value, AttrValue):
        return attr_for_get_attr(attr_value_to_python(value)) if value.WhichOneof("value") != "placeholder" \
            else value
    if hasattr(value, "graph") and hasattr(value, "name"):
        return NameAttrList(name=value.name)
    return value


def node_attrs_to_python(node: node_def_pb2.NodeDef, op_def) -> dict:
    """The attrs of ``node`` as Python values, with the OpDef's defaults for attrs it leaves out.

    Attrs the OpDef does not declare are kept with inferred kinds (TensorFlow adds attrs over
    time, e.g. MatMul's ``grad_a``); a required attr that is missing is a ValueError.
    """
    attrs = {}
    declared = op_def.attrs if op_def is not None else {}
    for name in sorted(node.attr):
        a = declared.get(name)
        try:
            attrs[name] = attr_value_to_python(node.attr[name], a.type if a is not None else None)
        except (ValueError, TypeError) as e:
            raise ValueError(f"Node '{node.name}' (op {node.op}): attr '{name}': {e}") from None
    for name, a in declared.items():
        if name not in attrs:
            if not a.has_default:
                raise ValueError(f"NodeDef '{node.name}' is missing attr '{name}' of op {node.op} (it has no "
                                 f"default value).")
            attrs[name] = list(a.default) if isinstance(a.default, list) else a.default
        if a.allowed_values is not None and attrs[name] is not None:
            values = attrs[name] if a.type.startswith("list(") else [attrs[name]]
            bad = [v for v in values if v not in a.allowed_values]
            if bad:
                allowed = ", ".join(getattr(x, "name", str(x)) for x in a.allowed_values)
                shown = getattr(bad[0], "name", bad[0])
                raise ValueError(f"Node '{node.name}' (op {node.op}): value {shown} of attr '{name}' is not "
                                 f"in the allowed values: {allowed}.")
    return attrs


MAX_ARG_COUNT = 1 << 16  # tensors one input or output arg of a node may stand for


def _arg_count(arg, attrs) -> int:
    if arg.number_attr:
        n = attrs[arg.number_attr]
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or not 0 <= n <= MAX_ARG_COUNT:
            raise ValueError(f"attr '{arg.number_attr}' = {n!r} gives the number of tensors of arg '{arg.name}'; it "
                             f"must be an int in [0, {MAX_ARG_COUNT}].")
        return int(n)
    if arg.type_list_attr:
        return len(attrs[arg.type_list_attr])
    return 1


def arg_dtypes(op_def, attrs, outputs: bool) -> list[dtypes.DType]:
    """Flattened dtypes of the inputs (or outputs) of a node with ``attrs`` (refs as ref dtypes)."""
    out = []
    for arg in op_def.output_args if outputs else op_def.input_args:
        if arg.type_list_attr:
            ds = [dtypes.as_dtype(d) for d in attrs[arg.type_list_attr]]
        else:
            d = arg.type if arg.type is not None else dtypes.as_dtype(attrs[arg.type_attr])
            ds = [d] * _arg_count(arg, attrs)
        out.extend(d._as_ref if arg.is_ref else d for d in ds)
    return out


def output_arg_slots(op_def, attrs) -> list[tuple[str, int]]:
    """(output arg name, index within the arg) of each flattened output: the function-body names."""
    return [(arg.name, j) for arg in op_def.output_args for j in range(_arg_count(arg, attrs))]


# ---------------------------------------------------------------------------------------- export
def _attr_kinds(op_type: str) -> dict:
    if not is_registered(op_type):
        return {}
    return {name: a.type for name, a in get_op_def(op_type).attrs.items()}


def _fill_node(nd, name, op_type, inputs, device, attrs):
    nd.name = name
    nd.op = op_type
    nd.input.extend(inputs)
    if device:
        nd.device = device
    kinds = _attr_kinds(op_type)
    for k in sorted(attrs):  # sorted: text format output is then stable too
        if attrs[k] is not None:
            nd.attr[k].CopyFrom(attr_value_from_python(attrs[k], kinds.get(k)))
    return nd


def _input_strings(op) -> list[str]:
    ins = [t.op.name if t.value_index == 0 else t.name for t in op._inputs]
    return ins + ["^" + c.name for c in op._control_inputs]


def op_to_node_def(op) -> node_def_pb2.NodeDef:
    """The NodeDef of an Operation (TensorFlow's ``op.node_def``)."""
    return _fill_node(node_def_pb2.NodeDef(), op.name, op.type, _input_strings(op), op.device, op._attrs)


def graph_to_graph_def(graph, add_shapes: bool = False) -> graph_pb2.GraphDef:
    """The GraphDef of ``graph``: nodes in creation order, versions, and its function library."""
    gd = graph_pb2.GraphDef()
    for op in graph.get_operations():
        nd = _fill_node(gd.node.add(), op.name, op.type, _input_strings(op), op.device, op._attrs)
        if add_shapes:
            shapes = nd.attr["_output_shapes"].list
            shapes.SetInParent()
            shapes.shape.extend(shape_to_proto(t.shape) for t in op._outputs)
    gd.versions.CopyFrom(graph.graph_def_versions)
    _add_library(gd, getattr(graph, "_functions", {}))
    return gd


def _add_library(gd, functions: dict):
    seen: dict = {}
    stack = list(functions.values())
    while stack:
        fn = stack.pop()
        if fn.name not in seen:
            seen[fn.name] = fn
            stack.extend(getattr(fn.graph, "_functions", {}).values())
    for name in sorted(seen):
        gd.library.function.add().CopyFrom(function_to_function_def(seen[name]))


def _arg_name(name: str, taken: set) -> str:
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in name.lower()) or "arg"
    if not base[0].isalpha():
        base = "arg_" + base
    out, i = base, 1
    while out in taken:
        out, i = f"{base}_{i}", i + 1
    taken.add(out)
    return out


def function_to_function_def(fn) -> function_pb2.FunctionDef:
    """A GraphFunction as a FunctionDef: placeholders (explicit, then captured) become input args,
    body inputs use the function format ("arg", "node:out_arg:k", "^node")."""
    fdef = function_pb2.FunctionDef()
    sig = fdef.signature
    sig.name = fn.name
    taken: set = set()
    arg_of: dict = {}  # placeholder op -> arg name
    for i, t in enumerate(list(fn.inputs) + list(fn.captured_placeholders)):
        name = _arg_name(t.op.name, taken)
        arg_of[t.op] = name
        sig.input_arg.add(name=name, type=t.dtype.base_dtype.as_datatype_enum)
        fdef.arg_attr[i].attr["_output_shapes"].list.shape.add().CopyFrom(shape_to_proto(t.shape))

    def ref(t) -> str:
        if t.op in arg_of:
            return arg_of[t.op]
        if t.op.op_def is None:
            return f"{t.op.name}:output:{t.value_index}"
        arg, j = output_arg_slots(t.op.op_def, t.op._attrs)[t.value_index]
        return f"{t.op.name}:{arg}:{j}"

    stateful = False
    for op in fn.graph.get_operations():
        if op in arg_of:
            continue
        stateful = stateful or bool(op.op_def is not None and op.op_def.is_stateful)
        ins = [ref(t) for t in op._inputs] + ["^" + arg_of.get(c, c.name) for c in op._control_inputs]
        _fill_node(fdef.node_def.add(), op.name, op.type, ins, op.device, op._attrs)
    for i, t in enumerate(fn.outputs):
        name = _arg_name(f"output_{i}", taken)
        sig.output_arg.add(name=name, type=t.dtype.base_dtype.as_datatype_enum)
        fdef.ret[name] = ref(t)
    for op in fn.control_outputs:
        sig.control_output.append(op.name)
        fdef.control_ret[op.name] = op.name
    sig.is_stateful = stateful
    return fdef


# ---------------------------------------------------------------------------------------- GraphIR
def ir_to_graph_def(ir) -> graph_pb2.GraphDef:
    """The GraphDef of a GraphIR (framework/ir.py)."""
    gd = graph_pb2.GraphDef()
    for n in ir.nodes:
        ins = [i[:-2] if i.endswith(":0") and not i.startswith("^") else i for i in n.inputs]
        _fill_node(gd.node.add(), n.name, n.op, ins, n.device, n.attrs)
    if ir.versions is not None:
        gd.versions.CopyFrom(ir.versions)
    _add_library(gd, ir.library)
    return gd


def graph_def_to_ir(graph_def):
    """A GraphIR of a GraphDef; nodes of unregistered op types keep their attrs untyped."""
    from sparseflow._src.framework.ir import GraphIR, NodeIR, parse_input

    nodes = []
    for nd in graph_def.node:
        op_def = get_op_def(nd.op) if is_registered(nd.op) else None
        attrs = node_attrs_to_python(nd, op_def)
        shapes = attrs.pop("_output_shapes", None)
        outs = arg_dtypes(op_def, attrs, outputs=True) if op_def is not None else []
        ins = []
        for s in nd.input:
            src, k, ctrl = parse_input(s)
            ins.append(s if ctrl else f"{src}:{k}")
        if shapes is None or len(shapes) != len(outs):
            shapes = [unknown_shape()] * len(outs)
        nodes.append(NodeIR(nd.name, nd.op, ins, nd.device, attrs, outs, shapes))
    library = {}
    if len(graph_def.library.function):
        from sparseflow._src.framework.graph import Graph
        from sparseflow._src.framework.graph_import import functions_from_library

        library = {f.name: f for f in functions_from_library(graph_def.library, Graph())}
    versions = graph_def.versions if graph_def.HasField("versions") else None
    return GraphIR(nodes, library, versions)


# ---------------------------------------------------------------------------------------- text
def message_to_text(message) -> str:
    """Protobuf text format (``node { name: "x" ... }``), as ``tf.train.write_graph(as_text=True)``."""
    return text_format.MessageToString(message)


def text_to_message(text, message):
    """Parses text format into ``message`` (an instance) and returns it."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    return text_format.Parse(text, message)
