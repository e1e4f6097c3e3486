"""CPU kernels of Roll, TensorScatterUpdate/Add/Sub/Min/Max, UnravelIndex, Bitcast, GuaranteeConst
and ParallelConcat.

Example:
    >>> from sparseflow._src.kernels.array_manip_kernels import tensor_scatter
    >>> tensor_scatter("TensorScatterAdd", np.zeros(3, np.int32), np.array([[1], [1]]), np.array([2, 3], np.int32))
    array([0, 5, 0], dtype=int32)
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels.array_shape_kernels import as_output, dbg, int_list, invalid
from sparseflow._src.kernels.registry import register_kernel


# ---------------------------------------------------------------- Roll
@register_kernel("Roll")
def _roll(node):
    def compute(x, shift, axis):
        x = np.asarray(x)
        if x.ndim < 1:
            raise invalid("input must be 1-D or higher")
        for what, v in (("shift", shift), ("axis", axis)):
            if np.ndim(v) > 1:
                raise invalid(f"{what} must be a scalar or a 1-D vector. Found: {dbg(np.shape(v))}")
        shifts, axes = int_list(shift), int_list(axis)
        if len(shifts) != len(axes):
            raise invalid(f"shift and axis must have the same size, but are {len(shifts)} and {len(axes)}")
        for a in axes:
            if not -x.ndim <= a < x.ndim:
                raise invalid(f"axis {a} is out of range")
        if x.size == 0 or not axes:
            return x
        return np.roll(x, shifts, axes)

    return compute


# ---------------------------------------------------------------- TensorScatter*
_ACCUMULATE = {"TensorScatterAdd": np.add, "TensorScatterSub": np.subtract, "TensorScatterMin": np.minimum,
               "TensorScatterMax": np.maximum}


def tensor_scatter(op_type, tensor, indices, updates, policy=""):
    """``tensor`` with ``updates`` applied at ``indices`` the way op ``op_type`` applies them."""
    tensor, indices, updates = np.asarray(tensor), np.asarray(indices), np.asarray(updates)
    if indices.ndim < 1:
        raise invalid(f"Indices shape must have rank at least one. Found:{dbg(indices.shape)}")
    r = indices.shape[-1]
    if r > tensor.ndim:
        raise invalid(f"Index innermost dimension length must be <= tensor rank; saw: {r} vs. {tensor.ndim}")
    expected = indices.shape[:-1] + tensor.shape[r:]
    if updates.shape != expected:
        raise invalid(f"updates.shape {dbg(updates.shape)} must be indices.shape[:-1] + "
                      f"tensor.shape[indices.shape[-1]:] = {dbg(expected)} (tensor shape {dbg(tensor.shape)}, "
                      f"indices shape {dbg(indices.shape)})")
    n = int(np.prod(indices.shape[:-1], dtype=np.int64))
    flat = indices.reshape(n, r).astype(np.int64)
    rows = updates.reshape((n,) + tensor.shape[r:])
    bad = ((flat < 0) | (flat >= np.array(tensor.shape[:r], dtype=np.int64))).any(axis=1)
    if bad.any():
        if policy == "IGNORE":
            flat, rows = flat[~bad], rows[~bad]
        else:
            k = int(np.argmax(bad))
            raise invalid(f"indices[{k}] = [{', '.join(str(int(v)) for v in flat[k])}] does not index into shape "
                          f"{dbg(tensor.shape)}")
    out = tensor.copy()
    if r == 0:  # each index names the whole tensor
        for row in rows:
            out[...] = row if op_type == "TensorScatterUpdate" else _ACCUMULATE[op_type](out, row)
        return out
    where = tuple(flat.T)
    if op_type == "TensorScatterUpdate":
        out[where] = rows  # with repeated indices the last update wins
    else:
        _ACCUMULATE[op_type].at(out, where, rows)
    return out


def _tensor_scatter_factory(op_type):
    def factory(node):
        policy = node.attrs.get("bad_indices_policy", "")
        policy = policy.decode() if isinstance(policy, bytes) else policy

        def compute(tensor, indices, updates):
            return as_output(tensor_scatter(op_type, tensor, indices, updates, policy))

        return compute

    return factory


for _op_type in ("TensorScatterUpdate", *_ACCUMULATE):
    register_kernel(_op_type)(_tensor_scatter_factory(_op_type))


# ---------------------------------------------------------------- UnravelIndex
@register_kernel("UnravelIndex")
def _unravel_index(node):
    def compute(indices, dims):
        indices, dims = np.asarray(indices), np.asarray(dims)
        if indices.ndim > 1:
            raise invalid(f"The indices can only be scalar or vector, got {dbg(indices.shape)}")
        if dims.ndim != 1:
            raise invalid(f"The dims can only be a 1-D vector, got {dbg(dims.shape)}")
        if (dims <= 0).any():
            raise invalid(f"Input dims must be positive, got {dims.tolist()}")
        total = int(np.prod(dims.astype(np.int64), dtype=np.int64))
        if ((indices < 0) | (indices >= total)).any():
            raise invalid(f"index out of bounds: the indices must be in [0, {total}) for dims {dims.tolist()}, "
                          f"got {indices.tolist()}")
        coords = np.unravel_index(indices.astype(np.int64), tuple(int(d) for d in dims))
        return np.array(coords, dtype=dims.dtype).reshape((dims.size,) + indices.shape)

    return compute


# ---------------------------------------------------------------- Bitcast
@register_kernel("Bitcast")
def _bitcast(node):
    src = np.dtype(node.attrs["T"].as_numpy_dtype)
    dst = np.dtype(node.attrs["type"].as_numpy_dtype)

    def compute(x):
        x = np.asarray(x, dtype=src)
        x = np.ascontiguousarray(x).reshape(x.shape)  # (ascontiguousarray makes 0-d arrays 1-d)
        if src.itemsize == dst.itemsize:
            return as_output(x.view(dst))
        if src.itemsize > dst.itemsize:
            return x.reshape(x.shape + (1,)).view(dst)
        ratio = dst.itemsize // src.itemsize
        if x.ndim < 1 or x.shape[-1] != ratio:
            raise invalid(f"Cannot bitcast from {node.attrs['T'].name} to {node.attrs['type'].name}: the last "
                          f"dimension of shape {dbg(x.shape)} must be {ratio}")
        return as_output(x.view(dst).reshape(x.shape[:-1]))

    return compute


# ---------------------------------------------------------------- GuaranteeConst, ParallelConcat
register_kernel("GuaranteeConst")(lambda node: lambda x: x)


@register_kernel("ParallelConcat")
def _parallel_concat(node):
    shape = node.attrs["shape"]
    dims = None if getattr(shape, "ndims", 0) is None else [int(d) for d in shape.as_list()]

    def compute(*values):
        values = [np.asarray(v) for v in values]
        for i, v in enumerate(values):
            if dims is not None and (v.ndim != len(dims) or v.shape[:1] != (1,) or list(v.shape[1:]) != dims[1:]):
                raise invalid(f"Input {i} of ParallelConcat has shape {dbg(v.shape)}; every input must be one row "
                              f"of the output shape {dbg(dims)}")
        out = np.concatenate(values, axis=0)
        if dims is not None and list(out.shape) != dims:
            raise invalid(f"ParallelConcat's inputs make shape {dbg(out.shape)}, not the declared {dbg(dims)}")
        return out

    return compute
