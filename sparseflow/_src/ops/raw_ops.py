"""``tf.raw_ops``: every registered op type as a keyword-only function, as in TensorFlow.

``tf.raw_ops.<OpType>(**inputs_and_attrs, name=None)`` builds one op of that type from the
OpDef's own argument names: inputs by their input names, attrs by their attr names (type attrs
are inferred from the inputs and may be left out). The result follows TensorFlow's convention:
the Operation for an op without outputs, the Tensor for one output, a list for a single list
output, else a namedtuple of the outputs by their output names.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     s = tf.raw_ops.Sum(input=[[1, 2], [3, 4]], axis=1, keep_dims=True)
    ...     u = tf.raw_ops.Unique(x=[3, 1, 3])
    ...     with tf.Session() as sess:
    ...         print(sess.run(s).tolist(), sess.run(u.idx).tolist())
    [[3], [7]] [0, 1, 0]
"""

from __future__ import annotations

import collections
import functools

from sparseflow._src.framework.op_def import get_op_def, is_registered, registered_ops
from sparseflow._src.framework.op_def_library import apply_op

__all__: list[str] = []

_REDUCTION = {"axis": "reduction_indices"}
# TensorFlow's API names where they differ from the OpDef's argument names (its api_def renames).
_VISIBLE_NAMES = {
    **{op: _REDUCTION for op in ("All", "Any", "EuclideanNorm", "Max", "Mean", "Min", "Prod", "Sum")},
    "ExpandDims": {"axis": "dim"},
    "Select": {"x": "t", "y": "e"},
    "Split": {"axis": "split_dim"},
    "SplitV": {"axis": "split_dim"},
    "Squeeze": {"axis": "squeeze_dims"},
    "Where": {"condition": "input"},
}


def _output_value(op_def, op):
    outs = list(op.outputs)
    args = op_def.output_args
    if not outs:
        return op
    if len(args) == 1:
        return list(outs) if args[0].is_list else outs[0]
    grouped, i = [], 0
    for arg in args:
        if arg.number_attr:
            n = op.get_attr(arg.number_attr)
        elif arg.type_list_attr:
            n = len(op.get_attr(arg.type_list_attr))
        else:
            grouped.append(outs[i])
            i += 1
            continue
        grouped.append(outs[i:i + n])
        i += n
    return _result_type(op_def.name)(*grouped)


@functools.cache
def _result_type(op_type: str):
    return collections.namedtuple(op_type, [a.name for a in get_op_def(op_type).output_args])


@functools.cache
def raw_op(op_type: str):
    """The keyword-only builder of op type ``op_type`` (KeyError naming unknown types)."""
    op_def = get_op_def(op_type)
    input_names = [a.name for a in op_def.input_args]

    renames = _VISIBLE_NAMES.get(op_type, {})

    def build(*args, name=None, **kwargs):
        kwargs = {renames.get(k, k): v for k, v in kwargs.items()}
        if args:
            raise TypeError(f"tf.raw_ops.{op_type} takes keyword arguments only "
                            f"({', '.join(input_names + list(op_def.attrs))}).")
        missing = [n for n in input_names if n not in kwargs]
        if missing:
            raise TypeError(f"tf.raw_ops.{op_type} is missing required input(s): {', '.join(missing)}.")
        inputs = [kwargs.pop(n) for n in input_names]
        unknown = [k for k in kwargs if k not in op_def.attrs]
        if unknown:
            raise TypeError(f"tf.raw_ops.{op_type} got unexpected argument(s) {', '.join(unknown)}; it takes "
                            f"inputs ({', '.join(input_names)}) and attrs ({', '.join(op_def.attrs)}).")
        return _output_value(op_def, apply_op(op_type, inputs, kwargs, name=name or op_type))

    build.__name__ = build.__qualname__ = op_type
    build.__doc__ = (f"Builds one {op_type} op. Inputs: {', '.join(input_names) or 'none'}; attrs: "
                     f"{', '.join(op_def.attrs) or 'none'}.")
    return build


def __getattr__(name: str):
    if name.startswith("__") or not is_registered(name):
        raise AttributeError(f"tf.raw_ops has no op {name!r}: it is not registered in sparseflow.")
    return raw_op(name)


def __dir__():
    return registered_ops()
