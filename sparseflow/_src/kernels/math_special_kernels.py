"""CPU kernels of Igamma, Igammac, IgammaGradA, Zeta, Polygamma, Betainc and RandomGammaGrad on
``scipy.special`` (float64 inside; half precision rounds the result).

``dP(a, x)/da`` has no closed form: it is ``(1/Gamma(a)) int log(t) t^(a-1) e^-t dt - P psi(a)`` over
``[0, x]``, or minus the same over ``[x, inf)`` with ``Q`` (whichever part is the smaller, so the two
terms do not cancel), integrated by adaptive quadrature (``scipy.integrate.quad``) to a relative
1e-13. A gamma sample's derivative in its shape follows by implicit differentiation:
``dx/da = -(dP/da) / (dP/dx)``.

Example:
    >>> round(float(igamma_grad_a(np.array(2.0), np.array(2.0))), 8)
    -0.29400469
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.special as sp

from sparseflow._src.kernels.array_shape_kernels import dbg, invalid
from sparseflow._src.kernels.registry import register_kernel


def _grad_a_one(a: float, x: float) -> float:
    import scipy.integrate  # here, not at the top: ~0.1 s of every process's `import sparseflow` for one gradient

    if math.isnan(a) or math.isnan(x) or a <= 0 or x < 0:
        return math.nan
    if x == 0 or math.isinf(x) or math.isinf(a):
        return 0.0
    log_gamma_a, psi_a = float(sp.gammaln(a)), float(sp.digamma(a))

    def integrand(t):
        return math.log(t) * math.exp((a - 1.0) * math.log(t) - t - log_gamma_a) if t > 0 else 0.0

    opts = {"epsabs": 0.0, "epsrel": 1e-13, "limit": 400}
    with warnings.catch_warnings():  # quad warns when the last digits of 1e-13 are out of reach
        warnings.simplefilter("ignore", scipy.integrate.IntegrationWarning)
        if x <= a + 1.0:
            part = scipy.integrate.quad(integrand, 0.0, x, **opts)[0]
            return part - float(sp.gammainc(a, x)) * psi_a
        part = scipy.integrate.quad(integrand, x, math.inf, **opts)[0]
        return -(part - float(sp.gammaincc(a, x)) * psi_a)


_grad_a_vec = np.frompyfunc(_grad_a_one, 2, 1)


def igamma_grad_a(a, x) -> np.ndarray:
    """``d igamma(a, x) / da`` element-wise (float64, broadcast)."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    return np.asarray(_grad_a_vec(a, x), dtype=np.float64).reshape(a.shape)


def _random_gamma_grad(alpha, sample):
    """The derivative of a Gamma(alpha, 1) sample in alpha (the sample held at its CDF value)."""
    alpha, sample = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(sample, np.float64))
    with np.errstate(all="ignore"):
        log_density = (alpha - 1.0) * np.log(sample) - sample - sp.gammaln(alpha)
        return -igamma_grad_a(alpha, sample) / np.exp(log_density)


def _igamma(a, x):
    with np.errstate(all="ignore"):
        return np.where((a > 0) & (x >= 0), sp.gammainc(a, x), np.nan)


def _igammac(a, x):
    with np.errstate(all="ignore"):
        return np.where((a > 0) & (x >= 0), sp.gammaincc(a, x), np.nan)


def _polygamma(n, x):
    with np.errstate(all="ignore"):
        whole = (n >= 0) & (np.floor(n) == n)
        return np.where(whole, sp.polygamma(np.where(whole, n, 0).astype(np.int64), x), np.nan)


def _zeta(x, q):
    with np.errstate(all="ignore"):
        return sp.zeta(x, q)


_BINARY = {"Igamma": _igamma, "Igammac": _igammac, "IgammaGradA": igamma_grad_a, "Zeta": _zeta,
           "Polygamma": _polygamma, "RandomGammaGrad": _random_gamma_grad}


def _binary_factory(fn):
    def factory(node):
        out = np.dtype(node.attrs["T"].as_numpy_dtype)

        def compute(a, x):
            a, x = np.asarray(a, np.float64), np.asarray(x, np.float64)
            try:
                np.broadcast_shapes(a.shape, x.shape)
            except ValueError:
                raise invalid(f"Incompatible shapes: {dbg(a.shape)} vs. {dbg(x.shape)}") from None
            r = np.asarray(fn(a, x))
            return r.astype(out)[()] if r.ndim == 0 else r.astype(out)

        return compute

    return factory


for _op_type, _fn in _BINARY.items():
    register_kernel(_op_type)(_binary_factory(_fn))


@register_kernel("Betainc")
def _betainc(node):
    out = np.dtype(node.attrs["T"].as_numpy_dtype)

    def compute(a, b, x):
        arrays = [np.asarray(v, np.float64) for v in (a, b, x)]
        shapes = {v.shape for v in arrays if v.ndim}
        if len(shapes) > 1:
            raise invalid(f"Shapes of a, b and x are inconsistent: {', '.join(dbg(v.shape) for v in arrays)}")
        a, b, x = np.broadcast_arrays(*arrays)
        with np.errstate(all="ignore"):
            ok = (a > 0) & (b > 0) & (x >= 0) & (x <= 1)
            r = np.where(ok, sp.betainc(a, b, np.clip(x, 0, 1)), np.nan)
        return r.astype(out)[()] if r.ndim == 0 else r.astype(out)

    return compute
