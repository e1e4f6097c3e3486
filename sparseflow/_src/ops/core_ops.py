"""Core graph ops: Identity, IdentityN, StopGradient, NoOp, and ``group`` / ``tuple``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.constant(1.0)
    ...     g = tf.group(tf.identity(a), name="both")
    >>> g.type, [c.type for c in g.control_inputs]
    ('NoOp', ['Identity'])
"""

from __future__ import annotations

import builtins
import contextlib

from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor

__all__ = ["identity", "identity_n", "stop_gradient", "no_op", "group", "tuple"]


def unchanged_shape(op):
    return [op.inputs[0].shape]


register_op("Identity", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"], shape_fn=unchanged_shape)
register_op("IdentityN", inputs=["input: T"], outputs=["output: T"], attrs=["T: list(type)"],
            shape_fn=lambda op: [t.shape for t in op.inputs])
register_op("StopGradient", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=unchanged_shape)
register_op("NoOp", shape_fn=lambda op: [])


def identity(input, name=None):  # noqa: A002 - TF's argument name
    """A tensor with the same value as ``input`` (reads a variable's current value)."""
    if hasattr(input, "_is_sparse_tensor"):
        from sparseflow._src.framework.sparse_tensor import SparseTensor

        return SparseTensor(input.indices, identity(input.values, name=name), input.dense_shape)
    if hasattr(input, "_as_graph_element") and not isinstance(input, Tensor):
        input = input.value() if hasattr(input, "value") else input._as_graph_element()
    return apply_op("Identity", [input], name=name or "Identity").outputs[0]


def identity_n(input, name=None):  # noqa: A002
    return apply_op("IdentityN", [list(input)], name=name or "IdentityN").outputs


def stop_gradient(input, name=None):  # noqa: A002
    """``input``, through which no gradient flows."""
    return apply_op("StopGradient", [input], name=name or "StopGradient").outputs[0]


def no_op(name=None) -> Operation:
    """An op that does nothing; useful as a control-dependency anchor."""
    return apply_op("NoOp", [], name=name or "NoOp")


def _as_op(x) -> Operation:
    if isinstance(x, Operation):
        return x
    if hasattr(x, "_as_graph_element") and not isinstance(x, Tensor):
        x = x._as_graph_element()
    if isinstance(x, Tensor):
        return x.op
    op = getattr(x, "op", None)
    if isinstance(op, Operation):
        return op
    raise TypeError(f"Expected an Operation or Tensor in group(), got {x!r}")


def _on_device(g, dev):
    return g.device(dev) if dev else contextlib.nullcontext()


def group(*inputs, **kwargs) -> Operation:
    """An op that runs after all ``inputs``; it has no outputs."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Unknown keyword arguments: {', '.join(kwargs)}")
    flat = []

    def add(x):
        if isinstance(x, (builtins.list, builtins.tuple, set)):
            for y in x:
                add(y)
        elif isinstance(x, dict):
            for y in x.values():
                add(y)
        elif x is not None:
            flat.append(_as_op(x))

    add(inputs)
    g = get_default_graph()
    if flat and not g.building_function:
        g = flat[0].graph
    with g.as_default(), g.name_scope(name or "group_deps") as scope:
        by_device: dict[str, list] = {}
        for op in flat:
            by_device.setdefault(op.device, []).append(op)
        # One NoOp per device of the inputs, placed there (an unplaced input adds no device).
        if len(by_device) <= 1:
            dev = next(iter(by_device), "")
            with _on_device(g, dev), g.control_dependencies(flat):
                return no_op(name=scope)
        deps = []
        for dev in sorted(by_device):
            with _on_device(g, dev), g.control_dependencies(by_device[dev]):
                deps.append(no_op())
        with g.control_dependencies(deps):
            return no_op(name=scope)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TF's public name
    """Tensors with the same values that are all available only after all of them are computed."""
    items = builtins.list(tensors)
    g = get_default_graph()
    with g.name_scope(name or "tuple") as scope:
        gate = group(*[t for t in items if t is not None] + builtins.list(control_inputs or []))
        out = []
        for t in items:
            if t is None:
                out.append(None)
            elif isinstance(t, Operation):
                with g.control_dependencies([gate]):
                    out.append(group(t))
            else:
                t = convert_to_tensor(t)
                with g.colocate_with(t.op), g.control_dependencies([gate]):
                    out.append(identity(t, name="control_dependency"))
        del scope
        return out
