"""Sorting and repeating, built from other ops as TensorFlow builds them: ``tf.sort`` and
``tf.argsort`` (TopKV2 over the whole axis), ``tf.repeat`` (a gather of cumulative positions) and
TF1's ``tf.batch_gather`` (GatherV2 with batch dimensions).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([3, 1, 2])
    ...     print(sess.run(tf.sort(x)), sess.run(tf.argsort(x, direction="DESCENDING")), sess.run(tf.repeat(x, 2)))
    [1 2 3] [0 2 1] [3 3 1 1 2 2]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.ops.math_cwise import op_scope

__all__ = ["sort", "argsort", "repeat", "batch_gather"]


def _swap_last(x, axis, rank):
    """(``x`` with ``axis`` moved last, the permutation that undoes it) or (x, None)."""
    from sparseflow._src.ops.array_shape_ops import transpose

    if axis == rank - 1:
        return x, None
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return transpose(x, perm), perm


def _sort(values, axis, direction, want_indices):
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.array_shape_ops import transpose
    from sparseflow._src.ops.math_cwise import WRAPPERS
    from sparseflow._src.ops.nn_topk_ops import top_k

    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f'"direction" should be one of ASCENDING, DESCENDING; got {direction!r}')
    values = convert_to_tensor(values, name="values")
    rank = values.shape.ndims
    if rank is None:
        raise ValueError("tf.sort and tf.argsort need a tensor of known rank")
    if not isinstance(axis, int):
        raise ValueError(f"axis must be a constant scalar, got {axis!r}")
    if not -rank <= axis < rank:
        raise ValueError(f"axis = {axis} not in [{-rank}, {rank})")
    axis %= rank
    dt = values.dtype.base_dtype
    ascending = direction == "ASCENDING"
    # Ascending order is the descending order of a value that reverses it: -x for floats, -x - 1 for
    # signed integers (no overflow at the minimum), max - x for unsigned ones.
    if not ascending:
        keyed = values
    elif dt.is_unsigned:
        keyed = WRAPPERS["subtract"](convert_to_tensor(dt.max, dtype=dt), values)
    elif dt.is_integer:
        keyed = WRAPPERS["subtract"](WRAPPERS["negative"](values), convert_to_tensor(1, dtype=dt))
    else:
        keyed = WRAPPERS["negative"](values)
    moved, perm = _swap_last(keyed, axis, rank)
    k = array_ops.shape(moved)[-1]
    top, indices = top_k(moved, k)
    out = indices if want_indices else top
    if perm is not None:
        out = transpose(out, perm)
    if want_indices or not ascending:
        return out
    if dt.is_unsigned:
        return WRAPPERS["subtract"](convert_to_tensor(dt.max, dtype=dt), out)
    if dt.is_integer:
        return WRAPPERS["subtract"](WRAPPERS["negative"](out), convert_to_tensor(1, dtype=dt))
    return WRAPPERS["negative"](out)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis`` (a Python int), ascending or descending.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sort([[3.0, 1.0], [0.5, 2.0]], axis=0)).tolist())
        [[0.5, 1.0], [3.0, 2.0]]
    """
    with op_scope(name, "sort", [values]):
        return _sort(values, axis, direction, want_indices=False)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 indices that sort ``values`` along ``axis``; equal values keep their order
    (the sort is always stable, whatever ``stable`` says).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.argsort([2, 1, 2, 0])))
        [3 1 0 2]
    """
    del stable  # TopKV2 keeps equal values in index order
    with op_scope(name, "argsort", [values]):
        return _sort(values, axis, direction, want_indices=True)


def repeat(input, repeats, axis=None, name=None):  # noqa: A002 - TensorFlow's argument name
    """Each slice of ``input`` along ``axis`` repeated ``repeats`` times (a scalar, or one count
    per slice); with ``axis=None`` the flattened input.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.repeat([[1, 2], [3, 4]], [1, 2], axis=0)).tolist())
        [[1, 2], [3, 4], [3, 4]]
    """
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.math_einsum import searchsorted
    from sparseflow._src.ops.math_reduction import cumsum, reduce_sum

    with op_scope(name, "Repeat", [input, repeats]):
        x = convert_to_tensor(input, name="input")
        if axis is None:
            x = array_ops.reshape(x, [-1])
            axis = 0
        rank = x.shape.ndims
        if rank is not None and not -rank <= axis < rank:
            raise ValueError(f"axis = {axis} not in [{-rank}, {rank})")
        counts = convert_to_tensor(repeats, dtype=dtypes.int32, name="repeats")
        if counts.shape.ndims is not None and counts.shape.ndims > 1:
            raise ValueError(f"repeats must be a scalar or a vector, got shape {counts.shape}")
        n = array_ops.shape(x)[axis]
        counts = array_ops.broadcast_to(array_ops.reshape(counts, [-1]), array_ops.reshape(n, [1]))
        ends = cumsum(counts)
        positions = array_ops.range(reduce_sum(counts))
        source = searchsorted(ends, positions, side="right")
        return array_ops.gather(x, source, axis=axis)


def batch_gather(params, indices, name=None):
    """TF1's ``tf.batch_gather``: ``params[b..., indices[b..., i]]``, the leading dimensions of
    ``indices`` (all but its last) being batch dimensions of ``params``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.batch_gather([[1, 2, 3], [4, 5, 6]], [[2, 0], [1, 1]])).tolist())
        [[3, 1], [5, 5]]
    """
    from sparseflow._src.ops import array_ops

    with op_scope(name, "BatchGather", [params, indices]):
        params = convert_to_tensor(params, name="params")
        indices = convert_to_tensor(indices, name="indices")
        if indices.shape.ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        return array_ops.gather(params, indices, axis=indices.shape.ndims - 1, batch_dims=indices.shape.ndims - 1)
