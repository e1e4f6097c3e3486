"""Smaller TF1 names: DecodeJSONExample (``tf.decode_json_example``), the
deprecated scope helpers ``tf.op_scope`` and ``tf.variable_op_scope``, and ``tf.is_symbolic_tensor``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     with tf.op_scope([], "outer", "default") as scope:
    ...         print(scope)
    outer/
"""

from __future__ import annotations

import contextlib

from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Tensor

__all__ = ["decode_json_example", "op_scope", "variable_op_scope", "is_symbolic_tensor"]

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
