"""CPU kernels of the shape ops: Reshape, Shape, ShapeN, Size, Rank, ExpandDims, Squeeze,
Transpose, ConjugateTranspose, InvertPermutation, BroadcastTo, BroadcastArgs."""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel


def invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def as_output(arr):
    """0-d numeric results as NumPy scalars, the way Session.run returns them."""
    arr = np.asarray(arr)
    return arr[()] if arr.ndim == 0 and arr.dtype != object else arr


def dbg(shape) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def int_list(values) -> list:
    return [int(v) for v in np.asarray(values).reshape(-1)]


def _reshaped(x, dims):
    """``x`` in shape ``dims``: a view when strides allow, else a row-wise contiguous copy first (NumPy's
    own copying reshape of a strided array walks it element by element, ~50x slower)."""
    try:
        return np.reshape(x, dims, copy=False)
    except ValueError:
        return np.ascontiguousarray(x).reshape(dims)
    except TypeError:  # NumPy before 2.1: no copy argument
        return x.reshape(dims)


@register_kernel("Reshape")
def _reshape(node):
    def compute(x, shape):
        x = np.asarray(x)
        if np.ndim(shape) > 1:
            raise invalid(f"sizes input must be 1-D, not {dbg(np.shape(shape))}")
        dims = int_list(shape)
        unknown = -1
        product = 1
        for i, d in enumerate(dims):
            if d == -1:
                if unknown >= 0:
                    raise invalid(f"Only one input size may be -1, not both {unknown} and {i}")
                unknown = i
            elif d < 0:
                raise invalid(f"Size {i} must be non-negative, not {d}")
            else:
                product *= d
        if unknown >= 0:
            if product == 0:
                # As TensorFlow: with a 0 among the sizes, the -1 takes what the input's non-zero sizes
                # leave over the target's non-zero sizes ((0, 3) -> [0, -1] gives (0, 3)).
                rest = int(np.prod([d for d in x.shape if d], dtype=np.int64))
                known = int(np.prod([d for d in dims if d > 0], dtype=np.int64))
                if x.size or rest % known:
                    raise invalid(
                        "Reshape cannot infer the missing input size for an empty tensor unless all "
                        "specified input sizes are non-zero")
                dims[unknown] = rest // known
            else:
                if x.size % product:
                    raise invalid(
                        f"Input to reshape is a tensor with {x.size} values, but the requested shape "
                        f"requires a multiple of {product}")
                dims[unknown] = x.size // product
        elif product != x.size:
            raise invalid(f"Input to reshape is a tensor with {x.size} values, but the requested shape has "
                          f"{product}")
        return as_output(_reshaped(x, dims))

    return compute


@register_kernel("Shape")
def _shape(node):
    t = node.output_dtypes[0].as_numpy_dtype
    return lambda x: np.array(np.shape(x), dtype=t)


@register_kernel("ShapeN")
def _shape_n(node):
    t = node.output_dtypes[0].as_numpy_dtype
    def compute(*xs):
        shapes = tuple(np.array(np.shape(x), dtype=t) for x in xs)
        return shapes if len(shapes) > 1 else shapes[0]  # one input: a single-output op

    return compute


@register_kernel("Size")
def _size(node):
    t = node.output_dtypes[0].as_numpy_dtype
    return lambda x: t(np.size(x))


@register_kernel("Rank")
def _rank(node):
    return lambda x: np.int32(np.ndim(x))


@register_kernel("ExpandDims")
def _expand_dims(node):
    def compute(x, dim):
        x = np.asarray(x)
        if np.size(dim) != 1:
            raise invalid(f"'dim' must be a tensor with a single value, got {np.size(dim)} values")
        d = int(np.reshape(dim, -1)[0])
        r = x.ndim
        if d < -1 - r or d > r:
            raise invalid(f"Tried to expand dim index {d} for tensor with {r} dimensions.")
        return np.expand_dims(x, d + r + 1 if d < 0 else d)

    return compute


@register_kernel("Squeeze")
def _squeeze(node):
    wanted = list(node.attrs.get("squeeze_dims") or [])

    def compute(x):
        x = np.asarray(x)
        r = x.ndim
        axes = []
        for d in wanted:
            if d < -r or d >= r:
                raise invalid(f"Tried to squeeze dim index {d} for tensor with {r} dimensions.")
            d = d + r if d < 0 else d
            if x.shape[d] != 1:
                raise invalid(f"Can not squeeze dim[{d}], expected a dimension of 1, got {x.shape[d]}")
            axes.append(d)
        out = np.squeeze(x, axis=tuple(sorted(set(axes)))) if wanted else np.squeeze(x)
        return as_output(out)

    return compute


def _check_perm(perm, r):
    if len(perm) != r:
        raise invalid(f"transpose expects a vector of size {r}. But input(1) is a vector of size {len(perm)}")
    seen = [False] * r
    for p in perm:
        if p < 0 or p >= r:
            raise invalid(f"{p} is out of range [0 .. {r})")
        if seen[p]:
            raise invalid(f"{p} is duplicated in perm")
        seen[p] = True


def _transposer(conjugate):
    def factory(node):
        def compute(x, perm):
            x = np.asarray(x)
            perm = int_list(perm)
            perm = [p + x.ndim if p < 0 else p for p in perm]
            _check_perm(perm, x.ndim)
            out = np.transpose(x, perm)
            return np.conj(out) if conjugate and np.iscomplexobj(out) else out

        return compute

    return factory


register_kernel("Transpose")(_transposer(False))
register_kernel("ConjugateTranspose")(_transposer(True))


@register_kernel("InvertPermutation")
def _invert_permutation(node):
    def compute(x):
        x = np.asarray(x)
        if x.ndim != 1:
            raise invalid(f"invert_permutation expects a 1D vector, got shape {dbg(x.shape)}")
        n = x.size
        out = np.full(n, -1, dtype=x.dtype)
        for i, v in enumerate(x.tolist()):
            if v < 0 or v >= n:
                raise invalid(f"{v} is not between 0 and {n}")
            if out[v] != -1:
                raise invalid(f"{v} is duplicated in the input.")
            out[v] = i
        return out

    return compute


def broadcast_shape_of(a, b):
    """The broadcast of shapes ``a`` and ``b`` (sequences of ints); InvalidArgumentError if incompatible."""
    try:
        return np.broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        raise invalid(f"Incompatible shapes: {dbg(a)} vs. {dbg(b)}") from None


@register_kernel("BroadcastTo")
def _broadcast_to(node):
    def compute(x, shape):
        x = np.asarray(x)
        dims = int_list(shape)
        if x.ndim > len(dims) or any(a != 1 and a != b for a, b in zip(x.shape[::-1], dims[::-1])):
            raise invalid(f"Unable to broadcast tensor of shape {dbg(x.shape)} to tensor of shape "
                          f"{dbg(dims)}")
        return as_output(np.array(np.broadcast_to(x, dims)))

    return compute


@register_kernel("BroadcastArgs")
def _broadcast_args(node):
    def compute(s0, s1):
        s0, s1 = np.asarray(s0), np.asarray(s1)
        return np.array(broadcast_shape_of(s0.tolist(), s1.tolist()), dtype=s0.dtype)

    return compute


@register_kernel("BroadcastGradientArgs")
def _broadcast_gradient_args(node):
    def compute(s0, s1):
        s0, s1 = np.asarray(s0), np.asarray(s1)
        a, b = s0.tolist(), s1.tolist()
        n = max(len(a), len(b))
        pa, pb = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
        r0, r1 = [], []
        for axis, (x, y) in enumerate(zip(pa, pb)):
            if x != y and x != 1 and y != 1:
                raise invalid(f"Incompatible shapes: {dbg(a)} vs. {dbg(b)}")
            if x == 1:
                r0.append(axis)
            if y == 1:
                r1.append(axis)
        return np.array(r0, dtype=s0.dtype), np.array(r1, dtype=s0.dtype)

    return compute


@register_kernel("EnsureShape")
def _ensure_shape(node):
    want = node.attrs["shape"]

    def compute(x):
        shape = np.shape(x)
        if not want.is_compatible_with(shape):
            dims = "[" + ",".join("?" if d is None else str(d) for d in want.as_list()) + "]"
            raise invalid(
                f"Shape of tensor {node.name} {dbg(shape)} is not compatible with expected shape {dims}.")
        return x

    return compute
