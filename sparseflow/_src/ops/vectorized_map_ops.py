"""``tf.vectorized_map``: ``fn`` applied to each row of ``elems``, the results stacked. sparseflow has
no auto-vectorizer (``pfor``): it runs ``fn`` in a ``map_fn`` loop, as TensorFlow's fallback does.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     out = tf.vectorized_map(lambda r: tf.reduce_sum(r) * 2, tf.constant([[1, 2], [3, 4]]))
    ...     print(sess.run(out).tolist())
    [6, 14]
"""

from __future__ import annotations

from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.ops.functional_ops import flatten, is_sequence, map_fn, pack_sequence_as

__all__ = ["vectorized_map"]


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``fn`` applied to the rows (dimension 0) of ``elems`` (a tensor or a nested structure of them),
    its outputs (any structure) stacked along a new dimension 0.

    ``fallback_to_while_loop`` and ``warn`` are TensorFlow's switches for when its vectorizer cannot
    handle an op; sparseflow always loops, so they change nothing.
    """
    del fallback_to_while_loop, warn
    g = get_default_graph()
    flat = [convert_to_tensor(e, name="elem") for e in (flatten(elems) if is_sequence(elems) else [elems])]
    if not flat:
        raise ValueError("elems must be a tensor or a non-empty structure of tensors.")
    for t in flat:
        if t.shape.ndims == 0:
            raise ValueError(f"vectorized_map needs elems of rank at least 1 (rows to map over), got {t}.")
    # The structure and dtypes of fn's output, from fn on the first rows (ops only built, pruned unless used).
    with g.name_scope("vectorized_map_signature"):
        first = [t[0] for t in flat]
        probe = fn(pack_sequence_as(elems, first) if is_sequence(elems) else first[0])
    probe_flat = [convert_to_tensor(t) for t in (flatten(probe) if is_sequence(probe) else [probe])]
    dtype = pack_sequence_as(probe, [t.dtype for t in probe_flat]) if is_sequence(probe) else probe_flat[0].dtype
    packed = pack_sequence_as(elems, flat) if is_sequence(elems) else flat[0]
    return map_fn(fn, packed, dtype=dtype, name="vectorized_map")
