"""Gradient of Einsum: the gradient of each input is another einsum of the output's gradient with
the other inputs (conjugated), over that input's subscripts. Subscripts summed within one input
alone come back by broadcasting; broadcast ``...`` dimensions are summed down (``unbroadcast``).
A repeated subscript (a diagonal, ``bii->b``) gets its gradient on the diagonal; dimensions not
known statically are read at run time.
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

from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.grad.math_grad_util import conj, unbroadcast
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops
from sparseflow._src.ops.array_fill_ops import ones
from sparseflow._src.ops.math_einsum import parse_equation
from sparseflow._src.ops.math_linalg import eye

__all__: list[str] = []

NotDifferentiable("LowerBound")
NotDifferentiable("UpperBound")


def _text(term: str) -> str:
    return term.replace(".", "...")


def _einsum(equation: str, inputs):
    return apply_op("Einsum", [list(inputs)], {"equation": equation}, name="Einsum").outputs[0]


def _dim(x, labels_before: int, labels_after: int, after_ellipsis: bool, dims):
    """The size of one subscript's dimension of ``x``: static when known, else read at run time (counted
    from the end when it follows ``...``, so it works at unknown rank too)."""
    axis = -(labels_after + 1) if after_ellipsis else labels_before
    if dims is not None:
        d = dims[axis]
        if d is not None:
            return d
    return array_ops.shape(x)[axis]


def _expand(g, kept: str, term: str, x):
    """The gradient over ``kept`` (unique subscripts) spread back over ``term``: a repeated subscript
    onto its diagonal (times an identity), a subscript of this input alone broadcast (times ones)."""
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    dtype = x.dtype.base_dtype
    labels = term.replace(".", "")
    ellipsis_at = term.index(".") if "." in term else len(term)
    free = iter(c for c in string.ascii_letters if c not in term and c not in kept)
    full, extras, seen = [], [], set()
    k = 0  # index of the subscript among the labels
    for pos, c in enumerate(term):
        if c == ".":
            full.append(".")
            continue
        after = pos > ellipsis_at
        if c in seen or c not in kept:
            d = _dim(x, k, len(labels) - k - 1, after, dims)
            if c in seen:
                twin = next(free)
                extras.append((c + twin, eye(d, dtype=dtype)))
                full.append(twin)
            else:
                extras.append((c, ones(array_ops.reshape(d, [1]) if not isinstance(d, int) else [d], dtype=dtype)))
                seen.add(c)
                full.append(c)
        else:
            seen.add(c)
            full.append(c)
        k += 1
    equation = ",".join(_text(t) for t in [kept] + [e[0] for e in extras]) + "->" + _text("".join(full))
    return _einsum(equation, [g] + [e[1] for e in extras])


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
            g = _expand(g, kept, term, x)
        grads.append(unbroadcast(g, x))
    return grads
