"""Categorical values to uint64 keys: FarmHash ``Fingerprint64`` straight from Arrow string buffers.

The compiled loop reads an Arrow ``string``/``binary`` array's offsets and data buffers in place
(no Python objects, no copy) and releases the GIL, so reader threads hash in parallel. The keys
equal ``farmhash.fingerprint64_strings`` of the same values (TensorFlow's
``Fingerprint64``); missing entries get a marker value.

Example:
    >>> import pyarrow as pa
    >>> from sparseflow._src.kernels.farmhash import fingerprint64
    >>> hash_strings(pa.array(["a", None]), MISSING_KEY).tolist() == [fingerprint64(b"a"), 2**64 - 1]
    True
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from sparseflow._src.data.readers.schema import MISSING_KEY
from sparseflow._src.kernels.farmhash import _cat64_arrays, _hash64, _len0to16, bucket_packed, fingerprint64
from sparseflow._src.kernels.jit_cache import cached_njit

_EMPTY = np.zeros(8, np.uint8)


# numba caches this loop with the farmhash building blocks compiled in, and invalidates the cache
# only when this file changes: edit this file when their code changes.
@cached_njit(nogil=True)
def _hash_arrow(data, offsets, validity, has_validity, start, n, missing, out):
    for i in range(n):
        j = start + i
        if has_validity and not (validity[j >> 3] >> (j & 7)) & 1:
            out[i] = missing
        else:
            s = np.int64(offsets[j])
            ln = np.int64(offsets[j + 1]) - s
            # short strings (every Criteo value) skip the length dispatch of _hash64
            out[i] = _len0to16(data, s, ln) if ln <= 16 else _hash64(data, s, ln)


def _np_buffer(buf, dtype):
    if buf is None or buf.size == 0:
        return _EMPTY.view(dtype) if np.dtype(dtype).itemsize <= 8 else _EMPTY
    return np.frombuffer(buf, dtype)


def hash_strings(arr: pa.Array, missing=MISSING_KEY, out: np.ndarray | None = None) -> np.ndarray:
    """Fingerprint64 of every value of a string/binary Arrow array (nulls -> ``missing``), uint64;
    written into ``out`` (a [len] uint64 array, possibly strided) when given."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        arr = arr.cast(pa.large_binary())
        t = arr.type
    if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        off_dtype = np.int64
    elif pa.types.is_string(t) or pa.types.is_binary(t):
        off_dtype = np.int32
    else:
        raise TypeError(f"hash_strings takes a string or binary array, got {t}")
    n = len(arr)
    if out is None:
        out = np.empty(n, np.uint64)
    elif out.shape != (n,) or out.dtype != np.uint64:
        raise ValueError(f"hash_strings: out must be a [{n}] uint64 array, got {out.shape} {out.dtype}")
    if n == 0:
        return out
    validity, offsets, data = arr.buffers()[:3]
    has_validity = validity is not None and arr.null_count > 0
    _hash_arrow(_np_buffer(data, np.uint8), np.frombuffer(offsets, off_dtype),
                _np_buffer(validity, np.uint8) if has_validity else _EMPTY, has_validity, arr.offset, n,
                np.uint64(missing), out)
    return out


def salt_keys(keys: np.ndarray, salt: str, present: np.ndarray | None) -> np.ndarray:
    """``FingerprintCat64(Fingerprint64(salt), key)`` for present keys; the others are left as they are."""
    salted = _cat64_arrays(np.full(len(keys), np.uint64(fingerprint64(salt)), np.uint64), keys)
    return salted if present is None else np.where(present, salted, keys)


def bucket_ids(keys: np.ndarray, num_buckets: int) -> np.ndarray:
    """``key % num_buckets`` as int64 (TensorFlow's ``string_to_hash_bucket_fast``)."""
    return bucket_packed(np.ascontiguousarray(keys, np.uint64), np.int64(num_buckets))
