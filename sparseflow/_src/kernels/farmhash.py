"""TensorFlow's string fingerprints, bit for bit, compiled with numba over batches of strings.

- ``fingerprint64``: ``tensorflow::Fingerprint64`` = FarmHash ``Fingerprint64`` = the
  ``farmhashna::Hash64`` variant (portable, fixed forever). ``string_to_hash_bucket_fast``,
  ``categorical_column_with_hash_bucket`` and vocabulary OOV buckets take it modulo the bucket
  count; integer features are hashed through their decimal string.
- ``fingerprint_cat64``: ``tensorflow::FingerprintCat64(fp1, fp2)``, which chains per-feature
  fingerprints in ``SparseCross`` (``crossed_column``): ``h = hash_key; h = cat(h, f_i)...``.
- ``legacy_hash64``: ``tensorflow::Hash64`` (a MurmurHash64A variant seeded with
  ``0xDECAFCAFFE``), the hash of the deprecated ``StringToHashBucket`` op.

Strings travel to the compiled loops packed as one ``uint8`` buffer plus ``n + 1`` offsets
(``pack_strings``), so hashing a million short strings costs one join, not a million calls.
The algorithms are written from FarmHash's description (Geoff Pike, MIT licence) and checked
against FarmHash's self-test vectors and TensorFlow's outputs in tests/kernels/test_farmhash.py.

Example:
    >>> fingerprint64(b"")
    11160318154034397263
    >>> fingerprint64_strings([b"a", "b"]).tolist()
    [12917804110809363939, 11795596070477164822]
    >>> fingerprint_cat64(0xDECAFCAFFE, fingerprint64(b"a")) < 2**64
    True
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels.jit_cache import cached_njit

_U = np.uint64
_K0 = _U(0xC3A5C85C97CB3127)
_K1 = _U(0xB492B66FBE98F273)
_K2 = _U(0x9AE16A3B2F90404F)
_CAT_MUL = _U(0xC6A4A7935BD1E995)  # FingerprintCat64's and Hash64's multiplier
_LEGACY_SEED = _U(0xDECAFCAFFE)
_MASK64 = (1 << 64) - 1
_JIT = {"nogil": True}

# Shift counts as uint64 so that numba keeps every expression in uint64 (mixing int64 and uint64
# would promote to float64).
_S8, _S16, _S24, _S32, _S40, _S48, _S56 = (_U(s) for s in (8, 16, 24, 32, 40, 48, 56))
_S47 = _U(47)


# ------------------------------------------------------------------------------ building blocks
@cached_njit(**_JIT)
def _fetch64(b, i):
    """Little-endian 64-bit load of ``b[i:i + 8]`` (unsigned indices: no negative-index wraparound,
    so LLVM merges the eight byte loads into one)."""
    i = _U(i)
    return (_U(b[i]) | (_U(b[i + _U(1)]) << _S8) | (_U(b[i + _U(2)]) << _S16) | (_U(b[i + _U(3)]) << _S24)
            | (_U(b[i + _U(4)]) << _S32) | (_U(b[i + _U(5)]) << _S40) | (_U(b[i + _U(6)]) << _S48)
            | (_U(b[i + _U(7)]) << _S56))


@cached_njit(**_JIT)
def _fetch32(b, i):
    i = _U(i)
    return _U(b[i]) | (_U(b[i + _U(1)]) << _S8) | (_U(b[i + _U(2)]) << _S16) | (_U(b[i + _U(3)]) << _S24)


@cached_njit(**_JIT)
def _rot(v, s):
    """Rotate right by ``s`` (1..63)."""
    return (v >> _U(s)) | (v << _U(64 - s))


@cached_njit(**_JIT)
def _shift_mix(v):
    return v ^ (v >> _S47)


@cached_njit(**_JIT)
def _hash_len16(u, v, mul):
    a = (u ^ v) * mul
    a ^= a >> _S47
    b = (v ^ a) * mul
    b ^= b >> _S47
    return b * mul


@cached_njit(**_JIT)
def _weak_hash32(b, i, a, c):
    """The (a, b) pair FarmHash derives from 32 bytes at ``b[i]`` and two seeds."""
    w, x, y, z = _fetch64(b, i), _fetch64(b, i + 8), _fetch64(b, i + 16), _fetch64(b, i + 24)
    a += w
    c = _rot(c + a + z, 21)
    t = a
    a += x
    a += y
    c += _rot(a, 44)
    return a + z, c + t


# ------------------------------------------------------------------------------ farmhashna::Hash64
@cached_njit(**_JIT)
def _len0to16(b, s, n):
    ln = _U(n)
    if n >= 8:
        mul = _K2 + ln * _U(2)
        a = _fetch64(b, s) + _K2
        c = _fetch64(b, s + n - 8)
        d = _rot(c, 37) * mul + a
        e = (_rot(a, 25) + c) * mul
        return _hash_len16(d, e, mul)
    if n >= 4:
        mul = _K2 + ln * _U(2)
        a = _fetch32(b, s)
        return _hash_len16(ln + (a << _U(3)), _fetch32(b, s + n - 4), mul)
    if n > 0:
        y = _U(b[s]) + (_U(b[s + (n >> 1)]) << _S8)
        z = ln + (_U(b[s + n - 1]) << _U(2))
        return _shift_mix((y * _K2) ^ (z * _K0)) * _K2
    return _K2


@cached_njit(**_JIT)
def _len17to32(b, s, n):
    mul = _K2 + _U(n) * _U(2)
    a = _fetch64(b, s) * _K1
    c = _fetch64(b, s + 8)
    d = _fetch64(b, s + n - 8) * mul
    e = _fetch64(b, s + n - 16) * _K2
    return _hash_len16(_rot(a + c, 43) + _rot(d, 30) + e, a + _rot(c + _K2, 18) + d, mul)


@cached_njit(**_JIT)
def _len33to64(b, s, n):
    mul = _K2 + _U(n) * _U(2)
    a = _fetch64(b, s) * _K2
    c = _fetch64(b, s + 8)
    d = _fetch64(b, s + n - 8) * mul
    e = _fetch64(b, s + n - 16) * _K2
    y = _rot(a + c, 43) + _rot(d, 30) + e
    z = _hash_len16(y, a + _rot(c + _K2, 18) + d, mul)
    f = _fetch64(b, s + 16) * mul
    g = _fetch64(b, s + 24)
    h = (y + _fetch64(b, s + n - 32)) * mul
    k = (z + _fetch64(b, s + n - 24)) * mul
    return _hash_len16(_rot(f + g, 43) + _rot(h, 30) + k, f + _rot(g + a, 18) + h, mul)


@cached_njit(**_JIT)
def _hash64(b, s, n):
    """farmhashna::Hash64 of ``b[s:s + n]``."""
    if n <= 16:
        return _len0to16(b, s, n)
    if n <= 32:
        return _len17to32(b, s, n)
    if n <= 64:
        return _len33to64(b, s, n)
    # Over 64 bytes: 64-byte blocks through a 56-byte state (x, y, z, v, w), then the last 64.
    seed = _U(81)
    x = seed
    y = seed * _K1 + _U(113)
    z = _shift_mix(y * _K2 + _U(113)) * _K2
    v0 = v1 = w0 = w1 = _U(0)
    x = x * _K2 + _fetch64(b, s)
    end = s + ((n - 1) // 64) * 64
    last64 = s + n - 64
    while True:
        x = _rot(x + y + v0 + _fetch64(b, s + 8), 37) * _K1
        y = _rot(y + v1 + _fetch64(b, s + 48), 42) * _K1
        x ^= w1
        y += v0 + _fetch64(b, s + 40)
        z = _rot(z + w0, 33) * _K1
        v0, v1 = _weak_hash32(b, s, v1 * _K1, x + w0)
        w0, w1 = _weak_hash32(b, s + 32, z + w1, y + _fetch64(b, s + 16))
        x, z = z, x
        s += 64
        if s == end:
            break
    mul = _K1 + ((z & _U(0xFF)) << _U(1))
    s = last64
    w0 += _U((n - 1) & 63)
    v0 += w0
    w0 += v0
    x = _rot(x + y + v0 + _fetch64(b, s + 8), 37) * mul
    y = _rot(y + v1 + _fetch64(b, s + 48), 42) * mul
    x ^= w1 * _U(9)
    y += v0 * _U(9) + _fetch64(b, s + 40)
    z = _rot(z + w0, 33) * mul
    v0, v1 = _weak_hash32(b, s, v1 * mul, x + w0)
    w0, w1 = _weak_hash32(b, s + 32, z + w1, y + _fetch64(b, s + 16))
    x, z = z, x
    return _hash_len16(_hash_len16(v0, w0, mul) + _shift_mix(y) * _K0 + z,
                       _hash_len16(v1, w1, mul) + x, mul)


@cached_njit(**_JIT)
def fingerprint64_packed(buf, offsets):
    """Fingerprint64 of each string ``buf[offsets[i]:offsets[i + 1]]``, as uint64."""
    n = offsets.shape[0] - 1
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = _hash64(buf, offsets[i], offsets[i + 1] - offsets[i])
    return out


@cached_njit(**_JIT)
def bucket_packed(hashes, num_buckets):
    """``hash % num_buckets`` in unsigned arithmetic, as int64 (TensorFlow's bucket ids)."""
    m = _U(num_buckets)
    out = np.empty(hashes.shape[0], np.int64)
    for i in range(hashes.shape[0]):
        out[i] = np.int64(hashes[i] % m)
    return out


# ------------------------------------------------------------------------------ tensorflow::Hash64
@cached_njit(**_JIT)
def _legacy_hash64(b, s, n, seed):
    h = seed ^ (_U(n) * _CAT_MUL)
    while n >= 8:
        k = _fetch64(b, s) * _CAT_MUL
        k ^= k >> _S47
        h ^= k * _CAT_MUL
        h *= _CAT_MUL
        s += 8
        n -= 8
    if n > 0:
        for j in range(n - 1, -1, -1):
            h ^= _U(b[s + j]) << _U(8 * j)
        h *= _CAT_MUL
    h ^= h >> _S47
    h *= _CAT_MUL
    return h ^ (h >> _S47)


@cached_njit(**_JIT)
def legacy_hash64_packed(buf, offsets, seed):
    n = offsets.shape[0] - 1
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = _legacy_hash64(buf, offsets[i], offsets[i + 1] - offsets[i], seed)
    return out


# ------------------------------------------------------------------------------ FingerprintCat64
@cached_njit(**_JIT)
def _cat64(fp1, fp2):
    r = fp1 ^ _CAT_MUL
    r ^= _shift_mix(fp2 * _CAT_MUL) * _CAT_MUL
    r *= _CAT_MUL
    r = _shift_mix(r) * _CAT_MUL
    return _shift_mix(r)


@cached_njit(**_JIT)
def _cat64_arrays(fp1, fp2):
    out = np.empty(fp1.shape[0], np.uint64)
    for i in range(fp1.shape[0]):
        out[i] = _cat64(fp1[i], fp2[i])
    return out


def fingerprint_cat64(fp1, fp2):
    """FingerprintCat64 of two uint64 fingerprints (ints or arrays, broadcast); int64 inputs are
    taken by their bits, as TensorFlow does for int64 features. Ints in, int out."""
    if np.ndim(fp1) == 0 and np.ndim(fp2) == 0 and not isinstance(fp1, np.ndarray) \
            and not isinstance(fp2, np.ndarray):
        return int(_cat64(_U(int(fp1) & _MASK64), _U(int(fp2) & _MASK64)))
    a, b = np.broadcast_arrays(_as_u64(fp1), _as_u64(fp2))
    return _cat64_arrays(np.ascontiguousarray(a).reshape(-1),
                         np.ascontiguousarray(b).reshape(-1)).reshape(a.shape)


def _as_u64(x) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == np.uint64:
        return arr
    if arr.dtype.kind == "i":
        return arr.astype(np.int64).view(np.uint64)
    if arr.dtype.kind == "u":
        return arr.astype(np.uint64)
    if arr.dtype == object:  # Python ints beyond int64
        return np.array([int(v) & _MASK64 for v in arr.reshape(-1)], np.uint64).reshape(arr.shape)
    raise TypeError(f"fingerprint_cat64 takes integers, got {arr.dtype}")


# ------------------------------------------------------------------------------ packing and the public API
def _as_bytes(x) -> bytes:
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, (bytearray, memoryview, np.bytes_)):
        return bytes(x)
    raise TypeError(f"Expected bytes or str, got {type(x).__name__}")


def pack_strings(values) -> tuple[np.ndarray, np.ndarray]:
    """``(buf, offsets)``: the strings of ``values`` (an object array or iterable of bytes/str)
    concatenated into one uint8 buffer, string ``i`` at ``buf[offsets[i]:offsets[i + 1]]``."""
    items = values.reshape(-1).tolist() if isinstance(values, np.ndarray) else list(values)
    try:
        joined = b"".join(items)
    except TypeError:
        items = [_as_bytes(x) for x in items]
        joined = b"".join(items)
    offsets = np.zeros(len(items) + 1, np.int64)
    if items:
        np.cumsum(np.fromiter(map(len, items), np.int64, len(items)), out=offsets[1:])
    # read-only either way, so that numba compiles one specialization
    buf = np.frombuffer(joined or b"\0", np.uint8)
    return buf, offsets


def fingerprint64_strings(values) -> np.ndarray:
    """Fingerprint64 of every string of ``values``, a uint64 array of the same shape."""
    shape = values.shape if isinstance(values, np.ndarray) else (-1,)
    return fingerprint64_packed(*pack_strings(values)).reshape(shape)


def fingerprint64(data) -> int:
    """Fingerprint64 of one ``bytes`` (or ``str``, hashed as UTF-8)."""
    return int(fingerprint64_strings([_as_bytes(data)])[0])


def legacy_hash64_strings(values, seed: int = 0xDECAFCAFFE) -> np.ndarray:
    """tensorflow::Hash64 of every string of ``values`` (uint64, same shape)."""
    shape = values.shape if isinstance(values, np.ndarray) else (-1,)
    return legacy_hash64_packed(*pack_strings(values), _U(seed & _MASK64)).reshape(shape)


def legacy_hash64(data, seed: int = 0xDECAFCAFFE) -> int:
    return int(legacy_hash64_strings([_as_bytes(data)], seed)[0])


def hash_buckets(hashes: np.ndarray, num_buckets: int) -> np.ndarray:
    """Bucket ids ``hash % num_buckets`` (unsigned) of a uint64 array, int64 of the same shape."""
    if num_buckets < 1:
        raise ValueError(f"num_buckets must be >= 1, got {num_buckets}")
    flat = np.ascontiguousarray(hashes, np.uint64).reshape(-1)
    return bucket_packed(flat, np.int64(num_buckets)).reshape(np.shape(hashes))
