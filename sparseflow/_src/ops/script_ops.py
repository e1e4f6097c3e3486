"""Python functions as graph ops: TF1's ``tf.py_func`` and ``tf.numpy_function``.

The function stays in the process that built the graph: the ``PyFunc`` node names it by a token
(``pyfunc_<n>``) in this process's registry, and nothing about it travels in a GraphDef but the
token. So the op runs only in the client's process: the master refuses to place it on another task
(naming the node), and a process that does not hold the token refuses to run it. Outputs must have
the declared dtypes; exceptions become TensorFlow's errors (ValueError/TypeError: InvalidArgument,
StopIteration: OutOfRange, MemoryError: ResourceExhausted, NotImplementedError: Unimplemented,
others: Unknown) whose message starts with the exception and its traceback. No gradient.

Example:
    >>> import numpy as np
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     y = tf.py_func(lambda a: np.sort(a)[::-1], [tf.constant([3, 1, 2])], tf.int32)
    ...     print(sess.run(y))
    [3 2 1]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.py_function_registry import register_function
from sparseflow._src.framework.tensor_shape import unknown_shape

__all__ = ["py_func", "numpy_function", "py_function"]

for _op_type, _stateful in (("PyFunc", True), ("PyFuncStateless", False)):
    register_op(_op_type, inputs=["input: Tin"], outputs=["output: Tout"],
                attrs=["token: string", "Tin: list(type) >= 0", "Tout: list(type) >= 0"],
                shape_fn=lambda op: [unknown_shape()] * len(op.outputs), is_stateful=_stateful)

def _py_func(func, inp, Tout, stateful, name, op_name):  # noqa: N803 - TensorFlow's argument name
    single = not isinstance(Tout, (list, tuple))
    tout = [dtypes.as_dtype(t).base_dtype for t in ([Tout] if single else Tout)]
    graph = get_default_graph()
    token = register_function(func, graph)
    attrs = {"token": token, "Tout": tout}
    op = apply_op("PyFunc" if stateful else "PyFuncStateless", [list(inp)], attrs, name=name or op_name)
    outputs = op.outputs
    if not outputs:
        return op
    return outputs[0] if single else list(outputs)


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TensorFlow's argument name
    """An op calling ``func(*values of inp)`` (NumPy arrays; strings as bytes) and returning its
    result(s) as tensors of dtype ``Tout`` (one dtype: one tensor; a list: a list). ``stateful=False``
    lets the graph optimizer treat equal calls as one."""
    return _py_func(func, inp, Tout, stateful, name, "PyFunc")


def numpy_function(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TensorFlow's argument name
    """``py_func`` under its TensorFlow 2 name."""
    return _py_func(func, inp, Tout, stateful, name, "PyFunc")


register_op("EagerPyFunc", inputs=["input: Tin"], outputs=["output: Tout"],
            attrs=["token: string", "is_async: bool = false", "Tin: list(type) >= 0", "Tout: list(type) >= 0"],
            shape_fn=lambda op: [unknown_shape()] * len(op.outputs), is_stateful=True)


def py_function(func, inp, Tout, name=None):  # noqa: N803 - TensorFlow's argument name
    """An op (EagerPyFunc) calling ``func`` with its inputs as arrays that also have TensorFlow's
    ``.numpy()``; the results are converted to ``Tout`` (Python numbers and arrays of a
    compatible kind are cast). sparseflow has no eager mode: ``func`` computes with NumPy, not
    with ``tf`` ops, and the op has no gradient.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.py_function(lambda a: a.numpy() * 2, [tf.constant([1.0, 2.0])], tf.float32)
        ...     print(sess.run(y))
        [2. 4.]
    """
    single = not isinstance(Tout, (list, tuple))
    tout = [dtypes.as_dtype(t).base_dtype for t in ([Tout] if single else Tout)]
    token = register_function(func, get_default_graph())
    op = apply_op("EagerPyFunc", [list(inp)], {"token": token, "Tout": tout}, name=name or "EagerPyFunc")
    if not op.outputs:
        return op
    return op.outputs[0] if single else list(op.outputs)

