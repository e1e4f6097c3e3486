"""CPU kernels of Slice and StridedSlice.

StridedSlice turns its sparse spec (begin/end/strides and the five masks) into a NumPy index
tuple: Python slices clamp negative and out-of-range bounds exactly as TensorFlow canonicalizes
them, an ellipsis and newaxis entries map to ``...`` and ``None``, shrink entries to checked ints.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels.array_shape_kernels import as_output, dbg, int_list, invalid
from sparseflow._src.kernels.registry import register_kernel


def slice_index(shape, begin, size) -> tuple:
    """The NumPy index tuple of ``Slice(x, begin, size)`` on an array of ``shape`` (``size[i] == -1``:
    to the end), checked as TensorFlow's kernel checks it."""
    b, s = int_list(begin), int_list(size)
    if len(b) != len(shape) or len(s) != len(shape):
        raise invalid(
            f"Expected begin and size arguments to be 1-D tensors of size {len(shape)}, but got shapes "
            f"{dbg(np.shape(begin))} and {dbg(np.shape(size))} instead.")
    index = []
    for i, (bi, si) in enumerate(zip(b, s)):
        dim = shape[i]
        if si == -1:
            si = dim - bi
        if not 0 <= bi <= dim:
            raise invalid(f"Expected begin[{i}] in [0, {dim}], but got {bi}")
        if not (0 <= si and bi + si <= dim):
            raise invalid(f"Expected size[{i}] in [0, {dim - bi}], but got {si}")
        index.append(slice(bi, bi + si))
    return tuple(index)


@register_kernel("Slice")
def _slice(node):
    def compute(x, begin, size):
        x = np.asarray(x)
        return as_output(x[slice_index(x.shape, begin, size)])

    return compute


def strided_index(ndim, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask,
                  shape):
    """The NumPy index tuple of a StridedSlice spec on an array of ``shape``."""
    n = len(strides)
    if len(begin) != n or len(end) != n:
        raise invalid(f"Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
                      f"[{len(begin)}], [{len(end)}], and [{n}] instead.")
    if ellipsis_mask & (ellipsis_mask - 1):
        raise invalid("Multiple ellipses in slice spec not allowed")
    index = []
    used = 0  # input dims consumed by non-ellipsis, non-newaxis entries
    for i in range(n):
        bit = 1 << i
        if not (ellipsis_mask & bit) and not (new_axis_mask & bit):
            used += 1
    if used > ndim:
        raise invalid(f"Index out of range using input dim {ndim}; input has only {ndim} dims")
    dim_i = 0
    for i in range(n):
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
            dim_i = ndim - (used - sum(1 for j in range(i) if not (ellipsis_mask | new_axis_mask) & (1 << j)))
            continue
        if new_axis_mask & bit:
            index.append(None)
            continue
        s = strides[i]
        if s == 0:
            raise invalid(f"strides[{i}] must be non-zero")
        if shrink_mask & bit:
            if s <= 0:
                raise invalid("only stride 1 allowed on non-range indexing.")
            dim = shape[dim_i]
            b = begin[i] + dim if begin[i] < 0 else begin[i]
            if b < 0 or b >= dim:
                raise invalid(f"slice index {begin[i]} of dimension {dim_i} out of bounds.")
            index.append(b)
        else:
            index.append(slice(None if begin_mask & bit else begin[i], None if end_mask & bit else end[i], s))
        dim_i += 1
    return tuple(index)


@register_kernel("StridedSlice")
def _strided_slice(node):
    masks = [int(node.attrs.get(k, 0)) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                                  "shrink_axis_mask")]

    def compute(x, begin, end, strides):
        x = np.asarray(x)
        index = strided_index(x.ndim, int_list(begin), int_list(end), int_list(strides), *masks, x.shape)
        return as_output(x[index])

    return compute


@register_kernel("StridedSliceGrad")
def _strided_slice_grad(node):
    masks = [int(node.attrs.get(k, 0)) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                                  "shrink_axis_mask")]

    def compute(shape, begin, end, strides, dy):
        dims = int_list(shape)
        dy = np.asarray(dy)
        out = np.zeros(dims, dtype=dy.dtype)
        index = strided_index(len(dims), int_list(begin), int_list(end), int_list(strides), *masks, dims)
        target = out[index]
        if target.shape != dy.shape:
            raise invalid(f"shape of dy was {dbg(dy.shape)} instead of {dbg(target.shape)}")
        out[index] = dy
        return as_output(out)

    return compute
