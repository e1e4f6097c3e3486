"""CPU kernels of the math family: Cast, ClipByValue, Select/SelectV2/Where, AddN and the complex-part
ops here; elementwise tables, reductions and linear algebra in the ``math_*_kernels`` modules
(imported below so that every math kernel is registered).

Example:
    >>> from sparseflow._src.framework import dtypes
    >>> from sparseflow._src.kernels.registry import KernelNode, get_kernel
    >>> node = KernelNode("c", "Cast", {"SrcT": dtypes.float32, "DstT": dtypes.int32}, [], [dtypes.int32], "")
    >>> get_kernel("Cast").factory(node)(np.array([-1.7, 2.9], np.float32))
    array([-1,  2], dtype=int32)
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes, errors
from sparseflow._src.kernels import (  # noqa: F401 - imported to register kernels
    math_cwise_kernels,
    math_linalg_kernels,
    math_reduction_kernels,
)
from sparseflow._src.kernels.registry import register_kernel


def _shape(v) -> str:
    return "[" + ",".join(str(d) for d in np.shape(v)) + "]"


@register_kernel("Cast")
def _cast(node):
    src, dst = node.attrs["SrcT"].base_dtype, node.attrs["DstT"].base_dtype
    if (src == dtypes.string) != (dst == dtypes.string):
        raise errors.UnimplementedError(None, None, f"Cast {src.name} to {dst.name} is not supported")
    out = np.dtype(dst.as_numpy_dtype)
    if src == dst:
        return lambda x: x
    if src.is_complex and not dst.is_complex:
        def compute(x):
            with np.errstate(all="ignore"):
                return np.real(x).astype(out)
        return compute

    def compute(x):
        with np.errstate(all="ignore"):
            r = np.asarray(x).astype(out)
        return r if r.ndim else r[()]

    return compute


@register_kernel("ClipByValue")
def _clip_by_value(node):
    def compute(t, lo, hi):
        for what, v in (("clip_value_min", lo), ("clip_value_max", hi)):
            if np.ndim(v) and np.shape(v) != np.shape(t):
                raise errors.InvalidArgumentError(
                    None, None, f"{what} and t must have same shape, or {what} must be a scalar: "
                                f"t shape: {_shape(t)} {what} shape: {_shape(v)}")
        return np.maximum(np.minimum(t, hi), lo).astype(np.asarray(t).dtype, copy=False)

    return compute


@register_kernel("Select")
def _select(node):
    def compute(cond, t, e):
        ts, es, cs = np.shape(t), np.shape(e), np.shape(cond)
        if ts != es:
            raise errors.InvalidArgumentError(
                None, None, f"'then' and 'else' must have the same size.  but received: {_shape(t)} vs. "
                            f"{_shape(e)}")
        if cs == ts or len(cs) == 0:
            return np.where(cond, t, e) if len(cs) else (t if cond else e)
        if len(cs) == 1 and len(ts) >= 1 and cs[0] == ts[0]:
            rows = np.asarray(cond).reshape((-1,) + (1,) * (len(ts) - 1))
            return np.where(rows, t, e)
        if len(cs) == 1 and len(ts) >= 1:
            raise errors.InvalidArgumentError(
                None, None, f"Number of batches of 'then' must match size of 'cond', but saw: {ts[0]} vs. "
                            f"{cs[0]}")
        raise errors.InvalidArgumentError(
            None, None, f"'condition', 'then' and 'else' must have the same size.  but received: "
                        f"{_shape(cond)}, {_shape(t)} and {_shape(e)}.")

    return compute


@register_kernel("SelectV2")
def _select_v2(node):
    def compute(cond, t, e):
        try:
            out_shape = np.broadcast_shapes(np.shape(cond), np.shape(t), np.shape(e))
        except ValueError:
            raise errors.InvalidArgumentError(
                None, None, f"condition {_shape(cond)}, then {_shape(t)}, and else {_shape(e)} must be "
                            f"broadcastable") from None
        r = np.where(cond, t, e)
        return r if np.shape(r) == out_shape else np.broadcast_to(r, out_shape)

    return compute


@register_kernel("Where")
def _where(node):
    def compute(x):
        if np.ndim(x) == 0:
            raise errors.InvalidArgumentError(None, None, "WhereOp : Unhandled input dimensions: 0 (the input "
                                                          "must have rank >= 1)")
        return np.argwhere(x).astype(np.int64, copy=False)

    return compute


@register_kernel("AddN")
def _add_n(node):
    if node.output_dtypes[0].base_dtype == dtypes.variant:  # tensor lists (TensorArray gradients)
        from sparseflow._src.kernels.control_flow_kernels import add_tensor_lists

        return add_tensor_lists
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(*xs):
        first = np.shape(xs[0])
        for i, x in enumerate(xs[1:], 1):
            if np.shape(x) != first:
                raise errors.InvalidArgumentError(
                    None, None, f"Inputs to operation AddN of type AddN must have the same size and shape.  "
                                f"Input 0: {_shape(xs[0])} != input {i}: {_shape(x)}")
        total = np.array(xs[0], dtype=out, copy=True)
        for x in xs[1:]:
            total += x
        return total

    return compute


def _to_real(fn):
    def factory(node):
        out = np.dtype(node.output_dtypes[0].as_numpy_dtype)
        return lambda x: np.asarray(fn(x)).astype(out, copy=False)

    return factory


for _op, _fn in (("ComplexAbs", np.abs), ("Real", np.real), ("Imag", np.imag), ("Angle", np.angle)):
    register_kernel(_op)(_to_real(_fn))


@register_kernel("Complex")
def _complex(node):
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(re, im):
        try:
            shape = np.broadcast_shapes(np.shape(re), np.shape(im))
        except ValueError:
            raise errors.InvalidArgumentError(None, None,
                                              f"Incompatible shapes: {_shape(re)} vs. {_shape(im)}") from None
        z = np.empty(shape, dtype=out)  # each part set on its own: re + 1j*im turns inf + NaN*j into NaN + NaN*j
        z.real, z.imag = re, im
        return z

    return compute
