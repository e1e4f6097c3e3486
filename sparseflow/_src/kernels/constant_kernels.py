"""CPU kernels of Const, Placeholder and PlaceholderWithDefault."""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel


@register_kernel("Const")
def _const(node):
    value = node.attrs["value"]
    if value.ndim == 0 and value.dtype != object:
        value = value[()]  # a NumPy scalar, as TensorFlow fetches 0-d tensors
    return lambda: value


@register_kernel("Placeholder")
def _placeholder(node):
    dtype = node.attrs["dtype"]
    shape = node.attrs["shape"]
    dims = "<unknown>" if shape.ndims is None else "[" + ",".join(
        "?" if d is None else str(d) for d in shape.as_list()) + "]"

    def compute():
        raise errors.InvalidArgumentError(
            None, None, f"You must feed a value for placeholder tensor '{node.name}' with dtype "
                        f"{dtype.name} and shape {dims}")

    return compute


@register_kernel("PlaceholderWithDefault")
def _placeholder_with_default(node):
    shape = node.attrs.get("shape")

    def compute(x):
        # TensorFlow forwards any default, so its static shape can lie; here a default that does not fit
        # the declared shape is an error naming both.
        if shape is not None and not shape.is_compatible_with(np.shape(x)):
            raise errors.InvalidArgumentError(
                None, None, f"The default value of {node.name} has shape {list(np.shape(x))}, which is not "
                            f"compatible with its declared shape {shape}")
        return x

    return compute
