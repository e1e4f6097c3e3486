"""CPU kernels of SparseSoftmax, SparseSparseMaximum/Minimum, SparseReduceMax(Sparse), SparseSplit,
SerializeSparse, SerializeManySparse, DeserializeSparse, DeserializeManySparse and SparseMatMul.

Example:
    >>> _row_keys(np.array([[0, 1], [0, 3], [2, 0]]), np.array([3, 4])).tolist()
    [0, 0, 2]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework.proto.tensor_pb2 import TensorProto
from sparseflow._src.framework.tensor_proto import dtype_from_enum, make_ndarray, tensor_content_proto
from sparseflow._src.kernels.array_shape_kernels import as_output, dbg, invalid
from sparseflow._src.kernels.registry import list_output, register_kernel
from sparseflow._src.kernels.sparse_kernels import _reduce_groups


def _check(indices, values, shape, what="input"):
    indices, values, shape = np.asarray(indices, np.int64), np.asarray(values), np.asarray(shape, np.int64)
    if indices.ndim != 2 or values.ndim != 1 or shape.ndim != 1 or indices.shape[0] != values.shape[0] or \
            indices.shape[1] != shape.shape[0]:
        raise invalid(f"{what}: indices {dbg(indices.shape)}, values {dbg(values.shape)} and shape "
                      f"{dbg(shape.shape)} do not describe one SparseTensor")
    return indices, values, shape


def _row_keys(indices, shape):
    """The flat row number (all dimensions but the last) of each entry."""
    if shape.size < 2:
        return np.zeros(len(indices), np.int64)
    return np.ravel_multi_index(tuple(indices[:, :-1].T), tuple(int(d) for d in shape[:-1]), mode="clip") \
        if len(indices) else np.zeros(0, np.int64)


@register_kernel("SparseSoftmax")
def _sparse_softmax(node):
    def compute(indices, values, shape):
        indices, values, shape = _check(indices, values, shape)
        if shape.size < 2:
            raise invalid(f"Input should have rank >= 2, but received shape: {shape.tolist()}")
        if values.size == 0:
            return values.copy()
        rows = _row_keys(indices, shape)
        uniq, inverse = np.unique(rows, return_inverse=True)
        work = values.astype(np.float64 if values.dtype == np.float64 else np.float32)
        peak = np.full(len(uniq), -np.inf, work.dtype)
        np.maximum.at(peak, inverse, work)
        e = np.exp(work - peak[inverse])
        total = np.zeros(len(uniq), work.dtype)
        np.add.at(total, inverse, e)
        return (e / total[inverse]).astype(values.dtype)

    return compute


def _sparse_sparse_factory(combine):
    def factory(node):
        def compute(ai, av, ash, bi, bv, bsh):
            ai, av, ash = _check(ai, av, ash, "a")
            bi, bv, bsh = _check(bi, bv, bsh, "b")
            if ash.tolist() != bsh.tolist():
                raise invalid(f"Operands do not have the same ranks or shapes: {ash.tolist()} vs. {bsh.tolist()}")
            table: dict = {}
            for k, v in zip(map(tuple, ai.tolist()), av.tolist()):
                table[k] = [v, 0]
            for k, v in zip(map(tuple, bi.tolist()), bv.tolist()):
                table.setdefault(k, [0, 0])[1] = v
            keys = sorted(table)
            out_i = np.array(keys, np.int64).reshape(len(keys), ash.size)
            out_v = np.array([combine(*table[k]) for k in keys], dtype=av.dtype)
            return out_i, out_v

        return compute

    return factory


register_kernel("SparseSparseMaximum")(_sparse_sparse_factory(max))
register_kernel("SparseSparseMinimum")(_sparse_sparse_factory(min))


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


@register_kernel("SparseReduceMax")
def _sparse_reduce_max(node):
    t = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(indices, values, shape, axes):
        if np.size(axes) == 0:  # no axes: nothing reduced (_reduce_groups reads none as all)
            axes = np.zeros((0,), np.int32)
            indices, values, shape = _check(indices, values, shape)
            out = np.zeros([int(d) for d in shape], dtype=t)
            if len(indices):
                out[tuple(indices.T)] = values
            return as_output(out)
        indices, values, kept, out_shape, keep, r = _reduce_groups(node, indices, values, shape, axes)
        out = np.full(out_shape, _lowest(t), dtype=t)
        pos = [indices[:, d] if d in kept else np.zeros(len(indices), np.int64) for d in range(r)] if keep else \
            [indices[:, d] for d in kept]
        if pos:
            np.maximum.at(out, tuple(pos), values.astype(t))
            hit = np.zeros(out_shape, dtype=bool)
            hit[tuple(pos)] = True
            out[~hit] = 0  # a group without values is 0, as in TensorFlow
        else:
            out[...] = values.max() if values.size else 0
        return as_output(out)

    return compute


@register_kernel("SparseReduceMaxSparse")
def _sparse_reduce_max_sparse(node):
    def compute(indices, values, shape, axes):
        indices, values, kept, out_shape, keep, r = _reduce_groups(node, indices, values, shape, axes)
        keys = np.stack([indices[:, d] if d in kept else np.zeros(len(indices), np.int64) for d in range(r)], 1) \
            if keep else indices[:, kept]
        if len(keys) == 0:
            return np.zeros((0, len(out_shape)), np.int64), values[:0], np.array(out_shape, np.int64)
        if keys.shape[1] == 0:
            return np.zeros((1, 0), np.int64), values.max(keepdims=True), np.array(out_shape, np.int64)
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        peaks = np.full(len(uniq), _lowest(values.dtype), dtype=values.dtype)
        np.maximum.at(peaks, inverse.reshape(-1), values)
        return uniq.astype(np.int64).reshape(-1, len(out_shape)), peaks, np.array(out_shape, np.int64)

    return compute


@register_kernel("SparseSplit")
def _sparse_split(node):
    n = int(node.attrs["num_split"])

    def compute(split_dim, indices, values, shape):
        indices, values, shape = _check(indices, values, shape)
        d = int(split_dim)
        if not -shape.size <= d < shape.size:
            raise invalid(f"Input split_dim should be between {-shape.size} and {shape.size}, got {d}")
        d %= shape.size
        size = int(shape[d])
        if n > size and size >= 0:
            raise invalid(f"SparseSplit: num_split ({n}) must not exceed the size of dimension {d} ({size})")
        base, extra = divmod(size, n)
        starts = [i * base + min(i, extra) for i in range(n + 1)]
        outs_i, outs_v, outs_s = [], [], []
        for k in range(n):
            lo, hi = starts[k], starts[k + 1]
            keep = (indices[:, d] >= lo) & (indices[:, d] < hi)
            idx = indices[keep].copy()
            idx[:, d] -= lo
            s = shape.copy()
            s[d] = hi - lo
            outs_i.append(idx)
            outs_v.append(values[keep])
            outs_s.append(s)
        return list_output(outs_i + outs_v + outs_s)

    return compute


def _serialize(indices, values, shape, dtype):
    parts = [tensor_content_proto(indices, "int64"), tensor_content_proto(values, dtype),
             tensor_content_proto(shape, "int64")]
    out = np.empty(3, dtype=object)
    out[:] = [p.SerializeToString() for p in parts]
    return out


@register_kernel("SerializeSparse")
def _serialize_sparse(node):
    dtype = node.attrs["T"]

    def compute(indices, values, shape):
        return _serialize(*_check(indices, values, shape), dtype)

    return compute


@register_kernel("SerializeManySparse")
def _serialize_many_sparse(node):
    dtype = node.attrs["T"]

    def compute(indices, values, shape):
        indices, values, shape = _check(indices, values, shape)
        if shape.size < 2:
            raise invalid(f"Input must have rank >= 2 to serialize its rows, got shape {shape.tolist()}")
        rows = int(shape[0])
        out = np.empty((rows, 3), dtype=object)
        for r in range(rows):
            keep = indices[:, 0] == r
            out[r] = _serialize(indices[keep][:, 1:], values[keep], shape[1:], dtype)
        return out

    return compute


def _parse(blob, what):
    proto = TensorProto()
    try:
        proto.ParseFromString(blob if isinstance(blob, bytes) else bytes(blob))
        return dtype_from_enum(proto.dtype), make_ndarray(proto)
    except Exception as e:  # noqa: BLE001 - malformed input is the input's fault
        raise invalid(f"Could not parse serialized sparse {what}: {e}") from None


def _deserialize_rows(serialized, want):
    """Rows of serialized SparseTensors [..., 3] -> one SparseTensor with the batch dimensions first."""
    blobs = np.asarray(serialized, dtype=object)
    if blobs.ndim < 1 or blobs.shape[-1] != 3:
        raise invalid(f"Serialized sparse should have 3 as its last dimension, got shape {dbg(blobs.shape)}")
    batch = blobs.shape[:-1]
    flat = blobs.reshape(-1, 3)
    parts = []
    for row in flat:
        _, idx = _parse(row[0], "indices")
        have, vals = _parse(row[1], "values")
        _, shp = _parse(row[2], "shape")
        if have != want:
            raise invalid(f"Requested SparseTensor of type {want.name} but SparseTensor[0].values.dtype() == "
                          f"{have.name}")
        shp = np.asarray(shp, np.int64).reshape(-1)
        parts.append((np.asarray(idx, np.int64).reshape(len(vals), shp.size), np.asarray(vals).reshape(-1), shp))
    ranks = {p[2].size for p in parts}
    if len(ranks) > 1:
        raise invalid(f"Inconsistent ranks of the serialized SparseTensors: {sorted(ranks)}")
    rank = ranks.pop() if ranks else 0
    inner = np.max(np.stack([p[2] for p in parts]), axis=0) if parts else np.zeros(rank, np.int64)
    out_i, out_v = [], []
    for flat_row, (idx, vals, _) in enumerate(parts):
        prefix = np.array(np.unravel_index(flat_row, batch) if batch else (), np.int64)
        out_i.append(np.hstack([np.broadcast_to(prefix, (len(idx), prefix.size)), idx]))
        out_v.append(vals)
    indices = np.vstack(out_i) if out_i else np.zeros((0, len(batch) + rank), np.int64)
    values = np.concatenate(out_v) if out_v else np.zeros(0, want.as_numpy_dtype)
    return indices.astype(np.int64), values, np.concatenate([np.array(batch, np.int64), inner]).astype(np.int64)


@register_kernel("DeserializeSparse")
def _deserialize_sparse(node):
    want = node.attrs["dtype"]

    def compute(serialized):
        blobs = np.asarray(serialized, dtype=object)
        if blobs.ndim == 1:  # one SparseTensor, no batch dimension
            indices, values, shape = _deserialize_rows(blobs[None], want)
            return indices[:, 1:], values, shape[1:]
        return _deserialize_rows(blobs, want)

    return compute


@register_kernel("DeserializeManySparse")
def _deserialize_many_sparse(node):
    want = node.attrs["dtype"]

    def compute(serialized):
        blobs = np.asarray(serialized, dtype=object)
        if blobs.ndim != 2:
            raise invalid(f"Serialized sparse should be a matrix [N, 3], got shape {dbg(blobs.shape)}")
        return _deserialize_rows(blobs, want)

    return compute


@register_kernel("SparseMatMul")
def _sparse_matmul(node):
    ta, tb = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)

    def compute(a, b):
        a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
        if a.ndim != 2 or b.ndim != 2:
            raise invalid(f"a and b must be matrices: {dbg(a.shape)} {dbg(b.shape)}")
        a2, b2 = (a.T if ta else a), (b.T if tb else b)
        if a2.shape[1] != b2.shape[0]:
            raise invalid(f"Matrix size incompatible: a: {dbg(a.shape)}, b: {dbg(b.shape)}")
        return (a2 @ b2).astype(np.float32)

    return compute
