"""3-D convolutions: Conv3D with Conv3DBackpropInputV2 / Conv3DBackpropFilterV2, and the ``tf.nn``
wrappers ``conv3d``, ``conv3d_transpose``, ``conv3d_backprop_filter_v2``.

Inputs are ``[batch, depth, rows, cols, channels]`` (NDHWC, or NCDHW), filters
``[depth, rows, cols, in_channels, out_channels]``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 8, 16, 16, 3])
    ...     y = tf.nn.conv3d(x, tf.zeros([3, 3, 3, 3, 4]), strides=[1, 2, 2, 2, 1], padding="SAME")
    >>> y.op.type, y.shape.as_list()
    ('Conv3D', [None, 4, 8, 8, 4])
"""

from __future__ import annotations

from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value_as_shape
from sparseflow._src.ops.nn_util import windowed_output_size

__all__ = ["conv3d", "conv3d_transpose", "conv3d_backprop_filter_v2", "conv3d_backprop_filter"]

_ATTRS = [
    "T: {half, bfloat16, float, double}",
    "strides: list(int) >= 5",
    "padding: {'SAME', 'VALID'}",
    "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'",
    "dilations: list(int) = [1, 1, 1, 1, 1]",
]


def _check_attrs(op):
    attrs = op._attrs
    for name in ("strides", "dilations"):
        if len(attrs[name]) != 5:
            raise ValueError(f"{op.type} requires the {name} attribute to contain 5 values, but got: "
                             f"{len(attrs[name])}")
    channels_first = attrs.get("data_format", "NDHWC") == "NCDHW"
    batch_axis, channel_axis = 0, (1 if channels_first else 4)
    if attrs["strides"][batch_axis] != 1 or attrs["strides"][channel_axis] != 1:
        raise ValueError(f"{op.type}: current implementation does not yet support strides in the batch and "
                         f"depth dimensions.")
    return channels_first


def _conv3d_shape(op):
    channels_first = _check_attrs(op)
    attrs = op._attrs
    inp = op.inputs[0].shape.with_rank(5)
    flt = op.inputs[1].shape.with_rank(5)
    dims = inp.as_list() if inp.ndims is not None else [None] * 5
    fdims = flt.as_list() if flt.ndims is not None else [None] * 5
    spatial_axes = [2, 3, 4] if channels_first else [1, 2, 3]
    channel = dims[1 if channels_first else 4]
    if channel is not None and fdims[3] is not None and channel % fdims[3] != 0:
        raise ValueError(f"Depth of input ({channel}) is not a multiple of input depth of filter ({fdims[3]})")
    out = [windowed_output_size(dims[ax], fdims[i], attrs["dilations"][ax], attrs["strides"][ax],
                                attrs["padding"]) if fdims[i] is not None else None
           for i, ax in enumerate(spatial_axes)]
    if channels_first:
        return [TensorShape([dims[0], fdims[4]] + out)]
    return [TensorShape([dims[0]] + out + [fdims[4]])]


def _sizes_shape(index):
    def shape_fn(op):
        _check_attrs(op)
        sizes = constant_value_as_shape(op.inputs[index])
        return [unknown_shape(5) if sizes.ndims is None else sizes.with_rank(5)]

    return shape_fn


register_op("Conv3D", inputs=["input: T", "filter: T"], outputs=["output: T"], attrs=_ATTRS,
            shape_fn=_conv3d_shape)
register_op("Conv3DBackpropInputV2", inputs=["input_sizes: Tshape", "filter: T", "out_backprop: T"],
            outputs=["output: T"], attrs=_ATTRS + ["Tshape: {int32, int64} = int32"], shape_fn=_sizes_shape(0))
register_op("Conv3DBackpropFilterV2", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
            outputs=["output: T"], attrs=_ATTRS, shape_fn=_sizes_shape(1))


def _sequence(value, data_format, what):
    """A stride/dilation given as an int, 3 spatial values or all 5, as the 5-element attr."""
    if value is None:
        return [1, 1, 1, 1, 1]
    if isinstance(value, int):
        value = [value] * 3
    value = [int(v) for v in value]
    if len(value) == 5:
        return value
    if len(value) == 1:
        value = value * 3
    if len(value) != 3:
        raise ValueError(f"{what} should be of length 1, 3 or 5. Received: {what}={value} of length {len(value)}")
    return [1, 1] + value if data_format == "NCDHW" else [1] + value + [1]


def _attrs(strides, padding, data_format, dilations):
    data_format = data_format or "NDHWC"
    padding = padding.upper() if isinstance(padding, str) else padding
    return {"strides": _sequence(strides, data_format, "strides"), "padding": padding, "data_format": data_format,
            "dilations": _sequence(dilations, data_format, "dilations")}


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",  # noqa: A002
           dilations=(1, 1, 1, 1, 1), name=None, filters=None):
    """3-D convolution of a 5-D ``input`` with a ``[depth, rows, cols, in, out]`` filter."""
    if filter is None:
        filter = filters  # noqa: A001
    elif filters is not None:
        raise ValueError("Cannot specify both 'filter' and 'filters'.")
    return apply_op("Conv3D", [input, filter], _attrs(strides, padding, data_format, dilations),
                    name=name).outputs[0]


def conv3d_transpose(value, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NDHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """The transpose of conv3d (a Conv3DBackpropInputV2 op) producing ``output_shape``."""
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    with name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        return apply_op("Conv3DBackpropInputV2", [output_shape, filter, value],
                        _attrs(strides, padding, data_format, dilations), name=scope).outputs[0]


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                              data_format="NDHWC", dilations=(1, 1, 1, 1, 1), name=None):
    """The gradient of Conv3D with respect to its filter (of shape ``filter_sizes``)."""
    return apply_op("Conv3DBackpropFilterV2", [input, filter_sizes, out_backprop],
                    _attrs(strides, padding, data_format, dilations), name=name).outputs[0]


conv3d_backprop_filter = conv3d_backprop_filter_v2
