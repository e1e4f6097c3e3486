"""Initial values of embedding-table rows (numba): counter-based draws, one row at a time.

A row's start value depends only on ``(seed, key, column)``: column ``j`` of the row of ``key``
draws the 64-bit ``mix64(mix64(seed ^ mix64(key)) + j * golden)`` (splitmix64 with the
row's own starting point), so it does not depend on batch order, sharding or which process
creates the row. The draw becomes a double ``u`` in [0, 1) (53 bits) and then:

* ``uniform(lo, hi)``: ``lo + (hi - lo) u``;
* ``normal(mean, stddev)``: ``mean + stddev * Phi^-1(u')`` with ``u' = u + 2^-54`` in (0, 1);
* ``truncated_normal(mean, stddev)``: ``mean + stddev * Phi^-1(Phi(-2) + (Phi(2) - Phi(-2)) u)``:
  exactly the normal restricted to two standard deviations (TensorFlow's truncation), drawn
  without rejection, so every column costs the same.

``Phi^-1`` is P. J. Acklam's rational approximation (relative error below 1.2e-9, far below a
float32's resolution): one rational function in the central 95% of (0, 1), which also holds to
1.7e-8 on all of the truncated normal's range (so that initializer is one branch-free loop the
compiler vectorizes), and a logarithmic tail formula the untruncated normal applies in a second
pass to the few columns that need it. Every step is IEEE double arithmetic with no fused or
reordered operations (numba's default), so rows do not depend on the vector instructions the CPU
has (AVX-512 or not); the tail pass's ``log`` is the C library's.

The table's kernels (embedding_hash) write each new row with one loop per initializer over these
scalar functions; ``embedding_hash.init_rows`` gives the rows a table would create.

Example:
    >>> import numpy as np
    >>> stream = row_stream(np.uint64(7), np.uint64(3))  # seed 7, key 3
    >>> values = [truncated_normal_value(stream, j, 0.0, 1.0) for j in range(4)]
    >>> len(values), all(abs(v) <= 2.0 for v in values)
    (4, True)
"""

from __future__ import annotations

import numba
import numpy as np

INIT_ZEROS, INIT_CONSTANT, INIT_UNIFORM, INIT_NORMAL, INIT_TRUNCATED_NORMAL = 0, 1, 2, 3, 4

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TWO_M53 = 1.0 / 9007199254740992.0
_HALF_ULP = 0.5 * _TWO_M53  # moves u off 0 for the untruncated normal

_PHI_M2 = 0.022750131948179195  # Phi(-2)
_PHI_P2 = 0.9772498680518208  # Phi(2)
_P_LOW = 0.02425  # below (and above 1 - _P_LOW): the tail formula
_Q_TAIL = 0.5 - _P_LOW

# Acklam's coefficients: central numerator (a), denominator (b); tail numerator (c), denominator (d)
_A0, _A1, _A2 = -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02
_A3, _A4, _A5 = 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00
_B0, _B1, _B2 = -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02
_B3, _B4 = 6.680131188771972e+01, -1.328068155288572e+01
_C0, _C1, _C2 = -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00
_C3, _C4, _C5 = -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00
_D0, _D1, _D2, _D3 = 7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00


@numba.njit(inline="always")
def mix64(k):
    """splitmix64's finalizer: a bijective, well-mixed uint64 -> uint64."""
    k = (k ^ (k >> _S30)) * _M1
    k = (k ^ (k >> _S27)) * _M2
    return k ^ (k >> _S31)


@numba.njit(inline="always")
def row_stream(seed, key):
    """The starting point of the draws of the row of ``key``."""
    return mix64(seed ^ mix64(key))


@numba.njit(inline="always")
def uniform01(stream, j):
    """Column ``j``'s uniform double in [0, 1) (53 bits)."""
    u = mix64(stream + np.uint64(j) * _GOLDEN)
    return np.float64(np.int64(u >> _S11)) * _TWO_M53


@numba.njit(inline="always")
def _central_quantile(p):
    """Phi^-1(p) for p in [_P_LOW, 1 - _P_LOW] (and to 1.7e-8 on [Phi(-2), Phi(2)]); finite elsewhere."""
    q = p - 0.5
    r = q * q
    num = (((((_A0 * r + _A1) * r + _A2) * r + _A3) * r + _A4) * r + _A5) * q
    den = ((((_B0 * r + _B1) * r + _B2) * r + _B3) * r + _B4) * r + 1.0
    return num / den


@numba.njit(inline="always")
def _tail_quantile(p):
    """Phi^-1(p) for p outside [_P_LOW, 1 - _P_LOW]."""
    lower = p < 0.5
    t = np.sqrt(-2.0 * np.log(p if lower else 1.0 - p))
    z = (((((_C0 * t + _C1) * t + _C2) * t + _C3) * t + _C4) * t + _C5) / \
        ((((_D0 * t + _D1) * t + _D2) * t + _D3) * t + 1.0)
    return z if lower else -z


# The values of column ``j`` of a row with draws ``stream``. Scalars only: a kernel writes a row with
# one loop over its columns per initializer, which the compiler vectorizes (compile kernels that
# use them with error_model="numpy", so that the division needs no zero check).
@numba.njit(inline="always")
def uniform_value(stream, j, lo, hi):
    return np.float32(lo + (hi - lo) * uniform01(stream, j))


@numba.njit(inline="always")
def truncated_normal_value(stream, j, mean, stddev):
    # the central formula holds to 1.7e-8 (relative) on all of [Phi(-2), Phi(2)]: no tail case
    p = _PHI_M2 + (_PHI_P2 - _PHI_M2) * uniform01(stream, j)
    return np.float32(mean + stddev * _central_quantile(p))


@numba.njit(inline="always")
def normal_probability(stream, j):
    """Column ``j``'s probability for the untruncated normal, in (0, 1)."""
    return uniform01(stream, j) + _HALF_ULP


@numba.njit(inline="always")
def normal_value(p, mean, stddev):
    """The value for probability ``p`` when :func:`in_tail` is false (finite, wrong otherwise)."""
    return np.float32(mean + stddev * _central_quantile(p))


@numba.njit(inline="always")
def in_tail(p):
    return abs(p - 0.5) > _Q_TAIL


@numba.njit(inline="always")
def normal_tail_value(p, mean, stddev):
    """The value for probability ``p`` when :func:`in_tail` is true."""
    return np.float32(mean + stddev * _tail_quantile(p))
