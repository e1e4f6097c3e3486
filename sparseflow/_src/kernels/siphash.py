"""Keyed SipHash-2-4 (64-bit output), as TensorFlow's ``StrongKeyedHash`` computes it.

``string_to_hash_bucket_strong(input, num_buckets, key=[k0, k1])`` hashes each string with
SipHash-2-4 under the 128-bit key ``(k0, k1)`` (two uint64 words; the key bytes are their
little-endian encodings) and takes the result modulo ``num_buckets``. Written from the SipHash
paper (Aumasson and Bernstein, 2012); compiled with numba over strings packed by
``farmhash.pack_strings``.

Example:
    >>> siphash24(bytes(range(15)), 0x0706050403020100, 0x0F0E0D0C0B0A0908) == 0xA129CA6149BE45E5
    True
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels.farmhash import _as_bytes, _fetch64, pack_strings
from sparseflow._src.kernels.jit_cache import cached_njit

_U = np.uint64
_MASK64 = (1 << 64) - 1
_JIT = {"nogil": True}


@cached_njit(**_JIT)
def _rotl(v, s):
    return (v << _U(s)) | (v >> _U(64 - s))


@cached_njit(**_JIT)
def _rounds(v0, v1, v2, v3, n):
    for _ in range(n):
        v0 += v1
        v1 = _rotl(v1, 13)
        v1 ^= v0
        v0 = _rotl(v0, 32)
        v2 += v3
        v3 = _rotl(v3, 16)
        v3 ^= v2
        v0 += v3
        v3 = _rotl(v3, 21)
        v3 ^= v0
        v2 += v1
        v1 = _rotl(v1, 17)
        v1 ^= v2
        v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


@cached_njit(**_JIT)
def _siphash24(b, s, n, k0, k1):
    v0 = k0 ^ _U(0x736F6D6570736575)
    v1 = k1 ^ _U(0x646F72616E646F6D)
    v2 = k0 ^ _U(0x6C7967656E657261)
    v3 = k1 ^ _U(0x7465646279746573)
    end = s + n - (n & 7)
    i = s
    while i < end:
        m = _fetch64(b, i)
        v3 ^= m
        v0, v1, v2, v3 = _rounds(v0, v1, v2, v3, 2)
        v0 ^= m
        i += 8
    last = _U(n & 0xFF) << _U(56)
    for j in range(n & 7):
        last |= _U(b[end + j]) << _U(8 * j)
    v3 ^= last
    v0, v1, v2, v3 = _rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= _U(0xFF)
    v0, v1, v2, v3 = _rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


@cached_njit(**_JIT)
def siphash24_packed(buf, offsets, k0, k1):
    """SipHash-2-4 of each string ``buf[offsets[i]:offsets[i + 1]]`` under key ``(k0, k1)``."""
    n = offsets.shape[0] - 1
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = _siphash24(buf, offsets[i], offsets[i + 1] - offsets[i], k0, k1)
    return out


def siphash24_strings(values, k0: int, k1: int) -> np.ndarray:
    """SipHash-2-4 of every string of ``values`` (uint64 array of the same shape). The key words
    may be negative (TensorFlow's ``key`` attr is a list of int64): their bits are used."""
    shape = values.shape if isinstance(values, np.ndarray) else (-1,)
    buf, offsets = pack_strings(values)
    return siphash24_packed(buf, offsets, _U(int(k0) & _MASK64), _U(int(k1) & _MASK64)).reshape(shape)


def siphash24(data, k0: int, k1: int) -> int:
    """SipHash-2-4 of one ``bytes`` (or UTF-8 ``str``) under key ``(k0, k1)``."""
    return int(siphash24_strings([_as_bytes(data)], k0, k1)[0])
