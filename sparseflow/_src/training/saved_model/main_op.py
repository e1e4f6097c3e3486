"""``tf.saved_model.main_op``: the op a loader runs after restoring (initializes locals and tables).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     op = tf.saved_model.main_op.main_op()
    >>> op.type
    'NoOp'
"""

from __future__ import annotations

from sparseflow._src.framework.graph import get_default_graph

__all__ = ["main_op", "main_op_with_restore"]


def main_op():
    """A group of the global, local and table initializers."""
    from sparseflow._src.ops.core_ops import group
    from sparseflow._src.ops.lookup_ops import tables_initializer
    from sparseflow._src.ops.variables import global_variables_initializer, local_variables_initializer

    return group(global_variables_initializer(), local_variables_initializer(), tables_initializer())


def main_op_with_restore(restore_op_name):
    """``main_op`` run after the op named ``restore_op_name``."""
    from sparseflow._src.ops.core_ops import group

    with get_default_graph().control_dependencies([main_op()]):
        return group(get_default_graph().as_graph_element(restore_op_name))
