"""Gradient of Einsum: the gradient of each input is another einsum of the output's gradient with
the other inputs (conjugated), over that input's subscripts. Subscripts summed within one input
alone come back by broadcasting; broadcast ``...`` dimensions are summed down (``unbroadcast``).
A repeated subscript (a diagonal, ``bii->b``) gets its gradient on the diagonal; both need the
dimensions involved to be known statically (else the error says so).
LowerBound / UpperBound are not differentiable.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    ...     b = tf.constant([1.0, -1.0])
    ...     ga, gb = tf.gradients(tf.einsum("ij,j->i", a, b), [a, b])
    ...     print(sess.run(ga).tolist(), sess.run(gb).tolist())
    [[1.0, -1.0], [1.0, -1.0]] [4.0, 6.0]
"""

from __future__ import annotations

import string

import numpy as np

from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.grad.math_grad_util import conj, unbroadcast
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops.constant_op import constant
from sparseflow._src.ops.math_einsum import parse_equation

__all__: list[str] = []

NotDifferentiable("LowerBound")
NotDifferentiable("UpperBound")


def _text(term: str) -> str:
    return term.replace(".", "...")


def _einsum(equation: str, inputs):
    return apply_op("Einsum", [list(inputs)], {"equation": equation}, name="Einsum").outputs[0]


def _expand(g, kept: str, term: str, x, op, i):
    """The gradient over ``kept`` (unique subscripts) spread back over ``term``: a repeated subscript
    onto its diagonal (times an identity), a subscript of this input alone broadcast (times ones)."""
    rank = x.shape.ndims
    dims = x.shape.as_list() if rank is not None else None
    free = iter(c for c in string.ascii_letters if c not in term and c not in kept)
    full, extras, seen, axis = [], [], set(), 0
    for c in term:
        if c == ".":
            full.append(".")
            axis += (rank - (len(term) - 1)) if rank is not None else 0
            continue
        d = dims[axis] if dims is not None else None
        axis += 1
        if c in seen or c not in kept:
            if d is None:
                raise LookupError(f"No gradient for input {i} of Einsum op '{op.name}': it repeats or sums subscript "
                                  f"{c!r} on its own and that dimension is not known statically.")
            if c in seen:
                twin = next(free)
                extras.append((c + twin, np.eye(d)))
                full.append(twin)
                continue
            extras.append((c, np.ones(d)))
        seen.add(c)
        full.append(c)
    equation = ",".join(_text(t) for t in [kept] + [e[0] for e in extras]) + "->" + _text("".join(full))
    consts = [constant(v, dtype=x.dtype.base_dtype) for _, v in extras]
    return _einsum(equation, [g] + consts)


@RegisterGradient("Einsum")
def _einsum_grad(op, grad):
    equation = op.get_attr("equation")
    equation = equation.decode() if isinstance(equation, bytes) else equation
    terms, out = parse_equation(equation, len(op.inputs))
    grads = []
    for i, (term, x) in enumerate(zip(terms, op.inputs)):
        others = [t for j, t in enumerate(terms) if j != i]
        kept = "".join(dict.fromkeys(c for c in term if c == "." or c in out or any(c in t for t in others)))
        if "." in kept and "." not in out:
            raise LookupError(f"No gradient for input {i} of Einsum op '{op.name}': its '...' dimensions are summed "
                              f"away; name them with letters in the equation.")
        g = _einsum(",".join(_text(t) for t in [out] + others) + "->" + _text(kept),
                    [grad] + [conj(t) for j, t in enumerate(op.inputs) if j != i])
        if kept != term:
            g = _expand(g, kept, term, x, op, i)
        grads.append(unbroadcast(g, x))
    return grads
