"""apply_op: builds an Operation from its OpDef, converting inputs and inferring type attrs,
the way TensorFlow's op-def library does for generated wrappers.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     op = apply_op("Add", [tf.constant(1.0), 2.0])   # 2.0 becomes a float32 Const "Add/y"
    >>> op.name, op.inputs[1].op.name, op.get_attr("T").name
    ('Add', 'Add/y', 'float32')
"""

from __future__ import annotations

import contextlib

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import get_op_def
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import as_shape


def _graph_for(inputs):
    default = get_default_graph()
    if default.building_function:
        return default  # function bodies capture outer tensors
    for v in inputs:
        if isinstance(v, Tensor):
            return v.graph
        if isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, Tensor):
                    return x.graph
        g = getattr(v, "graph", None)
        if g is not None and hasattr(g, "_create_op_internal"):
            return g
    return default


def _known_dtype(value):
    if isinstance(value, Tensor):
        return value.dtype.base_dtype
    d = getattr(value, "dtype", None)
    if isinstance(d, dtypes.DType) and hasattr(value, "_as_graph_element"):
        return d.base_dtype
    return None


def _normalize_attr(kind: str, value):
    if value is None:
        return as_shape(None) if kind == "shape" else None  # a shape attr of None: unknown rank
    if kind == "type":
        return dtypes.as_dtype(value)
    if kind == "shape":
        return as_shape(value)
    if kind == "int":
        return int(value)
    if kind == "float":  # an AttrValue float is 32 bits: kernels see TensorFlow's rounded value (0.3 -> 0.30000001)
        return float(np.float32(value))
    if kind == "bool":
        return bool(value)
    if kind == "string":
        return value.decode() if isinstance(value, bytes) else str(value)
    if kind == "tensor":
        return value if isinstance(value, np.ndarray) else np.asarray(value)
    if kind.startswith("list("):
        inner = kind[5:-1]
        return [_normalize_attr(inner, v) for v in value]
    return value


def apply_op(op_type: str, inputs: list, attrs: dict | None = None, name: str | None = None,
             graph=None, output_dtypes=None) -> Operation:
    """Creates op ``op_type`` with positional ``inputs`` (Tensors or values) and ``attrs``."""
    op_def = get_op_def(op_type)
    attrs = dict(attrs or {})
    if len(inputs) != len(op_def.input_args):
        raise TypeError(f"{op_type} takes {len(op_def.input_args)} inputs "
                        f"({', '.join(a.name for a in op_def.input_args)}), got {len(inputs)}.")
    if graph is None:
        graph = _graph_for(inputs)
    # Type attrs known from any input that already is a tensor (lets `f(1.0, x64)` convert 1.0 to x's type).
    hinted: dict[str, dtypes.DType] = {}
    for arg, v in zip(op_def.input_args, inputs):
        if arg.type_attr and arg.type_attr not in attrs and arg.type_attr not in hinted:
            vals = v if (arg.number_attr and isinstance(v, (list, tuple))) else [v]
            for x in vals:
                d = _known_dtype(x)
                if d is not None:
                    hinted[arg.type_attr] = d
                    break
    for k, a in op_def.attrs.items():
        if k in attrs:
            attrs[k] = _normalize_attr(a.type, attrs[k])

    with graph.as_default(), graph.name_scope(name if name else op_type) as scope:
        converted: list[Tensor] = []
        for arg, v in zip(op_def.input_args, inputs):
            if arg.is_list:
                if not isinstance(v, (list, tuple)):
                    raise TypeError(f"Expected list for '{arg.name}' argument to '{op_type}' Op, not {v!r}.")
                if arg.number_attr:
                    n = len(v)
                    if arg.number_attr in attrs and attrs[arg.number_attr] != n:
                        raise ValueError(f"List argument '{arg.name}' to '{op_type}' Op has length {n}, but "
                                         f"attr {arg.number_attr} is {attrs[arg.number_attr]}.")
                    attrs[arg.number_attr] = n
                    want = arg.type or attrs.get(arg.type_attr) or hinted.get(arg.type_attr)
                    ts = [_convert_arg(x, want, arg, op_type, f"{arg.name}_{i}" if n > 1 else arg.name)
                          for i, x in enumerate(v)]
                    if arg.type_attr and ts:
                        _set_type_attr(attrs, arg.type_attr, ts[0].dtype.base_dtype, arg, op_type)
                        for t in ts[1:]:
                            _set_type_attr(attrs, arg.type_attr, t.dtype.base_dtype, arg, op_type)
                    elif arg.type_attr and arg.type_attr not in attrs:
                        default = op_def.attrs[arg.type_attr].default
                        if isinstance(default, dtypes.DType):
                            attrs[arg.type_attr] = default
                else:
                    wants = attrs.get(arg.type_list_attr)
                    ts = [_convert_arg(x, wants[i] if wants else None, arg, op_type, f"{arg.name}_{i}")
                          for i, x in enumerate(v)]
                    attrs[arg.type_list_attr] = [t.dtype.base_dtype for t in ts]
                converted.extend(ts)
            else:
                want = arg.type or attrs.get(arg.type_attr) or hinted.get(arg.type_attr)
                preferred = None
                if want is None and arg.type_attr:
                    default = op_def.attrs[arg.type_attr].default
                    preferred = default if isinstance(default, dtypes.DType) else None
                t = _convert_arg(v, want, arg, op_type, arg.name, preferred)
                if arg.type_attr:
                    _set_type_attr(attrs, arg.type_attr, t.dtype.base_dtype, arg, op_type)
                converted.append(t)

        for k, a in op_def.attrs.items():
            if k not in attrs:
                if not a.has_default:
                    raise TypeError(f"Missing required attr '{k}' for op '{op_type}' (named "
                                    f"'{scope[:-1]}').")
                attrs[k] = a.default
            _check_allowed(op_type, a, attrs[k])

        if output_dtypes is None:
            output_dtypes = []
            for arg in op_def.output_args:
                if arg.type_list_attr:
                    ds = list(attrs[arg.type_list_attr])
                else:
                    d = arg.type if arg.type is not None else attrs[arg.type_attr]
                    ds = [d] * (attrs[arg.number_attr] if arg.number_attr else 1)
                output_dtypes.extend(d._as_ref if arg.is_ref else d for d in ds)
        # An op that takes a ref (a variable's l-value) lives with that variable, as in TensorFlow.
        ref_inputs = [t for arg, t in zip(_flat_args(op_def, attrs), converted) if arg.is_ref]
        if not ref_inputs:
            return graph._create_op_internal(op_type, converted, output_dtypes, attrs, scope, op_def)
        with contextlib.ExitStack() as stack:
            for t in ref_inputs:
                stack.enter_context(graph.colocate_with(t.op))
            return graph._create_op_internal(op_type, converted, output_dtypes, attrs, scope, op_def)


def _flat_args(op_def, attrs):
    """The input arg of each flat input (a list arg repeated once per element)."""
    for arg in op_def.input_args:
        if arg.number_attr:
            yield from [arg] * attrs[arg.number_attr]
        elif arg.type_list_attr:
            yield from [arg] * len(attrs[arg.type_list_attr])
        else:
            yield arg


def _convert_arg(value, want, arg, op_type, const_name, preferred=None) -> Tensor:
    if isinstance(value, Tensor) and want is not None and value.dtype.base_dtype != want:
        if arg.type is not None:
            raise TypeError(f"Input '{arg.name}' of '{op_type}' Op has type {value.dtype.base_dtype.name} that "
                            f"does not match expected type of {want.name}.")
        raise TypeError(f"Input '{arg.name}' of '{op_type}' Op has type {value.dtype.base_dtype.name} that does "
                        f"not match type {want.name} of the other arguments ({arg.type_attr}).")
    try:
        t = convert_to_tensor(value, dtype=want, name=const_name, preferred_dtype=preferred, as_ref=arg.is_ref)
    except (TypeError, ValueError) as e:
        raise type(e)(f"Input '{arg.name}' of '{op_type}' Op: {e}") from e
    if arg.is_ref and not t.dtype.is_ref_dtype:
        raise TypeError(f"Input '{arg.name}' of '{op_type}' Op requires l-value input (a variable), got "
                        f"{t.name} of type {t.dtype.name}.")
    return t


def _set_type_attr(attrs, attr, dtype, arg, op_type):
    have = attrs.get(attr)
    if have is None:
        attrs[attr] = dtype
    elif have != dtype:
        raise TypeError(f"Input '{arg.name}' of '{op_type}' Op has type {dtype.name} that does not match "
                        f"type {have.name} of the other arguments ({attr}).")


def _check_allowed(op_type, a, value):
    if value is None:
        return
    values = value if a.type.startswith("list(") else [value]
    for v in values if a.allowed_values is not None else ():
        if v not in a.allowed_values:
            allowed = ", ".join(getattr(x, "name", str(x)) for x in a.allowed_values)
            shown = getattr(v, "name", v)
            raise TypeError(f"Value passed to parameter of '{op_type}' Op (attr {a.name}) has "
                            f"{'DataType ' if a.type.endswith('type') or a.type == 'type' else ''}{shown} "
                            f"not in list of allowed values: {allowed}")
    if a.minimum is not None and a.type == "int" and value < a.minimum:
        raise ValueError(f"Attr '{a.name}' of '{op_type}' Op must be >= {a.minimum}, got {value}.")
    if a.minimum is not None and a.type.startswith("list(") and len(value) < a.minimum:
        raise ValueError(f"Attr '{a.name}' of '{op_type}' Op must have at least {a.minimum} elements, got "
                         f"{len(value)}.")


def op_outputs(op: Operation):
    """A wrapper's return value: the op if it has no outputs, the tensor if one, else a list."""
    outs = op._outputs
    if not outs:
        return op
    if len(outs) == 1:
        return outs[0]
    return list(outs)
