"""CPU kernels of Einsum (NumPy's einsum, contraction order optimized) and LowerBound / UpperBound
(a binary search per row).

``...`` is spelled out with letters the equation does not use before NumPy sees it, so broadcast
dimensions may also be summed away (an output without ``...``), as the gradient's einsums need.
"""

from __future__ import annotations

import string

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.framework.einsum_equation import parse_equation
from sparseflow._src.kernels.registry import register_kernel


def explicit_equation(equation: str, ranks) -> str:
    """``equation`` with each ``...`` replaced by letters for the broadcast dimensions of ``ranks``."""
    terms, out = parse_equation(equation, len(ranks))
    if not any("." in t for t in terms):
        return ",".join(terms) + "->" + out
    free = [c for c in string.ascii_letters if c not in equation]
    widths = [r - (len(t) - 1) if "." in t else 0 for t, r in zip(terms, ranks)]
    most = max(widths)
    spelled = [t.replace(".", "".join(free[most - w:most])) for t, w in zip(terms, widths)]
    return ",".join(spelled) + "->" + out.replace(".", "".join(free[:most]))


@register_kernel("Einsum")
def _einsum(node):
    equation = node.attrs["equation"]

    def compute(*inputs):
        try:
            eq = explicit_equation(equation, [np.ndim(x) for x in inputs])
            out = np.einsum(eq, *inputs, optimize=len(inputs) > 2)
        except ValueError as e:
            shapes = ", ".join(str(list(np.shape(x))) for x in inputs)
            raise errors.InvalidArgumentError(None, None, f"Einsum {equation!r} cannot combine inputs of shapes "
                                                          f"{shapes}: {e}") from e
        return np.asarray(out, dtype=np.result_type(*inputs))

    return compute


def _bound(side):
    def factory(node):
        out_type = node.attrs.get("out_type")
        dtype = out_type.as_numpy_dtype if out_type is not None else np.int32

        def compute(sorted_inputs, values):
            s, v = np.asarray(sorted_inputs), np.asarray(values)
            if s.ndim != 2 or v.ndim != 2 or s.shape[0] != v.shape[0]:
                raise errors.InvalidArgumentError(None, None, f"Leading dim_size of both tensors must match: sorted "
                                                              f"inputs {list(s.shape)}, values {list(v.shape)}.")
            out = np.empty(v.shape, dtype)
            for row in range(s.shape[0]):
                out[row] = np.searchsorted(s[row], v[row], side=side)
            return out

        return compute

    return factory


register_kernel("LowerBound")(_bound("left"))
register_kernel("UpperBound")(_bound("right"))
