"""2-D convolutions: Conv2D and DepthwiseConv2dNative with their backprop ops, and the ``tf.nn``
wrappers ``conv2d``, ``convolution``, ``depthwise_conv2d(_native)``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 16, 16, 3])
    ...     y = tf.nn.conv2d(x, tf.zeros([3, 3, 3, 8]), strides=[1, 2, 2, 1], padding="SAME")
    >>> y.op.type, y.shape.as_list()
    ('Conv2D', [None, 8, 8, 8])
"""

from __future__ import annotations

from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value_as_shape
from sparseflow._src.ops.nn_util import (
    convert_padding,
    format_dims,
    get_sequence,
    tf_fn,
    windowed_output_size,
)

__all__ = ["conv2d", "convolution", "depthwise_conv2d", "depthwise_conv2d_native", "conv2d_backprop_input",
           "conv2d_backprop_filter", "conv2d_transpose", "conv1d", "separable_conv2d", "atrous_conv2d"]

_CONV_ATTRS = [
    "T: {half, bfloat16, float, double, int32}",
    "strides: list(int)",
    "use_cudnn_on_gpu: bool = true",
    "padding: {'SAME', 'VALID', 'EXPLICIT'}",
    "explicit_paddings: list(int) = []",
    "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    "dilations: list(int) = [1, 1, 1, 1]",
]
_DEPTHWISE_ATTRS = [
    "T: {half, bfloat16, float, double}",
    "strides: list(int)",
    "padding: {'SAME', 'VALID', 'EXPLICIT'}",
    "explicit_paddings: list(int) = []",
    "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    "dilations: list(int) = [1, 1, 1, 1]",
]


def check_window_attrs(op_type, attrs, names=("strides", "dilations")):
    """Validates the 4-element window attrs and the explicit paddings of a conv/pool node."""
    for n in names:
        values = attrs.get(n)
        if values is not None and len(values) != 4:
            what = "stride" if n == "strides" else "dilation" if n == "dilations" else n
            raise ValueError(f"{op_type} requires the {what} attribute to contain 4 values, but got: "
                             f"{len(values)}")
    padding = attrs.get("padding")
    explicit = list(attrs.get("explicit_paddings") or [])
    if padding == "EXPLICIT":
        if len(explicit) != 8:
            raise ValueError(f"explicit_paddings attribute must contain 8 values, but got: {len(explicit)}")
        if any(p < 0 for p in explicit):
            raise ValueError(f"All elements of explicit_paddings must be nonnegative, got {explicit}")
    elif explicit:
        raise ValueError("explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT")


def spatial_output(in_shape, window, strides, dilations, attrs):
    """Output (rows, cols) of a 2-D window op over a 4-D static input shape."""
    fmt = attrs.get("data_format", "NHWC")
    _, _, (h, w) = format_dims(fmt)
    padding = attrs["padding"]
    explicit = list(attrs.get("explicit_paddings") or []) or [0] * 8
    dims = in_shape.as_list() if in_shape.ndims is not None else [None] * 4
    for ax in (h, w):  # bad strides and dilations are errors whatever is known of the shapes
        windowed_output_size(None, 1, dilations[ax], strides[ax], padding)
    out = []
    for ax, k in ((h, window[0]), (w, window[1])):
        if k is None:
            out.append(None)
            continue
        out.append(windowed_output_size(dims[ax], k, dilations[ax], strides[ax], padding,
                                        explicit[2 * ax], explicit[2 * ax + 1]))
    return out


def _nhwc_or_nchw(fmt, batch, rows, cols, depth):
    if fmt.startswith("NC"):
        return TensorShape([batch, depth, rows, cols])
    return TensorShape([batch, rows, cols, depth])


def _conv2d_shape(op):
    attrs = op._attrs
    check_window_attrs(op.type, attrs)
    inp = op.inputs[0].shape.with_rank(4)
    flt = op.inputs[1].shape.with_rank(4)
    fmt = attrs.get("data_format", "NHWC")
    n, c, _ = format_dims(fmt)
    fdims = flt.as_list() if flt.ndims is not None else [None] * 4
    in_depth = inp.dims[c].value if inp.ndims is not None else None
    if in_depth is not None and fdims[2] is not None and fdims[2] > 0 and in_depth % fdims[2] != 0:
        raise ValueError(f"Depth of input ({in_depth}) is not a multiple of input depth of filter "
                         f"({fdims[2]})")
    rows, cols = spatial_output(inp, fdims[:2], attrs["strides"], attrs["dilations"], attrs)
    batch = inp.dims[n].value if inp.ndims is not None else None
    return [_nhwc_or_nchw(fmt, batch, rows, cols, fdims[3])]


def _depthwise_shape(op):
    attrs = op._attrs
    check_window_attrs(op.type, attrs)
    inp = op.inputs[0].shape.with_rank(4)
    flt = op.inputs[1].shape.with_rank(4)
    fmt = attrs.get("data_format", "NHWC")
    n, c, _ = format_dims(fmt)
    fdims = flt.as_list() if flt.ndims is not None else [None] * 4
    in_depth = inp.dims[c].value if inp.ndims is not None else None
    if in_depth is not None and fdims[2] is not None and in_depth != fdims[2]:
        raise ValueError(f"Dimensions must be equal, but are {in_depth} and {fdims[2]}")
    depth = in_depth if in_depth is not None else fdims[2]
    out_depth = None if depth is None or fdims[3] is None else depth * fdims[3]
    rows, cols = spatial_output(inp, fdims[:2], attrs["strides"], attrs["dilations"], attrs)
    batch = inp.dims[n].value if inp.ndims is not None else None
    return [_nhwc_or_nchw(fmt, batch, rows, cols, out_depth)]


def _sizes_shape(index):
    def shape_fn(op):
        check_window_attrs(op.type, op._attrs)
        sizes = constant_value_as_shape(op.inputs[index])
        if sizes.ndims is None:
            return [unknown_shape(4)]
        sizes = sizes.with_rank(4)
        if index == 0:  # an input gradient has out_backprop's batch size
            n = format_dims(op._attrs.get("data_format", "NHWC"))[0]
            dy = op.inputs[2].shape
            batch = dy.dims[n].value if dy.ndims == 4 else None
            sizes = sizes.merge_with(TensorShape([batch if i == n else None for i in range(4)]))
        return [sizes]

    return shape_fn


register_op("Conv2D", inputs=["input: T", "filter: T"], outputs=["output: T"], attrs=_CONV_ATTRS,
            shape_fn=_conv2d_shape)
register_op("Conv2DBackpropInput", inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
            outputs=["output: T"], attrs=_CONV_ATTRS, shape_fn=_sizes_shape(0))
register_op("Conv2DBackpropFilter", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
            outputs=["output: T"], attrs=[a for a in _CONV_ATTRS if not a.startswith("T:")]
            + ["T: {half, bfloat16, float, double}"], shape_fn=_sizes_shape(1))
register_op("Conv2DBackpropInputV2", inputs=["input: T", "filter: T", "out_backprop: T"], outputs=["output: T"],
            attrs=[a for a in _CONV_ATTRS if not a.startswith("T:")] + ["T: {half, bfloat16, float, double, int32}"],
            shape_fn=lambda op: [op.inputs[0].shape])
register_op("Conv2DBackpropFilterV2", inputs=["input: T", "filter: T", "out_backprop: T"], outputs=["output: T"],
            attrs=[a for a in _CONV_ATTRS if not a.startswith("T:")] + ["T: {half, bfloat16, float, double}"],
            shape_fn=lambda op: [op.inputs[1].shape])
register_op("DepthwiseConv2dNative", inputs=["input: T", "filter: T"], outputs=["output: T"],
            attrs=_DEPTHWISE_ATTRS, shape_fn=_depthwise_shape)
register_op("DepthwiseConv2dNativeBackpropInput", inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
            outputs=["output: T"], attrs=_DEPTHWISE_ATTRS, shape_fn=_sizes_shape(0))
register_op("DepthwiseConv2dNativeBackpropFilter", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
            outputs=["output: T"], attrs=_DEPTHWISE_ATTRS, shape_fn=_sizes_shape(1))


def _conv_attrs(strides, padding, data_format, dilations):
    data_format = data_format or "NHWC"
    channel_index = 1 if data_format.startswith("NC") else 3
    padding, explicit = convert_padding(padding)
    return {"strides": get_sequence(strides, 2, channel_index, "strides"),
            "dilations": get_sequence(dilations, 2, channel_index, "dilations"),
            "padding": padding, "explicit_paddings": explicit, "data_format": data_format}


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=(1, 1, 1, 1), name=None, filters=None):
    """2-D convolution of a 4-D ``input`` with a ``[rows, cols, in, out]`` filter.

    ``padding`` is "SAME", "VALID" or explicit ``[[0, 0], [top, bottom], [left, right], [0, 0]]``.
    """
    if filter is None:
        filter = filters  # noqa: A001
    elif filters is not None:
        raise ValueError("Cannot specify both 'filter' and 'filters'.")
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    attrs["use_cudnn_on_gpu"] = use_cudnn_on_gpu
    return apply_op("Conv2D", [input, filter], attrs, name=name).outputs[0]


def convolution(input, filter, padding, strides=None, dilation_rate=None, name=None,  # noqa: A002
                data_format=None, filters=None, dilations=None):
    """N-D convolution; sparseflow implements the 2-D case (4-D input) as a Conv2D op."""
    filter = filters if filter is None else filter  # noqa: A001
    dilation_rate = dilations if dilation_rate is None else dilation_rate
    with name_scope(name, "convolution", [input, filter]) as scope:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        filter = convert_to_tensor(filter, name="filter")  # noqa: A001
        rank = filter.shape.ndims if filter.shape.ndims is not None else input.shape.ndims
        if rank is None:
            raise ValueError("Rank of convolution must be known")
        if rank != 4:
            raise ValueError(f"sparseflow implements 2-D convolution only (4-D input and filter); got rank "
                             f"{rank}.")
        if isinstance(padding, str):
            padding = padding.upper()
        attrs = _conv_attrs(strides, padding, data_format, dilation_rate)
        return apply_op("Conv2D", [input, filter], attrs, name=scope).outputs[0]


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None, padding=None,  # noqa: A002
                          use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1), name=None,
                          filters=None):
    """The gradient of Conv2D with respect to its input (of shape ``input_sizes``)."""
    filter = filters if filter is None else filter  # noqa: A001
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    return apply_op("Conv2DBackpropInput", [input_sizes, filter, out_backprop], attrs, name=name).outputs[0]


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """The gradient of Conv2D with respect to its filter (of shape ``filter_sizes``)."""
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    return apply_op("Conv2DBackpropFilter", [input, filter_sizes, out_backprop], attrs, name=name).outputs[0]


def conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding, use_cudnn_on_gpu=True,  # noqa: A002
                             explicit_paddings=(), data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """The gradient of Conv2D with respect to its input, whose shape ``input`` gives (its values are unused)."""
    attrs = _conv_attrs(strides, padding if padding != "EXPLICIT" else _explicit(explicit_paddings), data_format,
                        dilations)
    attrs["use_cudnn_on_gpu"] = use_cudnn_on_gpu
    return apply_op("Conv2DBackpropInputV2", [input, filter, out_backprop], attrs, name=name).outputs[0]


def conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding, use_cudnn_on_gpu=True,  # noqa: A002
                              explicit_paddings=(), data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """The gradient of Conv2D with respect to its filter, whose shape ``filter`` gives (its values are unused)."""
    attrs = _conv_attrs(strides, padding if padding != "EXPLICIT" else _explicit(explicit_paddings), data_format,
                        dilations)
    attrs["use_cudnn_on_gpu"] = use_cudnn_on_gpu
    return apply_op("Conv2DBackpropFilterV2", [input, filter, out_backprop], attrs, name=name).outputs[0]


def _explicit(flat):
    """TensorFlow's flat ``explicit_paddings`` (8 numbers) as the nested list ``padding`` also accepts."""
    flat = [int(v) for v in flat]
    if len(flat) != 8:
        raise ValueError(f"explicit_paddings must hold 8 numbers (before and after per dimension), got {flat}")
    return [flat[i:i + 2] for i in range(0, 8, 2)]


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """The transpose of conv2d (a Conv2DBackpropInput op) producing ``output_shape``."""
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    with name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        attrs = _conv_attrs(strides, padding, data_format, dilations)
        return apply_op("Conv2DBackpropInput", [output_shape, filter, value], attrs, name=scope).outputs[0]


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=(1, 1, 1, 1), name=None):
    """Per-channel convolution: filter ``[rows, cols, in, multiplier]`` gives ``in * multiplier`` outputs."""
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    return apply_op("DepthwiseConv2dNative", [input, filter], attrs, name=name).outputs[0]


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,  # noqa: A002
                     dilations=None):
    """``depthwise_conv2d_native`` with an optional dilation ``rate`` (``[r, r]``)."""
    rate = dilations if rate is None else rate
    with name_scope(name, "depthwise", [input, filter]) as scope:
        input = convert_to_tensor(input, name="tensor_in")  # noqa: A001
        filter = convert_to_tensor(filter, name="filter_in")  # noqa: A001
        attrs = _conv_attrs(strides, padding, data_format, rate)
        return apply_op("DepthwiseConv2dNative", [input, filter], attrs, name=scope).outputs[0]


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None, data_format=None,
           name=None, input=None, dilations=None):  # noqa: A002
    """1-D convolution of ``[batch, width, in]`` ("NWC") with ``[k, in, out]``, run as a Conv2D."""
    value = input if value is None else value
    with name_scope(name, "conv1d", [value, filters]) as scope:
        if data_format in (None, "NHWC", "NWC"):
            data_format, spatial_start, channel_index = "NHWC", -3, 2
        elif data_format in ("NCHW", "NCW"):
            data_format, spatial_start, channel_index = "NCHW", -2, 1
        else:
            raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}")
        attrs = {"strides": [1] + get_sequence(stride, 1, channel_index, "stride"),
                 "dilations": [1] + get_sequence(dilations, 1, channel_index, "dilations"),
                 "padding": padding, "data_format": data_format}
        if use_cudnn_on_gpu is not None:
            attrs["use_cudnn_on_gpu"] = use_cudnn_on_gpu
        expand_dims = tf_fn("expand_dims")
        value = expand_dims(value, spatial_start)
        filters = expand_dims(filters, 0)
        result = apply_op("Conv2D", [value, filters], attrs, name=scope).outputs[0]
        return tf_fn("squeeze")(result, [spatial_start])


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None,  # noqa: A002
                     name=None, data_format=None, dilations=None):
    """A depthwise convolution followed by a 1x1 (pointwise) convolution mixing the channels."""
    rate = dilations if rate is None else rate
    with name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]) as scope:
        input = convert_to_tensor(input, name="tensor_in")  # noqa: A001
        depthwise_filter = convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pointwise_filter = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        pw = pointwise_filter.shape.with_rank(4)
        pw.dims[0].assert_is_compatible_with(1)
        pw.dims[1].assert_is_compatible_with(1)
        attrs = _conv_attrs(strides, padding, data_format, rate)
        depthwise = apply_op("DepthwiseConv2dNative", [input, depthwise_filter], attrs,
                             name="depthwise").outputs[0]
        return conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], padding="VALID", data_format=data_format,
                      name=scope)


def atrous_conv2d(value, filters, rate, padding, name=None):
    """Dilated ("atrous") 2-D convolution with the same ``rate`` along rows and columns."""
    return convolution(value, filters, padding, dilation_rate=[int(rate)] * 2, name=name)
