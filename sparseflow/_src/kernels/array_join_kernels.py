"""CPU kernels of ConcatV2, Pack, Unpack, Split, SplitV, Tile, Pad, PadV2, MirrorPad, ReverseV2
and ReverseSequence."""

from __future__ import annotations

import numpy as np

from sparseflow._src.kernels import intra_op
from sparseflow._src.kernels.array_shape_kernels import as_output, dbg, int_list, invalid
from sparseflow._src.kernels.registry import list_output, register_kernel


def _axis(axis, rank, what):
    a = int(np.reshape(axis, -1)[0]) if np.size(axis) == 1 else None
    if a is None:
        raise invalid(f"{what} must be a scalar, got shape {dbg(np.shape(axis))}")
    if a < -rank or a >= rank:
        raise invalid(f"{what} : Expected {'concatenating ' if what == 'ConcatOp' else ''}dimensions in the "
                      f"range [{-rank}, {rank}), but got {a}")
    return a + rank if a < 0 else a


@register_kernel("ConcatV2")
def _concat(node):
    def compute(*args):
        values = [np.asarray(v) for v in args[:-1]]
        first = values[0]
        if first.ndim == 0:
            raise invalid("ConcatOp : Can't concatenate scalars (use tf.stack instead)")
        axis = _axis(args[-1], first.ndim, "ConcatOp")
        for i, v in enumerate(values[1:], 1):
            if v.ndim != first.ndim:
                raise invalid(
                    f"ConcatOp : Ranks of all input tensors should match: shape[0] = {dbg(first.shape)} "
                    f"vs. shape[{i}] = {dbg(v.shape)}")
            for d in range(first.ndim):
                if d != axis and v.shape[d] != first.shape[d]:
                    raise invalid(f"ConcatOp : Dimension {d} in both shapes must be equal: shape[0] = "
                                  f"{dbg(first.shape)} vs. shape[{i}] = {dbg(v.shape)}")
        if axis > 0:
            return concat_rows(values, axis)
        return np.concatenate(values, axis=axis)

    return compute


PARALLEL_MIN_ELEMENTS = 1 << 15  # elements a thread copies at least


def concat_rows(values: list, axis: int) -> np.ndarray:
    """``np.concatenate(values, axis)`` (``axis > 0``, shapes checked) made in blocks of rows of axis 0
    on all cores when large (a first layer's input: embeddings beside numerics)."""
    first = values[0]
    dtype = first.dtype
    rows = first.shape[0]
    size = sum(v.size for v in values)
    if (size < 2 * PARALLEL_MIN_ELEMENTS or rows < 2 or intra_op.total_threads() < 2 or dtype.hasobject
            or any(v.dtype != dtype for v in values)):
        return np.concatenate(values, axis=axis)
    shape = list(first.shape)
    shape[axis] = sum(v.shape[axis] for v in values)
    out = np.empty(shape, dtype)

    def block(lo, hi):
        np.concatenate([v[lo:hi] for v in values], axis=axis, out=out[lo:hi])

    intra_op.parallel_for(block, rows, max(1, PARALLEL_MIN_ELEMENTS * rows // size))
    return out


@register_kernel("Pack")
def _pack(node):
    axis = node.attrs.get("axis", 0)

    def compute(*values):
        values = [np.asarray(v) for v in values]
        first = values[0]
        for i, v in enumerate(values[1:], 1):
            if v.shape != first.shape:
                raise invalid(f"Shapes of all inputs must match: values[0].shape = {dbg(first.shape)} != "
                              f"values[{i}].shape = {dbg(v.shape)}")
        r = first.ndim + 1
        if axis < -r or axis >= r:
            raise invalid(f"axis = {axis} not in [{-r}, {r})")
        return np.stack(values, axis=axis)

    return compute


@register_kernel("Unpack")
def _unpack(node):
    num = node.attrs["num"]
    axis = node.attrs.get("axis", 0)

    def compute(value):
        value = np.asarray(value)
        r = value.ndim
        if axis < -r or axis >= r:
            raise invalid(f"axis = {axis} not in [{-r}, {r})")
        a = axis + r if axis < 0 else axis
        if value.shape[a] != num:
            raise invalid(f"Input shape axis {a} must equal {num}, got shape {dbg(value.shape)}")
        moved = np.moveaxis(value, a, 0)
        return list_output(as_output(moved[i]) for i in range(num))

    return compute


@register_kernel("Split")
def _split(node):
    num = node.attrs["num_split"]

    def compute(split_dim, value):
        value = np.asarray(value)
        if num == 1:  # TensorFlow returns the input as it is, before looking at split_dim
            return value
        axis = _axis(split_dim, value.ndim, "Split")
        size = value.shape[axis]
        if size % num:
            raise invalid(
                f"Number of ways to split should evenly divide the split dimension, but got split_dim "
                f"{axis} (size = {size}) and num_split {num}")
        return list_output(np.split(value, num, axis=axis))

    return compute


@register_kernel("SplitV")
def _split_v(node):
    num = node.attrs["num_split"]

    def compute(value, size_splits, split_dim):
        value = np.asarray(value)
        if value.ndim == 0:
            raise invalid("Can't split scalars")
        axis = _axis(split_dim, value.ndim, "SplitV")
        sizes = int_list(size_splits)
        if len(sizes) != num:
            raise invalid(f"Number of split values must match num_split; got {len(sizes)} values for "
                          f"num_split {num}")
        size = value.shape[axis]
        unknown = [i for i, s in enumerate(sizes) if s == -1]
        if len(unknown) > 1:
            raise invalid(f"There can only be one -1 in the input, got {len(unknown)}")
        total = sum(s for s in sizes if s != -1)
        if unknown:
            if total > size:
                raise invalid(
                    f"Determined shape must either match input shape along split_dim exactly if fully "
                              "specified, or be less than the size of the input along split_dim if not "
                              "fully "
                              f"specified.  Got: {total}")
            sizes[unknown[0]] = size - total
        elif total != size:
            raise invalid(f"Determined shape must either match input shape along split_dim exactly if fully "
                          f"specified, or be less than the size of the input along split_dim if not fully "
                          f"specified.  Got: {total}")
        if any(s < 0 for s in sizes):
            raise invalid(f"Split sizes must be non-negative, got {sizes}")
        return list_output(np.split(value, np.cumsum(sizes)[:-1], axis=axis))

    return compute


@register_kernel("Tile")
def _tile(node):
    def compute(x, multiples):
        x = np.asarray(x)
        m = int_list(multiples)
        if np.ndim(multiples) != 1 or len(m) != x.ndim:
            raise invalid(f"Expected multiples argument to be a vector of length {x.ndim} but got length "
                          f"{len(m)}")
        for i, k in enumerate(m):
            if k < 0:
                raise invalid(f"Expected multiples[{i}] >= 0, but got {k}")
        return as_output(np.tile(x, m) if x.ndim else x)

    return compute


def _paddings(x, paddings):
    p = np.asarray(paddings)
    if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] != x.ndim:
        raise invalid(f"The first dimension of paddings must be the rank of inputs{dbg(p.shape)} "
                      f"{dbg(x.shape)}")
    pairs = [(int(a), int(b)) for a, b in p]
    for a, b in pairs:
        if a < 0 or b < 0:
            raise invalid(f"Paddings must be non-negative: {a} {b}")
    return pairs


def _pad_const(x, paddings, value):
    x = np.asarray(x)
    pairs = _paddings(x, paddings)
    out = np.full([d + a + b for d, (a, b) in zip(x.shape, pairs)], value, dtype=x.dtype)
    out[tuple(slice(a, a + d) for d, (a, _) in zip(x.shape, pairs))] = x
    return as_output(out)


@register_kernel("Pad")
def _pad(node):
    zero = b"" if node.output_dtypes[0].name == "string" else 0
    return lambda x, paddings: _pad_const(x, paddings, zero)


@register_kernel("PadV2")
def _pad_v2(node):
    def compute(x, paddings, constant_values):
        if np.ndim(constant_values) != 0:
            raise invalid(f"constant_values must be a scalar. Found: {dbg(np.shape(constant_values))}")
        value = constant_values[()] if isinstance(constant_values, np.ndarray) else constant_values
        return _pad_const(x, paddings, value)

    return compute


@register_kernel("MirrorPad")
def _mirror_pad(node):
    mode = node.attrs["mode"]
    mode = mode.decode() if isinstance(mode, bytes) else mode
    offset = 0 if mode == "SYMMETRIC" else 1

    def compute(x, paddings):
        x = np.asarray(x)
        pairs = _paddings(x, paddings)
        if x.ndim == 0:
            return x
        for d, (a, b) in zip(x.shape, pairs):
            if max(a, b) > d - offset:
                if offset:
                    raise invalid(f"paddings must be less than the dimension size: {a}, {b} not less than "
                                  f"{d}")
                raise invalid(f"paddings must be no greater than the dimension size: {a}, {b} greater than "
                              f"{d}")
        return np.pad(x, pairs, mode=mode.lower())

    return compute


@register_kernel("MirrorPadGrad")
def _mirror_pad_grad(node):
    mode = node.attrs["mode"]
    symmetric = (mode.decode() if isinstance(mode, bytes) else mode) == "SYMMETRIC"
    offset = 0 if symmetric else 1

    def compute(g, paddings):
        g = np.asarray(g)
        pairs = _paddings(g, paddings)
        for axis, (a, b) in enumerate(pairs):
            n = g.shape[axis] - a - b
            if n < 0 or (a or b) and max(a, b) > n - offset:
                raise invalid(f"paddings {a}, {b} are too large for a MirrorPad output of size {g.shape[axis]}")
            k = np.arange(g.shape[axis]) - a
            src = np.where(k < 0, -k - symmetric, np.where(k >= n, 2 * n - 2 + symmetric - k, k))
            out = np.zeros(g.shape[:axis] + (n,) + g.shape[axis + 1:], dtype=g.dtype)
            np.add.at(out, (slice(None),) * axis + (src,), g)
            g = out
        return g

    return compute


@register_kernel("ReverseV2")
def _reverse(node):
    def compute(x, axis):
        x = np.asarray(x)
        r = x.ndim
        axes = []
        for i, a in enumerate(int_list(axis)):
            c = a + r if a < 0 else a
            if c < 0 or c >= r:
                raise invalid(f"'axis'[{i}] = {a} is out of valid range [0, {r - 1}")
            if c in axes:
                raise invalid(f"axis {c} specified more than once.")
            axes.append(c)
        return np.flip(x, axis=tuple(axes)) if axes else x

    return compute


@register_kernel("ReverseSequence")
def _reverse_sequence(node):
    seq_dim, batch_dim = node.attrs["seq_dim"], node.attrs.get("batch_dim", 0)

    def compute(x, seq_lengths):
        x = np.asarray(x)
        lens = int_list(seq_lengths)
        if batch_dim == seq_dim:
            raise invalid(f"batch_dim == seq_dim == {seq_dim}")
        if seq_dim >= x.ndim or batch_dim >= x.ndim:
            raise invalid(f"seq_dim ({seq_dim}) and batch_dim ({batch_dim}) must be < input rank {x.ndim}")
        if len(lens) != x.shape[batch_dim]:
            raise invalid(f"Length of seq_lengths != input.dims({batch_dim}), ({len(lens)} vs. "
                          f"{x.shape[batch_dim]})")
        out = np.array(x)
        for b, n in enumerate(lens):
            if n < 0:
                raise invalid(f"seq_lens({b}) < 0")
            if n > x.shape[seq_dim]:
                raise invalid(f"seq_lens({b}) > input.dims({seq_dim})")
            src = [slice(None)] * x.ndim
            src[batch_dim] = b
            dst = list(src)
            src[seq_dim] = slice(n - 1, None, -1) if n > 0 else slice(0, 0)
            dst[seq_dim] = slice(0, n)
            out[tuple(dst)] = x[tuple(src)]
        return out

    return compute


@register_kernel("ConcatOffset")
def _concat_offset(node):
    def compute(concat_dim, *shapes):
        shapes = [np.asarray(s) for s in shapes]
        r = shapes[0].size
        axis = _axis(concat_dim, r, "Concat")
        offset = 0
        out = []
        for i, s in enumerate(shapes):
            if s.size != r:
                raise invalid(f"input {i} should contain {r} elements, but got {s.size}")
            for d in range(r):
                if d != axis and s[d] != shapes[0][d]:
                    raise invalid(
                        f"All dimensions except {axis} must match. Input {i} has shape {dbg(s)} and "
                        f"doesn't match input 0 with shape {dbg(shapes[0])}.")
            o = np.zeros(r, dtype=s.dtype)
            o[axis] = offset
            offset += int(s[axis])
            out.append(o)
        return list_output(out)

    return compute
