"""CPU kernels of Identity, IdentityN, StopGradient, NoOp and CheckNumerics."""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import list_output, register_kernel, register_simple_kernel

register_simple_kernel("Identity", lambda x: x)
register_simple_kernel("StopGradient", lambda x: x)
register_simple_kernel("NoOp", lambda: None)


@register_kernel("IdentityN")
def _identity_n(node):
    return lambda *xs: list_output(xs)


@register_kernel("CheckNumerics")
def _check_numerics(node):
    message = node.attrs["message"]

    def compute(x):
        arr = np.asarray(x)
        if np.isfinite(arr).all():
            return x
        nan, inf = bool(np.isnan(arr).any()), bool(np.isinf(arr).any())
        what = "Inf and NaN" if nan and inf else "NaN" if nan else "Inf"
        raise errors.InvalidArgumentError(None, None, f"{message} : Tensor had {what} values")

    return compute
