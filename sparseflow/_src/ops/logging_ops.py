"""Printing from a graph: TF1's ``tf.Print`` (an identity that prints when it runs) and ``tf.print``
(a ``PrintV2`` op of a ``StringFormat``: run it, or make it a control dependency), and
``tf.strings.format``. Text is TensorFlow's (kernels/tensor_format.py).

Example:
    >>> import sys
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([[1, 2], [3, 4]])
    ...     sess.run(tf.print("x:", x, output_stream=sys.stdout))
    x: [[1 2]
     [3 4]]
"""

from __future__ import annotations

import pprint
import sys

from sparseflow._src.framework import dtypes
from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.sparse_tensor import SparseTensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor, is_tensor

__all__ = ["Print", "print_v2", "string_format"]

def _string_format_shape(op):
    """A scalar; the template must hold one placeholder per input (checked when the graph is built)."""
    template, placeholder = op._attrs.get("template", "%s"), op._attrs.get("placeholder", "%s")
    count = len(template.split(placeholder)) - 1
    if count != len(op.inputs):
        raise ValueError(f"StringFormat op {op.name!r}: num placeholders in template and num inputs must match: "
                         f"{count} vs. {len(op.inputs)}")
    return [[]]


def _print_v2_shape(op):
    op.inputs[0].shape.with_rank(0)  # one string, checked when the graph is built
    return []


register_op("Print", inputs=["input: T", "data: U"], outputs=["output: T"],
            attrs=["T: type", "U: list(type) >= 0", "message: string = ''", "first_n: int = -1",
                   "summarize: int = 3"], shape_fn=lambda op: [op.inputs[0].shape], is_stateful=True)
register_op("StringFormat", inputs=["inputs: T"], outputs=["output: string"],
            attrs=["T: list(type) >= 0", "template: string = '%s'", "placeholder: string = '%s'",
                   "summarize: int = 3"], shape_fn=_string_format_shape)
register_op("PrintV2", inputs=["input: string"], attrs=["output_stream: string = 'stderr'", "end: string = '\n'"],
            shape_fn=_print_v2_shape, is_stateful=True)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802 - TF's name
    """``input_``, printing ``message`` and each of ``data`` (``[...]``) to stderr when it runs (the first
    ``first_n`` times when given; at most ``summarize`` elements of each, 3 by default)."""
    attrs = {"message": message or "", "first_n": -1 if first_n is None else int(first_n),
             "summarize": 3 if summarize is None else int(summarize)}
    return apply_op("Print", [input_, list(data)], attrs, name=name or "Print").outputs[0]


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """``template`` with each ``placeholder`` replaced by the next of ``inputs`` as tf.print shows it."""
    if is_tensor(inputs):
        inputs = [inputs]
    inputs = list(inputs)
    if template.count(placeholder) != len(inputs):
        raise ValueError(f"{len(inputs)} tensors to format into {template!r}, which has "
                         f"{template.count(placeholder)} placeholders {placeholder!r}.")
    attrs = {"template": template, "placeholder": placeholder, "summarize": int(summarize)}
    return apply_op("StringFormat", [inputs], attrs, name=name or "StringFormat").outputs[0]


def _stream_name(output_stream) -> str:
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    named = [(sys.stdout, "stdout"), (sys.stderr, "stderr"), (sys.__stdout__, "stdout"),
             (sys.__stderr__, "stderr"), (logging.INFO, "log(info)"), (logging.info, "log(info)"),
             (logging.WARN, "log(warning)"), (logging.warning, "log(warning)"), (logging.warn, "log(warning)"),
             (logging.ERROR, "log(error)"), (logging.error, "log(error)")]
    for stream, text in named:
        if output_stream is stream or (isinstance(output_stream, int) and output_stream == stream):
            return text
    raise ValueError(f"Unsupported output stream, logging level, or file.{output_stream}. Supported streams are "
                     f"sys.stdout, sys.stderr, tf.logging.info, tf.logging.warning, tf.logging.error. File needs "
                     f"to be in the form of 'file://<filepath>'.")


def _flatten(x):
    if isinstance(x, dict):
        return [y for k in sorted(x) for y in _flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _flatten(v)]
    return [x]


def _pack(x, leaves):
    if isinstance(x, dict):
        return {k: _pack(x[k], leaves) for k in sorted(x)}
    if isinstance(x, (list, tuple)):
        packed = [_pack(v, leaves) for v in x]
        return type(x)(packed) if not hasattr(x, "_fields") else type(x)(*packed)
    return leaves.pop(0)


def print_v2(*inputs, **kwargs):
    """TF's ``tf.print``: prints ``inputs`` (tensors, Python values, nested lists/dicts of them) separated
    by ``sep`` and followed by ``end``, to ``output_stream`` (sys.stderr by default, sys.stdout,
    tf.logging.info/warning/error or ``"file://<path>"``, appended). Returns the ``PrintV2`` op."""
    output_stream = kwargs.pop("output_stream", sys.stderr)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments for tf.print: {sorted(kwargs)}")
    stream = _stream_name(output_stream)
    if (len(inputs) == 1 and is_tensor(inputs[0]) and inputs[0].dtype.base_dtype == dtypes.string
            and inputs[0].shape.ndims == 0):
        text = inputs[0]
    else:
        free = " ".join(pprint.pformat(_pack(x, ["" if is_tensor(v) else v for v in _flatten(x)]))
                        for x in inputs)
        placeholder, k = "{}", 0
        while placeholder in free:
            k += 1
            placeholder = "{" + "_" * k + "}"
        templates, tensors = [], []
        for x in inputs:
            leaves = []
            for v in _flatten(x):
                if isinstance(v, SparseTensor):
                    tensors.extend([v.indices, v.values, v.dense_shape])
                    leaves.append(f"SparseTensor(indices={placeholder}, values={placeholder}, "
                                  f"shape={placeholder})")
                elif is_tensor(v):
                    tensors.append(convert_to_tensor(v))
                    leaves.append(placeholder)
                else:
                    leaves.append(v)
            templates.append(x if isinstance(x, str) else pprint.pformat(_pack(x, leaves)))
        template = sep.join(templates).replace(f"'{placeholder}'", placeholder)
        text = string_format(template, tensors, placeholder=placeholder, summarize=summarize,
                             name=f"{name}_format" if name else None)
    return apply_op("PrintV2", [text], {"output_stream": stream, "end": end}, name=name or "PrintV2")
