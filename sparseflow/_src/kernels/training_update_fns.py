"""The optimizer update equations (TensorFlow's ``training_ops.cc``) as numba loops.

Each optimizer has one scalar function: old element values of the variable and its slots, the
gradient element and the hyper-parameters in, new values out. A ``dense_*`` loop applies it to every
element, reading the old arrays and writing new ones (one pass over memory, no temporaries);
a ``sparse_*`` loop applies it in place to the rows ``idx`` of 2-D private buffers (``idx`` unique,
gradient rows already summed). Hyper-parameters arrive as scalars of the variable's dtype, with
derived constants such as ``1 - rho`` computed once per step by the caller.

Example:
    >>> import numpy as np
    >>> v, a, g = np.ones(3, np.float32), np.zeros(3, np.float32), np.full(3, 2.0, np.float32)
    >>> ov, oa = np.empty_like(v), np.empty_like(a)
    >>> dense_momentum(v, a, g, ov, oa, np.float32(0.1), np.float32(0.9), False)
    >>> ov.tolist(), oa.tolist()
    ([0.800000011920929, 0.800000011920929, 0.800000011920929], [2.0, 2.0, 2.0])
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels.jit_cache import cached_njit

_JIT = {"nogil": True, "error_model": "numpy"}  # x / 0 is inf or NaN, as in TensorFlow (and the loops vectorize)


# ---------------------------------------------------------------------- scalar update equations
@cached_njit(**_JIT)
def _gd(v, g, lr):
    return v - g * lr


@cached_njit(**_JIT)
def _proximal_gd(v, g, lr, thr, denom, zero):
    """``thr = lr * l1`` (0 disables the L1 shrink), ``denom = 1 + lr * l2``."""
    p = v - g * lr
    if thr > zero:
        q = abs(p) - thr
        return np.sign(p) * (q if q > zero else zero) / denom
    return p / denom


@cached_njit(**_JIT)
def _momentum(v, a, g, lr, mom, nesterov):
    a = a * mom + g
    if nesterov:
        return v - (g * lr + a * mom * lr), a
    return v - a * lr, a


@cached_njit(**_JIT)
def _adagrad(v, a, g, lr, update_slots):
    if update_slots:
        a = a + g * g
    return v - g * lr / np.sqrt(a), a


@cached_njit(**_JIT)
def _adam(v, m, s, g, alpha, beta1, one_minus_beta1, one_minus_beta2, eps, nesterov):
    """``alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power)`` (the bias correction)."""
    m = m + (g - m) * one_minus_beta1
    s = s + (g * g - s) * one_minus_beta2
    if nesterov:
        return v - (g * one_minus_beta1 + beta1 * m) * alpha / (np.sqrt(s) + eps), m, s
    return v - m * alpha / (np.sqrt(s) + eps), m, s


@cached_njit(**_JIT)
def _ftrl(v, a, lin, g, lr, l1, two_l2, two_shrink, neg_power, half, mul_lr, zero):
    """FTRL-Proximal; ``two_shrink = 2 * l2_shrinkage`` (0 for ApplyFtrl), ``half``: lr_power == -0.5."""
    gs = g + two_shrink * v
    na = a + g * g
    if half:
        pn = np.sqrt(na)
        po = np.sqrt(a)
    else:
        pn = na ** neg_power
        po = a ** neg_power
    if mul_lr:
        lin = lin + gs * lr - (pn - po) * v
        quad = pn + two_l2 * lr
        thr = l1 * lr
    else:
        lin = lin + gs - (pn - po) / lr * v
        quad = pn / lr + two_l2
        thr = l1
    if abs(lin) > thr:
        return (np.sign(lin) * thr - lin) / quad, na, lin
    return zero, na, lin


@cached_njit(**_JIT)
def _rmsprop(v, ms, mom, g, lr, one_minus_rho, momentum, eps):
    ms = ms + (g * g - ms) * one_minus_rho
    mom = mom * momentum + g * lr / np.sqrt(ms + eps)
    return v - mom, ms, mom


@cached_njit(**_JIT)
def _centered_rmsprop(v, mg, ms, mom, g, lr, one_minus_rho, momentum, eps):
    ms = ms + (g * g - ms) * one_minus_rho
    mg = mg + (g - mg) * one_minus_rho
    mom = mom * momentum + g * lr / np.sqrt(ms - mg * mg + eps)
    return v - mom, mg, ms, mom


@cached_njit(**_JIT)
def _adadelta(v, a, au, g, lr, rho, one_minus_rho, eps):
    a = a * rho + g * g * one_minus_rho
    update = np.sqrt(au + eps) / np.sqrt(a + eps) * g
    au = au * rho + update * update * one_minus_rho
    return v - update * lr, a, au


# ---------------------------------------------------------------------- dense loops: olds, grad, outs, hyper
@cached_njit(**_JIT)
def dense_gd(v, g, ov, lr):
    for i in range(v.size):
        ov[i] = _gd(v[i], g[i], lr)


@cached_njit(**_JIT)
def dense_proximal_gd(v, g, ov, lr, thr, denom, zero):
    for i in range(v.size):
        ov[i] = _proximal_gd(v[i], g[i], lr, thr, denom, zero)


@cached_njit(**_JIT)
def dense_momentum(v, a, g, ov, oa, lr, mom, nesterov):
    for i in range(v.size):
        ov[i], oa[i] = _momentum(v[i], a[i], g[i], lr, mom, nesterov)


@cached_njit(**_JIT)
def dense_adagrad(v, a, g, ov, oa, lr, update_slots):
    for i in range(v.size):
        ov[i], oa[i] = _adagrad(v[i], a[i], g[i], lr, update_slots)


@cached_njit(**_JIT)
def dense_adam(v, m, s, g, ov, om, os, alpha, beta1, omb1, omb2, eps, nesterov):
    for i in range(v.size):
        ov[i], om[i], os[i] = _adam(v[i], m[i], s[i], g[i], alpha, beta1, omb1, omb2, eps, nesterov)


@cached_njit(**_JIT)
def dense_ftrl(v, a, lin, g, ov, oa, olin, lr, l1, two_l2, two_shrink, neg_power, half, mul_lr, zero):
    for i in range(v.size):
        ov[i], oa[i], olin[i] = _ftrl(v[i], a[i], lin[i], g[i], lr, l1, two_l2, two_shrink, neg_power, half,
                                      mul_lr, zero)


@cached_njit(**_JIT)
def dense_rmsprop(v, ms, mom, g, ov, oms, omom, lr, omr, momentum, eps):
    for i in range(v.size):
        ov[i], oms[i], omom[i] = _rmsprop(v[i], ms[i], mom[i], g[i], lr, omr, momentum, eps)


@cached_njit(**_JIT)
def dense_centered_rmsprop(v, mg, ms, mom, g, ov, omg, oms, omom, lr, omr, momentum, eps):
    for i in range(v.size):
        ov[i], omg[i], oms[i], omom[i] = _centered_rmsprop(v[i], mg[i], ms[i], mom[i], g[i], lr, omr, momentum,
                                                            eps)


@cached_njit(**_JIT)
def dense_adadelta(v, a, au, g, ov, oa, oau, lr, rho, omr, eps):
    for i in range(v.size):
        ov[i], oa[i], oau[i] = _adadelta(v[i], a[i], au[i], g[i], lr, rho, omr, eps)


# ---------------------------------------------------------------------- in-place loops: variable and slots, grad, hyper
# A dense update of arrays no one else holds writes each output over its input (the same memory). Given
# as separate input and output arrays, LLVM cannot prove that they do not overlap and runs the loop one
# element at a time; through one name each, it vectorizes it (momentum on 930k float32 elements, one
# core: 515 us as dense_momentum(v, a, g, v, a, ...), 154 us as inplace_momentum(v, a, g, ...)).
@cached_njit(**_JIT)
def inplace_gd(v, g, lr):
    for i in range(v.size):
        v[i] = _gd(v[i], g[i], lr)


@cached_njit(**_JIT)
def inplace_proximal_gd(v, g, lr, thr, denom, zero):
    for i in range(v.size):
        v[i] = _proximal_gd(v[i], g[i], lr, thr, denom, zero)


@cached_njit(**_JIT)
def inplace_momentum(v, a, g, lr, mom, nesterov):
    for i in range(v.size):
        v[i], a[i] = _momentum(v[i], a[i], g[i], lr, mom, nesterov)


@cached_njit(**_JIT)
def inplace_adagrad(v, a, g, lr, update_slots):
    for i in range(v.size):
        v[i], a[i] = _adagrad(v[i], a[i], g[i], lr, update_slots)


@cached_njit(**_JIT)
def inplace_adam(v, m, s, g, alpha, beta1, omb1, omb2, eps, nesterov):
    for i in range(v.size):
        v[i], m[i], s[i] = _adam(v[i], m[i], s[i], g[i], alpha, beta1, omb1, omb2, eps, nesterov)


@cached_njit(**_JIT)
def inplace_ftrl(v, a, lin, g, lr, l1, two_l2, two_shrink, neg_power, half, mul_lr, zero):
    for i in range(v.size):
        v[i], a[i], lin[i] = _ftrl(v[i], a[i], lin[i], g[i], lr, l1, two_l2, two_shrink, neg_power, half, mul_lr,
                                   zero)


@cached_njit(**_JIT)
def inplace_rmsprop(v, ms, mom, g, lr, omr, momentum, eps):
    for i in range(v.size):
        v[i], ms[i], mom[i] = _rmsprop(v[i], ms[i], mom[i], g[i], lr, omr, momentum, eps)


@cached_njit(**_JIT)
def inplace_centered_rmsprop(v, mg, ms, mom, g, lr, omr, momentum, eps):
    for i in range(v.size):
        v[i], mg[i], ms[i], mom[i] = _centered_rmsprop(v[i], mg[i], ms[i], mom[i], g[i], lr, omr, momentum, eps)


@cached_njit(**_JIT)
def inplace_adadelta(v, a, au, g, lr, rho, omr, eps):
    for i in range(v.size):
        v[i], a[i], au[i] = _adadelta(v[i], a[i], au[i], g[i], lr, rho, omr, eps)


# the in-place loop of each dense loop
IN_PLACE = {dense_gd: inplace_gd, dense_proximal_gd: inplace_proximal_gd, dense_momentum: inplace_momentum,
            dense_adagrad: inplace_adagrad, dense_adam: inplace_adam, dense_ftrl: inplace_ftrl,
            dense_rmsprop: inplace_rmsprop, dense_centered_rmsprop: inplace_centered_rmsprop,
            dense_adadelta: inplace_adadelta}


# ---------------------------------------------------------------------- sparse loops: 2-D buffers updated in place
@cached_njit(**_JIT)
def sparse_proximal_gd(v, g, idx, lr, thr, denom, zero):
    for r in range(idx.size):
        j = idx[r]
        for c in range(v.shape[1]):
            v[j, c] = _proximal_gd(v[j, c], g[r, c], lr, thr, denom, zero)


@cached_njit(**_JIT)
def sparse_momentum(v, a, g, idx, lr, mom, nesterov):
    for r in range(idx.size):
        j = idx[r]
        for c in range(v.shape[1]):
            v[j, c], a[j, c] = _momentum(v[j, c], a[j, c], g[r, c], lr, mom, nesterov)


@cached_njit(**_JIT)
def sparse_adagrad(v, a, g, idx, lr, update_slots):
    for r in range(idx.size):
        j = idx[r]
        for c in range(v.shape[1]):
            v[j, c], a[j, c] = _adagrad(v[j, c], a[j, c], g[r, c], lr, update_slots)


@cached_njit(**_JIT)
def sparse_ftrl(v, a, lin, g, idx, lr, l1, two_l2, two_shrink, neg_power, half, mul_lr, zero):
    for r in range(idx.size):
        j = idx[r]
        for c in range(v.shape[1]):
            v[j, c], a[j, c], lin[j, c] = _ftrl(v[j, c], a[j, c], lin[j, c], g[r, c], lr, l1, two_l2, two_shrink,
                                                neg_power, half, mul_lr, zero)


@cached_njit(**_JIT)
def sparse_rmsprop(v, ms, mom, g, idx, lr, omr, momentum, eps):
    for r in range(idx.size):
        j = idx[r]
        for c in range(v.shape[1]):
            v[j, c], ms[j, c], mom[j, c] = _rmsprop(v[j, c], ms[j, c], mom[j, c], g[r, c], lr, omr, momentum, eps)


@cached_njit(**_JIT)
def sparse_centered_rmsprop(v, mg, ms, mom, g, idx, lr, omr, momentum, eps):
    for r in range(idx.size):
        j = idx[r]
        for c in range(v.shape[1]):
            v[j, c], mg[j, c], ms[j, c], mom[j, c] = _centered_rmsprop(v[j, c], mg[j, c], ms[j, c], mom[j, c],
                                                                       g[r, c], lr, omr, momentum, eps)


@cached_njit(**_JIT)
def sparse_adadelta(v, a, au, g, idx, lr, rho, omr, eps):
    for r in range(idx.size):
        j = idx[r]
        for c in range(v.shape[1]):
            v[j, c], a[j, c], au[j, c] = _adadelta(v[j, c], a[j, c], au[j, c], g[r, c], lr, rho, omr, eps)


# ---------------------------------------------------------------------- duplicate indices
@cached_njit(**_JIT)
def sum_rows(g, inverse, out):
    """``out[inverse[r]] += g[r]`` for every row ``r`` (``out`` zero-filled by the caller)."""
    for r in range(g.shape[0]):
        j = inverse[r]
        for c in range(g.shape[1]):
            out[j, c] += g[r, c]
