"""Fused per-row sparse optimizer updates of the embedding table (numba).

A row of a table is ``data[r] = [w (dim) | state (S)]``. For one pushed row with summed gradient
``g`` (the batch's occurrences of the key added up by autodiff) and learning rate ``lr``:

==================  ===  ==========================================================================
optimizer           S    update
==================  ===  ==========================================================================
sgd                 0    ``w -= lr g``
adagrad             dim  ``a += g²; w -= lr g / (sqrt(a) + eps)``   (TF1's ApplyAdagrad when eps=0)
rowwise_adagrad     1    ``a += mean(g²); w -= lr g / (sqrt(a) + eps)``  (one accumulator per row)
adam                2d+1 ``t += 1; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g²;``
                         ``w -= lr sqrt(1-b2^t)/(1-b1^t) m / (sqrt(v) + eps)``
                         (bias correction by a per-row step count ``t``: a row updated rarely is
                         corrected for its own number of updates, as lazy Adam should be)
ftrl                2d   FTRL-proximal as TF1's ApplyFtrl (``z`` = linear, ``n`` = accumulator):
                         ``n' = n + g²; z += g - (n'^-p - n^-p)/lr w;``
                         ``w = |z| > l1 ? (sign(z) l1 - z) / ((n'^-p + beta)/lr + 2 l2) : 0``
==================  ===  ==========================================================================

Hyper-parameters ``hp`` (float64 array) per optimizer, in this order:
adagrad / rowwise_adagrad ``[initial_accumulator_value, epsilon]``; adam ``[beta1, beta2,
epsilon]``; ftrl ``[learning_rate_power, initial_accumulator_value, l1, l2, beta]``.
"""

from __future__ import annotations

import numba
import numpy as np

from sparseflow._src.kernels.embedding_prefetch import AHEAD, prefetch_row
from sparseflow._src.kernels.jit_cache import cached_njit

SGD, ADAGRAD, ROWWISE_ADAGRAD, ADAM, FTRL = 0, 1, 2, 3, 4

OPTIMIZERS = {"sgd": SGD, "adagrad": ADAGRAD, "rowwise_adagrad": ROWWISE_ADAGRAD, "adam": ADAM, "ftrl": FTRL}
NUM_HPARAMS = {SGD: 0, ADAGRAD: 2, ROWWISE_ADAGRAD: 2, ADAM: 3, FTRL: 5}


def state_width(kind: int, dim: int) -> int:
    """Floats of optimizer state per row."""
    return {SGD: 0, ADAGRAD: dim, ROWWISE_ADAGRAD: 1, ADAM: 2 * dim + 1, FTRL: 2 * dim}[kind]


def state_init(kind: int, dim: int, hp) -> np.ndarray:
    """The optimizer state of a new row (float32[S])."""
    s = np.zeros(state_width(kind, dim), dtype=np.float32)
    if kind in (ADAGRAD, ROWWISE_ADAGRAD):
        s[:] = hp[0]
    elif kind == FTRL:
        s[dim:] = hp[1]  # n starts at the initial accumulator value, z at 0
    return s


def state_names(kind: int) -> list[str]:
    """Names of the state blocks of a row, in order (documentation and checkpoints)."""
    return {SGD: [], ADAGRAD: ["accumulator"], ROWWISE_ADAGRAD: ["accumulator"],
            ADAM: ["m", "v", "t"], FTRL: ["linear", "accumulator"]}[kind]


@numba.njit(inline="always", error_model="numpy")  # x / 0 is inf or NaN (as TF); the loops vectorize
def _update_row(kind, data, r, g, i, dim, lr, hp):
    """One row's update; float32 arithmetic per element (vectorizes), float64 per-row scalars."""
    lr32 = np.float32(lr)
    if kind == SGD:
        for j in range(dim):
            data[r, j] -= lr32 * g[i, j]
    elif kind == ADAGRAD:
        eps = np.float32(hp[1])
        for j in range(dim):
            gj = g[i, j]
            a = data[r, dim + j] + gj * gj
            data[r, dim + j] = a
            data[r, j] -= lr32 * gj / (np.sqrt(a) + eps)
    elif kind == ROWWISE_ADAGRAD:
        s = np.float32(0.0)
        for j in range(dim):
            s += g[i, j] * g[i, j]
        a = data[r, dim] + s / np.float32(dim)
        data[r, dim] = a
        scale = np.float32(lr / (np.sqrt(np.float64(a)) + hp[1]))
        for j in range(dim):
            data[r, j] -= scale * g[i, j]
    elif kind == ADAM:
        b1, b2, eps = np.float32(hp[0]), np.float32(hp[1]), np.float32(hp[2])
        one = np.float32(1.0)
        t = data[r, 3 * dim] + one
        data[r, 3 * dim] = t
        t64 = np.float64(t)
        lr_t = np.float32(lr * np.sqrt(1.0 - hp[1] ** t64) / (1.0 - hp[0] ** t64))
        for j in range(dim):
            gj = g[i, j]
            m = b1 * data[r, dim + j] + (one - b1) * gj
            v = b2 * data[r, 2 * dim + j] + (one - b2) * gj * gj
            data[r, dim + j] = m
            data[r, 2 * dim + j] = v
            data[r, j] -= lr_t * m / (np.sqrt(v) + eps)
    elif hp[0] == -0.5:  # FTRL with the usual learning_rate_power: float32, as TF1's ApplyFtrl kernel
        l1 = np.float32(hp[2])
        inv_lr = np.float32(1.0 / lr)
        base = np.float32(hp[4] / lr + 2.0 * hp[3])
        for j in range(dim):
            gj = g[i, j]
            n = data[r, 2 * dim + j]
            n_new = n + gj * gj
            sq_new = np.sqrt(n_new)
            z = data[r, dim + j] + gj - (sq_new - np.sqrt(n)) * inv_lr * data[r, j]
            data[r, dim + j] = z
            data[r, 2 * dim + j] = n_new
            w = (np.sign(z) * l1 - z) / (sq_new * inv_lr + base)
            data[r, j] = w if abs(z) > l1 else np.float32(0.0)
    else:  # FTRL with another learning_rate_power, in float64
        p, l1, l2, beta = hp[0], hp[2], hp[3], hp[4]
        for j in range(dim):
            gj = np.float64(g[i, j])
            w = np.float64(data[r, j])
            n = np.float64(data[r, 2 * dim + j])
            n_new = n + gj * gj
            z = np.float64(data[r, dim + j]) + gj - (n_new ** -p - n ** -p) / lr * w
            data[r, dim + j] = z
            data[r, 2 * dim + j] = n_new
            if abs(z) > l1:
                quadratic = (n_new ** -p + beta) / lr + 2.0 * l2
                data[r, j] = (np.sign(z) * l1 - z) / quadratic
            else:
                data[r, j] = 0.0


@cached_njit(nogil=True, error_model="numpy")
def push_rows(kind, data, idata, rows, first, grads, counts, clicks, step, lr, hp, dim, lo, hi):
    """Applies the optimizer to the rows of the pushed keys ``lo..hi`` (positions ``i`` with
    ``rows[i] >= 0`` and ``first[i] == i``: duplicates were summed into their first position). Adds
    ``counts`` to ``show`` (1 per key when empty) and ``clicks`` to ``click``; sets ``seen = step``.
    Returns the number of distinct pushed keys without a row (their gradient is dropped). Each row
    is updated from one position only, so ranges of positions may run at once on several threads."""
    dropped = 0
    mc = data.shape[1] - 3  # show, click, seen (see embedding_hash)
    has_counts = counts.shape[0] > 0
    has_clicks = clicks.shape[0] > 0
    row_bytes = data.shape[1] * 4
    for i in range(lo, hi):
        if i + AHEAD < hi and rows[i + AHEAD] >= 0:
            prefetch_row(data, rows[i + AHEAD], row_bytes)
        if first[i] != i:
            continue
        r = rows[i]
        if r < 0:
            dropped += 1
            continue
        _update_row(kind, data, r, grads, i, dim, lr, hp)
        data[r, mc] += counts[i] if has_counts else np.float32(1.0)
        if has_clicks:
            data[r, mc + 1] += clicks[i]
        idata[r, mc + 2] = step
    return dropped
