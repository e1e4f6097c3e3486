"""Philox4x32-10 and TensorFlow's random distributions over it, bit for bit.

TensorFlow's stateful random kernels own a ``GuardedPhiloxRandom``: a Philox4x32-10 generator
(64-bit key = ``seed``, upper 64 counter bits = ``seed2``) that every execution advances by a
fixed *reservation* of 128-bit blocks, independent of what the draw really consumed. The draw
itself runs on a copy positioned at the start of the reservation. This module reproduces:

- the generator (``philox4x32_10``, ``PhiloxRandom``, ``GuardedPhiloxRandom``), vectorized with
  NumPy uint64 arithmetic: one array lane per 128-bit block;
- the distributions of TensorFlow's CPU kernels: uniform float/half/bfloat16/double, uniform
  integers in ``[lo, hi)``, normal by Box-Muller, truncated normal by rejection with a separate
  stream per group of outputs, the Fisher-Yates shuffle and multinomial sampling.

Box-Muller needs glibc's single-precision ``logf`` / ``sinf`` / ``cosf`` (NumPy's own SIMD
float32 transcendentals differ in the last bit for a few percent of inputs), so the transforms
are small numba loops: numba lowers ``math.log`` etc. on float32 to the C library's functions.

Example:
    >>> gen = PhiloxRandom(seed=1234, seed2=1)
    >>> [hex(int(x)) for x in philox4x32_10(0, 0, 0, 0, 0, 0)]
    ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
    >>> uniform(gen, 3, np.float32).dtype
    dtype('float32')
"""

from __future__ import annotations

import math
import secrets
import threading

import numpy as np

from sparseflow._src.kernels.jit_cache import cached_njit

_M0, _M1 = 0xD2511F53, 0xCD9E8D57  # round multipliers
_W0, _W1 = 0x9E3779B9, 0xBB67AE85  # Weyl key increments
_MASK32 = 0xFFFFFFFF
_MASK64 = (1 << 64) - 1
_MASK128 = (1 << 128) - 1

# Each output of a variable-sample distribution (truncated normal) owns this many 32-bit samples.
RESERVED_SAMPLES_PER_OUTPUT = 256


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """The ten Philox rounds on counters ``(c0..c3)`` (scalars or arrays) and key ``(k0, k1)``.

    Returns four uint32 arrays (the four words of each 128-bit output)."""
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) for c in (c0, c1, c2, c3))
    k0, k1 = int(k0) & _MASK32, int(k1) & _MASK32
    m0, m1, mask = np.uint64(_M0), np.uint64(_M1), np.uint64(_MASK32)
    s32 = np.uint64(32)
    for r in range(10):
        p0 = c0 * m0
        p1 = c2 * m1
        c0, c1, c2, c3 = ((p1 >> s32) ^ c1 ^ np.uint64(k0), p1 & mask,
                          (p0 >> s32) ^ c3 ^ np.uint64(k1), p0 & mask)
        if r < 9:
            k0 = (k0 + _W0) & _MASK32
            k1 = (k1 + _W1) & _MASK32
    return tuple(x.astype(np.uint32) for x in (c0, c1, c2, c3))


class PhiloxRandom:
    """A Philox4x32-10 stream: a 64-bit key and a 128-bit counter, one 128-bit block per step."""

    __slots__ = ("key", "counter")

    def __init__(self, seed: int = 0, seed2: int = 0):
        self.key = int(seed) & _MASK64
        self.counter = (int(seed2) & _MASK64) << 64

    @classmethod
    def from_state(cls, counter: int, key: int) -> PhiloxRandom:
        gen = cls()
        gen.counter, gen.key = int(counter) & _MASK128, int(key) & _MASK64
        return gen

    def copy(self) -> PhiloxRandom:
        return PhiloxRandom.from_state(self.counter, self.key)

    def skip(self, count: int):
        """Moves the stream ``count`` 128-bit blocks forward."""
        self.counter = (self.counter + int(count)) & _MASK128

    def blocks_at(self, offsets) -> np.ndarray:
        """The blocks at ``counter + offsets`` (offsets < 2**64) as a uint32 array ``[n, 4]``."""
        offsets = np.asarray(offsets, dtype=np.uint64).reshape(-1)
        lo0 = np.uint64(self.counter & _MASK64)
        lo = offsets + lo0
        hi = np.uint64(self.counter >> 64) + (lo < lo0).astype(np.uint64)
        mask, s32 = np.uint64(_MASK32), np.uint64(32)
        words = philox4x32_10(lo & mask, lo >> s32, hi & mask, hi >> s32, self.key & _MASK32, self.key >> 32)
        return np.stack(words, axis=1)

    def blocks(self, n: int) -> np.ndarray:
        """The next ``n`` blocks (without advancing), as uint32 ``[n, 4]``."""
        return self.blocks_at(np.arange(int(n), dtype=np.uint64))

    def samples32(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit samples, in order (TensorFlow's ``SingleSampleAdapter``)."""
        return self.blocks((int(n) + 3) // 4).reshape(-1)[:n]

    def __repr__(self):
        return f"PhiloxRandom(key={self.key:#x}, counter={self.counter:#x})"


class GuardedPhiloxRandom:
    """TensorFlow's per-kernel generator: each reservation returns the current stream and skips it.

    Seeds (0, 0) mean "nondeterministic": two fresh random 64-bit seeds are drawn, as TensorFlow does.
    """

    def __init__(self, seed: int = 0, seed2: int = 0):
        seed, seed2 = int(seed), int(seed2)
        if seed == 0 and seed2 == 0:
            seed, seed2 = secrets.randbits(64), secrets.randbits(64)
        self._gen = PhiloxRandom(seed, seed2)
        self._lock = threading.Lock()

    def reserve_samples128(self, samples: int) -> PhiloxRandom:
        with self._lock:
            local = self._gen.copy()
            self._gen.skip(samples)
        return local

    def reserve_samples32(self, samples: int) -> PhiloxRandom:
        return self.reserve_samples128((int(samples) + 3) // 4)

    def reserve_random_outputs(self, output_count: int, multiplier: int) -> PhiloxRandom:
        return self.reserve_samples128(int(output_count) * int(multiplier))


# ---------------------------------------------------------------------------------------- bit tricks
def uint32_to_float(x) -> np.ndarray:
    """23 random mantissa bits -> float32 in [0, 1) (exponent 127, minus one)."""
    bits = (np.asarray(x, dtype=np.uint32) & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)
    return bits.view(np.float32) - np.float32(1.0)


def uint64_to_double(x0, x1) -> np.ndarray:
    """20 bits of ``x0`` and all of ``x1`` -> float64 in [0, 1)."""
    hi = np.asarray(x0, dtype=np.uint64) & np.uint64(0xFFFFF)
    bits = (hi << np.uint64(32)) | np.asarray(x1, dtype=np.uint64) | np.uint64(1023 << 52)
    return bits.view(np.float64) - 1.0


def _uint16_to_half(x) -> np.ndarray:
    bits = (np.asarray(x, dtype=np.uint32) & np.uint32(0x3FF)).astype(np.uint16) | np.uint16(15 << 10)
    return bits.view(np.float16) - np.float16(1.0)


def _uint16_to_bfloat16(x) -> np.ndarray:
    """bfloat16 values (stored as float32, sparseflow's bfloat16 representation) in [0, 1)."""
    bits = ((np.asarray(x, dtype=np.uint32) & np.uint32(0x7F)) | np.uint32(127 << 7)) << np.uint32(16)
    return bits.view(np.float32) - np.float32(1.0)


def round_to_bfloat16(x) -> np.ndarray:
    """float32 -> nearest bfloat16 (ties to even), kept as float32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    rounded = np.where(nan, bits | np.uint32(0x400000), rounded).astype(np.uint32)
    return rounded.view(np.float32)


# ---------------------------------------------------------------------------------------- Box-Muller
@cached_njit(nogil=True)
def _box_muller_f32(u1, u2, out0, out1):  # pragma: no cover - compiled
    eps = np.float32(1.0e-7)
    minus_two = np.float32(-2.0)
    two_pi = 2.0 * math.pi  # a double, as 2.0f * M_PI is in C++
    for i in range(u1.size):
        a = u1[i]
        if a < eps:
            a = eps
        v = np.float32(two_pi * np.float64(u2[i]))
        r = np.float32(math.sqrt(minus_two * np.float32(math.log(a))))
        out0[i] = np.float32(math.sin(v)) * r
        out1[i] = np.float32(math.cos(v)) * r


@cached_njit(nogil=True)
def _box_muller_f64(u1, u2, out0, out1):  # pragma: no cover - compiled
    two_pi = 2.0 * math.pi
    for i in range(u1.size):
        a = u1[i]
        if a < 1.0e-7:
            a = 1.0e-7
        v = two_pi * u2[i]
        r = math.sqrt(-2.0 * math.log(a))
        out0[i] = math.sin(v) * r
        out1[i] = math.cos(v) * r


def box_muller_float(x0, x1):
    """TensorFlow's ``BoxMullerFloat`` on arrays of 32-bit samples: two float32 normals per pair."""
    u1, u2 = uint32_to_float(x0).reshape(-1), uint32_to_float(x1).reshape(-1)
    f0, f1 = np.empty_like(u1), np.empty_like(u1)
    _box_muller_f32(u1, u2, f0, f1)
    return f0, f1


def box_muller_double(x0, x1, x2, x3):
    """TensorFlow's ``BoxMullerDouble``: two float64 normals per four 32-bit samples."""
    u1, u2 = uint64_to_double(x0, x1).reshape(-1), uint64_to_double(x2, x3).reshape(-1)
    d0, d1 = np.empty_like(u1), np.empty_like(u1)
    _box_muller_f64(u1, u2, d0, d1)
    return d0, d1


def _normal_block_values(blocks: np.ndarray, dtype) -> np.ndarray:
    """The normals of each block in output order: float-like 4 per block, double 2 per block."""
    if np.dtype(dtype) == np.float64:
        d0, d1 = box_muller_double(blocks[:, 0], blocks[:, 1], blocks[:, 2], blocks[:, 3])
        return np.stack([d0, d1], axis=1)
    a0, a1 = box_muller_float(blocks[:, 0], blocks[:, 1])
    b0, b1 = box_muller_float(blocks[:, 2], blocks[:, 3])
    return np.stack([a0, a1, b0, b1], axis=1)


def _cast_float(values: np.ndarray, dtype, bfloat16: bool) -> np.ndarray:
    if bfloat16:
        return round_to_bfloat16(values)
    return values.astype(dtype, copy=False)


# ---------------------------------------------------------------------------------------- distributions
def _check_float(dtype):
    if np.dtype(dtype) not in (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"Random float distributions support half, bfloat16, float and double, "
                        f"not {np.dtype(dtype).name}.")


def uniform(gen: PhiloxRandom, size: int, dtype, bfloat16: bool = False) -> np.ndarray:
    """``size`` uniform values in [0, 1): one block per 4 outputs (2 for double)."""
    _check_float(dtype)
    size = int(size)
    if np.dtype(dtype) == np.float64:
        b = gen.blocks((size + 1) // 2)
        return uint64_to_double(b[:, 0::2], b[:, 1::2]).reshape(-1)[:size]
    samples = gen.blocks((size + 3) // 4).reshape(-1)[:size]
    if bfloat16:
        return _uint16_to_bfloat16(samples)
    if np.dtype(dtype) == np.float16:
        return _uint16_to_half(samples)
    return uint32_to_float(samples)


def uniform_int(gen: PhiloxRandom, size: int, lo: int, hi: int, dtype) -> np.ndarray:
    """``size`` integers in [lo, hi) as ``lo + bits % (hi - lo)`` (biased, like TensorFlow's)."""
    size, lo, hi = int(size), int(lo), int(hi)
    if np.dtype(dtype) == np.int64:
        b = gen.blocks((size + 1) // 2).astype(np.uint64)
        bits = (b[:, 0::2] | (b[:, 1::2] << np.uint64(32))).reshape(-1)[:size]
        rng = np.uint64((hi - lo) & _MASK64)
        return ((bits % rng) + np.uint64(lo & _MASK64)).view(np.int64)
    if np.dtype(dtype) == np.int32:
        bits = gen.blocks((size + 3) // 4).reshape(-1)[:size]
        rng = np.uint32((hi - lo) & _MASK32)
        return ((bits % rng) + np.uint32(lo & _MASK32)).view(np.int32)
    raise TypeError(f"Random integers are int32 or int64, not {np.dtype(dtype).name}.")


def normal(gen: PhiloxRandom, size: int, dtype, bfloat16: bool = False) -> np.ndarray:
    """``size`` standard normals by Box-Muller: one block per 4 outputs (2 for double)."""
    _check_float(dtype)
    size = int(size)
    per_block = 2 if np.dtype(dtype) == np.float64 else 4
    values = _normal_block_values(gen.blocks((size + per_block - 1) // per_block), dtype)
    return _cast_float(values.reshape(-1)[:size], dtype, bfloat16)


def truncated_normal(gen: PhiloxRandom, size: int, dtype, bfloat16: bool = False) -> np.ndarray:
    """``size`` standard normals with |x| < 2, by rejection.

    Outputs come in groups (4, or 2 for double); group ``g`` draws from its own stream starting
    ``g * group * 256 / 4`` blocks into the reservation and takes Box-Muller values in order,
    keeping those with magnitude below 2, until the group is full. Each active group consumes
    one block per round here (4 float candidates, or 2 double candidates).
    """
    _check_float(dtype)
    size = int(size)
    group = 2 if np.dtype(dtype) == np.float64 else 4
    compute = np.float64 if group == 2 else np.float32
    n_groups = (size + group - 1) // group
    skip = group * RESERVED_SAMPLES_PER_OUTPUT // 4
    out = np.zeros((n_groups, group), dtype=compute)
    filled = np.zeros(n_groups, dtype=np.int64)
    active = np.arange(n_groups, dtype=np.int64)
    limit = compute(2.0)
    rnd = 0
    while active.size:
        if rnd >= skip:
            raise RuntimeError("truncated_normal: a group exhausted its reserved samples")
        blocks = gen.blocks_at(active.astype(np.uint64) * np.uint64(skip) + np.uint64(rnd))
        cand = _normal_block_values(blocks, compute)
        for c in range(cand.shape[1]):
            take = (np.abs(cand[:, c]) < limit) & (filled[active] < group)
            rows = active[take]
            out[rows, filled[rows]] = cand[take, c]
            filled[rows] += 1
        active = active[filled[active] < group]
        rnd += 1
    return _cast_float(out.reshape(-1)[:size], dtype, bfloat16)


@cached_njit(nogil=True)
def _fisher_yates(samples, n):  # pragma: no cover - compiled
    perm = np.arange(n)
    for i in range(n - 1):
        j = i + np.int64(samples[i] % np.uint32(n - i))
        t = perm[i]
        perm[i] = perm[j]
        perm[j] = t
    return perm


def shuffle_permutation(gen: PhiloxRandom, n: int) -> np.ndarray:
    """TensorFlow's shuffle order of ``n`` rows: ``swap(i, i + sample_i % (n - i))`` for i < n - 1."""
    n = int(n)
    if n <= 1:
        return np.arange(n)
    return _fisher_yates(gen.samples32(n - 1), n)


def multinomial(gen: PhiloxRandom, logits: np.ndarray, num_samples: int) -> np.ndarray:
    """Class indices ``[batch, num_samples]`` drawn from rows of unnormalized log-probabilities.

    Each row's CDF is ``cumsum(exp(logit - max))`` in double over its finite logits; a sample is
    ``upper_bound(cdf, u * total)`` with ``u`` a double from two 32-bit samples, drawn row after
    row from one stream (TensorFlow's single-shard order).
    """
    logits = np.asarray(logits)
    batch, classes = logits.shape
    u = np.zeros((batch, num_samples))
    if batch * num_samples:
        s = gen.samples32(2 * batch * num_samples)
        u = uint64_to_double(s[0::2], s[1::2]).reshape(batch, num_samples)
    out = np.empty((batch, num_samples), dtype=np.int64)
    finite = np.isfinite(logits)
    for b in range(batch):
        row = logits[b]
        fin = finite[b]
        mx = row[fin].max() if fin.any() else 0
        with np.errstate(over="ignore", invalid="ignore"):
            terms = np.exp(row.astype(np.float64) - np.float64(mx))
        cdf = np.cumsum(np.where(fin, terms, 0.0))
        total = cdf[-1] if classes else 0.0
        out[b] = np.searchsorted(cdf, u[b] * total, side="right")
    return out
