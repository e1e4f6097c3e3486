"""``tf.recompute_grad``: a function whose activations are not kept for the backward pass but
computed again there (gradient checkpointing: memory for compute).

The forward result and the function's inputs and trainable variables pass through one IdentityN op
whose gradient calls the function again, on copies of the inputs that wait for the incoming
gradients, and differentiates that second copy.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     f = tf.recompute_grad(lambda x: tf.tanh(x) * 3.0)
    ...     x = tf.constant([0.0, 1.0])
    ...     print([round(float(v), 3) for v in sess.run(tf.gradients(tf.reduce_sum(f(x)), x)[0])])
    [3.0, 1.26]
"""

from __future__ import annotations

import functools
import itertools

from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.grad.registry import RegisterGradient

__all__ = ["recompute_grad"]

_UIDS = itertools.count(1)


def recompute_grad(f):
    """Decorates ``f(*tensors)`` so that its gradient recomputes ``f`` instead of keeping its activations.

    Variables ``f`` reads (trainable variables made before or inside the first call) get gradients too;
    a second call of ``f`` must reuse them (variables made by name with ``tf.get_variable`` are reused).
    """

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        from sparseflow._src.grad.gradients_impl import gradients
        from sparseflow._src.ops import core_ops
        from sparseflow._src.ops.functional_ops import flatten, is_sequence, pack_sequence_as
        from sparseflow._src.ops.variable_scope import get_variable_scope, variable_scope

        if kwargs:
            raise ValueError("recompute_grad in graph mode takes tensors as positional arguments only.")
        g = get_default_graph()
        args = [convert_to_tensor(a) for a in args]
        scope = get_variable_scope()
        start = len(g.get_operations())
        result = f(*args)
        consumed = {id(t) for op in g.get_operations()[start:] for t in op.inputs}
        variables = [v for v in g.get_collection(GraphKeys.TRAINABLE_VARIABLES) if id(v.value()) in consumed]
        values = [v.value() for v in variables]
        flat = [convert_to_tensor(t) for t in (flatten(result) if is_sequence(result) else [result])]
        n = len(flat)
        name = f"RecomputeGrad-{next(_UIDS)}"

        @RegisterGradient(name)
        def _grad(unused_op, *grads):
            dys = list(grads[:n])
            waits = [d for d in dys if d is not None]
            with g.control_dependencies(waits):
                fresh = [core_ops.identity(a) for a in args]
            with variable_scope(scope, reuse=True):
                again = f(*fresh)
            again = [convert_to_tensor(t) for t in (flatten(again) if is_sequence(again) else [again])]
            pairs = [(y, d) for y, d in zip(again, dys) if d is not None]
            if not pairs:
                return [None] * len(unused_op.inputs)
            found = gradients([y for y, _ in pairs], fresh + values, grad_ys=[d for _, d in pairs])
            return [None] * n + list(found)

        outs = core_ops.identity_n(flat + args + values)
        outs[0].op._set_attr("_gradient_op_type", name)
        return pack_sequence_as(result, outs[:n]) if is_sequence(result) else outs[0]

    return wrapped
