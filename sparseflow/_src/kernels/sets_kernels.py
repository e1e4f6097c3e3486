"""CPU kernels of SetSize and the three SetOperation ops: rows (all dimensions but the last) are
gathered into Python sets, combined, and written back as a SparseTensor with ascending values.

Example:
    >>> _combine({1, 2}, {2, 3}, "union")
    [1, 2, 3]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels.array_shape_kernels import dbg, invalid
from sparseflow._src.kernels.registry import register_kernel


def _combine(a: set, b: set, operation: str) -> list:
    if operation == "a-b":
        out = a - b
    elif operation == "b-a":
        out = b - a
    elif operation == "intersection":
        out = a & b
    else:
        out = a | b
    return sorted(out)


def _item(v):
    return v if isinstance(v, bytes) else v.item() if hasattr(v, "item") else v


def _dense_rows(x):
    x = np.asarray(x)
    if x.ndim < 2:
        raise invalid(f"Sets must have rank >= 2, got shape {dbg(x.shape)}")
    batch = x.shape[:-1]
    rows = x.reshape(int(np.prod(batch, dtype=np.int64)), x.shape[-1])
    return batch, {np.unravel_index(i, batch) if batch else (): {_item(v) for v in row}
                   for i, row in enumerate(rows) if row.size}


def _sparse_rows(indices, values, shape, validate, what):
    indices, values, shape = np.asarray(indices), np.asarray(values), np.asarray(shape)
    if indices.ndim != 2 or values.ndim != 1 or shape.ndim != 1 or indices.shape[0] != values.shape[0] or \
            indices.shape[1] != shape.shape[0]:
        raise invalid(f"{what}: indices {dbg(indices.shape)}, values {dbg(values.shape)} and shape "
                      f"{dbg(shape.shape)} do not describe one SparseTensor")
    if shape.size < 2:
        raise invalid(f"{what}: sets must have rank >= 2, got dense shape {shape.tolist()}")
    if validate and indices.size:
        if ((indices < 0) | (indices >= shape)).any():
            raise invalid(f"{what}: an index is outside the dense shape {shape.tolist()}")
        keys = [tuple(r) for r in indices.tolist()]
        if any(k2 <= k1 for k1, k2 in zip(keys, keys[1:])):
            raise invalid(f"{what}: indices are not in strictly increasing (row-major) order")
    rows: dict = {}
    for idx, v in zip(indices[:, :-1].tolist(), values.tolist()):
        rows.setdefault(tuple(idx), set()).add(_item(v))
    return tuple(int(d) for d in shape[:-1]), rows


def _result(batch, rows_a, rows_b, operation, dtype):
    out_rows = {}
    for key in set(rows_a) | set(rows_b):
        r = _combine(rows_a.get(key, set()), rows_b.get(key, set()), operation)
        if r:
            out_rows[key] = r
    width = max((len(r) for r in out_rows.values()), default=0)
    indices, values = [], []
    for key in sorted(out_rows):
        for j, v in enumerate(out_rows[key]):
            indices.append(list(key) + [j])
            values.append(v)
    rank = len(batch) + 1
    idx = np.array(indices, dtype=np.int64).reshape(len(indices), rank)
    strings = np.dtype(dtype).kind == "O"
    vals = np.empty(len(values), dtype=object) if strings else np.array(values, dtype=dtype)
    if strings:
        vals[:] = values
    return idx, vals, np.array(list(batch) + [width], dtype=np.int64)


def _operation(node):
    op = node.attrs["set_operation"]
    return op.decode() if isinstance(op, bytes) else op


def _check_batches(a, b):
    if a != b:
        raise invalid(f"Shapes of the two sets differ in their dimensions but the last: {list(a)} vs. {list(b)}")


@register_kernel("DenseToDenseSetOperation")
def _dense_dense(node):
    operation = _operation(node)

    def compute(set1, set2):
        batch1, rows1 = _dense_rows(set1)
        batch2, rows2 = _dense_rows(set2)
        _check_batches(batch1, batch2)
        return _result(batch1, rows1, rows2, operation, np.asarray(set1).dtype)

    return compute


@register_kernel("DenseToSparseSetOperation")
def _dense_sparse(node):
    operation, validate = _operation(node), node.attrs.get("validate_indices", True)

    def compute(set1, indices, values, shape):
        batch1, rows1 = _dense_rows(set1)
        batch2, rows2 = _sparse_rows(indices, values, shape, validate, "set2")
        _check_batches(batch1, batch2)
        return _result(batch1, rows1, rows2, operation, np.asarray(set1).dtype)

    return compute


@register_kernel("SparseToSparseSetOperation")
def _sparse_sparse(node):
    operation, validate = _operation(node), node.attrs.get("validate_indices", True)

    def compute(i1, v1, s1, i2, v2, s2):
        batch1, rows1 = _sparse_rows(i1, v1, s1, validate, "set1")
        batch2, rows2 = _sparse_rows(i2, v2, s2, validate, "set2")
        _check_batches(batch1, batch2)
        return _result(batch1, rows1, rows2, operation, np.asarray(v1).dtype)

    return compute


@register_kernel("SetSize")
def _set_size(node):
    validate = node.attrs.get("validate_indices", True)

    def compute(indices, values, shape):
        batch, rows = _sparse_rows(indices, values, shape, validate, "set")
        out = np.zeros(batch, dtype=np.int32)
        for key, row in rows.items():
            out[key] = len(row)
        return out

    return compute
