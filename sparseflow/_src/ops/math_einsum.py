"""``tf.einsum`` (the Einsum op) and ``tf.searchsorted`` (LowerBound / UpperBound).

Einsum equations are NumPy's: subscripts per input, ``...`` for broadcast dimensions, ``->output``
(or the implicit output: the letters used once, in alphabetical order, after the ``...``).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     m = tf.einsum("ij,jk->ik", [[1.0, 2.0]], [[3.0], [4.0]])
    ...     i = tf.searchsorted([1, 3, 5], [0, 3, 6], side="right")
    ...     print(sess.run(m), sess.run(i))
    [[11.]] [0 2 3]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.einsum_equation import parse_equation
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.ops import array_ops

__all__ = ["einsum", "searchsorted", "parse_equation"]

def _broadcast(a: list, b: list) -> list:
    """NumPy broadcasting of two dimension lists (None: unknown)."""
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    return [x if y == 1 else y if x == 1 else (x if x is not None else y) for x, y in zip(a, b)]


def _einsum_shape(op):
    equation = op._attrs["equation"]
    if "->" not in equation:
        raise ValueError(f"Einsum op {op.name!r}: the equation {equation!r} has no '->': the op takes explicit "
                         f"equations (tf.einsum accepts implicit ones).")
    terms, out = parse_equation(equation, len(op.inputs))
    sizes: dict = {}
    ellipsis: list | None = []
    for i, (term, t) in enumerate(zip(terms, op.inputs)):
        dims = t.shape.as_list() if t.shape.ndims is not None else None
        if dims is None:
            if "." in term:
                ellipsis = None
            continue
        labels = len(term) - ("." in term)
        if len(dims) < labels or ("." not in term and len(dims) != labels):
            raise ValueError(f"Einsum op {op.name!r}: input {i} has rank {len(dims)}, but its subscripts "
                             f"{term.replace('.', '...')!r} in {equation!r} need rank "
                             f"{'at least ' if '.' in term else ''}{labels}.")
        if "." in term:
            k = len(dims) - (len(term) - 1)
            before = term.index(".")
            ell, dims = dims[before:before + k], dims[:before] + dims[before + k:]
            if ellipsis is not None:
                ellipsis = _broadcast(ellipsis, ell)
            term = term.replace(".", "")
        for c, d in zip(term, dims):
            if d is not None:
                if sizes.get(c) not in (None, d):
                    raise ValueError(f"Einsum op {op.name!r}: subscript {c!r} of {equation!r} has size {sizes[c]} "
                                     f"and {d}; they must agree.")
                sizes[c] = d
            else:
                sizes.setdefault(c, None)
    if "." in out and ellipsis is None:
        return [unknown_shape()]
    shape = []
    for c in out:
        shape.extend(ellipsis if c == "." else [sizes.get(c)])
    return [TensorShape(shape)]


def _bound_shape(op):
    """Both inputs are ``[batch, n]`` matrices (an error when the graph is built, as TensorFlow's)."""
    op.inputs[0].shape.with_rank(2)
    return [op.inputs[1].shape.with_rank(2)]


register_op("Einsum", inputs=["inputs: N * T"], outputs=["output: T"],
            attrs=["equation: string", "N: int >= 1", "T: type"], shape_fn=_einsum_shape)
for _bound in ("LowerBound", "UpperBound"):
    register_op(_bound, inputs=["sorted_inputs: T", "values: T"], outputs=["output: out_type"],
                attrs=["T: type", "out_type: {int32, int64} = int32"], shape_fn=_bound_shape)


def einsum(equation, *inputs, **kwargs):
    """The tensor contraction ``equation`` (NumPy's einsum notation) of ``inputs``."""
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)  # contraction order: NumPy chooses it
    if kwargs:
        raise TypeError(f"Invalid keyword arguments for einsum: {sorted(kwargs)}")
    with name_scope(name, "einsum", list(inputs)):
        ts = [convert_to_tensor(x, name="input") for x in inputs]
        terms, out = parse_equation(equation, len(ts))  # the op's equation is explicit (NumPy's implicit output)
        explicit = ",".join(terms) + "->" + out
        return apply_op("Einsum", [ts], {"equation": explicit.replace(".", "...")}, name="Einsum").outputs[0]


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """Per row of the innermost dimension, where ``values`` would go in ``sorted_sequence`` to keep it
    sorted: the first such index (``side="left"``) or the last (``"right"``)."""
    if side not in ("left", "right"):
        raise ValueError(f"Argument `side` must be either 'right' or 'left'. Received: `side` = {side!r}.")
    sorted_sequence = convert_to_tensor(sorted_sequence)
    values = convert_to_tensor(values, dtype=sorted_sequence.dtype.base_dtype)
    seq_2d = array_ops.reshape(sorted_sequence, [-1, array_ops.shape(sorted_sequence)[-1]])
    values_2d = array_ops.reshape(values, [-1, array_ops.shape(values)[-1]])
    op = "UpperBound" if side == "right" else "LowerBound"
    out = apply_op(op, [seq_2d, values_2d], {"out_type": dtypes.as_dtype(out_type)}, name=name or op).outputs[0]
    result = array_ops.reshape(out, array_ops.shape(values))
    result.set_shape(values.shape)
    return result
