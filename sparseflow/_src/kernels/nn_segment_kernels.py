"""CPU kernels of the segment reductions and of Bincount / DenseBincount.

Sorted segments reduce contiguous runs with ``ufunc.reduceat``. Unsorted ones scatter rows into
their segments: large scatters (the gradient of a big embedding gather) run a numba loop, 10-20x
faster than ``ufunc.at``, which handles small inputs and the remaining dtypes; on all cores, each
thread reducing into its own range of segments (every segment still gets its rows in row order:
the same sums as one thread).
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels import intra_op
from sparseflow._src.kernels.jit_cache import cached_njit
from sparseflow._src.kernels.registry import register_kernel


def _invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _shape_str(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _acc_dtype(dt):
    return np.dtype(np.float32) if dt == np.float16 else dt


def _identity(kind, dt, unsorted):
    """The value of an empty segment."""
    if kind == "Prod":
        return 1
    if not unsorted or kind in ("Sum", "Mean"):
        return 0
    if np.issubdtype(dt, np.floating):
        info = np.finfo(dt)
    else:
        info = np.iinfo(dt)
    return info.min if kind == "Max" else info.max


_UFUNCS = {"Sum": np.add, "Mean": np.add, "Prod": np.multiply, "Max": np.maximum, "Min": np.minimum}
_OP_CODES = {"Sum": 0, "Prod": 1, "Max": 2, "Min": 3}
_NUMBA_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64))
NUMBA_MIN_ELEMENTS = 1 << 15


@cached_njit(nogil=True)
def scatter_rows_numba(out, ids, rows, op, lo, hi):
    """``out[ids[i]] (op)= rows[i]`` for every row with ``lo <= ids[i] < hi``, in row order (2-D arrays)."""
    n, d = rows.shape
    for i in range(n):
        s = ids[i]
        if s < lo or s >= hi:
            continue
        o = out[s]
        r = rows[i]
        if op == 0:
            for j in range(d):
                o[j] += r[j]
        elif op == 1:
            for j in range(d):
                o[j] *= r[j]
        elif op == 2:
            for j in range(d):
                if r[j] > o[j]:
                    o[j] = r[j]
        else:
            for j in range(d):
                if r[j] < o[j]:
                    o[j] = r[j]


PARALLEL_MIN_ELEMENTS = 1 << 16  # rows' elements per thread below which one thread scatters them


def scatter_rows(kind, out, ids, rows, fill=None):
    """Reduces ``rows[i]`` into ``out[ids[i]]`` (ids < 0 skipped); ``out`` is updated in place, after
    being set to ``fill`` if given (by each thread in its own range of segments)."""
    if (rows.size >= NUMBA_MIN_ELEMENTS and out.dtype in _NUMBA_DTYPES and rows.dtype == out.dtype
            and out.flags.c_contiguous):
        width = int(np.prod(out.shape[1:], dtype=np.int64))
        flat = out.reshape(out.shape[0], width)
        ids = ids.astype(np.intp, copy=False)
        rows = np.ascontiguousarray(rows).reshape(rows.shape[0], width)
        code = _OP_CODES[kind]

        def segments(lo, hi):
            if fill is not None:
                flat[lo:hi] = fill
            scatter_rows_numba(flat, ids, rows, code, lo, hi)

        # each thread reads every id: worth it only when the rows are many times the ids; the ranges are
        # offered to every thread (one busy beside leaves its range to the caller)
        threads = min(intra_op.total_threads(), rows.size // PARALLEL_MIN_ELEMENTS) if width >= 4 else 1
        n = out.shape[0]
        if threads >= 2 and n >= threads:
            intra_op.parallel_for(segments, n, -(-n // threads), threads)
        else:
            segments(0, n)
        return
    if fill is not None:
        out[...] = fill
    keep = ids >= 0
    if not keep.all():
        rows, ids = rows[keep], ids[keep]
    _UFUNCS[kind].at(out, ids, rows)


def _check_sorted(ids, rows):
    if ids.size == 0:
        return
    if rows <= 0 or ids[-1] < 0:
        raise _invalid("segment ids must be >= 0")
    if ids.size > 1 and np.any(ids[1:] < ids[:-1]):
        raise _invalid("segment ids are not increasing")
    if ids[0] < 0:
        raise _invalid(f"Segment id {int(ids[0])} out of range [0, {rows}), possibly because 'segment_ids' "
                       f"input is not sorted.")


def reduce_sorted(kind, data, ids, rows, counts_divisor=None):
    """Reduces runs of equal sorted ``ids`` over rows of ``data`` into ``rows`` output rows."""
    dt = data.dtype
    acc = _acc_dtype(dt)
    out = np.full((rows,) + data.shape[1:], _identity(kind, dt, False), acc)
    if ids.size:
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        seg = ids[starts]
        out[seg] = _UFUNCS[kind].reduceat(data.astype(acc, copy=False), starts, axis=0)
        if kind == "Mean" or counts_divisor is not None:
            counts = np.diff(np.r_[starts, ids.size])
            div = counts if counts_divisor is None else counts_divisor(counts)
            shaped = div.reshape((-1,) + (1,) * (data.ndim - 1)).astype(acc)
            out[seg] = _divide(out[seg], shaped, acc)
    return out.astype(dt, copy=False)


def _divide(a, b, dt):
    if np.issubdtype(dt, np.integer):
        q = np.abs(a) // b
        return np.where(a < 0, -q, q).astype(dt)  # C++ integer division truncates toward zero
    return a / b


def _segment_kernel(kind):
    def factory(node):
        def compute(data, segment_ids):
            data, ids = np.asarray(data), np.asarray(segment_ids)
            if ids.ndim != 1:
                raise _invalid("segment_ids should be a vector.")
            if data.ndim < 1 or ids.shape[0] != data.shape[0]:
                raise _invalid(f"segment_ids should be the same size as dimension 0 of input. "
                               f"segment_ids.shape = {_shape_str(ids.shape)} data.shape = "
                               f"{_shape_str(data.shape)}")
            rows = int(ids[-1]) + 1 if ids.size else 0
            _check_sorted(ids, rows)
            return reduce_sorted(kind, data, ids, rows)

        return compute

    return factory


for _kind in ("Sum", "Mean", "Max", "Min", "Prod"):
    register_kernel(f"Segment{_kind}")(_segment_kernel(_kind))


def _unsorted_kernel(kind):
    def factory(node):
        def compute(data, segment_ids, num_segments):
            data, ids = np.asarray(data), np.asarray(segment_ids)
            if np.ndim(num_segments) != 0:
                raise _invalid(f"num_segments should be a scalar, not shape "
                               f"{_shape_str(np.shape(num_segments))}")
            n = int(num_segments)
            if n < 0:
                raise _invalid(f"Input num_segments == {n} must not be negative.")
            if data.shape[:ids.ndim] != ids.shape:
                raise _invalid(f"data.shape = {_shape_str(data.shape)} does not start with "
                               f"segment_ids.shape = {_shape_str(ids.shape)}")
            flat_ids = ids.reshape(-1)
            bad = flat_ids >= n
            if bad.any():
                pos = np.unravel_index(int(np.argmax(bad)), ids.shape)
                raise _invalid(f"segment_ids{_shape_str(pos)} = {int(flat_ids[np.argmax(bad)])} is out of "
                               f"range [0, {n})")
            dt = data.dtype
            acc = _acc_dtype(dt)
            inner = data.shape[ids.ndim:]
            out = np.empty((n,) + inner, acc)
            scatter_rows(kind, out, flat_ids, data.reshape((flat_ids.size,) + inner).astype(acc, copy=False),
                         fill=_identity(kind, dt, True))
            return out.astype(dt, copy=False)

        return compute

    return factory


for _kind in ("Sum", "Max", "Min", "Prod"):
    register_kernel(f"UnsortedSegment{_kind}")(_unsorted_kernel(_kind))

_SPARSE_DIVISORS = {"Sum": None, "Mean": lambda c: c, "SqrtN": lambda c: np.sqrt(c)}


def _sparse_segment_kernel(kind, with_num_segments):
    divisor = _SPARSE_DIVISORS[kind]

    def factory(node):
        def compute(data, indices, segment_ids, num_segments=None):
            data, idx, ids = np.asarray(data), np.asarray(indices), np.asarray(segment_ids)
            if idx.ndim != 1:
                raise _invalid("indices should be a vector.")
            if ids.ndim != 1:
                raise _invalid("segment_ids should be a vector.")
            if idx.size != ids.size:
                raise _invalid("segment_ids and indices should have same size.")
            if data.ndim < 1:
                raise _invalid("Shape must be at least rank 1 but is rank 0")
            if with_num_segments:
                rows = int(num_segments)
            else:
                rows = int(ids[-1]) + 1 if ids.size else 0
            if ids.size:
                if rows < 0 or ids[-1] < 0:
                    raise _invalid("segment ids must be >= 0")
                if np.any(ids[1:] < ids[:-1]):
                    raise _invalid("segment ids are not increasing")
                if ids[0] < 0 or ids[-1] >= rows:
                    bad = int(ids[0]) if ids[0] < 0 else int(ids[-1])
                    raise _invalid(f"Segment id {bad} out of range [0, {rows}), possibly because "
                                   f"'segment_ids' input is not sorted.")
            bad = (idx < 0) | (idx >= data.shape[0])
            if bad.any():
                i = int(np.argmax(bad))
                raise _invalid(f"Bad: indices[{i}] == {int(idx[i])} out of range [0, {data.shape[0]})")
            return reduce_sorted("Sum", data[idx], ids, rows, divisor)

        if with_num_segments:
            return compute
        return lambda data, indices, segment_ids: compute(data, indices, segment_ids)

    return factory


for _kind in ("Sum", "Mean", "SqrtN"):
    register_kernel(f"SparseSegment{_kind}")(_sparse_segment_kernel(_kind, False))
    register_kernel(f"SparseSegment{_kind}WithNumSegments")(_sparse_segment_kernel(_kind, True))


def _sparse_segment_grad_kernel(kind):
    divisor = _SPARSE_DIVISORS[kind]

    def factory(node):
        def compute(grad, indices, segment_ids, output_dim0):
            grad, idx, ids = np.asarray(grad), np.asarray(indices), np.asarray(segment_ids)
            n = int(output_dim0)
            if idx.size != ids.size:
                raise _invalid("segment_ids and indices should have same size.")
            if ids.size and (ids.min() < 0 or ids.max() >= grad.shape[0]):
                raise _invalid(f"Segment id out of range [0, {grad.shape[0]}): {ids.tolist()}")
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise _invalid(f"Index out of range [0, {n}): {idx.tolist()}")
            acc = _acc_dtype(grad.dtype)
            scale = np.ones(ids.size, acc)
            if divisor is not None and ids.size:
                counts = np.bincount(ids, minlength=grad.shape[0])[ids]
                scale = (1.0 / divisor(counts.astype(acc))).astype(acc)
            rows = grad.astype(acc, copy=False)[ids] * scale.reshape((-1,) + (1,) * (grad.ndim - 1))
            out = np.zeros((n,) + grad.shape[1:], acc)
            scatter_rows("Sum", out, idx, rows)
            return out.astype(grad.dtype, copy=False)

        return compute

    return factory


for _kind in ("Sum", "Mean", "SqrtN"):
    register_kernel(f"SparseSegment{_kind}Grad")(_sparse_segment_grad_kernel(_kind))


def _count(arr, size, weights, dtype, binary):
    if size < 0:
        raise _invalid(f"size ({size}) must be non-negative")
    if arr.size and arr.min() < 0:
        raise _invalid("Input arr must be non-negative!")
    if weights.size and weights.shape != arr.shape:
        raise _invalid(f"Input arr and weights must have the same shape: {_shape_str(arr.shape)} vs "
                       f"{_shape_str(weights.shape)}")
    flat = arr.reshape(-1)
    keep = flat < size
    vals = flat[keep]
    if binary:
        out = np.zeros(size, dtype)
        out[vals] = 1
        return out
    if weights.size:
        w = weights.reshape(-1)[keep]
        out = np.zeros(size, np.float64 if np.issubdtype(dtype, np.floating) else np.int64)
        np.add.at(out, vals, w)
        return out.astype(dtype)
    return np.bincount(vals, minlength=size).astype(dtype)


@register_kernel("Bincount")
def _bincount(node):
    dtype = node.attrs["T"].as_numpy_dtype

    def compute(arr, size, weights):
        if np.ndim(size) != 0:
            raise _invalid(f"Shape must be rank 0 but is rank {np.ndim(size)}")
        return _count(np.asarray(arr), int(size), np.asarray(weights), dtype, False)

    return compute


@register_kernel("DenseBincount")
def _dense_bincount(node):
    dtype = node.attrs["T"].as_numpy_dtype
    binary = node.attrs.get("binary_output", False)

    def compute(inp, size, weights):
        inp, weights = np.asarray(inp), np.asarray(weights)
        if np.ndim(size) != 0:
            raise _invalid(f"Shape must be rank 0 but is rank {np.ndim(size)}")
        size = int(size)
        if inp.ndim == 2:
            if weights.size and weights.shape != inp.shape:
                raise _invalid(f"Input arr and weights must have the same shape: {_shape_str(inp.shape)} vs "
                               f"{_shape_str(weights.shape)}")
            rows = [_count(inp[i], size, weights[i] if weights.size else weights, dtype, binary)
                    for i in range(inp.shape[0])]
            return np.stack(rows) if rows else np.zeros((0, max(size, 0)), dtype)
        if inp.ndim > 2:
            raise _invalid(f"Shape must be at most rank 2 but is rank {inp.ndim}")
        return _count(inp, size, weights, dtype, binary)

    return compute
