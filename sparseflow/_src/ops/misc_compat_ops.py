"""Smaller TF1 names: DecodeJSONExample (``tf.decode_json_example``), ``tf.random_crop``, the
deprecated scope helpers ``tf.op_scope`` and ``tf.variable_op_scope``, and ``tf.is_symbolic_tensor``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     crop = tf.random_crop(tf.reshape(tf.range(24), [4, 6]), [2, 3], seed=5)
    ...     print(sess.run(crop).shape)
    (2, 3)
"""

from __future__ import annotations

import contextlib

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.ops.math_cwise import op_scope as _op_scope

__all__ = ["decode_json_example", "random_crop", "op_scope", "variable_op_scope", "is_symbolic_tensor"]

register_op("DecodeJSONExample", inputs=["json_examples: string"], outputs=["binary_examples: string"],
            shape_fn=lambda op: [op.inputs[0].shape])


def decode_json_example(json_examples, name=None):
    """Each JSON ``tf.train.Example`` (protobuf's JSON mapping) as its binary serialization.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     text = '{"features": {"feature": {"a": {"int64List": {"value": ["7"]}}}}}'
        ...     print(sess.run(tf.decode_json_example([text])))
        [b'\\n\\x0c\\n\\n\\n\\x01a\\x12\\x05\\x1a\\x03\\n\\x01\\x07']
    """
    return apply_op("DecodeJSONExample", [json_examples], name=name).outputs[0]


def random_crop(value, size, seed=None, name=None):
    """A random slice of shape ``size`` of ``value`` (same offset draw as TensorFlow's, so seeded
    crops match); fails when ``size`` exceeds ``value``'s shape."""
    from sparseflow._src.framework.graph import get_default_graph
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.control_flow_ops import Assert
    from sparseflow._src.ops.core_ops import identity
    from sparseflow._src.ops.math_cwise import WRAPPERS
    from sparseflow._src.ops.math_reduction import reduce_all
    from sparseflow._src.ops.random_ops import random_uniform

    with _op_scope(name, "random_crop", [value, size]) as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(value)
        check = Assert(reduce_all(WRAPPERS["greater_equal"](shape, size)), ["Need value.shape >= size, got ", shape,
                                                                           size], summarize=1000)
        with get_default_graph().control_dependencies([check]):
            shape = identity(shape)
        limit = shape - size + 1
        offset = random_uniform(array_ops.shape(shape), dtype=size.dtype, maxval=size.dtype.max, seed=seed) % limit
        return array_ops.slice(value, offset, size, name=scope)


@contextlib.contextmanager
def op_scope(values, name, default_name=None):
    """TF1's deprecated ``tf.op_scope(values, name, default_name)``: ``tf.name_scope(name, default_name,
    values)`` with its arguments in the old order."""
    from sparseflow._src.framework.graph import name_scope

    with name_scope(name, default_name, values) as scope:
        yield scope


@contextlib.contextmanager
def variable_op_scope(values, name_or_scope, default_name=None, initializer=None, regularizer=None,
                      caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                      use_resource=None, constraint=None):
    """TF1's deprecated ``tf.variable_op_scope``: ``tf.variable_scope`` with ``values`` first."""
    from sparseflow._src.ops.variable_scope import variable_scope

    with variable_scope(name_or_scope, default_name=default_name, values=values, initializer=initializer,
                        regularizer=regularizer, caching_device=caching_device, partitioner=partitioner,
                        custom_getter=custom_getter, reuse=reuse, dtype=dtype, use_resource=use_resource,
                        constraint=constraint) as scope:
        yield scope


def is_symbolic_tensor(tensor) -> bool:
    """Whether ``tensor`` is a graph tensor (every sparseflow Tensor is)."""
    return isinstance(tensor, Tensor)
