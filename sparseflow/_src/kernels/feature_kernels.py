"""CPU kernels of Bucketize, SparseCross and StringFingerprint64, matching TensorFlow's results bit
for bit (StringFingerprint64 is the uint64 FarmHash Fingerprint64 of each string).

SparseCross is vectorized: for each row, the combinations of the rows' features are numbered
``k = 0 .. prod(counts) - 1`` in mixed radix (last input fastest), which gives every input's
feature index without a per-row loop; hashed crosses chain the feature fingerprints with
FingerprintCat64 over whole arrays (kernels/farmhash.py).
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.farmhash import fingerprint64_strings, fingerprint_cat64, hash_buckets
from sparseflow._src.kernels.registry import register_kernel

_INT64_MAX = np.uint64(2**63 - 1)


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


@register_kernel("Bucketize")
def _bucketize(node):
    bounds = np.asarray(node.attrs["boundaries"], np.float32)

    def compute(x):
        arr = np.asarray(x)
        # TensorFlow compares in the type of the boundaries (float) unless the input is double.
        probe = arr if arr.dtype == np.float64 else arr.astype(np.float32)
        edges = bounds.astype(np.float64) if arr.dtype == np.float64 else bounds
        out = np.searchsorted(edges, probe, side="right").astype(np.int32)
        return out[()] if out.ndim == 0 else out

    return compute


@register_kernel("StringFingerprint64")
def _string_fingerprint64(node):
    def compute(x):
        out = fingerprint64_strings(np.asarray(x, dtype=object))
        return out[()] if out.ndim == 0 else out

    return compute


class _Column:
    """One cross input: each row's features are ``flat[start[b] : start[b] + count[b]]``."""

    def __init__(self, flat: np.ndarray, start: np.ndarray, count: np.ndarray):
        self.flat, self.start, self.count = flat, start, count


def _sparse_column(indices, values, shape, i):
    indices, values, shape = np.asarray(indices), np.asarray(values), np.asarray(shape).reshape(-1)
    if indices.ndim != 2 or (indices.size and indices.shape[1] != 2):
        raise _invalid(f"Expected D2 of index to be 2 got {indices.shape[1] if indices.ndim == 2 else indices.ndim}"
                       f" at position {i}")
    if shape.size != 2:
        raise _invalid(f"Expected shape to be a 2-D sparse tensor (shape of size 2), got size {shape.size} at "
                       f"position {i}")
    if values.shape[0] != indices.shape[0]:
        raise _invalid(f"Expected size of values to be {indices.shape[0]} got {values.shape[0]} at position {i}")
    batch = int(shape[0])
    rows = indices[:, 0].astype(np.int64) if indices.size else np.zeros(0, np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= batch):
        raise _invalid(f"Row index out of range [0, {batch}) in sparse input {i}")
    order = np.argsort(rows, kind="stable")
    count = np.bincount(rows, minlength=batch).astype(np.int64)
    return batch, values.reshape(-1)[order], count


def _columns(args, n, n_dense):
    ind, val, shp, dense = args[:n], args[n:2 * n], args[2 * n:3 * n], args[3 * n:3 * n + n_dense]
    raw, batch = [], None
    for i in range(n):
        b, flat, count = _sparse_column(ind[i], val[i], shp[i], i)
        raw.append((b, flat, count))
    for i, d in enumerate(dense):
        d = np.asarray(d)
        if d.ndim != 2:
            raise _invalid(f"Dense inputs should be a matrix but received shape {list(d.shape)} at position {i}")
        raw.append((d.shape[0], d.reshape(-1), np.full(d.shape[0], d.shape[1], np.int64)))
    for i, (b, _, _) in enumerate(raw):
        if batch is None:
            batch = b
        elif b != batch:
            raise _invalid(f"Expected batch size {batch} got {b} at position {i}")
    cols = []
    for b, flat, count in raw:
        start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64) if b else np.zeros(0, np.int64)
        cols.append(_Column(flat, start, count))
    return batch or 0, cols


def _combinations(batch, cols):
    """(row of each output, every column's feature index for each output, crosses per row)."""
    counts = np.stack([c.count for c in cols]) if cols else np.zeros((0, batch), np.int64)
    per_row = np.prod(counts, axis=0) if cols else np.zeros(batch, np.int64)
    total = int(per_row.sum())
    rows = np.repeat(np.arange(batch, dtype=np.int64), per_row)
    k = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    picks, stride = [None] * len(cols), np.ones(total, np.int64)
    for j in range(len(cols) - 1, -1, -1):
        cnt = cols[j].count[rows]
        picks[j] = cols[j].start[rows] + (k // stride) % np.maximum(cnt, 1)
        stride = stride * cnt
    return rows, k, picks, per_row


def _fingerprints(flat: np.ndarray) -> np.ndarray:
    if flat.dtype == object:
        return fingerprint64_strings(flat)
    return flat.astype(np.int64).view(np.uint64)


def _feature_text(v) -> bytes:
    return v if isinstance(v, bytes) else str(int(v)).encode("ascii")


@register_kernel("SparseCross")
def _sparse_cross(node):
    a = node.attrs
    n, n_dense = a["N"], len(a.get("dense_types") or [])
    hashed, num_buckets, hash_key = a["hashed_output"], a["num_buckets"], a["hash_key"]
    internal = a.get("internal_type")
    if internal is not None and internal.name == "string":  # int64 features need internal_type int64
        for what in ("sparse_types", "dense_types"):
            for t in a.get(what) or ():
                if t.name != "string":
                    raise errors.InvalidArgumentError(
                        None, None, f"Input values should be of internal type {internal.name} but received "
                                    f"{t.name} (SparseCross {node.name}: with int64 features, set internal_type "
                                    f"to int64)")

    def compute(*args):
        batch, cols = _columns(args, n, n_dense)
        rows, k, picks, per_row = _combinations(batch, cols)
        if hashed:
            h = np.full(rows.size, np.uint64(hash_key & (2**64 - 1)), np.uint64)
            for col, pick in zip(cols, picks):
                h = fingerprint_cat64(h, _fingerprints(col.flat)[pick]) if rows.size else h
            values = hash_buckets(h, num_buckets) if num_buckets > 0 else (h % _INT64_MAX).astype(np.int64)
        else:
            texts = [[_feature_text(v) for v in col.flat.tolist()] for col in cols]
            joined = [b"_X_".join(texts[j][int(pick[i])] for j, pick in enumerate(picks)) for i in range(rows.size)]
            values = np.empty(len(joined), object)
            values[:] = joined
        indices = np.stack([rows, k], axis=1) if rows.size else np.zeros((0, 2), np.int64)
        shape = np.array([batch, int(per_row.max()) if per_row.size else 0], np.int64)
        return indices, values, shape

    return compute
