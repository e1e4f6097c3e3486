"""Fake quantization (quantization-aware training): ``tf.fake_quant_with_min_max_args`` /
``_vars`` and their gradient ops.

Values are clamped to a range that contains 0 exactly on the quantization grid ("nudged" from
``[min, max]``), then rounded to one of ``2**num_bits`` levels (``2**num_bits - 1`` with
``narrow_range``), in float32 as TensorFlow. The gradient passes where the input lies in the nudged
range; for the ``_vars`` op the rest goes to ``min`` (below) and ``max`` (above).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     q = tf.fake_quant_with_min_max_args([-7.0, 0.1, 2.0], min=-6.0, max=6.0, num_bits=4)
    ...     print(sess.run(q).tolist())
    [-6.400000095367432, 0.0, 2.4000000953674316]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape

__all__ = ["fake_quant_with_min_max_args", "fake_quant_with_min_max_args_gradient",
           "fake_quant_with_min_max_vars", "fake_quant_with_min_max_vars_gradient",
           "fake_quant_with_min_max_vars_per_channel", "fake_quant_with_min_max_vars_per_channel_gradient"]

_BITS = ["num_bits: int = 8", "narrow_range: bool = false"]
_ARGS = ["min: float = -6", "max: float = 6"] + _BITS


def _same_as(index):
    return lambda op: [op.inputs[index].shape]


def _scalar_range(op, first):
    for t in op.inputs[first:first + 2]:
        t.shape.with_rank(0)


def _vars_shape(op):
    _scalar_range(op, 1)
    return [op.inputs[0].shape]


def _vars_grad_shape(op):
    _scalar_range(op, 2)
    return [op.inputs[0].shape.merge_with(op.inputs[1].shape), TensorShape([]), TensorShape([])]


register_op("FakeQuantWithMinMaxArgs", inputs=["inputs: float"], outputs=["outputs: float"], attrs=_ARGS,
            shape_fn=_same_as(0))
register_op("FakeQuantWithMinMaxArgsGradient", inputs=["gradients: float", "inputs: float"],
            outputs=["backprops: float"], attrs=_ARGS, shape_fn=_same_as(0))
register_op("FakeQuantWithMinMaxVars", inputs=["inputs: float", "min: float", "max: float"],
            outputs=["outputs: float"], attrs=_BITS, shape_fn=_vars_shape)
register_op("FakeQuantWithMinMaxVarsGradient", inputs=["gradients: float", "inputs: float", "min: float",
                                                       "max: float"],
            outputs=["backprops_wrt_input: float", "backprop_wrt_min: float", "backprop_wrt_max: float"],
            attrs=_BITS, shape_fn=_vars_grad_shape)


def _per_channel_shape(op):
    x = op.inputs[0].shape.with_rank_at_least(1)
    channels = op.inputs[1].shape.with_rank(1).merge_with(op.inputs[2].shape.with_rank(1))
    if x.ndims is not None:
        channels.merge_with(x[-1:])
    return [x]


def _per_channel_grad_shape(op):
    x = op.inputs[0].shape.merge_with(op.inputs[1].shape).with_rank_at_least(1)
    channels = op.inputs[2].shape.with_rank(1).merge_with(op.inputs[3].shape.with_rank(1))
    if x.ndims is not None:
        channels = channels.merge_with(x[-1:])
    return [x, channels, channels]


register_op("FakeQuantWithMinMaxVarsPerChannel", inputs=["inputs: float", "min: float", "max: float"],
            outputs=["outputs: float"], attrs=_BITS, shape_fn=_per_channel_shape)
register_op("FakeQuantWithMinMaxVarsPerChannelGradient",
            inputs=["gradients: float", "inputs: float", "min: float", "max: float"],
            outputs=["backprops_wrt_input: float", "backprop_wrt_min: float", "backprop_wrt_max: float"],
            attrs=_BITS, shape_fn=_per_channel_grad_shape)


def _f32(x, name):
    return convert_to_tensor(x, dtype=dtypes.float32, name=name)


def _bits(num_bits, narrow_range):
    return {"num_bits": int(num_bits), "narrow_range": bool(narrow_range)}


def fake_quant_with_min_max_args(inputs, min=-6, max=6, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """``inputs`` quantized to ``num_bits`` levels over the (nudged) range ``[min, max]`` and back to float."""
    attrs = {"min": float(min), "max": float(max), **_bits(num_bits, narrow_range)}
    return apply_op("FakeQuantWithMinMaxArgs", [_f32(inputs, "inputs")], attrs,
                    name=name or "FakeQuantWithMinMaxArgs").outputs[0]


def fake_quant_with_min_max_args_gradient(gradients, inputs, min=-6, max=6, num_bits=8,  # noqa: A002
                                          narrow_range=False, name=None):
    """``gradients`` where ``inputs`` lies in the nudged range, 0 elsewhere."""
    attrs = {"min": float(min), "max": float(max), **_bits(num_bits, narrow_range)}
    return apply_op("FakeQuantWithMinMaxArgsGradient", [_f32(gradients, "gradients"), _f32(inputs, "inputs")],
                    attrs, name=name or "FakeQuantWithMinMaxArgsGradient").outputs[0]


def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """``fake_quant_with_min_max_args`` with the range given by scalar tensors (trainable variables)."""
    return apply_op("FakeQuantWithMinMaxVars", [_f32(inputs, "inputs"), _f32(min, "min"), _f32(max, "max")],
                    _bits(num_bits, narrow_range), name=name or "FakeQuantWithMinMaxVars").outputs[0]


def fake_quant_with_min_max_vars_gradient(gradients, inputs, min, max, num_bits=8,  # noqa: A002
                                          narrow_range=False, name=None):
    """``(d inputs, d min, d max)``: ``gradients`` inside the nudged range, the sums below and above it."""
    op = apply_op("FakeQuantWithMinMaxVarsGradient", [_f32(gradients, "gradients"), _f32(inputs, "inputs"),
                                                      _f32(min, "min"), _f32(max, "max")],
                  _bits(num_bits, narrow_range), name=name or "FakeQuantWithMinMaxVarsGradient")
    return tuple(op.outputs)


def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8, narrow_range=False,  # noqa: A002
                                             name=None):
    """``fake_quant_with_min_max_vars`` per channel (the last dimension): ``min``, ``max`` of shape ``[d]``."""
    return apply_op("FakeQuantWithMinMaxVarsPerChannel", [_f32(inputs, "inputs"), _f32(min, "min"),
                                                          _f32(max, "max")],
                    _bits(num_bits, narrow_range), name=name or "FakeQuantWithMinMaxVarsPerChannel").outputs[0]


def fake_quant_with_min_max_vars_per_channel_gradient(gradients, inputs, min, max, num_bits=8,  # noqa: A002
                                                      narrow_range=False, name=None):
    """``(d inputs, d min, d max)`` of the per-channel op: ``d min``, ``d max`` of shape ``[d]``."""
    op = apply_op("FakeQuantWithMinMaxVarsPerChannelGradient",
                  [_f32(gradients, "gradients"), _f32(inputs, "inputs"), _f32(min, "min"), _f32(max, "max")],
                  _bits(num_bits, narrow_range), name=name or "FakeQuantWithMinMaxVarsPerChannelGradient")
    return tuple(op.outputs)
