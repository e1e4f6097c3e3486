"""Gradients of the fake quantization ops (straight-through inside the nudged range); their gradient
ops are not differentiable (as in TensorFlow).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([-7.0, 1.0, 7.0])
    ...     y = tf.fake_quant_with_min_max_args(x, min=-6.0, max=6.0)
    ...     print(sess.run(tf.gradients(y, x)[0]).tolist())
    [0.0, 1.0, 0.0]
"""

from __future__ import annotations

from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import fake_quant_ops  # noqa: F401 - the op definitions must exist first

__all__: list[str] = []


def _attrs(op, names):
    return {n: op.get_attr(n) for n in names}


@RegisterGradient("FakeQuantWithMinMaxArgs")
def _fake_quant_args_grad(op, grad):
    attrs = _attrs(op, ("min", "max", "num_bits", "narrow_range"))
    return [apply_op("FakeQuantWithMinMaxArgsGradient", [grad, op.inputs[0]], attrs).outputs[0]]


@RegisterGradient("FakeQuantWithMinMaxVars")
def _fake_quant_vars_grad(op, grad):
    attrs = _attrs(op, ("num_bits", "narrow_range"))
    return list(apply_op("FakeQuantWithMinMaxVarsGradient", [grad] + list(op.inputs), attrs).outputs)


@RegisterGradient("FakeQuantWithMinMaxVarsPerChannel")
def _fake_quant_per_channel_grad(op, grad):
    attrs = _attrs(op, ("num_bits", "narrow_range"))
    return list(apply_op("FakeQuantWithMinMaxVarsPerChannelGradient", [grad] + list(op.inputs), attrs).outputs)


NotDifferentiable("FakeQuantWithMinMaxVarsPerChannelGradient")
NotDifferentiable("FakeQuantWithMinMaxArgsGradient")
NotDifferentiable("FakeQuantWithMinMaxVarsGradient")
