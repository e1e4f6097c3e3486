"""CPU kernels of GatherV2, GatherNd, ScatterNd, Unique, UniqueWithCounts, ListDiff,
DynamicPartition and DynamicStitch.

A large gather along axis 0 (an embedding lookup: ``[batch * fields, dim]`` rows of a temporary
matrix) is copied in chunks of indices on all cores (``intra_op.parallel_for``; NumPy's ``take``
releases the GIL), each chunk into its part of one output.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels import intra_op
from sparseflow._src.kernels.array_shape_kernels import as_output, dbg, invalid
from sparseflow._src.kernels.registry import list_output, register_kernel


def _bad_position(bad_mask):
    pos = np.argwhere(bad_mask)[0]
    return "[" + ",".join(str(int(p)) for p in pos) + "]"


def check_indices(indices, limit, what="indices"):
    """InvalidArgumentError naming the first index outside ``[0, limit)``."""
    bad = (indices < 0) | (indices >= limit)
    if bad.any():
        where = _bad_position(bad) if indices.ndim else ""
        value = int(indices[tuple(np.argwhere(bad)[0])]) if indices.ndim else int(indices)
        raise invalid(f"{what}{where} = {value} is not in [0, {limit})")


PARALLEL_MIN_WORK = 1 << 15  # a thread's share at least, in elements copied (an index costs about 8)
INDEX_COST = 8


def take_rows(params: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``np.take(params, indices, axis=0)`` for indices already checked, on all cores when large."""
    row = int(np.prod(params.shape[1:], dtype=np.int64))
    if indices.size * (row + INDEX_COST) < 2 * PARALLEL_MIN_WORK or intra_op.total_threads() < 2 or \
            params.dtype.hasobject:
        return np.take(params, indices, axis=0)
    out = np.empty(indices.shape + params.shape[1:], params.dtype)
    flat_out, flat_idx = out.reshape((indices.size,) + params.shape[1:]), indices.reshape(-1)

    def chunk(lo, hi):
        np.take(params, flat_idx[lo:hi], axis=0, out=flat_out[lo:hi], mode="clip")  # checked: clip never applies

    intra_op.parallel_for(chunk, indices.size, max(1, PARALLEL_MIN_WORK // (row + INDEX_COST)))
    return out


@register_kernel("GatherV2")
def _gather(node):
    batch_dims = int(node.attrs.get("batch_dims", 0))

    def compute(params, indices, axis):
        params, indices = np.asarray(params), np.asarray(indices)
        r = params.ndim
        a = int(np.reshape(axis, -1)[0])
        if a < -r or a >= r:
            raise invalid(f"Expected axis in the range [{-r}, {r}), but got {a}")
        a = a + r if a < 0 else a
        bd = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
        if bd > a:
            raise invalid(f"batch_dims ({batch_dims}) must be less than or equal to axis ({a}).")
        check_indices(indices, params.shape[a])
        if bd == 0:
            return as_output(take_rows(params, indices) if a == 0 else np.take(params, indices, axis=a))
        if params.shape[:bd] != indices.shape[:bd]:
            raise invalid(f"params.shape[:{bd}] = {dbg(params.shape[:bd])} must equal indices.shape[:{bd}] = "
                          f"{dbg(indices.shape[:bd])}")
        batch = int(np.prod(params.shape[:bd], dtype=np.int64))
        p = params.reshape((batch,) + params.shape[bd:])
        i = indices.reshape((batch,) + indices.shape[bd:])
        parts = [np.take(p[b], i[b], axis=a - bd) for b in range(batch)]
        out_shape = params.shape[:a] + indices.shape[bd:] + params.shape[a + 1:]
        if not parts:
            return np.zeros(out_shape, dtype=params.dtype)
        return np.stack(parts).reshape(out_shape)

    return compute


@register_kernel("GatherNd")
def _gather_nd(node):
    def compute(params, indices):
        params, indices = np.asarray(params), np.asarray(indices)
        if indices.ndim < 1:
            raise invalid(f"indices must be at least a vector, got shape {dbg(indices.shape)}")
        r = indices.shape[-1]
        if r > params.ndim:
            raise invalid(f"index innermost dimension length must be <= params rank; saw: {r} vs. "
                          f"{params.ndim}")
        flat = indices.reshape(int(np.prod(indices.shape[:-1], dtype=np.int64)), r)
        bad = ((flat < 0) | (flat >= np.array(params.shape[:r], dtype=np.int64))).any(axis=1)
        if bad.any():
            k = int(np.argmax(bad))
            pos = np.unravel_index(k, indices.shape[:-1]) if indices.ndim > 1 else ()
            where = "[" + ",".join(str(int(p)) for p in pos) + "]"
            raise invalid(f"indices{where} = [{', '.join(str(int(v)) for v in flat[k])}] does not index into "
                          f"param shape {dbg(params.shape)}, node name: {node.name}")
        out = params[tuple(flat.T)] if r else np.broadcast_to(params, (flat.shape[0],) + params.shape)
        return as_output(np.array(out).reshape(indices.shape[:-1] + params.shape[r:]))

    return compute


@register_kernel("ScatterNd")
def _scatter_nd(node):
    def compute(indices, updates, shape):
        indices, updates = np.asarray(indices), np.asarray(updates)
        dims = [int(d) for d in np.reshape(shape, -1)]
        r = indices.shape[-1] if indices.ndim else 0
        if r > len(dims):
            raise invalid(f"Output must have rank at least {r}, got shape {dbg(dims)}")
        expected = indices.shape[:-1] + tuple(dims[r:])
        if updates.shape != expected:
            raise invalid(
                f"updates.shape {dbg(updates.shape)} must be indices.shape[:-1] + shape[indices.shape[-1]:]"
                f" = {dbg(expected)}")
        out = np.zeros(dims, dtype=updates.dtype)
        flat = indices.reshape(int(np.prod(indices.shape[:-1], dtype=np.int64)), r)
        bad = ((flat < 0) | (flat >= np.array(dims[:r], dtype=np.int64))).any(axis=1)
        if bad.any():
            k = int(np.argmax(bad))
            raise invalid(
                f"indices[{k}] = [{', '.join(str(int(v)) for v in flat[k])}] does not index into shape "
                f"{dbg(dims)}")
        np.add.at(out, tuple(flat.T), updates.reshape((flat.shape[0],) + tuple(dims[r:])))
        return as_output(out)

    return compute


def unique_first_order(x):
    """(values in order of first occurrence, index of each element into them)."""
    x = np.asarray(x)
    if x.size == 0:
        return x[:0], np.zeros(0, dtype=np.int64)
    kwargs = {"equal_nan": False} if x.dtype.kind in "fc" else {}
    _, first, inverse = np.unique(x, return_index=True, return_inverse=True, **kwargs)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return x[first[order]], rank[inverse.reshape(-1)]


def _uniquer(with_counts):
    def factory(node):
        t = node.output_dtypes[1].as_numpy_dtype

        def compute(x):
            x = np.asarray(x)
            if x.ndim != 1:
                raise invalid(f"unique expects a 1D vector, got shape {dbg(x.shape)}")
            y, idx = unique_first_order(x)
            idx = idx.astype(t)
            if not with_counts:
                return y, idx
            return y, idx, np.bincount(idx, minlength=y.size).astype(t)

        return compute

    return factory


register_kernel("Unique")(_uniquer(False))
register_kernel("UniqueWithCounts")(_uniquer(True))


@register_kernel("ListDiff")
def _list_diff(node):
    t = node.output_dtypes[1].as_numpy_dtype

    def compute(x, y):
        x, y = np.asarray(x), np.asarray(y)
        if x.ndim != 1 or y.ndim != 1:
            raise invalid(f"x should be a 1D vector, got shape {dbg(x.shape)}" if x.ndim != 1 else
                          f"y should be a 1D vector, got shape {dbg(y.shape)}")
        keep = np.array([v not in set(y.tolist()) for v in x.tolist()], dtype=bool) if x.dtype == object \
            else ~np.isin(x, y)
        idx = np.flatnonzero(keep).astype(t)
        return x[keep], idx

    return compute


@register_kernel("DynamicPartition")
def _dynamic_partition(node):
    num = node.attrs["num_partitions"]

    def compute(data, partitions):
        data, partitions = np.asarray(data), np.asarray(partitions)
        if data.shape[:partitions.ndim] != partitions.shape:
            raise invalid(f"data.shape must start with partitions.shape, got data.shape = {dbg(data.shape)}, "
                          f"partitions.shape = {dbg(partitions.shape)}")
        bad = (partitions < 0) | (partitions >= num)
        if bad.any():
            pos = np.argwhere(bad)[0]
            where = "[" + ",".join(str(int(p)) for p in pos) + "]" if partitions.ndim else ""
            raise invalid(f"partitions{where} = {int(partitions[tuple(pos)])} is not in [0, {num})")
        flat_p = partitions.reshape(-1)
        flat_d = data.reshape((flat_p.size,) + data.shape[partitions.ndim:])
        return list_output(flat_d[flat_p == i] for i in range(num))

    return compute


@register_kernel("DynamicStitch")
def _dynamic_stitch(node):
    n = node.attrs["N"]

    def compute(*args):
        indices = [np.asarray(a) for a in args[:n]]
        data = [np.asarray(a) for a in args[n:]]
        rest = None
        for i, (ind, d) in enumerate(zip(indices, data)):
            if d.shape[:ind.ndim] != ind.shape:
                raise invalid(f"data[{i}].shape = {dbg(d.shape)} does not start with indices[{i}].shape = "
                              f"{dbg(ind.shape)}")
            r = d.shape[ind.ndim:]
            if rest is None:
                rest = r
            elif r != rest:
                raise invalid(f"Need data[0].shape[{indices[0].ndim}:] = data[{i}].shape[{ind.ndim}:], got "
                              f"data[0].shape = {dbg(data[0].shape)}, data[{i}].shape = {dbg(d.shape)}")
        max_index = max((int(ind.max()) for ind in indices if ind.size), default=-1)
        size = max_index + 1
        out = np.zeros((size,) + rest, dtype=data[0].dtype)
        if data[0].dtype == object:
            out[...] = b""
        for i, (ind, d) in enumerate(zip(indices, data)):
            flat = ind.reshape(-1)
            if flat.size and flat.min() < 0:
                raise invalid(f"indices[{i}] has a negative index {int(flat.min())}")
            out[flat] = d.reshape((flat.size,) + rest)
        return out

    return compute
