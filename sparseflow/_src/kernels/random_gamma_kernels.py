"""CPU kernels of RandomGamma and RandomPoissonV2: NumPy's samplers on a Philox bit generator keyed
by the node's ``(seed, seed2)`` (fresh entropy for ``(0, 0)``), built once per session and node so
that successive runs continue one stream (not TensorFlow's stream: see ``ops/random_gamma_ops``).

Example:
    >>> gen = _generator({"seed": 1, "seed2": 2})
    >>> bool(gen.standard_gamma(2.0) > 0)
    True
"""

from __future__ import annotations

import math
import secrets

import numpy as np

from sparseflow._src.kernels.array_shape_kernels import dbg, invalid
from sparseflow._src.kernels.registry import register_kernel


def _generator(attrs) -> np.random.Generator:
    seed, seed2 = int(attrs.get("seed", 0)), int(attrs.get("seed2", 0))
    if seed == 0 and seed2 == 0:
        seed, seed2 = secrets.randbits(64), secrets.randbits(64)
    return np.random.Generator(np.random.Philox(key=[seed % 2**64, seed2 % 2**64]))


def _dims(shape) -> tuple[int, ...]:
    arr = np.asarray(shape)
    if arr.ndim != 1:
        raise invalid(f"shape must be a vector of {{int32,int64}}, got shape {dbg(arr.shape)}")
    dims = tuple(int(d) for d in arr)
    if any(d < 0 for d in dims):
        raise invalid(f"Dimension {min(dims)} must be >= 0")
    return dims


@register_kernel("RandomGamma", stateful=True)
def _random_gamma(node):
    gen = _generator(node.attrs)
    out = np.dtype(node.attrs["T"].as_numpy_dtype)

    def compute(shape, alpha):
        dims = _dims(shape)
        alpha = np.asarray(alpha, np.float64)
        size = dims + alpha.shape
        if math.prod(size) == 0:
            return np.zeros(size, out)
        with np.errstate(invalid="ignore"):
            ok = alpha > 0
            draws = gen.standard_gamma(np.where(ok, alpha, 1.0), size=size)
        return np.where(ok, draws, np.nan).astype(out)

    return compute


@register_kernel("RandomPoissonV2", stateful=True)
def _random_poisson(node):
    gen = _generator(node.attrs)
    out = np.dtype(node.attrs["dtype"].as_numpy_dtype)

    def compute(shape, rate):
        dims = _dims(shape)
        rate = np.asarray(rate, np.float64)
        size = dims + rate.shape
        if math.prod(size) == 0:
            return np.zeros(size, out)
        ok = (rate >= 0) & np.isfinite(rate)
        draws = gen.poisson(np.where(ok, rate, 0.0), size=size).astype(np.float64)
        draws = np.where(ok, draws, np.nan)
        if out.kind in "iu":  # TensorFlow's integer samples of a bad rate are undefined; sparseflow's are 0
            draws = np.nan_to_num(draws, nan=0.0)
        return draws.astype(out)

    return compute
