"""Gradient of Einsum: the gradient of each input is another einsum of the output's gradient with
the other inputs (conjugated), over that input's subscripts. Subscripts summed within one input
alone come back by broadcasting; broadcast ``...`` dimensions are summed down (``unbroadcast``).
An input with a repeated subscript (a diagonal, ``ii->i``) has no gradient here: the error says so.
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

from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.grad.math_grad_util import conj, unbroadcast
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops
from sparseflow._src.ops.math_einsum import parse_equation

__all__: list[str] = []

NotDifferentiable("LowerBound")
NotDifferentiable("UpperBound")


def _text(term: str) -> str:
    return term.replace(".", "...")


def _einsum(equation: str, inputs):
    return apply_op("Einsum", [list(inputs)], {"equation": equation}, name="Einsum").outputs[0]


@RegisterGradient("Einsum")
def _einsum_grad(op, grad):
    equation = op.get_attr("equation")
    equation = equation.decode() if isinstance(equation, bytes) else equation
    terms, out = parse_equation(equation, len(op.inputs))
    grads = []
    for i, (term, x) in enumerate(zip(terms, op.inputs)):
        letters = term.replace(".", "")
        if len(set(letters)) != len(letters):
            raise LookupError(f"No gradient for input {i} of Einsum op '{op.name}' ({equation!r}): "
                              f"a subscript repeats within it (a diagonal). Wrap the input in tf.stop_gradient, "
                              f"or take the diagonal with tf.linalg.diag_part first.")
        others = [t for j, t in enumerate(terms) if j != i]
        kept = "".join(c for c in term if c == "." or c in out or any(c in t for t in others))
        if "." in kept and "." not in out:
            raise LookupError(f"No gradient for input {i} of Einsum op '{op.name}': its '...' dimensions are summed "
                              f"away; name them with letters in the equation.")
        equation = ",".join(_text(t) for t in [out] + others) + "->" + _text(kept)
        g = _einsum(equation, [grad] + [conj(t) for j, t in enumerate(op.inputs) if j != i])
        if kept != term:  # subscripts summed within this input alone: broadcast back
            rank = x.shape.ndims
            if rank is None:
                raise LookupError(f"No gradient for input {i} of Einsum op '{op.name}': it sums subscripts of its own "
                                  f"and its rank is unknown.")
            axis = 0
            for c in term:
                width = rank - (len(term) - 1) if c == "." else 1
                if c not in kept:
                    g = array_ops.expand_dims(g, axis)
                axis += width
            g = array_ops.broadcast_to(g, array_ops.shape(x))
        grads.append(unbroadcast(g, x))
    return grads
