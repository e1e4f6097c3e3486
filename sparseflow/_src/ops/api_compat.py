"""Top-level helpers of ``tf.compat.v1`` that TF1 programs call at startup or while building:
static values, ``init_scope``, the logger, shape helpers, and the v1/v2 behaviour switches.

The switches report sparseflow's actual behaviour. Its control flow is functional (``tf.cond`` and
``tf.while_loop`` build If and While ops: TensorFlow's control flow v2), so
``control_flow_v2_enabled()`` is True and disabling it is accepted with a warning (results are the
same, only the graph's op types differ). Its variables are TF1 reference variables, its shapes index
to ``Dimension``s and its tensors compare by identity, so ``enable_resource_variables``,
``enable_v2_tensorshape`` and ``enable_tensor_equality`` raise NotImplementedError saying so; their
``disable_*`` counterparts are what sparseflow does already.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.get_static_value(tf.shape(tf.zeros([2, 3]))), tf.control_flow_v2_enabled())
    [2 3] True
"""

from __future__ import annotations

import contextlib

from sparseflow._src.framework import tf_logging
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from sparseflow._src.framework.tensor_conversion import convert_to_tensor, is_tensor
from sparseflow._src.framework.tensor_shape import as_shape
from sparseflow._src.ops.array_util import constant_value

__all__ = [
    "get_static_value", "init_scope", "get_logger", "convert_to_tensor_or_sparse_tensor", "dimension_at_index",
    "executing_eagerly_outside_functions", "resource_variables_enabled", "enable_resource_variables",
    "enable_v2_tensorshape", "disable_v2_tensorshape", "enable_tensor_equality", "disable_tensor_equality",
    "enable_control_flow_v2", "disable_control_flow_v2", "control_flow_v2_enabled",
]


def get_static_value(tensor, partial=False):
    """The value of ``tensor`` when it is known while the graph is built (NumPy), else None;
    values that are not tensors come back unchanged.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default():
        ...     print(tf.get_static_value(tf.shape(tf.zeros([2, 3]))), tf.get_static_value(tf.placeholder(tf.int32)))
        [2 3] None
    """
    del partial  # partially known values are not tracked: unknown is None
    if not is_tensor(tensor):
        return tensor
    if isinstance(tensor, SparseTensor):
        return None
    return constant_value(tensor)


@contextlib.contextmanager
def init_scope():
    """Leaves any function being built (a cond branch, a loop body) for the outermost graph, and
    clears control dependencies, keeping the name scope: where TF1 code creates variables and
    initializers from inside other code.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default() as g, tf.control_dependencies([tf.no_op()]):
        ...     with tf.init_scope():
        ...         c = tf.constant(1)
        ...     print(c.op.control_inputs == [], c.graph is g)
        True True
    """
    graph = get_default_graph()
    scope = graph.get_name_scope()
    while getattr(graph, "building_function", False) and getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    with graph.as_default(), graph.name_scope(scope + "/" if scope else ""), graph.control_dependencies(None):
        yield


def get_logger():
    """The logger ``tf.logging`` writes to (a standard ``logging.Logger``).

    Example:
        >>> import sparseflow as tf
        >>> tf.get_logger().name
        'sparseflow'
    """
    return tf_logging.get_logger()


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """A SparseTensor (from a SparseTensorValue too) as it is, anything else as a Tensor.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default():
        ...     sp = tf.convert_to_tensor_or_sparse_tensor(tf.SparseTensorValue([[0]], [1.0], [2]))
        ...     print(type(sp).__name__, tf.convert_to_tensor_or_sparse_tensor([1]).dtype.name)
        SparseTensor int32
    """
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and value.dtype != dtype:
            raise ValueError(f"Sparse dtype mismatch: requested dtype {dtype}, value dtype {value.dtype}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def dimension_at_index(shape, index):
    """Dimension ``index`` of ``shape`` (a ``Dimension``; unknown when the rank is unknown).

    Example:
        >>> import sparseflow as tf
        >>> print(tf.dimension_at_index(tf.TensorShape([3, None]), 0), tf.dimension_at_index(tf.TensorShape(None), 5))
        3 ?
    """
    return as_shape(shape)[index]


def executing_eagerly_outside_functions() -> bool:
    """False: sparseflow builds graphs (TF1's graph mode)."""
    return False


def resource_variables_enabled() -> bool:
    """False: ``tf.Variable`` and ``tf.get_variable`` make TF1 reference variables."""
    return False


def enable_resource_variables():
    raise NotImplementedError(
        "tf.enable_resource_variables(): sparseflow's variables are TF1 reference variables (what "
        "tf.disable_resource_variables() selects); resource variables are not implemented. Remove the call: "
        "reads and updates then follow TF1's reference-variable semantics.")


def enable_v2_tensorshape():
    raise NotImplementedError(
        "tf.enable_v2_tensorshape(): sparseflow's TensorShape follows TF1 (shape[i] is a Dimension; use "
        "tf.compat.dimension_value(shape[i]) or shape.as_list() for ints). Remove the call.")


def disable_v2_tensorshape():
    """TF1 shapes (``shape[i]`` is a ``Dimension``): what sparseflow does."""


def enable_tensor_equality():
    raise NotImplementedError(
        "tf.enable_tensor_equality(): sparseflow's tensors compare by identity and are hashable, as in TF1; use "
        "tf.equal(a, b) for element-wise equality. Remove the call.")


def disable_tensor_equality():
    """TF1 tensor equality (by identity, tensors hashable): what sparseflow does."""


def control_flow_v2_enabled() -> bool:
    """True: ``tf.cond`` / ``tf.while_loop`` build functional If / While ops (control flow v2)."""
    return True


def enable_control_flow_v2():
    """Control flow v2 (functional If / While): what sparseflow builds."""


def disable_control_flow_v2():
    """Accepted: sparseflow builds only functional If / While ops, which compute what TF1's
    Switch / Merge graphs compute; a warning says so once."""
    if not getattr(disable_control_flow_v2, "_warned", False):
        disable_control_flow_v2._warned = True
        tf_logging.get_logger().warning(
            "tf.disable_control_flow_v2(): sparseflow builds tf.cond and tf.while_loop as functional If and While "
            "ops only (the same results as TF1's Switch/Merge graphs); control_flow_v2_enabled() stays True.")

